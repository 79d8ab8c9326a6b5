package simkit

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// logs collects a Loop's log lines.
type logs struct {
	mu    sync.Mutex
	lines []string
}

func (l *logs) logf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
}

func (l *logs) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.lines...)
}

func wait(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("no %s within 10s", what)
	}
}

// A key whose sync fails is logged and retried until it succeeds; a sync
// asking to look again gets its key back; Stop waits for the workers.
func TestWorkRetriesAndLooksAgain(t *testing.T) {
	var lg logs
	l := NewLoop(context.Background(), "testsim", lg.logf)
	q := l.NewQueue()
	var mu sync.Mutex
	calls := map[string]int{}
	done := make(chan struct{})
	var stopped bool
	l.Work(q, 2, func(ctx context.Context, key string) (time.Duration, error) {
		mu.Lock()
		defer mu.Unlock()
		calls[key]++
		switch {
		case key == "ns/fails" && calls[key] < 3:
			return 0, errors.New("not yet")
		case key == "ns/again" && calls[key] < 3:
			return time.Millisecond, nil
		}
		if calls["ns/fails"] == 3 && calls["ns/again"] == 3 && !stopped {
			stopped = true
			close(done)
		}
		return 0, nil
	})
	q.AddObject(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "fails"}})
	q.Add("ns/again")
	wait(t, done, "third sync of both keys")
	l.Stop()
	mu.Lock()
	defer mu.Unlock()
	if calls["ns/fails"] != 3 || calls["ns/again"] != 3 {
		t.Errorf("syncs %v, want 3 of each", calls)
	}
	want := "testsim: ns/fails: not yet (retrying)"
	if got := lg.all(); len(got) != 2 || got[0] != want || got[1] != want {
		t.Errorf("log %q, want twice %q", got, want)
	}
}

// Every passes at once and then on every tick; an error is logged with the
// Loop's name; Stop ends it.
func TestEveryPassesAndLogs(t *testing.T) {
	var lg logs
	l := NewLoop(context.Background(), "testsim", lg.logf)
	passes := make(chan struct{})
	l.Every(time.Millisecond, func(ctx context.Context) error {
		select {
		case passes <- struct{}{}:
		case <-ctx.Done():
		}
		return errors.New("pass failed")
	})
	wait(t, passes, "first pass")
	wait(t, passes, "second pass")
	wait(t, passes, "third pass") // the first two have logged
	l.Stop()
	if got := lg.all(); len(got) < 2 || got[0] != "testsim: pass failed" {
		t.Errorf("log %q, want \"testsim: pass failed\" per pass", got)
	}
	if l.Context().Err() == nil {
		t.Error("the Loop's context is live after Stop")
	}
}

// Watch reports an informer that cannot list as not synced once its
// context ends, and Stop ends the informer.
func TestWatchRefusesUnsyncedInformer(t *testing.T) {
	l := NewLoop(context.Background(), "testsim", nil)
	listed := make(chan struct{}, 1)
	lw := &toolscache.ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
			select {
			case listed <- struct{}{}:
			default:
			}
			return nil, errors.New("no such kind")
		},
		WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) {
			return nil, errors.New("no such kind")
		},
	}
	inf := toolscache.NewSharedIndexInformer(lw, &corev1.Pod{}, 0, toolscache.Indexers{})
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-listed; cancel() }()
	if l.Watch(ctx, inf) {
		t.Error("Watch says an informer that cannot list has synced")
	}
	l.Stop()
	if !inf.IsStopped() {
		t.Error("the informer runs on after Stop")
	}
}

// Every client NewClients makes reaches the API server as
// raydar-<name> (what the audit log shows).
func TestNewClientsUserAgent(t *testing.T) {
	var mu sync.Mutex
	var agents []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		agents = append(agents, r.UserAgent())
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path { // the discovery the Client's REST mapper asks for, then pods
		case "/api":
			fmt.Fprint(w, `{"kind":"APIVersions","versions":["v1"]}`)
		case "/apis":
			fmt.Fprint(w, `{"kind":"APIGroupList","apiVersion":"v1","groups":[]}`)
		case "/api/v1":
			fmt.Fprint(w, `{"kind":"APIResourceList","groupVersion":"v1","resources":[{"name":"pods","namespaced":true,"kind":"Pod","verbs":["list"]}]}`)
		default:
			fmt.Fprint(w, `{"kind":"PodList","apiVersion":"v1","metadata":{},"items":[]}`)
		}
	}))
	defer srv.Close()
	c, err := NewClients(&rest.Config{Host: srv.URL}, "testsim", nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := c.Kube.CoreV1().Pods("ns").List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.Client.List(ctx, &corev1.PodList{}, client.InNamespace("ns")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Dynamic.Resource(corev1.SchemeGroupVersion.WithResource("pods")).Namespace("ns").List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(agents) < 3 {
		t.Fatalf("%d requests, want 3 at least", len(agents))
	}
	for _, a := range agents {
		if a != "raydar-testsim" {
			t.Errorf("user agent %q, want raydar-testsim", a)
		}
	}
	if _, err := NewClients(nil, "testsim", nil); err == nil || !strings.HasPrefix(err.Error(), "testsim: ") {
		t.Errorf("NewClients(nil) = %v, want an error naming testsim", err)
	}
}
