package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	goruntime "runtime"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kwatch "github.com/raydar/raydar/kube/watch"
	"github.com/raydar/raydar/rayapi/scheme"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/test/internal/procstat"
)

// The floor (-floor): how long a client that does nothing but sync the
// pods raydar's TUI lists takes on the same plane, measured in this
// process before raydar starts, so that raydar's "cache synced after
// start" can be read against what the API server and the decoding alone
// cost. Four clients, each -floor times in turn (A B C D A B C D …), each a
// fresh connection: a bare client-go informer (protobuf, the Ray pod
// selector, no transform); controller-runtime's cache with the TUI's
// pod selector and transforms (protobuf, managed fields stripped,
// watch.SlimPod; no history recording, pods alone); the same cache
// through the TUI's wire trim (watch.SlimPodWire); and one plain LIST of
// the same pods (resourceVersion 0, from the watch cache).
//
// -floor-clients picks them by key; the keys after "clusters+pods" are
// issue 47's steps from that floor to raydar's session, one at a time
// (floorsession.go).
type floorClient struct {
	key, name string
	sync      func(ctx context.Context, cfg *rest.Config) (int, error)
}

var floorClients = []floorClient{
	{"informer", "client-go informer (protobuf, no transform)", floorInformer},
	{"cache", "controller-runtime cache with the TUI's pod selector and transform (SlimPod)", floorCache},
	{"cache-wire", "the same cache through the TUI's wire trim (SlimPodWire)", floorCacheWire},
	{"list", "one LIST (protobuf, resourceVersion 0)", floorList},
	{"clusters", "controller-runtime cache of the RayClusters (JSON, the TUI's CompactRay transform)", floorClusters},
	{"clusters+pods", "the same cache of the RayClusters and the pods through the wire trim: what the RayCluster list's full screen waits for", floorClustersAndPods},
}

// defaultFloorClients are the clients -floor measures without
// -floor-clients.
const defaultFloorClients = "informer,cache,cache-wire,list,clusters,clusters+pods"

// pickFloorClients is the clients keys names, in its order.
func pickFloorClients(keys string) ([]floorClient, error) {
	all := append(slices.Clone(floorClients), sessionFloorClients...)
	var out []floorClient
	for _, k := range strings.Split(keys, ",") {
		k = strings.TrimSpace(k)
		i := slices.IndexFunc(all, func(c floorClient) bool { return c.key == k })
		if i < 0 {
			var names []string
			for _, c := range all {
				names = append(names, c.key)
			}
			return nil, fmt.Errorf("-floor-clients: no client %q (%s)", k, strings.Join(names, ", "))
		}
		out = append(out, all[i])
	}
	return out, nil
}

// floorHeap is the live heap (after a GC) a floor client's sync left,
// read while its cache is still held; 0 when not read. floorPodsAt is
// when its pods' informer had its initial list (zero when it did not
// say).
var (
	floorHeap   uint64
	floorPodsAt time.Time
)

func readFloorHeap() {
	goruntime.GC()
	var ms goruntime.MemStats
	goruntime.ReadMemStats(&ms)
	floorHeap = ms.HeapAlloc
}

type floorResult struct {
	name      string
	pods      int
	wall, cpu []time.Duration
	apiCPU    []time.Duration // the kube-apiserver's CPU during each sync
	heap      []time.Duration // live heap after each sync, bytes (as a Duration for pct)
	podsWall  []time.Duration // to the pods' initial list, when the client says
	load      string
	// wire is what the first round asked of the API server (wire.go).
	wire string
}

