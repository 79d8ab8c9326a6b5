package diagnose

import (
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/kube/watch"
	"github.com/raydar/raydar/rayapi/dashboard"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/rayapi/why"
	"github.com/raydar/raydar/tui/internal/tuitest"
)

// TestDiagnosisInputs: each object's input is what the store holds: a
// cluster's pods and the Events of it and its pods, the nodes (known only
// when the feed says so), who reconciles; a job's cluster; a service's
// active and pending clusters.
func TestDiagnosisInputs(t *testing.T) {
	st := tuitest.Fixture()
	st.Add(tuitest.MkNode("kwok-node-1", 0), tuitest.MkNode("kwok-node-2", 0))
	rec := tuitest.NewRecorder()
	known := true
	newDiagnosesWith(fns(rec), st, tuitest.Clock, "leader", func() bool { return known })

	in := rec.Clusters["train-a"]
	if len(in.Pods) != 6 || in.Pods[0].Name != "train-a-cpu-worker-4hq9d" {
		t.Fatalf("train-a pods: %d", len(in.Pods))
	}
	var reasons []string
	for _, e := range in.Events {
		reasons = append(reasons, e.Reason)
	}
	if want := []string{"CreatedHeadPod", "CreatedWorkerPod", "FailedScheduling"}; !slices.Equal(reasons, want) {
		t.Fatalf("train-a events %v, want %v (the cluster's and its pods', oldest first)", reasons, want)
	}
	if !in.Nodes.Known || len(in.Nodes.List) != 2 {
		t.Fatalf("nodes %+v", in.Nodes)
	}
	if want := (why.Reconciler{Known: true, Active: true, Who: "this raydar (leader)"}); in.Reconciler != want || !in.Now.Equal(tuitest.FixedNow) {
		t.Fatalf("reconciler %+v now %v", in.Reconciler, in.Now)
	}
	if in.Capacity != nil {
		t.Fatal("capacity without a detail page polling it")
	}
	if j := rec.Jobs["nightly-eval"]; j.Cluster == nil || j.Cluster.Cluster.Name != "train-a" || len(j.Cluster.Pods) != 6 {
		t.Fatalf("nightly-eval's cluster: %+v", j.Cluster)
	}
	if j := rec.Jobs["backfill"]; j.Cluster != nil {
		t.Fatalf("backfill's cluster is not in the store, got %v", j.Cluster.Cluster.Name)
	}
	s := rec.Svcs["fruit"]
	if s.Active == nil || s.Active.Cluster.Name != "fruit-raycluster-abcde" || s.Pending == nil || s.Pending.Cluster.Name != "fruit-raycluster-fghij" {
		t.Fatalf("fruit's clusters: %+v %+v", s.Active, s.Pending)
	}
	if s := rec.Svcs["llm"]; s.Active != nil || s.Pending != nil {
		t.Fatal("llm has no clusters")
	}

	// A user who may not list nodes: the nodes are not known, whatever the
	// store holds.
	known = false
	rec2 := tuitest.NewRecorder()
	newDiagnosesWith(fns(rec2), st, tuitest.Clock, "leader", func() bool { return known })
	if n := rec2.Clusters["train-a"].Nodes; n.Known || len(n.List) != 0 {
		t.Fatalf("nodes not known, got %+v", n)
	}
	// A job on an existing cluster (clusterSelector) gets that cluster.
	j := &rayv1.RayJob{ObjectMeta: tuitest.OM("ml", "on-notebook", time.Minute, nil)}
	j.Spec.ClusterSelector = map[string]string{rayv1.RayClusterLabelKey: "notebook"}
	ch := st.Add(j)
	d := newDiagnosesWith(fns(rec2), st, tuitest.Clock, "leader", func() bool { return known })
	d.Update(&ch)
	if in := rec2.Jobs["on-notebook"]; in.Cluster == nil || in.Cluster.Cluster.Name != "notebook" {
		t.Fatalf("selector job's cluster %+v", in.Cluster)
	}
}

