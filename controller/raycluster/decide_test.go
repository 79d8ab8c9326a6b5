package raycluster

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/raydar/raydar/controller/internal/fixture"
	"github.com/raydar/raydar/controller/kit"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// counts summarises a plan's pod creations.
func creations(p *plan) (heads int, workers map[string]int) {
	workers = map[string]int{}
	for _, pod := range p.CreatePods {
		if kit.IsHeadPod(pod) {
			heads++
		} else {
			workers[kit.PodGroup(pod)]++
		}
	}
	return heads, workers
}

func condOf(s rayv1.RayClusterStatus, t rayv1.RayClusterConditionType) *metav1.Condition {
	return meta.FindStatusCondition(s.Conditions, string(t))
}

func TestDecideScaling(t *testing.T) {
	type want struct {
		heads    int
		workers  map[string]int
		deleted  []string // exact set, sorted
		services int
		state    rayv1.ClusterState
	}
	tests := []struct {
		name  string
		setup func() *observed
		want  want
	}{
		{
			name: "new cluster: service, head and every worker in one pass",
			setup: func() *observed {
				return obsOf(fixture.Cluster("c", fixture.Group("small", 3)), nil)
			},
			want: want{heads: 1, workers: map[string]int{"small": 3}, services: 1},
		},
		{
			name: "all ready: nothing to do, state ready",
			setup: func() *observed {
				rc := fixture.Cluster("c", fixture.Group("small", 3))
				return obsOf(rc, headSvc(rc), one(headPod(rc, ready)), workerPods(rc, "small", ready, 3))
			},
			want: want{workers: map[string]int{}, state: rayv1.Ready},
		},
		{
			name: "replicas clamped to maxReplicas",
			setup: func() *observed {
				g := fixture.Group("small", 10)
				g.MaxReplicas = fixture.Ptr(int32(4))
				g.Replicas = fixture.Ptr(int32(10))
				rc := fixture.Cluster("c", g)
				return obsOf(rc, headSvc(rc), one(headPod(rc, ready)))
			},
			want: want{workers: map[string]int{"small": 4}},
		},
		{
			name: "replicas clamped up to minReplicas",
			setup: func() *observed {
				g := fixture.Group("small", 0)
				g.MinReplicas = fixture.Ptr(int32(2))
				rc := fixture.Cluster("c", g)
				return obsOf(rc, headSvc(rc), one(headPod(rc, ready)))
			},
			want: want{workers: map[string]int{"small": 2}},
		},
		{
			name: "scale up creates only the missing pods",
			setup: func() *observed {
				rc := fixture.Cluster("c", fixture.Group("small", 5))
				return obsOf(rc, headSvc(rc), one(headPod(rc, ready)), workerPods(rc, "small", ready, 3))
			},
			want: want{workers: map[string]int{"small": 2}},
		},
		{
			name: "scale down without autoscaler deletes the cheapest pods: unscheduled first",
			setup: func() *observed {
				rc := fixture.Cluster("c", fixture.Group("small", 1))
				ws := workerPods(rc, "small", ready, 2)
				ws = append(ws, mkPod(rc, false, "small", "c-small-worker-pend", pending))
				return obsOf(rc, headSvc(rc), one(headPod(rc, ready)), ws)
			},
			want: want{workers: map[string]int{}, deleted: []string{"c-small-worker-pend", "c-small-worker-w1"}, state: rayv1.Ready},
		},
		{
			name: "scale down with in-tree autoscaling deletes nothing at random",
			setup: func() *observed {
				rc := fixture.Cluster("c", fixture.Group("small", 1))
				rc.Spec.EnableInTreeAutoscaling = fixture.Ptr(true)
				return obsOf(rc, headSvc(rc), one(headPod(rc, ready)), workerPods(rc, "small", ready, 3))
			},
			want: want{workers: map[string]int{}, state: rayv1.Ready},
		},
		{
			name: "workersToDelete with replicas lowered: exactly the named pod goes, nothing else",
			setup: func() *observed {
				g := fixture.Group("small", 2)
				g.ScaleStrategy.WorkersToDelete = []string{"c-small-worker-w0"}
				rc := fixture.Cluster("c", g)
				return obsOf(rc, headSvc(rc), one(headPod(rc, ready)), workerPods(rc, "small", ready, 3))
			},
			want: want{workers: map[string]int{}, deleted: []string{"c-small-worker-w0"}, state: rayv1.Ready},
		},
		{
			name: "workersToDelete under autoscaling: exactly the named pods go",
			setup: func() *observed {
				g := fixture.Group("small", 1)
				g.ScaleStrategy.WorkersToDelete = []string{"c-small-worker-w0", "c-small-worker-w2"}
				rc := fixture.Cluster("c", g)
				rc.Spec.EnableInTreeAutoscaling = fixture.Ptr(true)
				return obsOf(rc, headSvc(rc), one(headPod(rc, ready)), workerPods(rc, "small", ready, 3))
			},
			want: want{workers: map[string]int{}, deleted: []string{"c-small-worker-w0", "c-small-worker-w2"}, state: rayv1.Ready},
		},
		{
			name: "workersToDelete with replicas unchanged: the named pod is replaced (replicas is the count)",
			setup: func() *observed {
				g := fixture.Group("small", 3)
				g.ScaleStrategy.WorkersToDelete = []string{"c-small-worker-w1"}
				rc := fixture.Cluster("c", g)
				return obsOf(rc, headSvc(rc), one(headPod(rc, ready)), workerPods(rc, "small", ready, 3))
			},
			want: want{workers: map[string]int{"small": 1}, deleted: []string{"c-small-worker-w1"}},
		},
		{
			name: "names of pods already gone are ignored and never stand in for another pod",
			setup: func() *observed {
				g := fixture.Group("small", 2)
				g.ScaleStrategy.WorkersToDelete = []string{"c-small-worker-gone1", "c-small-worker-gone2"}
				rc := fixture.Cluster("c", g)
				rc.Spec.EnableInTreeAutoscaling = fixture.Ptr(true)
				return obsOf(rc, headSvc(rc), one(headPod(rc, ready)), workerPods(rc, "small", ready, 2))
			},
			want: want{workers: map[string]int{}, state: rayv1.Ready},
		},
		{
			name: "a terminating pod is neither counted nor deleted again, and no other pod goes in its place",
			setup: func() *observed {
				g := fixture.Group("small", 2)
				g.ScaleStrategy.WorkersToDelete = []string{"c-small-worker-t"}
				rc := fixture.Cluster("c", g)
				ws := workerPods(rc, "small", ready, 2)
				ws = append(ws, mkPod(rc, false, "small", "c-small-worker-t", terminating))
				return obsOf(rc, headSvc(rc), one(headPod(rc, ready)), ws)
			},
			want: want{workers: map[string]int{}, state: rayv1.Ready},
		},
		{
			name: "failed worker is deleted and replaced in the same pass",
			setup: func() *observed {
				rc := fixture.Cluster("c", fixture.Group("small", 2))
				ws := workerPods(rc, "small", ready, 1)
				ws = append(ws, mkPod(rc, false, "small", "c-small-worker-bad", failed))
				return obsOf(rc, headSvc(rc), one(headPod(rc, ready)), ws)
			},
			want: want{workers: map[string]int{"small": 1}, deleted: []string{"c-small-worker-bad"}},
		},
		{
			name: "succeeded head is deleted and replaced",
			setup: func() *observed {
				rc := fixture.Cluster("c", fixture.Group("small", 1))
				h := headPod(rc, failed)
				h.Status.Phase = corev1.PodSucceeded
				return obsOf(rc, headSvc(rc), one(h), workerPods(rc, "small", ready, 1))
			},
			want: want{heads: 1, workers: map[string]int{}, deleted: []string{"c-head-hhhhh"}},
		},
		{
			name: "Ray container exited under restartPolicy Never: replaced",
			setup: func() *observed {
				rc := fixture.Cluster("c", fixture.Group("small", 1))
				w := workerPods(rc, "small", ready, 1)[0]
				w.Spec.RestartPolicy = corev1.RestartPolicyNever
				w.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "ray", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1}}}}
				return obsOf(rc, headSvc(rc), one(headPod(rc, ready)), one(w))
			},
			want: want{workers: map[string]int{"small": 1}, deleted: []string{"c-small-worker-w0"}},
		},
		{
			name: "Ray container exited under restartPolicy Always: left to the kubelet",
			setup: func() *observed {
				rc := fixture.Cluster("c", fixture.Group("small", 1))
				w := workerPods(rc, "small", ready, 1)[0]
				w.Spec.RestartPolicy = corev1.RestartPolicyAlways
				w.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "ray", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1}}}}
				return obsOf(rc, headSvc(rc), one(headPod(rc, ready)), one(w))
			},
			want: want{workers: map[string]int{}, state: rayv1.Ready},
		},
		{
			name: "worker group removed from the spec: its pods go",
			setup: func() *observed {
				rc := fixture.Cluster("c", fixture.Group("small", 1))
				return obsOf(rc, headSvc(rc), one(headPod(rc, ready)), workerPods(rc, "small", ready, 1), workerPods(rc, "old", ready, 2))
			},
			want: want{workers: map[string]int{}, deleted: []string{"c-old-worker-w0", "c-old-worker-w1"}, state: rayv1.Ready},
		},
		{
			name: "two heads: the ready one stays",
			setup: func() *observed {
				rc := fixture.Cluster("c")
				h2 := mkPod(rc, true, "", "c-head-aaaaa", runningNotReady)
				return obsOf(rc, headSvc(rc), one(headPod(rc, ready)), one(h2))
			},
			want: want{workers: map[string]int{}, deleted: []string{"c-head-aaaaa"}, state: rayv1.Ready},
		},
		{
			name: "suspended worker group: all its pods go, none are created",
			setup: func() *observed {
				g := fixture.Group("small", 2)
				g.Suspend = fixture.Ptr(true)
				rc := fixture.Cluster("c", g)
				return obsOf(rc, headSvc(rc), one(headPod(rc, ready)), workerPods(rc, "small", ready, 2))
			},
			want: want{workers: map[string]int{}, deleted: []string{"c-small-worker-w0", "c-small-worker-w1"}, state: rayv1.Ready},
		},
		{
			name: "the head ServiceAccount is missing and autoscaling is on: RBAC and head are planned together",
			setup: func() *observed {
				rc := fixture.Cluster("c", fixture.Group("small", 1))
				rc.Spec.EnableInTreeAutoscaling = fixture.Ptr(true)
				o := obsOf(rc, headSvc(rc))
				o.RBACReady = false
				return o
			},
			want: want{heads: 1, workers: map[string]int{"small": 1}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.setup()
			p := decide(o)
			heads, workers := creations(p)
			if heads != tc.want.heads {
				t.Errorf("head pods created = %d, want %d", heads, tc.want.heads)
			}
			if len(workers) != len(tc.want.workers) {
				t.Errorf("worker pods created = %v, want %v", workers, tc.want.workers)
			}
			for g, n := range tc.want.workers {
				if workers[g] != n {
					t.Errorf("group %s: %d worker pods created, want %d", g, workers[g], n)
				}
			}
			got := deletedNames(p)
			slices.Sort(got)
			if !slices.Equal(got, tc.want.deleted) {
				t.Errorf("deleted = %v, want %v", got, tc.want.deleted)
			}
			if len(p.CreateServices) != tc.want.services {
				t.Errorf("services created = %d, want %d", len(p.CreateServices), tc.want.services)
			}
			if p.Status.State != tc.want.state {
				t.Errorf("state = %q, want %q", p.Status.State, tc.want.state)
			}
			if p.DeleteAll {
				t.Errorf("DeleteAll set for a partial deletion")
			}
		})
	}
}

