package raydash

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/raydar/raydar/kube/internal/wanted"
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
	sched *wanted.Scheduler[types.NamespacedName, capEntry]
}

type capEntry struct {
	done bool // a poll has finished
	cap  *dashboard.Capacity
	err  error
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
	p := &CapacityPoller{opts: opts}
	p.sched = wanted.New(wanted.Options[types.NamespacedName, capEntry]{
		Interval: opts.Interval, Forget: opts.Forget, Concurrency: opts.Concurrency, Now: opts.Now,
		Poll: func(ctx context.Context, key types.NamespacedName) func(*capEntry) {
			c, err := p.poll(ctx, key)
			return func(e *capEntry) { e.cap, e.err, e.done = c, err, true }
		},
	})
	p.sched.Start()
	return p, nil
}

// Get returns the last capacity read for the RayCluster namespace/name, or
// the error of the last poll; ok is false before the first poll has
// finished. It marks the cluster as wanted.
func (p *CapacityPoller) Get(namespace, name string) (c *dashboard.Capacity, err error, ok bool) {
	key := types.NamespacedName{Namespace: namespace, Name: name}
	if !p.sched.Want(key, func(e *capEntry) { c, err, ok = e.cap, e.err, e.done }) {
		return nil, errors.New("raydash: the CapacityPoller is closed"), false
	}
	return c, err, ok
}

// Close stops the loop and every poll in flight, and waits for them.
func (p *CapacityPoller) Close() { p.sched.Close() }

// poll reads one cluster's capacity, splits its demand by the cluster's
// node types and maps its nodes to pods.
func (p *CapacityPoller) poll(ctx context.Context, key types.NamespacedName) (*dashboard.Capacity, error) {
	rc, err := p.opts.Cluster(key.Namespace, key.Name)
	if err != nil {
		return nil, fmt.Errorf("raydash: RayCluster %s: %w", key, err)
	}
	if rc == nil {
		return nil, fmt.Errorf("raydash: RayCluster %s not found", key)
	}
	cl, err := p.opts.Resolver.ClientFor(ctx, rc)
	if err != nil {
		return nil, err
	}
	c, err := cl.Capacity(ctx)
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
