//go:build linux

package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
)

// fullOneNode is the smallest sandbox with every component.
func fullOneNode() Options {
	return Options{Scheduler: true, ControllerManager: true, Kwok: true, Nodes: []NodePool{{Count: 1}}}
}

// watchEverything opens the watches a client such as `kubectl get -w` or a
// raydar TUI in another terminal holds on a sandbox: pods, nodes,
// namespaces, config maps and events of every namespace.
func watchEverything(ctx context.Context, sb *Sandbox) ([]watch.Interface, error) {
	cs, err := kubernetes.NewForConfig(sb.Config)
	if err != nil {
		return nil, err
	}
	opens := []func(context.Context, metav1.ListOptions) (watch.Interface, error){
		cs.CoreV1().Pods("").Watch,
		cs.CoreV1().Nodes().Watch,
		cs.CoreV1().Namespaces().Watch,
		cs.CoreV1().ConfigMaps("").Watch,
		cs.CoreV1().Events("").Watch,
	}
	var ws []watch.Interface
	for _, open := range opens {
		w, err := open(ctx, metav1.ListOptions{})
		if err != nil {
			for _, w := range ws {
				w.Stop()
			}
			return nil, err
		}
		ws = append(ws, w)
	}
	return ws, nil
}

// TestStopWhileClientsWatch: Ctrl-C on `raydar sandbox`, or :q in the demo,
// while clients still watch the sandbox (kubectl get -w, a raydar TUI, an
// informer its owner has not stopped). Stop returns no error, every process
// of the sandbox is gone when it returns, so is the temporary state
// directory, and each client sees its watch end rather than hang.
func TestStopWhileClientsWatch(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: starts a control plane")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	sb, err := Start(ctx, fullOneNode())
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			_ = sb.Stop()
		}
	}()
	before := procsUnder(t, sb.StateDir)
	var names []string
	for _, c := range before {
		names = append(names, filepath.Base(strings.Fields(c)[0]))
	}
	for _, want := range []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok"} {
		if !slices.Contains(names, want) {
			t.Fatalf("no %s among the sandbox's processes %v", want, names)
		}
	}
	ws, err := watchEverything(ctx, sb)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, w := range ws {
			w.Stop()
		}
	}()

	stopped = true
	if err := sb.Stop(); err != nil {
		t.Fatalf("Stop while %d watches are open: %v", len(ws), err)
	}
	if left := procsUnder(t, sb.StateDir); len(left) != 0 {
		t.Errorf("processes left when Stop returned: %v", left)
	}
	if _, err := os.Stat(sb.StateDir); !os.IsNotExist(err) {
		t.Errorf("temporary state dir %s left behind: %v", sb.StateDir, err)
	}
	for i, w := range ws {
		if !watchEnds(w, time.Minute) {
			t.Errorf("watch %d still open a minute after Stop", i)
		}
	}
}

// watchEnds drains w and reports whether its result channel closed within
// timeout.
func watchEnds(w watch.Interface, timeout time.Duration) bool {
	deadline := time.After(timeout)
	for {
		select {
		case _, ok := <-w.ResultChan():
			if !ok {
				return true
			}
		case <-deadline:
			return false
		}
	}
}

// BenchmarkSandboxStop measures Stop alone (what Ctrl-C on `raydar
// sandbox` and :q in the demo cost), on an idle sandbox and on one that
// clients still watch (watchEverything).
func BenchmarkSandboxStop(b *testing.B) {
	for _, bc := range []struct {
		name    string
		watched bool
	}{{"idle", false}, {"watched", true}} {
		b.Run(bc.name, func(b *testing.B) {
			var total time.Duration
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				sb, err := Start(context.Background(), fullOneNode())
				if err != nil {
					b.Fatal(err)
				}
				var ws []watch.Interface
				if bc.watched {
					if ws, err = watchEverything(context.Background(), sb); err != nil {
						_ = sb.Stop()
						b.Fatal(err)
					}
				}
				b.StartTimer()
				t0 := time.Now()
				err = sb.Stop()
				total += time.Since(t0)
				b.StopTimer()
				for _, w := range ws {
					w.Stop()
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(total.Seconds()/float64(b.N), "stop-s/op")
		})
	}
}
