package tui

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/raydar/raydar/kube/watch"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/tui/keys"
)

// restartedPod is a head pod of three containers (the Ray container, a
// sidecar, an init container) whose Ray container was OOM-killed twice.
func restartedPod() *corev1.Pod {
	rc := mkCluster("ml", "multi", time.Hour, group("cpu", 1, 0, 1))
	p := mkPod(rc, "multi-head-abcde", "head", rayv1.RayNodeHeadGroupLabelValue, time.Hour, true, "10.0.9.10")
	p.Spec.Containers = []corev1.Container{{Name: "ray-head"}, {Name: "log-shipper"}}
	p.Spec.InitContainers = []corev1.Container{{Name: "wait-gcs"}}
	p.Status.ContainerStatuses = []corev1.ContainerStatus{
		{Name: "ray-head", Ready: true, RestartCount: 2,
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "OOMKilled", ExitCode: 137}}},
		{Name: "log-shipper", Ready: true},
	}
	p.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "wait-gcs"}}
	return p
}

// instanceLogs answers each request with a line naming the container and
// the instance asked for, and records the request.
func instanceLogs(req chan<- string) PodLogs {
	return PodLogsFunc(func(_ context.Context, ns, pod string, o LogOptions) (io.ReadCloser, error) {
		req <- logRequest(ns, pod, o)
		which := "current"
		if o.Previous {
			which = "previous"
		}
		return io.NopCloser(strings.NewReader("line of " + o.Container + " " + which + " instance\n")), nil
	})
}

// TestContainerPickerAndPreviousLogs: l on a pod of several containers
// asks which one, the Ray container under the cursor; the log page says
// which container of how many and that it restarted; p asks the API for
// the previous instance's logs (PodLogOptions.Previous) and says so; o
// picks another container on the page.
func TestContainerPickerAndPreviousLogs(t *testing.T) {
	store := fixture()
	store.Add(restartedPod())
	req := make(chan string, 8)
	opts := logOpts(instanceLogs(req))
	opts.Store = store
	tm, _ := start(t, opts, 120, 30)
	typeKeys(tm, ":pods", "<enter>", "/", "multi-head", "<enter>", "l")
	screen := waitScreen(t, tm, "which container?")
	mustContain(t, screen, "Logs of pod ml/multi-head-abcde: which container?",
		"▶ ray-head     Ray container, 2 restarts, OOMKilled (137)",
		"  log-shipper", "  wait-gcs     init")
	select {
	case r := <-req:
		t.Fatalf("logs opened before a container was chosen: %s", r)
	default:
	}

	// The sidecar: no restarts, so no previous logs.
	typeKeys(tm, "j", "<enter>")
	if got := recv(t, req); got != "ml/multi-head-abcde log-shipper follow=true previous=false" {
		t.Fatalf("request %q", got)
	}
	screen = waitScreen(t, tm, "line of log-shipper current instance")
	mustContain(t, screen, "Logs ml/multi-head-abcde (log-shipper)", "container log-shipper of 3 (o: other)")
	typeKeys(tm, "p")
	waitScreen(t, tm, "container log-shipper has not restarted: it has no previous logs")

	// o: the picker again, on the container shown; back to the Ray container.
	typeKeys(tm, "o")
	screen = waitScreen(t, tm, "which container?")
	mustContain(t, screen, "▶ log-shipper")
	typeKeys(tm, "k", "<enter>")
	if got := recv(t, req); got != "ml/multi-head-abcde ray-head follow=true previous=false" {
		t.Fatalf("request %q", got)
	}
	screen = waitScreen(t, tm, "line of ray-head current instance")
	mustContain(t, screen, "container ray-head of 3 (o: other) · restarted 2 times, last exited OOMKilled (code 137) (p: previous logs)")
	if strings.Contains(screen, "log-shipper current instance") {
		t.Fatalf("the other container's lines stayed:\n%s", screen)
	}

	// p: the previous instance, said in the title, the heading and the line above.
	typeKeys(tm, "p")
	if got := recv(t, req); got != "ml/multi-head-abcde ray-head follow=false previous=true" {
		t.Fatalf("request %q", got)
	}
	screen = waitScreen(t, tm, "line of ray-head previous instance")
	mustContain(t, screen, "Logs ml/multi-head-abcde (ray-head, previous)", "Previous logs (lines 1-1 of 1)",
		"previous instance, exited OOMKilled (code 137) (p: current)")
	requireGolden(t, screen)

	typeKeys(tm, "?")
	mustContain(t, waitScreen(t, tm, "previous logs"), "container")
	typeKeys(tm, "<esc>", "p")
	if got := recv(t, req); got != "ml/multi-head-abcde ray-head follow=true previous=false" {
		t.Fatalf("request %q", got)
	}
	waitScreen(t, tm, "line of ray-head current instance")
	finalScreen(t, tm)
}