// measureFloor runs each floor client rounds times against base's plane,
// whose kube-apiserver is the process apiPIDs names (none: its CPU reads 0).
// The first round's requests are read from the audit log of stateDir
// (none: not read).
func measureFloor(ctx context.Context, base *rest.Config, clients []floorClient, rounds int, apiPIDs []int, stateDir string) ([]floorResult, error) {
	res := make([]floorResult, len(clients))
	for i, fc := range clients {
		res[i].name = fc.name
	}
	for r := range rounds {
		for i, fc := range clients {
			cfg := rest.CopyConfig(base)
			// Each client's own user agent: the audit log tells them apart.
			cfg.QPS, cfg.Burst, cfg.UserAgent = 300, 600, "bench-e2e-floor/"+fc.key
			if r == 0 {
				res[i].load = loadAvg()
			}
			floorHeap, floorPodsAt = 0, time.Time{}
			m0, merr := scrapeMetrics(ctx, base)
			c0, _ := procstat.CPU(os.Getpid())
			busy0 := machineBusy()
			a0 := cpuOf(apiPIDs)
			t0 := time.Now()
			sctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
			n, err := fc.sync(sctx, cfg)
			wall := time.Since(t0)
			c1, _ := procstat.CPU(os.Getpid())
			cpu, api, busy := c1-c0, cpuOf(apiPIDs)-a0, machineBusy()-busy0
			cancel()
			if err != nil {
				return nil, fmt.Errorf("floor, %s: %w", fc.name, err)
			}
			res[i].pods = n
			res[i].wall = append(res[i].wall, wall)
			res[i].cpu = append(res[i].cpu, cpu)
			res[i].apiCPU = append(res[i].apiCPU, api)
			res[i].heap = append(res[i].heap, time.Duration(floorHeap))
			pods := "–"
			if !floorPodsAt.IsZero() {
				res[i].podsWall = append(res[i].podsWall, floorPodsAt.Sub(t0))
				pods = floorPodsAt.Sub(t0).Round(time.Millisecond).String()
			}
			m1, merr1 := scrapeMetrics(ctx, base)
			diff := ""
			if merr == nil && merr1 == nil {
				diff = metricsDiff(m0, m1)
			}
			logf("floor: %s synced %d objects in %s, pods in %s (this process's CPU %s, the kube-apiserver's %s, the machine's %s, load %s); %s", fc.key, n, wall.Round(time.Millisecond), pods, cpu.Round(time.Millisecond), api.Round(time.Millisecond), busy.Round(time.Millisecond), loadAvg(), diff)
			if r == 0 && stateDir != "" {
				tl, err := requestTimeline(stateDir, cfg.UserAgent, t0, t0.Add(wall))
				if err != nil {
					return nil, err
				}
				res[i].wire = fmt.Sprintf("### %s, round 1: its requests (from its start)\n\n%s\nThe API server's /metrics around it: %s\n", fc.key, tl, diff)
			}
		}
	}
	return res, nil
}

// floorReport is the floor's table, medians of its rounds.
func floorReport(res []floorResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## The floor: clients that only sync the pods (or the RayClusters), on the same plane, before raydar\n\n")
	fmt.Fprintf(&b, "| client | objects | wall p50 (all rounds) | to the pods' initial list p50 (all rounds) | its CPU p50 (its wall includes its sync's collector) | the kube-apiserver's CPU p50 | live heap after sync p50 | load |\n|---|---|---|---|---|---|---|---|\n")
	for _, r := range res {
		var all []string
		for _, w := range r.wall {
			all = append(all, ms(w))
		}
		heap := "–"
		if h := pct(r.heap, .5); h > 0 {
			heap = fmt.Sprintf("%.1f MB", float64(h)/(1<<20))
		}
		pods := "–"
		if len(r.podsWall) > 0 {
			var each []string
			for _, w := range r.podsWall {
				each = append(each, ms(w))
			}
			pods = fmt.Sprintf("%s (%s)", ms(pct(r.podsWall, .5)), strings.Join(each, ", "))
		}
		fmt.Fprintf(&b, "| %s | %d | %s (%s) | %s | %s | %s | %s | %s |\n", r.name, r.pods, ms(pct(r.wall, .5)), strings.Join(all, ", "), pods, ms(pct(r.cpu, .5)), ms(pct(r.apiCPU, .5)), heap, r.load)
	}
	for _, r := range res {
		if r.wire != "" {
			b.WriteString("\n" + r.wire)
		}
	}
	return b.String()
}

// waitSynced polls synced every 5 ms: client-go's WaitForCacheSync polls
// every 100 ms, which a sync of about a second would read up to 10 % high.
func waitSynced(ctx context.Context, synced func() bool) error {
	return wait.PollUntilContextCancel(ctx, 5*time.Millisecond, true, func(context.Context) (bool, error) { return synced(), nil })
}

// protobuf is cfg asking for and sending protobuf (built-in kinds only).
func protobuf(cfg *rest.Config) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.ContentType = "application/vnd.kubernetes.protobuf"
	c.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	return c
}

