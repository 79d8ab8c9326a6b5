package raycluster

import (
	"slices"
	"testing"
	"time"

	"github.com/raydar/raydar/controller/internal/fixture"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

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

// TestDecideScaleDownTakesADuplicateIndexFirst: three ready workers for
// two, two of them holding index 0; the newest holds index 1 and would go
// first by age alone. The duplicate goes instead, so the group ends with
// indexes 0 and 1, and the older holder of 0 stays.
func TestDecideScaleDownTakesADuplicateIndexFirst(t *testing.T) {
	g := fixture.Group("small", 2)
	rc := fixture.Cluster("c", g)
	ws := workerPods(rc, "small", ready, 3)
	for i, idx := range []string{"0", "0", "1"} {
		ws[i].Labels[rayv1.RayWorkerReplicaIndexKey] = idx
		ws[i].CreationTimestamp = metav1.NewTime(fixture.T0.Add(time.Duration(i) * time.Minute))
	}
	p := decide(obsOf(rc, headSvc(rc), one(headPod(rc, ready)), ws))
	var got []string
	for _, d := range p.DeletePods {
		got = append(got, d.Pod.Name)
	}
	if !slices.Equal(got, []string{ws[1].Name}) || len(p.CreatePods) != 0 {
		t.Errorf("deleted %v, created %d; want only %s (the younger holder of index 0)", got, len(p.CreatePods), ws[1].Name)
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