// TestDiagnosisOnChange: causes are computed when something they depend
// on changes, and only then: a pod, an Event of a pod, the cluster, a node
// in what scheduling reads of it, who reconciles, Ray's capacity.
func TestDiagnosisOnChange(t *testing.T) {
	st := tuitest.Fixture()
	st.Add(tuitest.MkNode("kwok-node-1", 0))
	rec := tuitest.NewRecorder()
	d := newDiagnosesWith(fns(rec), st, tuitest.Clock, "leader", func() bool { return true })
	if got := rec.Called(); len(got) != 8 {
		t.Fatalf("first computation: %v", got)
	}
	apply := func(ds ...watch.Delta) []string {
		ch := st.Apply(ds)
		d.Update(&ch)
		return rec.Called()
	}
	up := func(k watch.Kind, o client.Object) watch.Delta { return watch.Delta{Kind: k, Object: o} }
	trainA := st.PodsOf(watch.ClusterRef{Namespace: "ml", Name: "train-a"})
	pod := trainA[0].DeepCopy()
	pod.Status.Phase = corev1.PodFailed
	cases := []struct {
		name  string
		delta watch.Delta
		want  []string
	}{
		{"a pod of train-a", up(watch.Pod, pod), []string{"RayCluster ml/train-a", "RayJob ml/nightly-eval"}},
		{"an Event of a pod of the pending service cluster", up(watch.Event, tuitest.MkEvent(st.PodsOf(watch.ClusterRef{Namespace: "serve", Name: "fruit-raycluster-fghij"})[0], "Pod", "v1", "Warning", "BackOff", "back-off", 0)),
			[]string{"RayCluster serve/fruit-raycluster-fghij", "RayService serve/fruit"}},
		{"an Event of the job", up(watch.Event, tuitest.MkEvent(tuitest.MustFind(t, st, watch.RayJob, "ml", "backfill"), rayv1.KindRayJob, "ray.io/v1", "Warning", "Failed", "x", 0)),
			[]string{"RayJob ml/backfill"}},
		{"the service", up(watch.RayService, tuitest.MustFind(t, st, watch.RayService, "serve", "llm")), []string{"RayService serve/llm"}},
		{"a node heartbeat", up(watch.Node, heartbeat(tuitest.MkNode("kwok-node-1", 0))), nil},
		// train-a has a Pending worker; the other clusters none.
		{"a node's GPUs: the clusters with Pending pods", up(watch.Node, tuitest.MkNode("kwok-node-1", 8)), []string{"RayCluster ml/train-a", "RayJob ml/nightly-eval"}},
	}
	for _, c := range cases {
		if got := apply(c.delta); !slices.Equal(got, c.want) {
			t.Errorf("%s: diagnosed %v, want %v", c.name, got, c.want)
		}
	}
	// Once notebook has a Pending pod too, a new node re-diagnoses it.
	pending := tuitest.MkPod(tuitest.MustFind(t, st, watch.RayCluster, "ml", "notebook").(*rayv1.RayCluster), "notebook-small-worker-new", "worker", "small", 0, false, "")
	if got := apply(up(watch.Pod, pending)); !slices.Equal(got, []string{"RayCluster ml/notebook"}) {
		t.Errorf("pending pod: %v", got)
	}
	if got := apply(up(watch.Node, tuitest.MkNode("kwok-node-2", 4))); !slices.Equal(got, []string{"RayCluster ml/notebook", "RayCluster ml/train-a", "RayJob ml/nightly-eval"}) {
		t.Errorf("new node with a pending pod: %v", got)
	}
	// Who reconciles: everything, once, and not again for the same words.
	d.SetRole("observer (electing)")
	if got := rec.Called(); len(got) != 8 {
		t.Errorf("role change: %v", got)
	}
	d.SetRole("observer (electing)")
	if got := rec.Called(); got != nil {
		t.Errorf("same role: %v", got)
	}
	// Ray's capacity of the open cluster: it and its job.
	rc := tuitest.MustFind(t, st, watch.RayCluster, "ml", "train-a")
	c := &dashboard.Capacity{Infeasible: []dashboard.Demand{{Shape: dashboard.Resources{"GPU": 2}, Count: 4}}}
	d.SetCapacity(watch.Key(rc), c)
	if got := rec.Called(); !slices.Equal(got, []string{"RayCluster ml/train-a", "RayJob ml/nightly-eval"}) {
		t.Errorf("capacity: %v", got)
	}
	if rec.Clusters["train-a"].Capacity != c {
		t.Error("capacity not in the cluster's input")
	}
	d.SetCapacity(watch.Key(rc), c)
	if got := rec.Called(); got != nil {
		t.Errorf("same capacity: %v", got)
	}
	// How long Ray's pending demand waited: from when it was first seen,
	// kept while the same shapes come back, reset when they change.
	t0 := tuitest.FixedNow.Add(-3 * time.Minute)
	gpu := func(at time.Time, n int) *dashboard.Capacity {
		return &dashboard.Capacity{DemandKnown: true, FetchedAt: at, Pending: []dashboard.Demand{{Shape: dashboard.Resources{"GPU": 1}, Count: n}}}
	}
	d.SetCapacity(watch.Key(rc), gpu(t0, 3))
	d.SetCapacity(watch.Key(rc), gpu(tuitest.FixedNow, 2))
	if got := rec.Clusters["train-a"].DemandSince; !got.Equal(t0) {
		t.Errorf("same demand seen again: DemandSince %v, want %v", got, t0)
	}
	d.SetCapacity(watch.Key(rc), &dashboard.Capacity{DemandKnown: true, FetchedAt: tuitest.FixedNow,
		Pending: []dashboard.Demand{{Shape: dashboard.Resources{"CPU": 8}, Count: 1}}})
	if got := rec.Clusters["train-a"].DemandSince; !got.Equal(tuitest.FixedNow) {
		t.Errorf("other demand: DemandSince %v, want %v", got, tuitest.FixedNow)
	}
	d.SetCapacity(watch.Key(rc), &dashboard.Capacity{DemandKnown: true, FetchedAt: tuitest.FixedNow})
	if got := rec.Clusters["train-a"].DemandSince; !got.IsZero() {
		t.Errorf("no demand: DemandSince %v", got)
	}
	rec.Called()
}