// TestDecideSingleHostReplicaIndex: with RayMultiHostIndexing (on by
// default in v1.7) KubeRay labels single-host workers too with
// ray.io/worker-group-replica-index (common/pod.go:673-682), choosing for
// each new pod the lowest index no remaining pod holds
// (raycluster_controller.go:1171-1207); pods listed in workersToDelete free
// theirs, pods without the label hold none.
func TestDecideSingleHostReplicaIndex(t *testing.T) {
	g := fixture.Group("small", 5)
	rc := fixture.Cluster("c", g)
	ws := workerPods(rc, "small", ready, 4)
	for i, idx := range []string{"0", "2", "1", ""} {
		if idx == "" {
			delete(ws[i].Labels, rayv1.RayWorkerReplicaIndexKey)
		} else {
			ws[i].Labels[rayv1.RayWorkerReplicaIndexKey] = idx
		}
	}
	rc.Spec.WorkerGroupSpecs[0].ScaleStrategy.WorkersToDelete = []string{ws[2].Name} // frees index 1
	p := decide(obsOf(rc, headSvc(rc), one(headPod(rc, ready)), ws))
	var got []string
	for _, pod := range p.CreatePods {
		got = append(got, pod.Labels[rayv1.RayWorkerReplicaIndexKey])
		for _, k := range []string{rayv1.RayWorkerReplicaNameKey, rayv1.RayHostIndexKey} {
			if v, ok := pod.Labels[k]; ok {
				t.Errorf("single-host pod %s has the multi-host label %s=%s", pod.Name, k, v)
			}
		}
	}
	if !slices.Equal(got, []string{"1", "3"}) {
		t.Errorf("new replica indexes %v, want [1 3] (the lowest free ones)", got)
	}
	// The head carries none.
	if _, ok := headPod(rc, pending).Labels[rayv1.RayWorkerReplicaIndexKey]; ok {
		t.Error("the head pod has a replica index")
	}
}

