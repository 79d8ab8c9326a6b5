package watch

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache/informertest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllertest"

	"github.com/raydar/raydar/rayapi/scheme"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

func cluster(name string) *rayv1.RayCluster {
	return &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name)}}
}

func rayPod(name, clusterName string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name),
		Labels: map[string]string{rayv1.RayNodeTypeLabelKey: "worker", rayv1.RayClusterLabelKey: clusterName}}}
}

func event(name string, about client.Object, kind, apiVersion string, at time.Time) *corev1.Event {
	return &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name)},
		InvolvedObject: corev1.ObjectReference{Kind: kind, APIVersion: apiVersion, Name: about.GetName(), UID: about.GetUID()},
		LastTimestamp:  metav1.NewTime(at),
		Reason:         name,
	}
}

func TestNextCoalescesAndKeepsArrivalOrder(t *testing.T) {
	s := NewSource(0)
	a, b := cluster("a"), cluster("b")
	s.Push(Delta{Kind: RayCluster, Object: a})
	s.Push(Delta{Kind: RayCluster, Object: b})
	a2 := a.DeepCopy()
	a2.Status.State = rayv1.Ready
	s.Push(Delta{Kind: RayCluster, Object: a2})
	s.Push(Delta{Kind: RayCluster, Deleted: true, Object: b})
	got, err := s.Next(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Object != a2 || !got[1].Deleted || got[1].Object != b {
		t.Fatalf("batch = %+v", got)
	}
	if s.Pending() != 0 {
		t.Fatal("batch not drained")
	}
}

func TestNextBlocksUntilADeltaArrives(t *testing.T) {
	s := NewSource(10 * time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan []Delta)
	go func() {
		b, _ := s.Next(ctx)
		done <- b
	}()
	select {
	case b := <-done:
		t.Fatalf("Next returned %v with nothing pending", b)
	default:
	}
	s.Push(Delta{Kind: RayCluster, Object: cluster("x")})
	if b := <-done; len(b) != 1 {
		t.Fatalf("batch = %v", b)
	}
	go func() {
		_, err := s.Next(ctx)
		done <- nil
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v", err)
		}
	}()
	cancel()
	<-done
}

// TestBatchWindowCollectsABurst: the first delta wakes Next, which then
// waits for the window; everything pushed meanwhile lands in the same batch.
func TestBatchWindowCollectsABurst(t *testing.T) {
	s := NewSource(DefaultWindow)
	waiting := make(chan time.Duration)
	fire := make(chan time.Time)
	s.after = func(d time.Duration) <-chan time.Time { waiting <- d; return fire }
	done := make(chan []Delta)
	go func() {
		b, _ := s.Next(context.Background())
		done <- b
	}()
	s.Push(Delta{Kind: Pod, Object: rayPod("p0", "c")})
	if d := <-waiting; d != DefaultWindow {
		t.Fatalf("window %v", d)
	}
	for i := 1; i < 1000; i++ {
		s.Push(Delta{Kind: Pod, Object: rayPod(fmt.Sprint("p", i), "c")})
	}
	fire <- time.Time{}
	if b := <-done; len(b) != 1000 {
		t.Fatalf("got %d deltas", len(b))
	}
}

func TestHandlerFiltersPodsAndEvents(t *testing.T) {
	s := NewSource(0)
	pods, evs, rcs := s.Handler(Pod), s.Handler(Event), s.Handler(RayCluster)
	plain := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "nginx", UID: "uid-nginx"}}
	ray := rayPod("w1", "c")
	rc := cluster("c")
	pods.OnAdd(plain, true)
	pods.OnAdd(ray, true)
	rcs.OnAdd(rc, true)
	evs.OnAdd(event("e-plain", plain, "Pod", "v1", time.Unix(1, 0)), true)
	evs.OnAdd(event("e-ray", ray, "Pod", "v1", time.Unix(2, 0)), true)
	evs.OnAdd(event("e-rc", rc, rayv1.KindRayCluster, "ray.io/v1", time.Unix(3, 0)), true)
	// The label is removed: the pod leaves.
	unlabelled := ray.DeepCopy()
	unlabelled.Labels = nil
	pods.OnUpdate(ray, unlabelled)
	pods.OnDelete(toolscache.DeletedFinalStateUnknown{Key: "ns/nginx", Obj: plain})
	rcs.OnDelete(toolscache.DeletedFinalStateUnknown{Key: "ns/c", Obj: rc})

	b, _ := s.Next(context.Background())
	var got []string
	for _, d := range b {
		got = append(got, fmt.Sprintf("%s %s del=%v", d.Kind, d.Object.GetName(), d.Deleted))
	}
	want := []string{"Pod w1 del=true", "RayCluster c del=true", "Event e-ray del=false", "Event e-rc del=false"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got  %v\nwant %v", got, want)
	}
}