// TestContainerPickerCancel: esc closes the picker with nothing opened.
func TestContainerPickerCancel(t *testing.T) {
	store := fixture()
	store.Add(restartedPod())
	req := make(chan string, 1)
	opts := logOpts(instanceLogs(req))
	opts.Store = store
	tm, _ := start(t, opts, 120, 30)
	typeKeys(tm, ":pods", "<enter>", "/", "multi-head", "<enter>", "l")
	waitScreen(t, tm, "which container?")
	typeKeys(tm, "<esc>")
	_, a := finalScreen(t, tm)
	if a.top().Kind() == LogsView || len(req) > 0 {
		t.Fatal("esc opened logs")
	}
}

// TestLogKeysRebind: p and o are rebindable in keys.yaml, and a clash with
// another key is refused.
func TestLogKeysRebind(t *testing.T) {
	km, err := keys.Parse([]byte("keys:\n  previous-logs: P\n  container: O\n"))
	if err != nil {
		t.Fatal(err)
	}
	store := fixture()
	store.Add(restartedPod())
	req := make(chan string, 4)
	opts := logOpts(instanceLogs(req))
	opts.Store, opts.Keys = store, km
	tm, _ := start(t, opts, 120, 30)
	typeKeys(tm, ":pods", "<enter>", "/", "multi-head", "<enter>", "l", "<enter>")
	recv(t, req)
	waitScreen(t, tm, "(O: other) · restarted 2 times, last exited OOMKilled (code 137) (P: previous logs)")
	typeKeys(tm, "P")
	if got := recv(t, req); !strings.HasSuffix(got, "previous=true") {
		t.Fatalf("request %q", got)
	}
	typeKeys(tm, "O")
	waitScreen(t, tm, "which container?")
	finalScreen(t, tm)

	if _, err := keys.Parse([]byte("keys:\n  previous-logs: f\n")); err == nil || !strings.Contains(err.Error(), `key "f" is bound to both follow and previous-logs`) {
		t.Fatalf("clash: %v", err)
	}
}

// TestContainerPickerInTinyTerminals: the picker and a restarted
// container's log page (its line about the restarts, the previous
// instance) draw at any size within the terminal.
func TestContainerPickerInTinyTerminals(t *testing.T) {
	open := []string{":pods", "<enter>", "/", "multi-head", "<enter>", "l"}
	seqs := [][]string{open, append(append([]string{}, open...), "<enter>", "p"), append(append([]string{}, open...), "<enter>", "o")}
	for _, size := range [][2]int{{1, 1}, {10, 3}, {20, 6}, {40, 10}, {200, 60}} {
		for _, seq := range seqs {
			store := fixture()
			store.Add(restartedPod())
			a := newApp(t, Options{Store: store, Actions: DefaultActions(ActionDeps{PodLogs: fixedLogs("a\nb\n", nil)})})
			requireFits(t, a, size, seq)
		}
	}
}

// TestLogPageSaysALiveRestart: a restart while the page is open is said on
// it, and p then reaches the previous instance.
func TestLogPageSaysALiveRestart(t *testing.T) {
	src := watch.NewSource(0)
	store := fixture()
	p := restartedPod()
	p.Spec.Containers, p.Spec.InitContainers, p.Status.InitContainerStatuses = p.Spec.Containers[:1], nil, nil
	p.Status.ContainerStatuses = p.Status.ContainerStatuses[:1]
	p.Status.ContainerStatuses[0].RestartCount, p.Status.ContainerStatuses[0].LastTerminationState = 0, corev1.ContainerState{}
	store.Add(p)
	req := make(chan string, 4)
	opts := logOpts(instanceLogs(req))
	opts.Store, opts.Session = store, Session{Feed: src}
	tm, _ := start(t, opts, 120, 30)
	typeKeys(tm, ":pods", "<enter>", "/", "multi-head", "<enter>", "l")
	recv(t, req)
	screen := waitScreen(t, tm, "line of ray-head current instance")
	if strings.Contains(screen, "restarted") || strings.Contains(screen, "previous logs") {
		t.Fatalf("a container that never restarted has previous logs:\n%s", screen)
	}
	typeKeys(tm, "p")
	waitScreen(t, tm, "container ray-head has not restarted")

	up := p.DeepCopy()
	up.Status.ContainerStatuses[0].RestartCount = 1
	up.Status.ContainerStatuses[0].LastTerminationState.Terminated = &corev1.ContainerStateTerminated{ExitCode: 1}
	src.Push(watch.Delta{Kind: watch.Pod, Object: up})
	waitScreen(t, tm, "restarted 1 time, last exited Error (code 1) (p: previous logs)")
	typeKeys(tm, "p")
	if got := recv(t, req); !strings.HasSuffix(got, "ray-head follow=false previous=true") {
		t.Fatalf("request %q", got)
	}
	finalScreen(t, tm)
}