func TestDecideMultiHost(t *testing.T) {
	g := fixture.Group("tpu", 2)
	g.NumOfHosts = 4
	rc := fixture.Cluster("c", g)

	p := decide(obsOf(rc, headSvc(rc), one(headPod(rc, ready))))
	_, workers := creations(p)
	if workers["tpu"] != 8 {
		t.Fatalf("created %d pods, want 2 replicas x 4 hosts = 8", workers["tpu"])
	}
	// KubeRay v1.7.0 (reconcileMultiHostWorkerGroup, raycluster_controller.go
	// :1410-1424; buildWorkerPod :1767; common/pod.go:672-681): every host
	// is a "<cluster>-<group>-worker-<5>" pod of its own, its replica
	// named "<group>-<5>" in ray.io/worker-group-replica-name, with the
	// replica index and its host index. seqSuffix hands out s0000, s0001,
	// ... in the order the names are chosen: replica, then its hosts.
	type row struct{ name, replica, index, host string }
	var got []row
	for _, pod := range p.CreatePods {
		if pod.Labels[rayv1.RayNodeTypeLabelKey] != string(rayv1.WorkerNode) {
			continue
		}
		got = append(got, row{pod.Name, pod.Labels[rayv1.RayWorkerReplicaNameKey],
			pod.Labels[rayv1.RayWorkerReplicaIndexKey], pod.Labels[rayv1.RayHostIndexKey]})
	}
	want := []row{
		{"c-tpu-worker-s0001", "tpu-s0000", "0", "0"},
		{"c-tpu-worker-s0002", "tpu-s0000", "0", "1"},
		{"c-tpu-worker-s0003", "tpu-s0000", "0", "2"},
		{"c-tpu-worker-s0004", "tpu-s0000", "0", "3"},
		{"c-tpu-worker-s0006", "tpu-s0005", "1", "0"},
		{"c-tpu-worker-s0007", "tpu-s0005", "1", "1"},
		{"c-tpu-worker-s0008", "tpu-s0005", "1", "2"},
		{"c-tpu-worker-s0009", "tpu-s0005", "1", "3"},
	}
	if d := cmp.Diff(want, got, cmp.AllowUnexported(row{})); d != "" {
		t.Fatalf("multi-host pods (-want +got):\n%s", d)
	}
	if len(p.CreateServices) != 1 || p.CreateServices[0].Name != "c-headless" {
		t.Errorf("want the headless worker Service, got %v", p.CreateServices)
	}

	// A replica that lost a host is replaced whole.
	pods := p.CreatePods
	for _, pod := range pods {
		pod.UID = types.UID("uid-" + pod.Name)
		pod.Spec.NodeName = "n"
		pod.Status.Phase = corev1.PodRunning
		pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	}
	broken := pods[1:] // replica 0 misses host 0
	o := obsOf(rc, headSvc(rc), one(headPod(rc, ready)), broken)
	o.HeadlessServiceReady = true
	p2 := decide(o)
	if len(p2.DeletePods) != 3 {
		t.Errorf("deleted %v, want the 3 remaining hosts of the broken replica", deletedNames(p2))
	}
	if _, w := creations(p2); w["tpu"] != 4 {
		t.Errorf("created %d pods, want one whole replica (4)", w["tpu"])
	}
	idx := p2.CreatePods[0].Labels[rayv1.RayWorkerReplicaIndexKey]
	if idx != pods[0].Labels[rayv1.RayWorkerReplicaIndexKey] {
		t.Errorf("replacement replica index %s, want the freed index %s", idx, pods[0].Labels[rayv1.RayWorkerReplicaIndexKey])
	}
}

