package scale

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// watcher follows one kind in every namespace from the moment it is made:
// start it before the writes whose effects it waits for.
type watcher struct {
	p       *plane
	newList func() client.ObjectList
	opts    []client.ListOption
	w       watch.Interface
	stopped atomic.Bool
}

// newWatcher starts a watcher; opts (a label selector) narrow it.
func newWatcher(b *testing.B, p *plane, newList func() client.ObjectList, opts ...client.ListOption) *watcher {
	b.Helper()
	w := &watcher{p: p, newList: newList, opts: opts}
	w.rewatch(b, nil)
	b.Cleanup(w.stop)
	return w
}

// stop ends the watch; an until under way returns false.
func (w *watcher) stop() {
	w.stopped.Store(true)
	w.w.Stop()
}

// rewatch lists the kind, hands each listed object to f (when not nil),
// and watches from the list's resource version.
func (w *watcher) rewatch(b *testing.B, f func(client.Object, time.Time) bool) bool {
	b.Helper()
	ctx := context.Background()
	l := w.newList()
	// A list of every pod on a loaded plane may time out: try again for
	// a few minutes before giving up.
	for try := 0; ; try++ {
		err := w.p.cl.List(ctx, l, w.opts...)
		if err == nil {
			break
		}
		if try == 20 {
			b.Fatal(err)
		}
		b.Logf("listing to watch again (try %d): %v", try+1, err)
		time.Sleep(5 * time.Second)
	}
	done := false
	if f != nil {
		items, err := apimeta.ExtractList(l)
		if err != nil {
			b.Fatal(err)
		}
		now := time.Now()
		for _, o := range items {
			if obj, ok := o.(client.Object); ok && f(obj, now) {
				done = true
			}
		}
	}
	var err error
	for try := 0; ; try++ {
		opts := append([]client.ListOption{&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: l.GetResourceVersion()}}}, w.opts...)
		if w.w, err = w.p.cl.Watch(ctx, w.newList(), opts...); err == nil {
			break
		}
		if try == 20 {
			b.Fatal(err)
		}
		time.Sleep(5 * time.Second)
	}
	return done
}

// until hands every object added or changed to f, with the time its event
// arrived, until f returns true (then true) or timeout passes (false).
// When the API server ends the watch it lists and watches again, and the
// listed objects go to f.
func (w *watcher) until(b *testing.B, timeout time.Duration, f func(obj client.Object, at time.Time) bool) bool {
	b.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case ev, ok := <-w.w.ResultChan():
			if !ok {
				if w.stopped.Load() {
					return false
				}
				if w.rewatch(b, f) {
					return true
				}
				continue
			}
			if ev.Type != watch.Added && ev.Type != watch.Modified {
				continue
			}
			if obj, ok := ev.Object.(client.Object); ok && f(obj, time.Now()) {
				return true
			}
		case <-deadline:
			return false
		}
	}
}
