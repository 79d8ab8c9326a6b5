package tui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/raydar/raydar/kube/watch"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/tui/pages/logs"
	"github.com/raydar/raydar/tui/widgets"
)

func TestDescribe(t *testing.T) {
	cases := []struct {
		name   string
		seq    []string
		want   []string
		golden bool
	}{
		{"cluster", []string{"G", "d"}, []string{"Describe RayCluster ml/train-a", "Name:           train-a",
			"cpu          min 1 / replicas 3 / max 5", "Events (2)", "CreatedWorkerPod"}, true},
		{"cluster_yaml", []string{"G", "d", "G"}, []string{"  state: ready", "    serviceName: train-a-head-svc"}, true},
		{"pod", []string{":pods", "<enter>", "d"}, []string{"Describe Pod serve/fruit-raycluster-abcde-head-m3n4b",
			"ray-head  image -, ready true, restarts 0", "Ready=True"}, true},
		{"job", []string{":rj", "<enter>", "G", "d"}, []string{"Job status:     RUNNING", "Entrypoint:     python eval.py --epochs 3"}, false},
		{"service", []string{":rs", "<enter>", "d"}, []string{"Active cluster: fruit-raycluster-abcde", "fruit_app RUNNING"}, false},
		{"from the cluster detail, a group row", trainA(2, "d"), []string{"Describe RayCluster ml/train-a"}, false},
		{"from the cluster detail, a pod row", trainA(3, "d"), []string{"Describe Pod ml/train-a-cpu-worker-4hq9d"}, false},
		{"from the job detail", []string{":rj", "<enter>", "G", "<enter>", "d"}, []string{"Describe RayJob ml/nightly-eval"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			screen, a := run(t, Options{Actions: DefaultActions(ActionDeps{})}, c.seq...)
			mustContain(t, screen, c.want...)
			if a.top().Kind() != DescribeView {
				t.Fatalf("top is %v", a.top().Kind())
			}
			if c.golden {
				requireGolden(t, screen)
			}
		})
	}
	t.Run("esc goes back", func(t *testing.T) {
		_, a := run(t, Options{Actions: DefaultActions(ActionDeps{})}, "G", "d", "<esc>")
		if len(a.stack) != 1 || a.top().Kind() != ClustersView {
			t.Fatalf("stack %d top %v", len(a.stack), a.top().Kind())
		}
	})
	t.Run("live", func(t *testing.T) {
		src := watch.NewSource(0)
		store := fixture()
		tm, _ := start(t, Options{Store: store, Session: Session{Feed: src}, Actions: DefaultActions(ActionDeps{})}, 100, 30)
		typeKeys(tm, "G", "d")
		waitScreen(t, tm, "Events (2)")
		o, _ := store.Find(watch.RayCluster, "ml", "train-a")
		rc := o.(*rayv1.RayCluster).DeepCopy()
		src.Push(watch.Delta{Kind: watch.Event, Object: mkEvent(rc, rayv1.KindRayCluster, "ray.io/v1", "Normal", "ScaledWorkerGroup", "scaled cpu to 4 by alice", 0)})
		waitScreen(t, tm, "scaled cpu to 4 by alice")
		rc.Spec.RayVersion = "2.99.0"
		src.Push(watch.Delta{Kind: watch.RayCluster, Object: rc})
		waitScreen(t, tm, "Ray version:    2.99.0")
		src.Push(watch.Delta{Kind: watch.RayCluster, Deleted: true, Object: rc})
		waitScreen(t, tm, "(deleted)")
		finalScreen(t, tm)
	})
}

// fixedLogs serves text and records the request.
func fixedLogs(text string, req chan<- string) PodLogs {
	return PodLogsFunc(func(_ context.Context, ns, pod string, o LogOptions) (io.ReadCloser, error) {
		if req != nil {
			req <- logRequest(ns, pod, o)
		}
		return io.NopCloser(strings.NewReader(text)), nil
	})
}

// logRequest is a log request in words, as the tests compare them.
func logRequest(ns, pod string, o LogOptions) string {
	return fmt.Sprintf("%s/%s %s follow=%t previous=%t", ns, pod, o.Container, o.Follow, o.Previous)
}

func logOpts(src PodLogs) Options {
	return Options{Actions: DefaultActions(ActionDeps{PodLogs: src})}
}