func TestDecideSuspend(t *testing.T) {
	rc := fixture.Cluster("c", fixture.Group("small", 2))
	rc.Spec.Suspend = fixture.Ptr(true)
	h := headPod(rc, ready)
	ws := workerPods(rc, "small", ready, 2)

	// 1. Suspend requested: every pod goes in one request, Suspending.
	p := decide(obsOf(rc, headSvc(rc), one(h), ws))
	if !p.DeleteAll || len(p.DeletePods) != 3 || len(p.CreatePods) != 0 {
		t.Fatalf("plan: deleteAll=%v delete=%v create=%d", p.DeleteAll, deletedNames(p), len(p.CreatePods))
	}
	if c := condOf(p.Status, rayv1.RayClusterSuspending); c == nil || c.Status != metav1.ConditionTrue {
		t.Fatalf("Suspending = %+v", c)
	}
	if p.Status.State != "" {
		t.Errorf("state = %q while suspending", p.Status.State)
	}
	if len(p.Events) != 1 || p.Events[0].Reason != ReasonSuspending {
		t.Errorf("events = %+v", p.Events)
	}

	// 2. Pods still terminating: still Suspending, nothing more to do.
	rc.Status = p.Status
	term := mkPod(rc, false, "small", "c-small-worker-w0", terminating)
	p = decide(obsOf(rc, headSvc(rc), one(term)))
	if len(p.DeletePods) != 0 || !rayv1.IsConditionTrue(p.Status.Conditions, string(rayv1.RayClusterSuspending)) {
		t.Fatalf("terminating: delete=%v conds=%+v", deletedNames(p), p.Status.Conditions)
	}

	// 3. All gone: Suspended, state suspended.
	rc.Status = p.Status
	p = decide(obsOf(rc, headSvc(rc)))
	if p.Status.State != rayv1.Suspended || !rayv1.IsConditionTrue(p.Status.Conditions, string(rayv1.RayClusterSuspended)) ||
		rayv1.IsConditionTrue(p.Status.Conditions, string(rayv1.RayClusterSuspending)) {
		t.Fatalf("suspended: state=%q conds=%+v", p.Status.State, p.Status.Conditions)
	}
	if errs := rayv1.ValidateRayClusterStatus(&p.Status); len(errs) > 0 {
		t.Fatal(errs)
	}
	if p.Status.StateTransitionTimes[rayv1.Suspended] == nil {
		t.Error("no transition time for suspended")
	}

	// 4. suspend removed (not set false): KubeRay keeps the cluster
	// suspended (v1.7.0 calculateStatus resumes only on suspend: false).
	rc.Status = p.Status
	rc.Spec.Suspend = nil
	p = decide(obsOf(rc, headSvc(rc)))
	if len(p.CreatePods) != 0 || !rayv1.IsConditionTrue(p.Status.Conditions, string(rayv1.RayClusterSuspended)) {
		t.Fatalf("suspend removed: created %d pods, conds=%+v", len(p.CreatePods), p.Status.Conditions)
	}

	// 5. Resume: first Suspended goes false, no pod yet (KubeRay's
	// reconcilePods returns while the status still says suspended) ...
	rc.Spec.Suspend = fixture.Ptr(false)
	p = decide(obsOf(rc, headSvc(rc)))
	if len(p.CreatePods) != 0 || p.RequeueAfter == 0 {
		t.Fatalf("resume created %d pods before recording it (requeue after %s)", len(p.CreatePods), p.RequeueAfter)
	}
	if c := condOf(p.Status, rayv1.RayClusterSuspended); c == nil || c.Status != metav1.ConditionFalse {
		t.Errorf("Suspended after resume = %+v", c)
	}
	if len(p.Events) != 1 || p.Events[0].Reason != ReasonResumed {
		t.Errorf("events = %+v", p.Events)
	}
	// ... then the pods are created again.
	rc.Status = p.Status
	p = decide(obsOf(rc, headSvc(rc)))
	if heads, w := creations(p); heads != 1 || w["small"] != 2 {
		t.Fatalf("resume created heads=%d workers=%v", heads, w)
	}
}

