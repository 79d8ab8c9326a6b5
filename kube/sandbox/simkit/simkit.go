// Package simkit owns what the sandbox's simulators (headsim, certsim,
// gatewaysim, gangsim; also the autoscaler's clients, podforward and
// execsim) share to run against the API server, and nothing of what any of
// them simulates:
//
//   - NewClients: one way to connect, as user agent raydar-<name>.
//   - Loop: one run loop. It starts and waits for a simulator's informers
//     (Watch), drains its work queues with workers that retry a failed key
//     with back-off and look again when asked (NewQueue, Work), runs its
//     periodic passes (Every) and its other goroutines (Go), and Stop ends
//     them all and waits for them.
//   - PodObjects (podobjects.go): one kwok object per pod at its desired
//     spec, written when it changes (podforward's PortForwards, execsim's
//     Execs).
package simkit

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/rayapi/scheme"
)

// Clients are a simulator's connections to the API server.
type Clients struct {
	Kube    kubernetes.Interface
	Client  client.Client
	Dynamic dynamic.Interface
}

// NewClients connects to cfg (copied, not changed) with user agent
// "raydar-"+name; sch is the Client's scheme, nil for rayapi/scheme's.
// Errors start with name.
func NewClients(cfg *rest.Config, name string, sch *runtime.Scheme) (Clients, error) {
	if cfg == nil {
		return Clients{}, fmt.Errorf("%s: need a rest.Config", name)
	}
	if sch == nil {
		sch = scheme.New()
	}
	cfg = rest.CopyConfig(cfg)
	cfg.UserAgent = "raydar-" + name
	var (
		c   Clients
		err error
	)
	if c.Kube, err = kubernetes.NewForConfig(cfg); err != nil {
		return Clients{}, fmt.Errorf("%s: %w", name, err)
	}
	if c.Client, err = client.New(cfg, client.Options{Scheme: sch}); err != nil {
		return Clients{}, fmt.Errorf("%s: %w", name, err)
	}
	if c.Dynamic, err = dynamic.NewForConfig(cfg); err != nil {
		return Clients{}, fmt.Errorf("%s: %w", name, err)
	}
	return c, nil
}

// SyncTimeout bounds Watch's wait for its informers.
const SyncTimeout = time.Minute

// Loop runs a simulator's goroutines until Stop or the end of the context
// it was made with. Make it with NewLoop.
type Loop struct {
	name   string
	logf   func(format string, args ...any)
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu     sync.Mutex
	queues []*Queue
}

// NewLoop returns a Loop whose goroutines run until parent ends or Stop.
// Its log lines go to logf (nil: nowhere), starting with name.
func NewLoop(parent context.Context, name string, logf func(format string, args ...any)) *Loop {
	if logf == nil {
		logf = func(string, ...any) {}
	}
	ctx, cancel := context.WithCancel(parent)
	return &Loop{name: name, logf: logf, ctx: ctx, cancel: cancel}
}

// Context ends when the Loop stops.
func (l *Loop) Context() context.Context { return l.ctx }

// Go runs f in a goroutine that Stop waits for; f should return once
// Context ends.
func (l *Loop) Go(f func()) {
	l.wg.Add(1)
	go func() { defer l.wg.Done(); f() }()
}

// Watch runs the informers until the Loop stops and waits until they have
// synced: false when they have not within SyncTimeout, or before ctx or
// the Loop ended.
func (l *Loop) Watch(ctx context.Context, infs ...toolscache.SharedIndexInformer) bool {
	synced := make([]toolscache.InformerSynced, 0, len(infs))
	for _, inf := range infs {
		l.Go(func() { inf.Run(l.ctx.Done()) })
		synced = append(synced, inf.HasSynced)
	}
	ctx, cancel := context.WithTimeout(ctx, SyncTimeout)
	defer cancel()
	defer context.AfterFunc(l.ctx, cancel)()
	return toolscache.WaitForCacheSync(ctx.Done(), synced...)
}

// Queue is a work queue of keys ("namespace/name" for an object) that Work
// drains. A key that failed is retried after 50 ms, doubling to 2 s.
type Queue struct {
	workqueue.TypedRateLimitingInterface[string]
}

// NewQueue returns a Queue that Stop shuts down.
func (l *Loop) NewQueue() *Queue {
	q := &Queue{workqueue.NewTypedRateLimitingQueue(
		workqueue.NewTypedItemExponentialFailureRateLimiter[string](50*time.Millisecond, 2*time.Second))}
	l.mu.Lock()
	l.queues = append(l.queues, q)
	l.mu.Unlock()
	return q
}

// AddObject adds obj's "namespace/name" (a deleted object's too).
func (q *Queue) AddObject(obj any) {
	if key, err := toolscache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
		q.Add(key)
	}
}

// Handler adds every object added, updated or deleted.
func (q *Queue) Handler() toolscache.ResourceEventHandlerFuncs { return OnEvent(q.AddObject) }

// OnEvent calls f with every object added, updated (the new one) or
// deleted (possibly a toolscache.DeletedFinalStateUnknown).
func OnEvent(f func(obj any)) toolscache.ResourceEventHandlerFuncs {
	return toolscache.ResourceEventHandlerFuncs{AddFunc: f, UpdateFunc: func(_, o any) { f(o) }, DeleteFunc: f}
}

// SyncFunc handles one key. It returns how long to wait before looking at
// the key again (0: not needed), or an error: the key is then logged and
// retried with back-off, unless the Loop is stopping.
type SyncFunc func(ctx context.Context, key string) (again time.Duration, err error)

// Work starts workers goroutines that take keys from q and sync them
// until q shuts down (Stop).
func (l *Loop) Work(q *Queue, workers int, sync SyncFunc) {
	for range workers {
		l.Go(func() {
			for l.next(q, sync) {
			}
		})
	}
}

// next syncs one key of q; false once q has shut down.
func (l *Loop) next(q *Queue, sync SyncFunc) bool {
	key, shutdown := q.Get()
	if shutdown {
		return false
	}
	defer q.Done(key)
	again, err := sync(l.ctx, key)
	switch {
	case err != nil && l.ctx.Err() == nil:
		l.logf("%s: %s: %v (retrying)", l.name, key, err)
		q.AddRateLimited(key)
	case again > 0:
		q.Forget(key)
		q.AddAfter(key, again)
	default:
		q.Forget(key)
	}
	return true
}

// Every runs pass at once and then every interval until the Loop stops;
// an error is logged.
func (l *Loop) Every(interval time.Duration, pass func(ctx context.Context) error) {
	l.Go(func() {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			if err := pass(l.ctx); err != nil && l.ctx.Err() == nil {
				l.logf("%s: %v", l.name, err)
			}
			select {
			case <-l.ctx.Done():
				return
			case <-t.C:
			}
		}
	})
}

// Stop ends the Loop's context, shuts its queues down and waits for its
// goroutines. It is safe to call more than once.
func (l *Loop) Stop() {
	l.cancel()
	l.mu.Lock()
	qs := l.queues
	l.mu.Unlock()
	for _, q := range qs {
		q.ShutDown()
	}
	l.wg.Wait()
}
