package tui

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/kube/watch"
	"github.com/raydar/raydar/rayapi/dashboard"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/rayapi/why"
	"github.com/raydar/raydar/tui/diagnose"
)

// recorder is a diagnoser that records its inputs and calls per object,
// and names the causes the test sets per object name.
type recorder struct {
	calls    map[string]int // "RayCluster ns/name" → calls
	clusters map[string]why.ClusterInput
	jobs     map[string]why.JobInput
	svcs     map[string]why.ServiceInput
	causes   map[string][]why.Cause // by object name
}

func newRecorder() *recorder {
	return &recorder{calls: map[string]int{}, clusters: map[string]why.ClusterInput{}, jobs: map[string]why.JobInput{},
		svcs: map[string]why.ServiceInput{}, causes: map[string][]why.Cause{}}
}

func (r *recorder) fns() diagnose.Diagnosers {
	return diagnose.Diagnosers{
		Cluster: func(in why.ClusterInput) []why.Cause {
			r.calls["RayCluster "+in.Cluster.Namespace+"/"+in.Cluster.Name]++
			r.clusters[in.Cluster.Name] = in
			return r.causes[in.Cluster.Name]
		},
		Job: func(in why.JobInput) []why.Cause {
			r.calls["RayJob "+in.Job.Namespace+"/"+in.Job.Name]++
			r.jobs[in.Job.Name] = in
			return r.causes[in.Job.Name]
		},
		Service: func(in why.ServiceInput) []why.Cause {
			r.calls["RayService "+in.Service.Namespace+"/"+in.Service.Name]++
			r.svcs[in.Service.Name] = in
			return r.causes[in.Service.Name]
		},
		Column: func(cs []why.Cause) string { // rayapi/why.Column's contract
			switch len(cs) {
			case 0:
				return ""
			case 1:
				return cs[0].Summary
			}
			return fmt.Sprintf("%s (+%d)", cs[0].Summary, len(cs)-1)
		},
	}
}

// called returns the objects diagnosed since the last reset, sorted.
func (r *recorder) called() []string {
	var out []string
	for k := range r.calls {
		out = append(out, k)
	}
	sort.Strings(out)
	clear(r.calls)
	return out
}

func mkNode(name string, gpus int64) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("node-" + name)}}
	n.Status.Allocatable = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("32"), corev1.ResourceMemory: resource.MustParse("128Gi")}
	if gpus > 0 {
		n.Status.Allocatable["nvidia.com/gpu"] = *resource.NewQuantity(gpus, resource.DecimalSI)
	}
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
	return n
}