func TestWatchRegistersOnTheCache(t *testing.T) {
	c := &informertest.FakeInformers{Scheme: scheme.New()}
	s := NewSource(0)
	s.SetNodeAccess(func(context.Context) (bool, string) { return true, "" })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := s.Watch(ctx, c); err != nil {
		t.Fatal(err)
	}
	if err := s.WaitSynced(ctx); err != nil {
		t.Fatal(err)
	}
	if !s.NodesKnown() {
		t.Fatal("nodes watched and synced, but not known")
	}
	if err := s.Watch(ctx, c); err == nil {
		t.Fatal("second Watch accepted")
	}
	rc := cluster("c")
	p := rayPod("c-head", "c")
	for _, o := range []client.Object{rc, p, event("ev", p, "Pod", "v1", time.Unix(5, 0)),
		&rayv1.RayJob{ObjectMeta: metav1.ObjectMeta{Name: "j", UID: "uj"}},
		&rayv1.RayService{ObjectMeta: metav1.ObjectMeta{Name: "s", UID: "us"}},
		&rayv1.RayCronJob{ObjectMeta: metav1.ObjectMeta{Name: "cj", UID: "ucj"}},
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", UID: "un1"}}} {
		inf, err := c.FakeInformerFor(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		inf.Add(o)
	}
	b, err := s.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	st := NewStore()
	st.Apply(b)
	for _, k := range Kinds {
		if st.Len(k) != 1 {
			t.Fatalf("%s: %d objects", k, st.Len(k))
		}
	}
}

func TestStoreIndexes(t *testing.T) {
	st := NewStore()
	rc := cluster("c")
	p1, p2, other := rayPod("c-w2", "c"), rayPod("c-w1", "c"), rayPod("d-w1", "d")
	ch := st.Add(rc, p1, p2, other)
	if len(ch.Upserted[Pod]) != 3 || !ch.Any(RayCluster) || ch.Any(Event) {
		t.Fatalf("changes = %+v", ch)
	}
	got := st.PodsOf(ClusterRef{"ns", "c"})
	if len(got) != 2 || got[0].Name != "c-w1" {
		t.Fatalf("PodsOf = %v", got)
	}
	// Events: per object, oldest first, capped.
	base := time.Unix(1000, 0)
	for i := range MaxEventsPerObject + 5 {
		st.Add(event(fmt.Sprint("e", i), rc, rayv1.KindRayCluster, "ray.io/v1", base.Add(time.Duration(i)*time.Second)))
	}
	st.Add(event("pe", p1, "Pod", "v1", base.Add(-time.Hour)))
	evs := st.EventsFor(rc.UID)
	if len(evs) != MaxEventsPerObject || evs[0].Name != "e5" || evs[len(evs)-1].Name != fmt.Sprint("e", MaxEventsPerObject+4) {
		t.Fatalf("events = %d, first %s", len(evs), evs[0].Name)
	}
	if all := st.EventsFor(rc.UID, p1.UID); len(all) != MaxEventsPerObject+1 || all[0].Name != "pe" {
		t.Fatalf("merged events = %d", len(all))
	}
	if st.Len(Event) != MaxEventsPerObject+1 {
		t.Fatalf("stored events = %d", st.Len(Event))
	}
	// Deleting a pod unindexes it; a changed cluster label moves it.
	ch = st.Apply([]Delta{{Kind: Pod, Deleted: true, Object: p1}})
	if len(ch.Deleted[Pod]) != 1 || len(st.PodsOf(ClusterRef{"ns", "c"})) != 1 {
		t.Fatal("pod delete")
	}
	moved := p2.DeepCopy()
	moved.Labels[rayv1.RayClusterLabelKey] = "d"
	st.Add(moved)
	if len(st.PodsOf(ClusterRef{"ns", "c"})) != 0 || len(st.PodsOf(ClusterRef{"ns", "d"})) != 2 {
		t.Fatal("pod relabel")
	}
	// A non-Ray pod is refused; deleting an unknown object changes nothing.
	if ch := st.Add(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "x", UID: "x"}}); !ch.Empty() {
		t.Fatal("non-Ray pod stored")
	}
	if ch := st.Apply([]Delta{{Kind: RayJob, Deleted: true, Object: &rayv1.RayJob{}}}); !ch.Empty() {
		t.Fatal("unknown delete reported")
	}
	if ns := st.Namespaces(); len(ns) != 1 || ns[0] != "ns" {
		t.Fatalf("namespaces = %v", ns)
	}
	if o, ok := st.Find(RayCluster, "ns", "c"); !ok || o != rc {
		t.Fatal("Find")
	}
	evCh := Changes{Upserted: [numKinds][]client.Object{Event: {event("z", rc, "RayCluster", "ray.io/v1", base)}}}
	if !evCh.Touches(map[types.UID]bool{rc.UID: true}) || evCh.Touches(map[types.UID]bool{p1.UID: true}) {
		t.Fatal("Touches")
	}
}