func TestPodLogs(t *testing.T) {
	t.Run("page", func(t *testing.T) {
		req := make(chan string, 1)
		tm, _ := start(t, logOpts(fixedLogs(logLines(1, 40), req)), 100, 30)
		typeKeys(tm, ":pods", "<enter>", "l")
		waitScreen(t, tm, "stream ended")
		screen, a := finalScreen(t, tm)
		if got := recv(t, req); got != "serve/fruit-raycluster-abcde-head-m3n4b ray-head follow=true previous=false" {
			t.Fatalf("request %q", got)
		}
		mustContain(t, screen, "Logs (lines 17-40 of 40)", "step 40 loss=0.0250", "step 17 ")
		if a.top().Kind() != LogsView {
			t.Fatal("no log page")
		}
		requireGolden(t, screen)
	})
	t.Run("wrap", func(t *testing.T) {
		long := "Traceback: " + strings.Repeat("frame/", 40) + "END\n"
		tm, _ := start(t, logOpts(fixedLogs(logLines(1, 5)+long+"after\n", nil)), 100, 30)
		typeKeys(tm, ":pods", "<enter>", "l")
		screen := waitScreen(t, tm, "stream ended")
		if strings.Contains(screen, "END") {
			t.Fatalf("long line not cut:\n%s", screen)
		}
		typeKeys(tm, "w")
		screen = waitScreen(t, tm, "wrap on")
		mustContain(t, screen, "frame/END")
		requireGolden(t, screen)
		finalScreen(t, tm)
	})
	t.Run("bounded", func(t *testing.T) {
		tm, _ := start(t, logOpts(fixedLogs(logLines(1, widgets.MaxPodLogLines+1000), nil)), 100, 30)
		typeKeys(tm, ":pods", "<enter>", "l")
		screen := waitScreen(t, tm, "stream ended")
		mustContain(t, screen, fmt.Sprintf("of %d, 1000 older dropped", widgets.MaxPodLogLines), fmt.Sprintf("step %d ", widgets.MaxPodLogLines+1000))
		_, a := finalScreen(t, tm)
		if p := a.top().(*logs.Page); len(p.Lines) != widgets.MaxPodLogLines || !strings.Contains(p.Lines[0], "step 1001 ") {
			t.Fatalf("kept %d lines from %q", len(p.Lines), p.Lines[0])
		}
	})
	t.Run("follow, pause, esc stops the stream", func(t *testing.T) {
		pr, pw := io.Pipe()
		opened := make(chan context.Context, 1)
		rc := &signalCloser{Reader: pr, closed: make(chan struct{})}
		src := PodLogsFunc(func(ctx context.Context, _, _ string, _ LogOptions) (io.ReadCloser, error) {
			opened <- ctx
			return rc, nil
		})
		tm, _ := start(t, logOpts(src), 100, 30)
		typeKeys(tm, trainA(3, "l")...) // a worker pod of the cluster detail
		ctx := recv(t, opened)
		write := func(s string) {
			if _, err := io.WriteString(pw, s); err != nil {
				t.Fatal(err)
			}
		}
		write(logLines(1, 50))
		waitScreen(t, tm, "step 50 ")
		mustContain(t, screenNow(tm), "Logs ml/train-a-cpu-worker-4hq9d (ray-worker)", "following")
		typeKeys(tm, "k") // up: stop following
		waitScreen(t, tm, "paused")
		write(logLines(51, 10))
		screen := waitScreen(t, tm, "of 60)")
		if strings.Contains(screen, "step 60 ") || !strings.Contains(screen, "step 49 ") {
			t.Fatalf("a paused view moved:\n%s", screen)
		}
		typeKeys(tm, "f")
		screen = waitScreen(t, tm, "step 60 ")
		mustContain(t, screen, "following")
		typeKeys(tm, "<esc>")
		waitScreen(t, tm, "RayCluster ml/train-a")
		select {
		case <-ctx.Done():
		case <-time.After(teatestTimeout):
			t.Fatal("the stream's context was not cancelled by esc")
		}
		select {
		case <-rc.closed:
		case <-time.After(teatestTimeout):
			t.Fatal("the stream was not closed after esc")
		}
		_ = pr.CloseWithError(errors.New("closed")) // lets the blocked read end, as a closed HTTP body does
		_, a := finalScreen(t, tm)
		if a.top().Kind() != ClusterDetailView {
			t.Fatal("esc did not go back")
		}
	})
	t.Run("open error", func(t *testing.T) {
		src := PodLogsFunc(func(context.Context, string, string, LogOptions) (io.ReadCloser, error) {
			return nil, errors.New(`container "ray-head" is waiting to start`)
		})
		screen, _ := dialogRun(t, logOpts(src), "is waiting to start", ":pods", "<enter>", "l")
		mustContain(t, screen, `error: container "ray-head" is waiting to start`)
	})
	t.Run("unavailable", func(t *testing.T) {
		dialogRun(t, logOpts(nil), "pod logs are not available", ":pods", "<enter>", "l")
		dialogRun(t, logOpts(fixedLogs("", nil)), "logs: select a pod first", trainA(2, "l")...)
	})
}

// signalCloser is a log stream that says when it was closed.
type signalCloser struct {
	io.Reader
	once   sync.Once
	closed chan struct{}
}

func (s *signalCloser) Close() error {
	s.once.Do(func() { close(s.closed) })
	return nil
}

// TestActionViewsInTinyTerminals: dialogs, describe and log pages draw at
// any size without panicking and without lines wider than the terminal.
func TestActionViewsInTinyTerminals(t *testing.T) {
	seqs := [][]string{trainA(2, "s", "x"), trainA(3, "<space>", "<ctrl+d>"), {"G", "z"}, {":rj", "<enter>", "G", "x"},
		{"G", "d"}, {"G", "d", "w", "G"}, {":pods", "<enter>", "l"}}
	for _, size := range [][2]int{{1, 1}, {10, 3}, {20, 6}, {40, 10}, {200, 60}} {
		for _, seq := range seqs {
			w := newWorld(t, worldOpts{})
			a := newApp(t, Options{Store: w.store, Actions: DefaultActions(ActionDeps{Actions: w.acts, PodLogs: fixedLogs("a\nb\n", nil)})})
			requireFits(t, a, size, seq)
		}
	}
}