// TestDiagnosisInputs: each object's input is what the store holds: a
// cluster's pods and the Events of it and its pods, the nodes (known only
// when the feed says so), who reconciles; a job's cluster; a service's
// active and pending clusters.
func TestDiagnosisInputs(t *testing.T) {
	st := fixture()
	st.Add(mkNode("kwok-node-1", 0), mkNode("kwok-node-2", 0))
	rec := newRecorder()
	known := true
	diagnose.NewDiagnosesWith(rec.fns(), st, clock, "leader", func() bool { return known })

	in := rec.clusters["train-a"]
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
	if want := (why.Reconciler{Known: true, Active: true, Who: "this raydar (leader)"}); in.Reconciler != want || !in.Now.Equal(fixedNow) {
		t.Fatalf("reconciler %+v now %v", in.Reconciler, in.Now)
	}
	if in.Capacity != nil {
		t.Fatal("capacity without a detail page polling it")
	}
	if j := rec.jobs["nightly-eval"]; j.Cluster == nil || j.Cluster.Cluster.Name != "train-a" || len(j.Cluster.Pods) != 6 {
		t.Fatalf("nightly-eval's cluster: %+v", j.Cluster)
	}
	if j := rec.jobs["backfill"]; j.Cluster != nil {
		t.Fatalf("backfill's cluster is not in the store, got %v", j.Cluster.Cluster.Name)
	}
	s := rec.svcs["fruit"]
	if s.Active == nil || s.Active.Cluster.Name != "fruit-raycluster-abcde" || s.Pending == nil || s.Pending.Cluster.Name != "fruit-raycluster-fghij" {
		t.Fatalf("fruit's clusters: %+v %+v", s.Active, s.Pending)
	}
	if s := rec.svcs["llm"]; s.Active != nil || s.Pending != nil {
		t.Fatal("llm has no clusters")
	}

	// A user who may not list nodes: the nodes are not known, whatever the
	// store holds.
	known = false
	rec2 := newRecorder()
	diagnose.NewDiagnosesWith(rec2.fns(), st, clock, "leader", func() bool { return known })
	if n := rec2.clusters["train-a"].Nodes; n.Known || len(n.List) != 0 {
		t.Fatalf("nodes not known, got %+v", n)
	}
	// A job on an existing cluster (clusterSelector) gets that cluster.
	j := &rayv1.RayJob{ObjectMeta: om("ml", "on-notebook", time.Minute, nil)}
	j.Spec.ClusterSelector = map[string]string{rayv1.RayClusterLabelKey: "notebook"}
	ch := st.Add(j)
	d := diagnose.NewDiagnosesWith(rec2.fns(), st, clock, "leader", func() bool { return known })
	d.Update(&ch)
	if in := rec2.jobs["on-notebook"]; in.Cluster == nil || in.Cluster.Cluster.Name != "notebook" {
		t.Fatalf("selector job's cluster %+v", in.Cluster)
	}
}

