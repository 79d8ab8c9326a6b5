package gauges

import (
	"context"
	"errors"
	"sort"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/raydar/raydar/kube/internal/wanted"
	"github.com/raydar/raydar/rayapi/podview"
	"github.com/raydar/raydar/rayapi/raymetrics"
)

// Defaults of a Poller.
const (
	DefaultInterval         = 5 * time.Second
	DefaultHistory          = 15 * time.Minute
	DefaultForget           = 30 * time.Second
	DefaultConcurrency      = 4
	DefaultForbiddenBackoff = 5 * time.Minute
	// DefaultIdleBelowPct and DefaultIdleFor: a GPU below 5 % for 10
	// minutes is idle (issue 44's default; configurable).
	DefaultIdleBelowPct = 5.0
	DefaultIdleFor      = 10 * time.Minute
)

// Series names a cluster's history.
type Series string

// The series kept per cluster.
const (
	// CPU: the cluster's CPU use in percent of its cores (each node's
	// ray_node_cpu_utilization weighted by its ray_node_cpu_count).
	CPU Series = "cpu"
	// GPU: the mean utilisation of the cluster's GPUs, percent.
	GPU Series = "gpu"
	// ObjectStore: bytes in the object stores' memory (not spilled).
	ObjectStore Series = "objstore"
	// ServeRPS, ServeP50MS, ServeP99MS: Serve's HTTP requests per second
	// and latency quantiles between two scrapes, summed over the proxies.
	ServeRPS   Series = "serve_rps"
	ServeP50MS Series = "serve_p50_ms"
	ServeP99MS Series = "serve_p99_ms"
)

var allSeries = []Series{CPU, GPU, ObjectStore, ServeRPS, ServeP50MS, ServeP99MS}

// Options configure NewPoller.
type Options struct {
	Fetcher Fetcher // required
	// Pods lists a RayCluster's pods (label ray.io/cluster) from a cache
	// (required).
	Pods func(namespace, cluster string) ([]*podview.Pod, error)
	// Interval between two scrapes of a wanted cluster; History how far
	// back the series go (their capacity is History/Interval+1 points);
	// Forget: a cluster nobody asked for in this long is no longer
	// scraped and its history is dropped; Concurrency bounds the requests
	// in flight over all clusters; ForbiddenBackoff: how long a cluster
	// whose proxy was forbidden is not asked again.
	Interval, History, Forget, ForbiddenBackoff time.Duration
	Concurrency                                 int
	MaxBytes                                    int64
	// IdleBelowPct and IdleFor: what counts as an idle GPU.
	IdleBelowPct float64
	IdleFor      time.Duration
	Now          func() time.Time
}

// GPUUse is one GPU held by a Ray pod, as this process saw it.
type GPUUse struct {
	Namespace, Cluster, Pod, Group string
	Index                          int
	Name                           string
	UtilPct                        float64
	GRAMUsedMiB, GRAMTotalMiB      float64
	// BelowSince is when the GPU last went below the idle threshold (zero
	// while it is above); IdleSeconds the time observed below it since this
	// process first read the GPU, ObservedSeconds the time observed at all.
	BelowSince                   time.Time
	IdleSeconds, ObservedSeconds float64
	Seen                         time.Time // last read
}

// IdleFor is how long the GPU has been below the threshold at now.
func (g GPUUse) IdleFor(now time.Time) time.Duration {
	if g.BelowSince.IsZero() {
		return 0
	}
	return now.Sub(g.BelowSince)
}

// IdleGPUHours is the GPU-hours observed below the threshold.
func (g GPUUse) IdleGPUHours() float64 { return g.IdleSeconds / 3600 }

// Cluster is what a Poller knows of one cluster.
type Cluster struct {
	Namespace, Name string
	// Done: a scrape has finished; before it nothing is known.
	Done bool
	At   time.Time // the last scrape
	Pods []PodGauges
	// Forbidden: the proxy was refused; not asked again before Until.
	Forbidden      bool
	ForbiddenUntil time.Time
	// History per series, oldest first, within the Poller's History.
	History map[Series][]Point
	// GPUs held by the cluster's pods, by pod and index.
	GPUs []GPUUse
}

// Last is the newest point of a series.
func (c Cluster) Last(s Series) (Point, bool) {
	h := c.History[s]
	if len(h) == 0 {
		return Point{}, false
	}
	return h[len(h)-1], true
}

// Pod returns the gauges of the named pod.
func (c Cluster) Pod(name string) (PodGauges, bool) {
	for _, p := range c.Pods {
		if p.Pod == name {
			return p, true
		}
	}
	return PodGauges{}, false
}

// Poller keeps the gauges of the clusters someone looks at: Get marks a
// cluster as wanted and returns what is known at once; a background loop
// scrapes each wanted cluster at most every Interval. Get never blocks on
// I/O, so the TUI may call it from its loop.
type Poller struct {
	opts  Options
	slots chan struct{} // the requests in flight, over every cluster
	sched *wanted.Scheduler[types.NamespacedName, entry]
}