func TestDecideSuspendIsAtomic(t *testing.T) {
	// suspend flipped back to false while pods are still going: finish first.
	rc := fixture.Cluster("c", fixture.Group("small", 1))
	rc.Status.Conditions = []metav1.Condition{{Type: string(rayv1.RayClusterSuspending), Status: metav1.ConditionTrue, Reason: "x"}}
	p := decide(obsOf(rc, headSvc(rc), one(headPod(rc, ready))))
	if len(p.CreatePods) != 0 || len(p.DeletePods) != 1 {
		t.Fatalf("create=%d delete=%v", len(p.CreatePods), deletedNames(p))
	}
}

func TestDecideRecreate(t *testing.T) {
	rc := fixture.Cluster("c", fixture.Group("small", 2))
	rc.Spec.UpgradeStrategy = &rayv1.RayClusterUpgradeStrategy{Type: fixture.Ptr(rayv1.RayClusterRecreate)}
	h := headPod(rc, ready)
	ws := workerPods(rc, "small", ready, 2)

	// Same templates: nothing happens, scaling does not change the hash.
	rc.Spec.WorkerGroupSpecs[0].Replicas = fixture.Ptr(int32(2))
	if p := decide(obsOf(rc, headSvc(rc), one(h), ws)); len(p.DeletePods) != 0 {
		t.Fatalf("unchanged templates deleted %v", deletedNames(p))
	}
	// New image: every pod goes, nothing is created in that pass.
	rc2 := rc.DeepCopy()
	rc2.Spec.WorkerGroupSpecs[0].Template.Spec.Containers[0].Image = "rayproject/ray:2.53.0"
	p := decide(obsOf(rc2, headSvc(rc2), one(h), ws))
	if !p.DeleteAll || len(p.DeletePods) != 3 || len(p.CreatePods) != 0 {
		t.Fatalf("recreate: deleteAll=%v delete=%v create=%d", p.DeleteAll, deletedNames(p), len(p.CreatePods))
	}
	if len(p.Events) == 0 || p.Events[0].Reason != ReasonRecreate {
		t.Errorf("events = %+v", p.Events)
	}
	// Without Recreate the same change leaves running pods alone.
	rc3 := rc2.DeepCopy()
	rc3.Spec.UpgradeStrategy = nil
	if p := decide(obsOf(rc3, headSvc(rc3), one(h), ws)); len(p.DeletePods) != 0 {
		t.Errorf("strategy None deleted %v", deletedNames(p))
	}
}