// TestDiagnosisOnChange: causes are computed when something they depend
// on changes, and only then: a pod, an Event of a pod, the cluster, a node
// in what scheduling reads of it, who reconciles, Ray's capacity.
func TestDiagnosisOnChange(t *testing.T) {
	st := fixture()
	st.Add(mkNode("kwok-node-1", 0))
	rec := newRecorder()
	d := diagnose.NewDiagnosesWith(rec.fns(), st, clock, "leader", func() bool { return true })
	if got := rec.called(); len(got) != 8 {
		t.Fatalf("first computation: %v", got)
	}
	apply := func(ds ...watch.Delta) []string {
		ch := st.Apply(ds)
		d.Update(&ch)
		return rec.called()
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
		{"an Event of a pod of the pending service cluster", up(watch.Event, mkEvent(st.PodsOf(watch.ClusterRef{Namespace: "serve", Name: "fruit-raycluster-fghij"})[0], "Pod", "v1", "Warning", "BackOff", "back-off", 0)),
			[]string{"RayCluster serve/fruit-raycluster-fghij", "RayService serve/fruit"}},
		{"an Event of the job", up(watch.Event, mkEvent(mustFind(t, st, watch.RayJob, "ml", "backfill"), rayv1.KindRayJob, "ray.io/v1", "Warning", "Failed", "x", 0)),
			[]string{"RayJob ml/backfill"}},
		{"the service", up(watch.RayService, mustFind(t, st, watch.RayService, "serve", "llm")), []string{"RayService serve/llm"}},
		{"a node heartbeat", up(watch.Node, heartbeat(mkNode("kwok-node-1", 0))), nil},
		// train-a has a Pending worker; the other clusters none.
		{"a node's GPUs: the clusters with Pending pods", up(watch.Node, mkNode("kwok-node-1", 8)), []string{"RayCluster ml/train-a", "RayJob ml/nightly-eval"}},
	}
	for _, c := range cases {
		if got := apply(c.delta); !slices.Equal(got, c.want) {
			t.Errorf("%s: diagnosed %v, want %v", c.name, got, c.want)
		}
	}
	// Once notebook has a Pending pod too, a new node re-diagnoses it.
	pending := mkPod(mustFind(t, st, watch.RayCluster, "ml", "notebook").(*rayv1.RayCluster), "notebook-small-worker-new", "worker", "small", 0, false, "")
	if got := apply(up(watch.Pod, pending)); !slices.Equal(got, []string{"RayCluster ml/notebook"}) {
		t.Errorf("pending pod: %v", got)
	}
	if got := apply(up(watch.Node, mkNode("kwok-node-2", 4))); !slices.Equal(got, []string{"RayCluster ml/notebook", "RayCluster ml/train-a", "RayJob ml/nightly-eval"}) {
		t.Errorf("new node with a pending pod: %v", got)
	}
	// Who reconciles: everything, once, and not again for the same words.
	d.SetRole("observer (electing)")
	if got := rec.called(); len(got) != 8 {
		t.Errorf("role change: %v", got)
	}
	d.SetRole("observer (electing)")
	if got := rec.called(); got != nil {
		t.Errorf("same role: %v", got)
	}
	// Ray's capacity of the open cluster: it and its job.
	rc := mustFind(t, st, watch.RayCluster, "ml", "train-a")
	c := &dashboard.Capacity{Infeasible: []dashboard.Demand{{Shape: dashboard.Resources{"GPU": 2}, Count: 4}}}
	d.SetCapacity(watch.Key(rc), c)
	if got := rec.called(); !slices.Equal(got, []string{"RayCluster ml/train-a", "RayJob ml/nightly-eval"}) {
		t.Errorf("capacity: %v", got)
	}
	if rec.clusters["train-a"].Capacity != c {
		t.Error("capacity not in the cluster's input")
	}
	d.SetCapacity(watch.Key(rc), c)
	if got := rec.called(); got != nil {
		t.Errorf("same capacity: %v", got)
	}
	// How long Ray's pending demand waited: from when it was first seen,
	// kept while the same shapes come back, reset when they change.
	t0 := fixedNow.Add(-3 * time.Minute)
	gpu := func(at time.Time, n int) *dashboard.Capacity {
		return &dashboard.Capacity{DemandKnown: true, FetchedAt: at, Pending: []dashboard.Demand{{Shape: dashboard.Resources{"GPU": 1}, Count: n}}}
	}
	d.SetCapacity(watch.Key(rc), gpu(t0, 3))
	d.SetCapacity(watch.Key(rc), gpu(fixedNow, 2))
	if got := rec.clusters["train-a"].DemandSince; !got.Equal(t0) {
		t.Errorf("same demand seen again: DemandSince %v, want %v", got, t0)
	}
	d.SetCapacity(watch.Key(rc), &dashboard.Capacity{DemandKnown: true, FetchedAt: fixedNow,
		Pending: []dashboard.Demand{{Shape: dashboard.Resources{"CPU": 8}, Count: 1}}})
	if got := rec.clusters["train-a"].DemandSince; !got.Equal(fixedNow) {
		t.Errorf("other demand: DemandSince %v, want %v", got, fixedNow)
	}
	d.SetCapacity(watch.Key(rc), &dashboard.Capacity{DemandKnown: true, FetchedAt: fixedNow})
	if got := rec.clusters["train-a"].DemandSince; !got.IsZero() {
		t.Errorf("no demand: DemandSince %v", got)
	}
	rec.called()
}

func heartbeat(n *corev1.Node) *corev1.Node {
	n.Status.Conditions[0].LastHeartbeatTime = metav1.NewTime(fixedNow)
	return n
}

func mustFind(t *testing.T, st *watch.Store, k watch.Kind, ns, name string) client.Object {
	t.Helper()
	o, ok := st.Find(k, ns, name)
	if !ok {
		t.Fatalf("%s %s/%s not in the fixture", k, ns, name)
	}
	return o
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
		if got := diagnose.ReconcilerOf(role); got != want {
			t.Errorf("reconcilerOf(%q) = %+v, want %+v", role, got, want)
		}
	}
}