func heartbeat(n *corev1.Node) *corev1.Node {
	n.Status.Conditions[0].LastHeartbeatTime = metav1.NewTime(tuitest.FixedNow)
	return n
}

func TestReconcilerOf(t *testing.T) {
	cases := map[string]why.Reconciler{
		"leader":                                            {Known: true, Active: true, Who: "this raydar (leader)"},
		"observer (leader: raydar-7f9)":                     {Known: true, Active: true, Who: "raydar raydar-7f9 (lease holder)"},
		"observer (electing)":                               {Known: true, Who: "no leader: raydar's leader lease is not held"},
		"another operator: KubeRay (kuberay-op-1)":          {Known: true, Who: "another operator: KubeRay (kuberay-op-1); raydar stands aside"},
		"observer (reconcile loop stopped: boom)":           {Known: true, Who: "reconcile loop stopped: boom"},
		"observer (reconcile loop off)":                     {},
		"observer (reconcile loop off; leader: op-1_x)":     {Known: true, Active: true, Who: "raydar op-1_x (lease holder)"},
		"observer (reconcile loop off; no leader)":          {Known: true, OnlyRaydar: true, Who: "no leader: raydar's leader lease is not held, and this raydar's reconcile loop is off"},
		"observer (reconcile loop off; no raydar operator)": {Known: true, OnlyRaydar: true, Who: "no raydar operator runs here (no leader lease), and this raydar's reconcile loop is off"},
		"starting": {},
		"":         {},
	}
	for role, want := range cases {
		if got := ReconcilerOf(role); got != want {
			t.Errorf("ReconcilerOf(%q) = %+v, want %+v", role, got, want)
		}
	}
}