// Taking over a Recreate cluster from KubeRay: its pods carry KubeRay's
// hash (computed differently) and KubeRay's version; none is deleted for
// it. raydar stamps its own hash onto the head pod, so that a real spec
// change afterwards still recreates every pod, KubeRay's included.
func TestDecideRecreateTakeover(t *testing.T) {
	rc := fixture.Cluster("c", fixture.Group("small", 2))
	rc.Spec.UpgradeStrategy = &rayv1.RayClusterUpgradeStrategy{Type: fixture.Ptr(rayv1.RayClusterRecreate)}
	kuberay := func(p *corev1.Pod) *corev1.Pod {
		p.Annotations[rayv1.UpgradeStrategyRecreateHashKey] = "6K8TMPTHBMU9QFNJ0QS3NB1OFLS2S29B" // KubeRay's sha1/base32hex
		p.Annotations[rayv1.KubeRayVersion] = "v1.7.0"
		return p
	}
	h := kuberay(headPod(rc, ready))
	ws := workerPods(rc, "small", ready, 2)
	for _, w := range ws {
		kuberay(w)
	}

	p := decide(obsOf(rc, headSvc(rc), one(h), ws))
	if len(p.DeletePods) != 0 || p.DeleteAll {
		t.Fatalf("takeover deleted %v", deletedNames(p))
	}
	if len(p.StampPods) != 1 || p.StampPods[0].Pod.Name != h.Name ||
		p.StampPods[0].Annotations[rayv1.UpgradeStrategyRecreateHashKey] != specHash(rc) ||
		p.StampPods[0].Annotations[rayv1.KubeRayVersion] != kit.KuberayVersionValue {
		t.Fatalf("stamps %+v", p.StampPods)
	}

	// The head stamped (the workers still KubeRay's): stable, no deletion.
	stamped := h.DeepCopy()
	maps.Copy(stamped.Annotations, p.StampPods[0].Annotations)
	if p := decide(obsOf(rc, headSvc(rc), one(stamped), ws)); len(p.DeletePods) != 0 || len(p.StampPods) != 0 {
		t.Fatalf("after the stamp: delete %v, stamps %d", deletedNames(p), len(p.StampPods))
	}
	// A spec change after the takeover: every pod goes, KubeRay's workers too.
	rc2 := rc.DeepCopy()
	rc2.Spec.WorkerGroupSpecs[0].Template.Spec.Containers[0].Image = "rayproject/ray:2.53.0"
	p = decide(obsOf(rc2, headSvc(rc2), one(stamped), ws))
	if !p.DeleteAll || len(p.DeletePods) != 3 || len(p.StampPods) != 0 {
		t.Fatalf("spec change after takeover: deleteAll=%v delete=%v stamps=%d", p.DeleteAll, deletedNames(p), len(p.StampPods))
	}
}