type entry struct {
	done   bool
	at     time.Time
	pods   []PodGauges
	forbid time.Time // not before
	series map[Series]*ring
	gpus   map[string]*GPUUse // pod/index
	// the previous round's Serve counters, for rates and quantiles
	serveAt  time.Time
	serveReq float64
	serveLat []raymetrics.Bucket
}

// NewPoller starts the loop; Close stops it.
func NewPoller(o Options) (*Poller, error) {
	p, err := newPoller(o)
	if err != nil {
		return nil, err
	}
	p.sched.Start()
	return p, nil
}

// newPoller is a Poller without its loop (tests drive sched.StartDue).
func newPoller(o Options) (*Poller, error) {
	if o.Fetcher == nil || o.Pods == nil {
		return nil, errors.New("gauges: a Poller needs a Fetcher and a Pods lookup")
	}
	if o.Interval <= 0 {
		o.Interval = DefaultInterval
	}
	if o.History <= 0 {
		o.History = DefaultHistory
	}
	if o.Forget <= 0 {
		o.Forget = DefaultForget
	}
	if o.ForbiddenBackoff <= 0 {
		o.ForbiddenBackoff = DefaultForbiddenBackoff
	}
	if o.Concurrency <= 0 {
		o.Concurrency = DefaultConcurrency
	}
	if o.IdleBelowPct <= 0 {
		o.IdleBelowPct = DefaultIdleBelowPct
	}
	if o.IdleFor <= 0 {
		o.IdleFor = DefaultIdleFor
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	p := &Poller{opts: o, slots: make(chan struct{}, o.Concurrency)}
	// Concurrency bounds the requests (ScrapeCluster takes a slot per
	// pod), not the clusters, so the scheduler's own bound is off.
	p.sched = wanted.New(wanted.Options[types.NamespacedName, entry]{
		Interval: o.Interval, Forget: o.Forget, Now: o.Now,
		New: func() entry {
			e := entry{series: map[Series]*ring{}, gpus: map[string]*GPUUse{}}
			for _, s := range allSeries {
				e.series[s] = newRing(p.Capacity())
			}
			return e
		},
		Poll: p.scrape,
		Hold: func(e *entry, now time.Time) bool { return now.Before(e.forbid) },
	})
	return p, nil
}

// IdleBelowPct is the utilisation (percent) under which a GPU is idle.
func (p *Poller) IdleBelowPct() float64 { return p.opts.IdleBelowPct }

// IdleFor is how long a GPU must stay under IdleBelowPct to count as idle.
func (p *Poller) IdleFor() time.Duration { return p.opts.IdleFor }

// Idle reports whether g counts as idle at now.
func (p *Poller) Idle(g GPUUse, now time.Time) bool { return g.IdleFor(now) >= p.opts.IdleFor }

// Capacity is the number of points a series holds.
func (p *Poller) Capacity() int { return int(p.opts.History/p.opts.Interval) + 1 }

// Get returns what is known of the RayCluster namespace/name and marks it
// as wanted.
func (p *Poller) Get(namespace, name string) Cluster {
	key := types.NamespacedName{Namespace: namespace, Name: name}
	now := p.opts.Now()
	c := Cluster{Namespace: namespace, Name: name}
	p.sched.Want(key, func(e *entry) {
		c.Done, c.At, c.Pods = e.done, e.at, e.pods
		c.Forbidden, c.ForbiddenUntil, c.History = now.Before(e.forbid), e.forbid, map[Series][]Point{}
		since := now.Add(-p.opts.History)
		for s, r := range e.series {
			if pts := r.points(since); len(pts) > 0 {
				c.History[s] = pts
			}
		}
		for _, g := range e.gpus {
			c.GPUs = append(c.GPUs, *g)
		}
	})
	sort.Slice(c.GPUs, func(a, b int) bool {
		if c.GPUs[a].Pod != c.GPUs[b].Pod {
			return c.GPUs[a].Pod < c.GPUs[b].Pod
		}
		return c.GPUs[a].Index < c.GPUs[b].Index
	})
	return c
}

// Close stops the loop and the scrapes in flight, and waits for them.
func (p *Poller) Close() { p.sched.Close() }

// scrape reads one cluster; what it returns records the round.
func (p *Poller) scrape(ctx context.Context, k types.NamespacedName) func(*entry) {
	pods, err := p.opts.Pods(k.Namespace, k.Name)
	if err != nil {
		return nil
	}
	out, forbidden := ScrapeCluster(ctx, ScrapeOptions{Fetcher: p.opts.Fetcher, MaxBytes: p.opts.MaxBytes,
		Slots: p.slots, Now: p.opts.Now}, pods)
	now := p.opts.Now()
	return func(e *entry) {
		e.done, e.at, e.pods = true, now, out
		if forbidden {
			e.forbid = now.Add(p.opts.ForbiddenBackoff)
			return
		}
		p.record(k, e, now)
	}
}

// record appends the round's aggregates to the cluster's series and
// advances each GPU's idle clock, under the scheduler's lock.
func (p *Poller) record(k types.NamespacedName, e *entry, now time.Time) {
	a := Aggregate(e.pods)
	if a.HasCPU {
		e.series[CPU].add(Point{now, a.CPUPct})
	}
	if a.GPUs > 0 {
		e.series[GPU].add(Point{now, a.GPUPct})
	}
	if a.HasObjectStore {
		e.series[ObjectStore].add(Point{now, a.ObjectStoreBytes})
	}
	if a.Serve.Present {
		if !e.serveAt.IsZero() && a.Serve.Requests >= e.serveReq {
			dt := now.Sub(e.serveAt).Seconds()
			if dt > 0 {
				e.series[ServeRPS].add(Point{now, (a.Serve.Requests - e.serveReq) / dt})
			}
			if q, ok := raymetrics.Quantile(0.5, e.serveLat, a.Serve.Latency); ok {
				e.series[ServeP50MS].add(Point{now, q})
			}
			if q, ok := raymetrics.Quantile(0.99, e.serveLat, a.Serve.Latency); ok {
				e.series[ServeP99MS].add(Point{now, q})
			}
		}
		e.serveAt, e.serveReq, e.serveLat = now, a.Serve.Requests, a.Serve.Latency
	}
	seen := map[string]bool{}
	for _, pg := range e.pods {
		if pg.Node == nil {
			continue
		}
		for _, g := range pg.Node.GPUs {
			key := pg.Pod + "/" + strconv.Itoa(g.Index)
			seen[key] = true
			u := e.gpus[key]
			if u == nil {
				u = &GPUUse{Namespace: k.Namespace, Cluster: k.Name, Pod: pg.Pod, Group: pg.Group, Index: g.Index}
				e.gpus[key] = u
			}
			below := g.UtilPct < p.opts.IdleBelowPct
			if !u.Seen.IsZero() {
				dt := now.Sub(u.Seen).Seconds()
				u.ObservedSeconds += dt
				if below && !u.BelowSince.IsZero() {
					u.IdleSeconds += dt
				}
			}
			switch {
			case !below:
				u.BelowSince = time.Time{}
			case u.BelowSince.IsZero():
				u.BelowSince = now
			}
			u.Name, u.UtilPct, u.Seen = g.Name, g.UtilPct, now
			u.GRAMUsedMiB, u.GRAMTotalMiB = g.GRAMUsedMiB, g.GRAMUsedMiB+g.GRAMAvailableMiB
		}
	}
	for key, u := range e.gpus { // a pod that went, or a node that stopped reporting its GPU
		if !seen[key] && now.Sub(u.Seen) > p.opts.Forget {
			delete(e.gpus, key)
		}
	}
}

// Totals are a cluster's aggregates of one round.
type Totals struct {
	CPUPct           float64
	HasCPU           bool
	GPUPct           float64
	GPUs             int
	ObjectStoreBytes float64
	HasObjectStore   bool
	MemUsed, MemTot  float64
	Serve            raymetrics.Serve // summed over the pods
	Known, Pods      int              // pods whose node gauges were read, of all
}

// Aggregate sums one round of a cluster's pods.
func Aggregate(pods []PodGauges) Totals {
	var t Totals
	var cores, usedCores, cpuPctSum float64
	var cpuN int
	for _, pg := range pods {
		t.Pods++
		if pg.HasObjectStore {
			t.ObjectStoreBytes += pg.ObjectStoreBytes
			t.HasObjectStore = true
		}
		if pg.Serve.Present {
			t.Serve.Present = true
			t.Serve.Requests += pg.Serve.Requests
			t.Serve.Errors += pg.Serve.Errors
			t.Serve.Count += pg.Serve.Count
			t.Serve.SumMS += pg.Serve.SumMS
			t.Serve.Latency = addBuckets(t.Serve.Latency, pg.Serve.Latency)
		}
		n := pg.Node
		if n == nil {
			continue
		}
		t.Known++
		if n.HasCPU {
			cpuN++
			cpuPctSum += n.CPUPct
			if n.HasCPUCount && n.CPUCount > 0 {
				cores += n.CPUCount
				usedCores += n.CPUPct / 100 * n.CPUCount
			}
		}
		if n.HasMem {
			t.MemUsed += n.MemUsed
			t.MemTot += n.MemTotal
		}
		for _, g := range n.GPUs {
			t.GPUs++
			t.GPUPct += g.UtilPct
		}
	}
	switch {
	case cores > 0:
		t.CPUPct, t.HasCPU = 100*usedCores/cores, true
	case cpuN > 0:
		t.CPUPct, t.HasCPU = cpuPctSum/float64(cpuN), true
	}
	if t.GPUs > 0 {
		t.GPUPct /= float64(t.GPUs)
	}
	return t
}

func addBuckets(sum, add []raymetrics.Bucket) []raymetrics.Bucket {
	out := append([]raymetrics.Bucket(nil), sum...)
	for _, b := range add {
		i := sort.Search(len(out), func(i int) bool { return out[i].UpperMS >= b.UpperMS })
		if i < len(out) && out[i].UpperMS == b.UpperMS {
			out[i].Count += b.Count
			continue
		}
		out = append(out, raymetrics.Bucket{})
		copy(out[i+1:], out[i:])
		out[i] = b
	}
	return out
}
