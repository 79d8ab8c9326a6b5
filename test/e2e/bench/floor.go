package main

import (
	"context"
	"fmt"
	"os"
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
type floorClient struct {
	name string
	sync func(ctx context.Context, cfg *rest.Config) (int, error)
}

var floorClients = []floorClient{
	{"client-go informer (protobuf, no transform)", floorInformer},
	{"controller-runtime cache with the TUI's pod selector and transform (SlimPod)", floorCache},
	{"the same cache through the TUI's wire trim (SlimPodWire)", floorCacheWire},
	{"one LIST (protobuf, resourceVersion 0)", floorList},
	{"controller-runtime cache of the RayClusters (JSON, the TUI's CompactRay transform)", floorClusters},
	{"the same cache of the RayClusters and the pods through the wire trim: what the RayCluster list's full screen waits for", floorClustersAndPods},
}

// floorHeap is the live heap (after a GC) a floor client's sync left,
// read while its cache is still held; 0 when not read.
var floorHeap uint64

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
	load      string
}

// measureFloor runs each floor client rounds times against base's plane,
// whose kube-apiserver is the process apiPIDs names (none: its CPU reads 0).
func measureFloor(ctx context.Context, base *rest.Config, rounds int, apiPIDs []int) ([]floorResult, error) {
	res := make([]floorResult, len(floorClients))
	for i, fc := range floorClients {
		res[i].name = fc.name
	}
	for r := range rounds {
		for i, fc := range floorClients {
			cfg := rest.CopyConfig(base)
			cfg.QPS, cfg.Burst, cfg.UserAgent = 300, 600, "bench-e2e-floor"
			if r == 0 {
				res[i].load = loadAvg()
			}
			floorHeap = 0
			c0, _ := procstat.CPU(os.Getpid())
			a0 := cpuOf(apiPIDs)
			t0 := time.Now()
			sctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
			n, err := fc.sync(sctx, cfg)
			wall := time.Since(t0)
			c1, _ := procstat.CPU(os.Getpid())
			cpu, api := c1-c0, cpuOf(apiPIDs)-a0
			cancel()
			if err != nil {
				return nil, fmt.Errorf("floor, %s: %w", fc.name, err)
			}
			res[i].pods = n
			res[i].wall = append(res[i].wall, wall)
			res[i].cpu = append(res[i].cpu, cpu)
			res[i].apiCPU = append(res[i].apiCPU, api)
			res[i].heap = append(res[i].heap, time.Duration(floorHeap))
			logf("floor: %s synced %d pods in %s (this process's CPU %s, the kube-apiserver's %s)", fc.name, n, wall.Round(time.Millisecond), cpu.Round(time.Millisecond), api.Round(time.Millisecond))
		}
	}
	return res, nil
}

// floorReport is the floor's table, medians of its rounds.
func floorReport(res []floorResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## The floor: clients that only sync the pods (or the RayClusters), on the same plane, before raydar\n\n")
	fmt.Fprintf(&b, "| client | objects | wall p50 (all rounds) | its CPU p50 (its wall includes its sync's collector) | the kube-apiserver's CPU p50 | live heap after sync p50 | load |\n|---|---|---|---|---|---|---|\n")
	for _, r := range res {
		var all []string
		for _, w := range r.wall {
			all = append(all, ms(w))
		}
		heap := "–"
		if h := pct(r.heap, .5); h > 0 {
			heap = fmt.Sprintf("%.1f MB", float64(h)/(1<<20))
		}
		fmt.Fprintf(&b, "| %s | %d | %s (%s) | %s | %s | %s | %s |\n", r.name, r.pods, ms(pct(r.wall, .5)), strings.Join(all, ", "), ms(pct(r.cpu, .5)), ms(pct(r.apiCPU, .5)), heap, r.load)
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
		for _, s := range infs {
			if !s() {
				return false
			}
		}
		return true
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