// noCronJobs is a cache on an API server without the RayCronJob CRD
// (KubeRay's CRDs before v1.7).
type noCronJobs struct{ *informertest.FakeInformers }

func (c noCronJobs) GetInformer(ctx context.Context, obj client.Object, opts ...cache.InformerGetOption) (cache.Informer, error) {
	if _, ok := obj.(*rayv1.RayCronJob); ok {
		return nil, &meta.NoKindMatchError{GroupKind: schema.GroupKind{Group: rayv1.GroupName, Kind: rayv1.KindRayCronJob}, SearchedVersions: []string{"v1"}}
	}
	return c.FakeInformers.GetInformer(ctx, obj, opts...)
}

// TestWatchWithoutRayCronJobs: a cluster that does not serve RayCronJobs is
// watched for everything else, and syncs; any other kind missing is an error.
func TestWatchWithoutRayCronJobs(t *testing.T) {
	c := noCronJobs{&informertest.FakeInformers{Scheme: scheme.New()}}
	s := NewSource(0)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := s.Watch(ctx, c); err != nil {
		t.Fatalf("watch without the RayCronJob CRD: %v", err)
	}
	syncsAndDelivers(t, ctx, s, c.FakeInformers)

	broken := &informertest.FakeInformers{Scheme: scheme.New(), Error: &meta.NoKindMatchError{GroupKind: schema.GroupKind{Group: rayv1.GroupName, Kind: rayv1.KindRayCluster}}}
	if err := NewSource(0).Watch(ctx, broken); err == nil || !strings.Contains(err.Error(), "watch RayCluster") {
		t.Fatalf("watch without the RayCluster CRD: %v, want an error", err)
	}
}

// syncsAndDelivers: once s has synced, a RayCluster added to c's informer
// is s's next batch.
func syncsAndDelivers(t *testing.T, ctx context.Context, s *Source, c *informertest.FakeInformers) {
	t.Helper()
	if err := s.WaitSynced(ctx); err != nil {
		t.Fatal(err)
	}
	inf, err := c.FakeInformerFor(ctx, cluster("c"))
	if err != nil {
		t.Fatal(err)
	}
	inf.Add(cluster("c"))
	if b, err := s.Next(ctx); err != nil || len(b) != 1 || b[0].Kind != RayCluster {
		t.Fatalf("batch %+v, %v; want the RayCluster", b, err)
	}
}

// unreachable is a cache whose API server does not answer until up.
type unreachable struct {
	*informertest.FakeInformers
	up bool
}

func (c *unreachable) GetInformer(ctx context.Context, obj client.Object, opts ...cache.InformerGetOption) (cache.Informer, error) {
	if !c.up {
		return nil, errors.New("dial tcp 127.0.0.1:6443: connect: connection refused")
	}
	return c.FakeInformers.GetInformer(ctx, obj, opts...)
}