// TestDiagnosisFollowsTheClock: a RayJob's deadline is re-diagnosed as time
// passes (at most every timedEvery), without any change to the job.
func TestDiagnosisFollowsTheClock(t *testing.T) {
	st := tuitest.Fixture()
	j := tuitest.MustFind(t, st, watch.RayJob, "ml", "nightly-eval").(*rayv1.RayJob).DeepCopy()
	j.Spec.ActiveDeadlineSeconds = ptrInt32(3600) // started 45m ago: 15m left, not yet "soon"
	st.Add(j)
	now := tuitest.FixedNow
	d := NewDiagnoses(st, func() time.Time { return now }, "leader", nil)
	if cs := d.Get(watch.Key(j)); len(cs) != 0 {
		t.Fatalf("causes with 15m of 60m left: %+v", cs)
	}
	now = now.Add(10 * time.Minute)
	d.RefreshTimed()
	cs := d.Get(watch.Key(j))
	if len(cs) != 1 || cs[0].Code != "DeadlineSoon" {
		t.Fatalf("with 5m of 60m left: %+v", cs)
	}
	if d.Changed[watch.RayJob] == nil {
		t.Fatal("the job's WHY cell change is not noted")
	}
	rec := tuitest.NewRecorder()
	d.Fn = fns(rec)
	d.RefreshTimed() // within timedEvery: nothing
	if got := rec.Called(); got != nil {
		t.Fatalf("recomputed again at once: %v", got)
	}
}

// TestContradictionFollowsTheClock: a RayJob whose Ray job ended while its
// deployment stays Running is flagged once KubeRay's grace has passed,
// without any change to the job (a terminal jobStatus is otherwise never
// re-diagnosed with the clock).
func TestContradictionFollowsTheClock(t *testing.T) {
	st := tuitest.Fixture()
	j := tuitest.MustFind(t, st, watch.RayJob, "ml", "nightly-eval").(*rayv1.RayJob).DeepCopy()
	j.Status.JobStatus = rayv1.JobStatusSucceeded
	j.Status.RayJobStatusInfo.EndTime = &metav1.Time{Time: tuitest.FixedNow.Add(-4 * time.Minute)}
	st.Add(j)
	now := tuitest.FixedNow
	d := NewDiagnoses(st, func() time.Time { return now }, "leader", nil)
	if cs := d.Get(watch.Key(j)); len(cs) != 0 {
		t.Fatalf("causes within the grace: %+v", cs)
	}
	now = now.Add(2 * time.Minute)
	d.RefreshTimed()
	cs := d.Get(watch.Key(j))
	if len(cs) != 1 || cs[0].Code != "StatusContradiction" {
		t.Fatalf("past the grace: %+v", cs)
	}
}

// TestWaitingForOperatorFollowsTheClock: a RayCluster whose new generation
// the reconciler has not acted on is said once the grace has passed, timed
// from when the TUI first saw the generation (its cache strips
// managedFields), without any change to the cluster.
func TestWaitingForOperatorFollowsTheClock(t *testing.T) {
	st := tuitest.Fixture()
	rc := tuitest.MustFind(t, st, watch.RayCluster, "ml", "train-a").(*rayv1.RayCluster).DeepCopy()
	rc.Generation, rc.Status.ObservedGeneration = 8, 7
	st.Add(rc)
	now := tuitest.FixedNow
	d := NewDiagnoses(st, func() time.Time { return now }, "leader", nil)
	if cs := d.Get(watch.Key(rc)); len(cs) != 0 {
		t.Fatalf("causes at once: %+v", cs)
	}
	now = now.Add(timedEvery)
	d.RefreshTimed()
	cs := d.Get(watch.Key(rc))
	if len(cs) == 0 || cs[0].Code != why.CodeWaitingForOperator || !strings.HasSuffix(cs[0].Summary, "not yet acted on for 10s") {
		t.Fatalf("past the grace: %+v", cs)
	}
}

func ptrInt32(v int32) *int32 { return &v }

// fns are the diagnosers that record into r.
func fns(r *tuitest.Recorder) Diagnosers {
	return Diagnosers{Cluster: r.Cluster, Job: r.Job, Service: r.Service, Column: r.Column}
}