func floorInformer(ctx context.Context, cfg *rest.Config) (int, error) {
	cs, err := kubernetes.NewForConfig(protobuf(cfg))
	if err != nil {
		return 0, err
	}
	sel := rayv1.RayPodSelector().String()
	lw := &toolscache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.LabelSelector = sel
			return cs.CoreV1().Pods("").List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.LabelSelector = sel
			return cs.CoreV1().Pods("").Watch(ctx, o)
		},
	}
	inf := toolscache.NewSharedIndexInformer(lw, &corev1.Pod{}, 0, toolscache.Indexers{})
	ictx, stop := context.WithCancel(ctx)
	defer stop()
	go inf.RunWithContext(ictx)
	if err := waitSynced(ctx, inf.HasSynced); err != nil {
		return 0, err
	}
	return len(inf.GetStore().ListKeys()), nil
}

// floorCacheWire is floorCache with the transport raydar's observe-only
// session gives its cache (cmd/raydar/session.go).
func floorCacheWire(ctx context.Context, cfg *rest.Config) (int, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(kwatch.SlimPodWire)
	return floorCache(ctx, cfg)
}

func floorCache(ctx context.Context, cfg *rest.Config) (int, error) {
	c, err := cache.New(cfg, cache.Options{
		Scheme:           scheme.New(),
		DefaultTransform: cache.TransformStripManagedFields(),
		ByObject: map[client.Object]cache.ByObject{
			&corev1.Pod{}: {Label: rayv1.RayPodSelector(), Transform: kwatch.SlimPod},
		},
	})
	if err != nil {
		return 0, err
	}
	cctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() { _ = c.Start(cctx) }()
	inf, err := c.GetInformer(ctx, &corev1.Pod{})
	if err != nil {
		return 0, err
	}
	if err := waitSynced(ctx, inf.HasSynced); err != nil {
		return 0, err
	}
	var pods corev1.PodList
	if err := c.List(ctx, &pods); err != nil {
		return 0, err
	}
	return len(pods.Items), nil
}

func floorList(ctx context.Context, cfg *rest.Config) (int, error) {
	cs, err := kubernetes.NewForConfig(protobuf(cfg))
	if err != nil {
		return 0, err
	}
	l, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{LabelSelector: rayv1.RayPodSelector().String(), ResourceVersion: "0"})
	if err != nil {
		return 0, err
	}
	return len(l.Items), nil
}

// floorClusters syncs the RayClusters as the TUI's cache does (JSON: CRDs
// are not served in protobuf; managed fields stripped, CompactRay).
func floorClusters(ctx context.Context, cfg *rest.Config) (int, error) {
	return floorCacheOf(ctx, cfg, false)
}

// floorClustersAndPods syncs the RayClusters and the pods in one cache,
// the pods through the wire trim, as the TUI's session does.
func floorClustersAndPods(ctx context.Context, cfg *rest.Config) (int, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(kwatch.SlimPodWire)
	return floorCacheOf(ctx, cfg, true)
}

func floorCacheOf(ctx context.Context, cfg *rest.Config, pods bool) (int, error) {
	c, err := cache.New(cfg, cache.Options{
		Scheme:           scheme.New(),
		DefaultTransform: cache.TransformStripManagedFields(),
		ByObject: map[client.Object]cache.ByObject{
			&corev1.Pod{}:       {Label: rayv1.RayPodSelector(), Transform: kwatch.SlimPod},
			&rayv1.RayCluster{}: {Transform: kwatch.CompactRay},
		},
	})
	if err != nil {
		return 0, err
	}
	cctx, stop := context.WithCancel(ctx)
	defer stop()
	objs := []client.Object{&rayv1.RayCluster{}}
	if pods {
		objs = append(objs, &corev1.Pod{})
	}
	var infs []toolscache.InformerSynced
	for _, o := range objs {
		inf, err := c.GetInformer(ctx, o, cache.BlockUntilSynced(false))
		if err != nil {
			return 0, err
		}
		infs = append(infs, inf.HasSynced)
	}
	go func() { _ = c.Start(cctx) }()
	if err := waitSynced(ctx, func() bool {
		all := true
		for i, s := range infs {
			if !s() {
				all = false
			} else if _, isPods := objs[i].(*corev1.Pod); isPods && floorPodsAt.IsZero() {
				floorPodsAt = time.Now()
			}
		}
		return all
	}); err != nil {
		return 0, err
	}
	var rcs rayv1.RayClusterList
	if err := c.List(ctx, &rcs); err != nil {
		return 0, err
	}
	n := len(rcs.Items)
	if pods {
		var ps corev1.PodList
		if err := c.List(ctx, &ps); err != nil {
			return 0, err
		}
		n += len(ps.Items)
	}
	rcs, n2 := rayv1.RayClusterList{}, n // the List's copies are not part of the cache's heap
	readFloorHeap()
	_ = rcs
	return n2, nil
}