func TestDecideInvalidSpec(t *testing.T) {
	rc := fixture.Cluster("c", fixture.Group("small", 1), fixture.Group("small", 2))
	p := decide(obsOf(rc, nil))
	if len(p.CreatePods)+len(p.CreateServices)+len(p.DeletePods) != 0 {
		t.Fatalf("invalid spec planned writes: %d pods, %d services", len(p.CreatePods), len(p.CreateServices))
	}
	c := condOf(p.Status, rayv1.RayClusterReplicaFailure)
	if c == nil || c.Status != metav1.ConditionTrue || c.Reason != ReasonValidationFailed ||
		!strings.Contains(c.Message, "spec.workerGroupSpecs[1].groupName") {
		t.Fatalf("ReplicaFailure = %+v", c)
	}
	if len(p.Events) != 1 || p.Events[0].Type != corev1.EventTypeWarning || !strings.Contains(p.Events[0].Message, "spec.workerGroupSpecs[1].groupName") {
		t.Fatalf("events = %+v", p.Events)
	}
	// Same invalid spec again: the condition is already there, no new Event.
	rc.Status = p.Status
	if p2 := decide(obsOf(rc, nil)); len(p2.Events) != 0 || !statusEqual(rc.Status, p2.Status) {
		t.Errorf("second pass: events=%+v statusEqual=%v", p2.Events, statusEqual(rc.Status, p2.Status))
	}
	// Fixed: the condition goes away and pods are created.
	rc.Spec.WorkerGroupSpecs[1].GroupName = "big"
	p3 := decide(obsOf(rc, nil))
	if condOf(p3.Status, rayv1.RayClusterReplicaFailure) != nil || len(p3.CreatePods) != 4 {
		t.Errorf("after fix: conds=%+v creates=%d", p3.Status.Conditions, len(p3.CreatePods))
	}
}

func TestDecideGCSFaultTolerance(t *testing.T) {
	rc := fixture.Cluster("c", fixture.Group("small", 1))
	rc.Spec.GcsFaultToleranceOptions = &rayv1.GcsFaultToleranceOptions{RedisAddress: "redis:6379",
		RedisPassword: &rayv1.RedisCredential{Value: "secret"}}
	p := decide(obsOf(rc, nil))
	if !p.AddFinalizer {
		t.Fatal("no finalizer added for a GCS FT cluster")
	}
	var head, worker *corev1.Pod
	for _, pod := range p.CreatePods {
		if kit.IsHeadPod(pod) {
			head = pod
		} else {
			worker = pod
		}
	}
	env := func(p *corev1.Pod, n string) string {
		for _, e := range p.Spec.Containers[0].Env {
			if e.Name == n {
				return e.Value
			}
		}
		return "<unset>"
	}
	if env(head, envRedisAddress) != "redis:6379" || env(head, envRedisPassword) != "secret" || env(head, envExternalStorageNS) != string(rc.UID) {
		t.Errorf("head FT env: %v", head.Spec.Containers[0].Env)
	}
	if env(worker, envGcsReconnectTimout) != "600" {
		t.Errorf("worker reconnect timeout env missing")
	}
	if head.Annotations[rayv1.RayFTEnabledAnnotationKey] != "true" {
		t.Errorf("head annotations %v", head.Annotations)
	}
	if !strings.Contains(head.Spec.Containers[0].Args[0], "--redis-password=$REDIS_PASSWORD") {
		t.Errorf("ray start: %s", head.Spec.Containers[0].Args[0])
	}
}

