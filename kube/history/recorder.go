package history

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/rayapi/kinds"
	"github.com/raydar/raydar/rayapi/podview"
)

// InformerSource is the part of a controller-runtime cache the Recorder
// needs (cache.Cache implements it).
type InformerSource interface {
	GetInformer(ctx context.Context, obj client.Object, opts ...cache.InformerGetOption) (cache.Informer, error)
}

// RecorderOptions configure a Recorder.
type RecorderOptions struct {
	// Server is the URL of the API server the cache watches: every entry
	// is filed under it (Ref.Server), and Version and Entries read its
	// timelines.
	Server string
	// Authors is what the cache's transform noted (Authors.Keep); without
	// it changes carry no author.
	Authors *Authors
	// Buffer is how many entries wait for the writer (default 4096); past
	// it entries are dropped and counted (Dropped), never blocking the
	// informer.
	Buffer int
	// Now stamps entries; time.Now when nil.
	Now func() time.Time
	// Logger says what could not be written.
	Logger logr.Logger
	// FlushInterval is how long the writer gathers entries before one
	// append (default 250 ms): the store opens its file per append.
	FlushInterval time.Duration
}

// Recorder turns informer events of the Ray kinds and Ray pods into
// timeline entries and appends them to a Store from one writer goroutine.
type Recorder struct {
	store   *Store
	server  string
	authors *Authors
	now     func() time.Time
	log     logr.Logger
	flush   time.Duration
	ch      chan []Entry

	dropped atomic.Int64
	written atomic.Int64

	mu       sync.Mutex
	closed   bool
	regs     []registration
	versions map[string]uint64
	done     chan struct{}
}

type registration struct {
	inf cache.Informer
	reg toolscache.ResourceEventHandlerRegistration
}

// NewRecorder starts a Recorder's writer on store. Close stops it.
func NewRecorder(store *Store, o RecorderOptions) *Recorder {
	if o.Buffer <= 0 {
		o.Buffer = 4096
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.FlushInterval <= 0 {
		o.FlushInterval = 250 * time.Millisecond
	}
	r := &Recorder{store: store, server: o.Server, authors: o.Authors, now: o.Now, log: o.Logger, flush: o.FlushInterval,
		ch: make(chan []Entry, o.Buffer/4+1), versions: map[string]uint64{}, done: make(chan struct{})}
	go r.write()
	return r
}

// Store is the store the Recorder writes to.
func (r *Recorder) Store() *Store { return r.store }

// Dropped counts the entries dropped because the writer fell behind.
func (r *Recorder) Dropped() int64 { return r.dropped.Load() }

// Written counts the entries appended to the store.
func (r *Recorder) Written() int64 { return r.written.Load() }

// Version of an object's timeline: it grows each time entries of the
// object are written, so a view re-reads the store only on change. A map
// lookup, for a TUI's View.
func (r *Recorder) Version(ref Ref) uint64 {
	ref.Server = r.server
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.versions[ref.key()]
}

// Watch adds the Recorder's handlers to c's informers (starting those c
// does not have, without waiting for them to sync). Close removes them.
func (r *Recorder) Watch(ctx context.Context, c InformerSource) error {
	for _, k := range kinds.All { // the Ray kinds and their pods; an optional kind may be missing (older CRDs)
		obj := k.New()
		inf, err := c.GetInformer(ctx, obj, cache.BlockUntilSynced(false))
		if err != nil && k.Optional && meta.IsNoMatchError(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("history: watch %T: %w", obj, err)
		}
		reg, err := inf.AddEventHandler(r.handler())
		if err != nil {
			return fmt.Errorf("history: watch %T: %w", obj, err)
		}
		r.mu.Lock()
		if r.closed {
			r.mu.Unlock()
			_ = inf.RemoveEventHandler(reg)
			return errors.New("history: recorder closed")
		}
		r.regs = append(r.regs, registration{inf, reg})
		r.mu.Unlock()
	}
	return nil
}

func (r *Recorder) handler() toolscache.ResourceEventHandler {
	return toolscache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, initial bool) {
			if initial {
				return // there before raydar looked: not news
			}
			r.observe(nil, obj)
		},
		UpdateFunc: func(old, new any) { r.observe(old, new) },
		DeleteFunc: func(obj any) {
			if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			r.observe(obj, nil)
		},
	}
}

// Observe records one change: old nil a creation, new nil a deletion.
// Exported for tests and for callers that feed changes themselves.
func (r *Recorder) Observe(old, new client.Object) { r.observe(old, new) }

func (r *Recorder) observe(old, new any) {
	now := r.now()
	var entries []Entry
	switch {
	case isPod(old) || isPod(new):
		o, _ := podview.From(old) // a *corev1.Pod of the operator's cache, a record of the TUI's
		n, _ := podview.From(new)
		entries = DiffPod(o, n, now)
	default:
		o, _ := old.(client.Object)
		n, _ := new.(client.Object)
		var w Written
		if n != nil {
			w, _ = r.authors.At(n.GetUID(), n.GetResourceVersion())
		} else if o != nil {
			r.authors.Forget(o.GetUID())
		}
		entries = Diff(o, n, w, now)
	}
	if len(entries) == 0 {
		return
	}
	for i := range entries {
		entries[i].Server = r.server
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	select {
	case r.ch <- entries:
	default:
		r.dropped.Add(int64(len(entries)))
	}
}

func isPod(o any) bool {
	switch o.(type) {
	case *corev1.Pod, *podview.Pod:
		return true
	}
	return false
}

// maxBatch is how many entries the writer gathers into one append at
// most. A transaction's pages are mapped into the process while it runs:
// into a store at its bounds (every append also drops as many of the
// oldest entries, each from its object's index), 512 entries added 10 MiB
// to the process's resident memory for the append, 64 add 4 MiB, at the
// same entries per second (BenchmarkStoreAppendFull, docs/benchmarks.md).
const maxBatch = 64

// write appends what the handlers send, gathered for the flush interval
// (or until maxBatch entries, or Close) into one append.
func (r *Recorder) write() {
	defer close(r.done)
	for first := range r.ch {
		batch := first
		timer := time.NewTimer(r.flush)
	more:
		for len(batch) < maxBatch {
			select {
			case e, ok := <-r.ch:
				if !ok {
					break more
				}
				batch = append(batch, e...)
			case <-timer.C:
				break more
			}
		}
		timer.Stop()
		if err := r.store.Append(batch); err != nil {
			r.dropped.Add(int64(len(batch)))
			r.log.Error(err, "history: entries not written", "entries", len(batch))
			continue
		}
		r.written.Add(int64(len(batch)))
		r.mu.Lock()
		if len(r.versions) > MaxObjects {
			clear(r.versions) // views re-read once; the map stays bounded
		}
		for i := range batch {
			r.versions[batch[i].key()]++
		}
		r.mu.Unlock()
	}
}

// Close removes the handlers, writes what is queued and stops the writer.
// It does not close the Store. Safe to call more than once.
func (r *Recorder) Close() {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		<-r.done
		return
	}
	r.closed = true
	regs := r.regs
	r.regs = nil
	close(r.ch)
	r.mu.Unlock()
	for _, g := range regs {
		_ = g.inf.RemoveEventHandler(g.reg)
	}
	<-r.done
}

// Entries is the object's timeline on the Recorder's server, oldest first
// (Store.Query): I/O.
func (r *Recorder) Entries(ref Ref) ([]Entry, error) {
	ref.Server = r.server
	return r.store.Query(ref, time.Time{})
}

// Note is "" when the store is on disk, else why it is in memory.
func (r *Recorder) Note() string { return r.store.Note() }
