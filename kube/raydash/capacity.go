package raydash

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/raydar/raydar/rayapi/dashboard"
	"github.com/raydar/raydar/rayapi/podview"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// Defaults for CapacityOptions.
const (
	// DefaultCapacityInterval is the least time between two polls of one
	// cluster's capacity.
	DefaultCapacityInterval = 5 * time.Second
	// DefaultCapacityForget: a cluster whose capacity nobody asked for in
	// this long is no longer polled (and its last result is dropped).
	DefaultCapacityForget = 30 * time.Second
	// DefaultCapacityConcurrency bounds the polls in flight.
	DefaultCapacityConcurrency = 4
)

// CapacityOptions configure NewCapacityPoller.
type CapacityOptions struct {
	// Resolver hands out the dashboard clients (required).
	Resolver Resolver
	// Cluster returns the RayCluster namespace/name from a cache (required);
	// nil and no error when it does not exist.
	Cluster func(namespace, name string) (*rayv1.RayCluster, error)
	// Pods lists the pods of the RayCluster namespace/name from a cache
	// (label ray.io/cluster); nil leaves RayNode.Pod empty.
	Pods func(namespace, name string) ([]*podview.Pod, error)
	// Interval, Forget, Concurrency: see the Default* constants.
	Interval    time.Duration
	Forget      time.Duration
	Concurrency int
	// Now replaces time.Now (tests).
	Now func() time.Time
}

// CapacityPoller keeps Ray's view of the capacity of the clusters someone
// looks at: Get marks a cluster as wanted and returns the last result at
// once; a background loop polls each wanted cluster at most every Interval,
// at most Concurrency at a time, and stops polling a cluster nobody asked
// for in Forget. Get never blocks on I/O, so the TUI may call it from View.
type CapacityPoller struct {
	opts  CapacityOptions
	ctx   context.Context
	stop  context.CancelFunc
	kick  chan struct{}
	slots chan struct{}
	wg    sync.WaitGroup

	mu      sync.Mutex
	closed  bool
	entries map[types.NamespacedName]*capEntry
}

type capEntry struct {
	wanted   time.Time // last Get
	polled   time.Time // last poll started
	inFlight bool
	done     bool // a poll has finished
	cap      *dashboard.Capacity
	err      error
}

// NewCapacityPoller starts the poller's loop; Close stops it.
func NewCapacityPoller(opts CapacityOptions) (*CapacityPoller, error) {
	if opts.Resolver == nil || opts.Cluster == nil {
		return nil, errors.New("raydash: a CapacityPoller needs a Resolver and a Cluster lookup")
	}
	if opts.Interval <= 0 {
		opts.Interval = DefaultCapacityInterval
	}
	if opts.Forget <= 0 {
		opts.Forget = DefaultCapacityForget
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = DefaultCapacityConcurrency
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	ctx, stop := context.WithCancel(context.Background())
	p := &CapacityPoller{opts: opts, ctx: ctx, stop: stop, kick: make(chan struct{}, 1),
		slots: make(chan struct{}, opts.Concurrency), entries: map[types.NamespacedName]*capEntry{}}
	p.wg.Add(1)
	go p.loop()
	return p, nil
}

// Get returns the last capacity read for the RayCluster namespace/name, or
// the error of the last poll; ok is false before the first poll has
// finished. It marks the cluster as wanted.
func (p *CapacityPoller) Get(namespace, name string) (c *dashboard.Capacity, err error, ok bool) {
	key := types.NamespacedName{Namespace: namespace, Name: name}
	p.mu.Lock()
	defer p.mu.Unlock()
	e := p.entries[key]
	if e == nil {
		if p.closed {
			return nil, errors.New("raydash: the CapacityPoller is closed"), false
		}
		e = &capEntry{}
		p.entries[key] = e
		p.wake()
	}
	e.wanted = p.opts.Now()
	return e.cap, e.err, e.done
}

// Close stops the loop and every poll in flight, and waits for them.
func (p *CapacityPoller) Close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.stop()
	p.wg.Wait()
}

// loop wakes on a new cluster and at a fraction of the interval, and starts
// the polls that are due.
func (p *CapacityPoller) loop() {
	defer p.wg.Done()
	tick := min(p.opts.Interval, p.opts.Forget) / 5
	tick = max(10*time.Millisecond, min(tick, time.Second))
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		p.startDue()
		select {
		case <-p.ctx.Done():
			return
		case <-p.kick:
		case <-t.C:
		}
	}
}

func (p *CapacityPoller) startDue() {
	now := p.opts.Now()
	p.mu.Lock()
	var due []types.NamespacedName
	for k, e := range p.entries {
		switch {
		case now.Sub(e.wanted) > p.opts.Forget && !e.inFlight:
			delete(p.entries, k)
		case !e.inFlight && (e.polled.IsZero() || now.Sub(e.polled) >= p.opts.Interval):
			due = append(due, k)
		}
	}
	p.mu.Unlock()
	for _, k := range due {
		select {
		case p.slots <- struct{}{}:
		case <-p.ctx.Done():
			return
		default:
			return // every slot busy: the next tick starts the rest
		}
		p.mu.Lock()
		e := p.entries[k]
		if e == nil || e.inFlight {
			p.mu.Unlock()
			<-p.slots
			continue
		}
		e.inFlight, e.polled = true, now
		p.mu.Unlock()
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			c, err := p.poll(k)
			<-p.slots
			p.mu.Lock()
			e.inFlight = false
			if p.ctx.Err() == nil {
				e.cap, e.err, e.done = c, err, true
			}
			p.mu.Unlock()
			p.wake() // a slot is free: start what waits for one
		}()
	}
}

func (p *CapacityPoller) wake() {
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

// poll reads one cluster's capacity, splits its demand by the cluster's
// node types and maps its nodes to pods.
func (p *CapacityPoller) poll(key types.NamespacedName) (*dashboard.Capacity, error) {
	rc, err := p.opts.Cluster(key.Namespace, key.Name)
	if err != nil {
		return nil, fmt.Errorf("raydash: RayCluster %s: %w", key, err)
	}
	if rc == nil {
		return nil, fmt.Errorf("raydash: RayCluster %s not found", key)
	}
	cl, err := p.opts.Resolver.ClientFor(p.ctx, rc)
	if err != nil {
		return nil, err
	}
	c, err := cl.Capacity(p.ctx)
	if err != nil {
		return nil, err
	}
	var pods []*podview.Pod
	if p.opts.Pods != nil {
		if pods, err = p.opts.Pods(key.Namespace, key.Name); err != nil {
			return nil, fmt.Errorf("raydash: pods of RayCluster %s: %w", key, err)
		}
	}
	Complete(c, rc, pods)
	return c, nil
}

// Complete does to a cluster's capacity, as the dashboard answered it, what
// only Kubernetes knows: demand no worker group could ever hold moves to
// Infeasible (Ray's dashboard does not say), and each Ray node is mapped
// to its pod by IP. Every reader (the TUI's poller, `raydar why`) calls it,
// so both say the same.
func Complete(c *dashboard.Capacity, rc *rayv1.RayCluster, pods []*podview.Pod) {
	c.SplitInfeasible(NodeTypes(rc))
	byIP := make(map[string]string, len(pods))
	for _, pod := range pods {
		if pod.Status.PodIP != "" {
			byIP[pod.Status.PodIP] = pod.Name
		}
	}
	c.MapPods(byIP)
}