// TestWatchAgainAfterAFailure: a Watch the API server did not answer may
// be made again (a fleet view retries), and then delivers.
func TestWatchAgainAfterAFailure(t *testing.T) {
	c := &unreachable{FakeInformers: &informertest.FakeInformers{Scheme: scheme.New()}}
	s := NewSource(0)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := s.Watch(ctx, c); err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("watch of an unreachable API server: %v, want its error", err)
	}
	if s.Synced() {
		t.Fatal("synced without a watch")
	}
	c.up = true
	if err := s.Watch(ctx, c); err != nil {
		t.Fatalf("watch again once it answers: %v", err)
	}
	syncsAndDelivers(t, ctx, s, c.FakeInformers)
	if err := s.Watch(ctx, c); err == nil {
		t.Fatal("a third Watch after one that worked was accepted")
	}
}

// noEvents is a cache whose Event informer cannot be had: a Watch fails
// after it has registered every other kind, Node included.
type noEvents struct{ *informertest.FakeInformers }

func (c noEvents) GetInformer(ctx context.Context, obj client.Object, opts ...cache.InformerGetOption) (cache.Informer, error) {
	if _, ok := obj.(*corev1.Event); ok {
		return nil, errors.New("events: connection refused")
	}
	return c.FakeInformers.GetInformer(ctx, obj, opts...)
}

// TestFailedWatchLeavesNodesUnknown: a Watch that failed removed its
// handlers, the Node one too, so nodes are not known (the diagnoses do
// not read an empty node list as the cluster's) until a Watch works.
func TestFailedWatchLeavesNodesUnknown(t *testing.T) {
	synced := true
	c := noEvents{&informertest.FakeInformers{Scheme: scheme.New(), Synced: &synced}}
	s := NewSource(0)
	s.SetNodeAccess(func(context.Context) (bool, string) { return true, "" })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := s.Watch(ctx, c); err == nil {
		t.Fatal("watch without an Event informer succeeded")
	}
	if s.NodesKnown() {
		t.Fatal("nodes known after a Watch that failed and removed the Node handler")
	}
}

// BenchmarkStoreAdd: 10,000 Ray pods of 1,000 clusters added to a Store
// in batches of 500, as the TUI applies a launch: the time, and kept-B/pod,
// what the Store's own maps and indexes keep per pod (the pods are made
// before, and are the cache's).
func BenchmarkStoreAdd(b *testing.B) {
	pods := make([]*corev1.Pod, 10000)
	for i := range pods {
		pods[i] = rayPod(fmt.Sprintf("c%04d-w%d", i/10, i%10), fmt.Sprintf("c%04d", i/10))
	}
	deltas := make([]Delta, len(pods))
	for i, p := range pods {
		deltas[i] = Delta{Kind: Pod, Object: p}
	}
	add := func() *Store {
		st := NewStore()
		for i := 0; i < len(deltas); i += 500 {
			st.Apply(deltas[i:min(i+500, len(deltas))])
		}
		return st
	}
	b.ReportAllocs()
	for b.Loop() {
		add()
	}
	b.ReportMetric(float64(heapKept(func() any { return add() }))/float64(len(pods)), "kept-B/pod")
}

// Unsynced names what "syncing" waits for: the pods, and the Events behind
// them (their handler is registered once the pods have synced); nothing
// once every list is in.
func TestUnsyncedNamesWhatIsStillListing(t *testing.T) {
	c := &informertest.FakeInformers{Scheme: scheme.New(), InformersByGVK: map[schema.GroupVersionKind]toolscache.SharedIndexInformer{}}
	pods := controllertest.NewFakeInformer() // not synced
	c.InformersByGVK[corev1.SchemeGroupVersion.WithKind("Pod")] = pods
	s := NewSource(0)
	if got := s.Unsynced(); got != nil {
		t.Fatalf("before Watch: %v, want nothing named", got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := s.Watch(ctx, c); err != nil {
		t.Fatal(err)
	}
	if got := s.Unsynced(); !slices.Equal(got, []string{"Pods", "Events"}) {
		t.Fatalf("pods listing: %v, want [Pods Events]", got)
	}
	pods.Synced()
	if err := s.WaitSynced(ctx); err != nil {
		t.Fatal(err)
	}
	if got := s.Unsynced(); got != nil {
		t.Fatalf("synced: %v, want nothing", got)
	}
}