// TestWhyCellFollowsItsCauses: the WHY cell changes when the causes do,
// even when the row's object itself did not change (a pod of the cluster
// did): the table's cached row is projected again. The detail page's Why
// block follows as well, and disappears when the cluster is healthy.
func TestWhyCellFollowsItsCauses(t *testing.T) {
	a, err := New(Options{Store: fixture(), Now: clock, NoColor: true})
	if err != nil {
		t.Fatal(err)
	}
	a.Update(tea.WindowSizeMsg{Width: 120, Height: 30})
	rec := newRecorder()
	a.e.Why.Fn = rec.fns()
	screen := func() string { return a.View().Content }
	row := func(name string) string {
		for _, l := range strings.Split(screen(), "\n") {
			if strings.Contains(l, " "+name+" ") {
				return l
			}
		}
		t.Fatalf("no row %s:\n%s", name, screen())
		return ""
	}
	if strings.Contains(row("train-a"), "gpu") {
		t.Fatal("cause before any")
	}
	rec.causes["train-a"] = []why.Cause{{Code: "Unschedulable", Summary: "2 gpu workers Pending: each asks 4 nvidia.com/gpu, the most any node offers is 0",
		Evidence: []string{"0/3 nodes are available: 3 Insufficient nvidia.com/gpu."}, Fix: "add GPU nodes or lower the group's request"}}
	pod := a.e.Store.PodsOf(watch.ClusterRef{Namespace: "ml", Name: "train-a"})[0].DeepCopy()
	pod.Status.Phase = corev1.PodPending
	a.Update(batchMsg{gen: a.gen, deltas: []watch.Delta{{Kind: watch.Pod, Object: pod}}})
	if r := row("train-a"); !strings.Contains(r, "2 gpu workers Pending") {
		t.Fatalf("WHY cell not updated on a pod change: %q", r)
	}
	if r := row("notebook"); strings.Contains(r, "gpu") {
		t.Fatalf("another row got the cause: %q", r)
	}
	// The detail page: a Why block at the top with evidence and fix.
	a.Update(tea.KeyPressMsg{Code: 'G', Text: "G"})
	a.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	s := screen()
	for _, want := range []string{"Why: 2 gpu workers Pending: each asks 4 nvidia.com/gpu", "       0/3 nodes are available", "       fix: add GPU nodes"} {
		if !strings.Contains(s, want) {
			t.Fatalf("detail lacks %q:\n%s", want, s)
		}
	}
	delete(rec.causes, "train-a")
	pod = pod.DeepCopy()
	pod.Status.Phase = corev1.PodRunning
	a.Update(batchMsg{gen: a.gen, deltas: []watch.Delta{{Kind: watch.Pod, Object: pod}}})
	if s := screen(); strings.Contains(s, "Why:") {
		t.Fatalf("healthy cluster still has a Why block:\n%s", s)
	}
	a.Update(tea.KeyPressMsg{Code: tea.KeyEscape})
	if r := row("train-a"); strings.Contains(r, "gpu") {
		t.Fatalf("healthy row keeps its WHY: %q", r)
	}
}

// TestDiagnosisFollowsTheClock: a RayJob's deadline is re-diagnosed as time
// passes (at most every timedEvery), without any change to the job.
func TestDiagnosisFollowsTheClock(t *testing.T) {
	st := fixture()
	j := mustFind(t, st, watch.RayJob, "ml", "nightly-eval").(*rayv1.RayJob).DeepCopy()
	j.Spec.ActiveDeadlineSeconds = ptrInt32(3600) // started 45m ago: 15m left, not yet "soon"
	st.Add(j)
	now := fixedNow
	d := diagnose.NewDiagnoses(st, func() time.Time { return now }, "leader", nil)
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
	rec := newRecorder()
	d.Fn = rec.fns()
	d.RefreshTimed() // within timedEvery: nothing
	if got := rec.called(); got != nil {
		t.Fatalf("recomputed again at once: %v", got)
	}
}

func ptrInt32(v int32) *int32 { return &v }