func TestDecideDeletion(t *testing.T) {
	base := fixture.Cluster("c", fixture.Group("small", 1))
	base.Spec.GcsFaultToleranceOptions = &rayv1.GcsFaultToleranceOptions{RedisAddress: "redis:6379"}
	base.Finalizers = []string{rayv1.GCSFaultToleranceRedisCleanupFinalizer}
	del := metav1.NewTime(fixture.T0)
	base.DeletionTimestamp = &del

	at := func(d time.Duration, pods []*corev1.Pod, job *batchv1.Job) *plan {
		o := obsOf(base, headSvc(base), pods)
		o.Now = fixture.T0.Add(d)
		o.CleanupJob = job
		return decide(o)
	}
	// Pods left: delete them all, poll.
	p := at(time.Second, append(one(headPod(base, ready)), workerPods(base, "small", ready, 1)...), nil)
	if !p.DeleteAll || len(p.DeletePods) != 2 || p.RemoveFinalizer || p.RequeueAfter == 0 || !p.SkipStatus {
		t.Fatalf("pods left: %+v", p)
	}
	// Head still terminating: wait.
	p = at(time.Second, one(mkPod(base, true, "", "c-head-x", terminating)), nil)
	if p.CreateJob != nil || p.RemoveFinalizer || p.RequeueAfter == 0 {
		t.Fatalf("head terminating: %+v", p)
	}
	// All gone: clean-up Job.
	p = at(time.Second, nil, nil)
	if p.CreateJob == nil || p.CreateJob.Name != "c-redis-cleanup" {
		t.Fatalf("no clean-up job: %+v", p)
	}
	if p.CreateJob.OwnerReferences[0].UID != base.UID {
		t.Error("clean-up job not owned by the cluster")
	}
	// Job running: poll.
	job := p.CreateJob
	if p := at(2*time.Second, nil, job); p.RemoveFinalizer || p.RequeueAfter == 0 {
		t.Fatalf("job running: %+v", p)
	}
	// Job complete: finalizer goes.
	done := job.DeepCopy()
	done.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}
	if p := at(3*time.Second, nil, done); !p.RemoveFinalizer || p.Events[0].Type != corev1.EventTypeNormal {
		t.Fatalf("job complete: %+v", p)
	}
	// Job failed: finalizer goes with a warning.
	failedJob := job.DeepCopy()
	failedJob.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue}}
	if p := at(3*time.Second, nil, failedJob); !p.RemoveFinalizer || p.Events[0].Type != corev1.EventTypeWarning {
		t.Fatalf("job failed: %+v", p)
	}
	// Timeout (default 300 s, or the annotation): finalizer goes whatever is left.
	if p := at(301*time.Second, one(headPod(base, ready)), nil); !p.RemoveFinalizer || p.Events[0].Reason != ReasonRedisCleanupTimout {
		t.Fatalf("timeout: %+v", p)
	}
	base.Annotations = map[string]string{rayv1.GCSFaultToleranceDeletionTimeoutAnnotationKey: "5"}
	if p := at(6*time.Second, nil, job); !p.RemoveFinalizer {
		t.Fatalf("annotation timeout: %+v", p)
	}
	// No finalizer: nothing to do, garbage collection does the rest.
	plain := fixture.Cluster("d")
	plain.DeletionTimestamp = &del
	if p := decide(obsOf(plain, nil, one(headPod(plain, ready)))); len(p.DeletePods) != 0 || !p.SkipStatus {
		t.Fatalf("plain deletion: %+v", p)
	}
}

func TestDecideDisableProvisionedHeadRestart(t *testing.T) {
	rc := fixture.Cluster("c")
	rc.Annotations = map[string]string{rayv1.DisableProvisionedHeadRestartAnnotationKey: "true"}
	if p := decide(obsOf(rc, headSvc(rc))); len(p.CreatePods) != 1 {
		t.Fatal("head not created before provisioning")
	}
	rc.Status.Conditions = []metav1.Condition{{Type: string(rayv1.RayClusterProvisioned), Status: metav1.ConditionTrue, Reason: rayv1.AllPodRunningAndReadyFirstTime}}
	if p := decide(obsOf(rc, headSvc(rc))); len(p.CreatePods) != 0 {
		t.Fatal("head re-created after provisioning despite the annotation")
	}

	// KubeRay's pass ends there, before its worker loop
	// (raycluster_controller.go:1014-1032): a group scaled up, a failed
	// worker and a surplus one are all left as they are.
	withWorkers := fixture.Cluster("c", fixture.Group("small", 1), fixture.Group("big", 3))
	withWorkers.Annotations, withWorkers.Status = rc.Annotations, rc.Status
	ws := append(workerPods(withWorkers, "small", ready, 2), workerPods(withWorkers, "big", failed, 1)...)
	if p := decide(obsOf(withWorkers, headSvc(withWorkers), ws)); len(p.CreatePods) != 0 || len(p.DeletePods) != 0 {
		t.Errorf("head gone for good: created %v, deleted %v; want the workers left alone", podNames(p.CreatePods), deletedNames(p))
	}
	// A failed head is still deleted (KubeRay: :1021-1035), not replaced.
	p := decide(obsOf(withWorkers, headSvc(withWorkers), one(headPod(withWorkers, failed)), ws))
	if len(p.CreatePods) != 0 || !slices.Equal(deletedNames(p), []string{"c-head-hhhhh"}) {
		t.Errorf("failed head: created %v, deleted %v; want only the head deleted", podNames(p.CreatePods), deletedNames(p))
	}
	// "True" is not "true" for KubeRay.
	withWorkers.Annotations = map[string]string{rayv1.DisableProvisionedHeadRestartAnnotationKey: "True"}
	if p := decide(obsOf(withWorkers, headSvc(withWorkers), ws)); len(p.CreatePods) == 0 {
		t.Error("annotation \"True\": head not re-created")
	}
}
