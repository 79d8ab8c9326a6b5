package history

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/raydar/raydar/rayapi/podview"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

var now = time.Date(2026, 12, 1, 18, 0, 0, 0, time.UTC)

func cluster(mut ...func(*rayv1.RayCluster)) *rayv1.RayCluster {
	rc := &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "train", UID: "u1"},
		Spec: rayv1.RayClusterSpec{WorkerGroupSpecs: []rayv1.WorkerGroupSpec{
			{GroupName: "small", Replicas: ptr.To[int32](1), MinReplicas: ptr.To[int32](0), MaxReplicas: ptr.To[int32](5)},
			{GroupName: "gpu", Replicas: ptr.To[int32](0)},
		}},
		Status: rayv1.RayClusterStatus{State: "ready", Conditions: []metav1.Condition{
			{Type: "HeadPodReady", Status: metav1.ConditionTrue, Reason: "HeadPodRunningAndReady"},
		}}}
	for _, m := range mut {
		m(rc)
	}
	return rc
}

// lines renders entries as "what subject from→to by reason", one per line.
func lines(es []Entry) string {
	var l []string
	for _, e := range es {
		if e.Time != now || e.Name == "" {
			l = append(l, "BAD STAMP "+e.Time.String()+" "+e.Name)
		}
		s := e.Change()
		if by := e.By(); by != "" {
			s += " by " + by
		}
		if d := e.Detail(); d != "" {
			s += " | " + d
		}
		l = append(l, s)
	}
	return strings.Join(l, "\n")
}

func TestDiffRayCluster(t *testing.T) {
	kubectl := &Author{Who: WhoKubectl, Manager: "kubectl-patch"}
	scaler := &Author{Who: WhoAutoscaler, Manager: "python-requests"}
	alice := &Author{Who: WhoRaydarUser, Manager: "raydar:alice", User: "alice"}
	for _, c := range []struct {
		name     string
		old, new *rayv1.RayCluster
		w        Written
		want     string
	}{
		{"nothing changed", cluster(), cluster(), Written{}, ""},
		{"a status message alone is not news", cluster(), cluster(func(r *rayv1.RayCluster) { r.Status.Conditions[0].Message = "x" }), Written{}, ""},
		{"scaled by kubectl", cluster(), cluster(func(r *rayv1.RayCluster) { r.Spec.WorkerGroupSpecs[0].Replicas = ptr.To[int32](3) }),
			Written{Scale: kubectl, Spec: alice}, "worker group small: replicas 1 → 3 by kubectl (kubectl-patch)"},
		{"scaled without a workerGroupSpecs owner: the spec writer", cluster(), cluster(func(r *rayv1.RayCluster) { r.Spec.WorkerGroupSpecs[1].Replicas = ptr.To[int32](2) }),
			Written{Spec: alice}, "worker group gpu: replicas 0 → 2 by alice via raydar"},
		{"the autoscaler scales down, naming the worker", cluster(), cluster(func(r *rayv1.RayCluster) {
			r.Spec.WorkerGroupSpecs[0].Replicas = ptr.To[int32](0)
			r.Spec.WorkerGroupSpecs[0].ScaleStrategy.WorkersToDelete = []string{"train-small-abc"}
		}), Written{Scale: scaler},
			"worker group small: replicas 1 → 0 by Ray autoscaler (python-requests)\nworker group small: workers to delete train-small-abc by Ray autoscaler (python-requests)"},
		{"unset replicas", cluster(), cluster(func(r *rayv1.RayCluster) { r.Spec.WorkerGroupSpecs[0].Replicas = nil }), Written{},
			"worker group small: replicas 1 → unset"},
		{"groups added and removed", cluster(), cluster(func(r *rayv1.RayCluster) {
			r.Spec.WorkerGroupSpecs[1] = rayv1.WorkerGroupSpec{GroupName: "big", Replicas: ptr.To[int32](4)}
		}), Written{Scale: kubectl}, "worker group big added (replicas 4) by kubectl (kubectl-patch)\nworker group gpu removed (had replicas 0) by kubectl (kubectl-patch)"},
		{"suspended, and the state follows", cluster(), cluster(func(r *rayv1.RayCluster) { r.Spec.Suspend = ptr.To(true) }), Written{Spec: alice},
			"suspend false → true by alice via raydar\nstatus ready → suspending"},
		{"state and conditions", cluster(), cluster(func(r *rayv1.RayCluster) {
			r.Status.State = ""
			r.Status.Conditions = []metav1.Condition{
				{Type: "HeadPodReady", Status: metav1.ConditionFalse, Reason: "HeadPodNotFound", Message: "the head pod is gone"},
				{Type: "ReplicaFailure", Status: metav1.ConditionTrue, Reason: "FailedCreateWorkerPod", Message: strings.Repeat("quota ", 100)},
			}
		}), Written{},
			"status ready → FailedCreateWorkerPod\ncondition HeadPodReady True (HeadPodRunningAndReady) → False (HeadPodNotFound) | the head pod is gone\n" +
				"condition ReplicaFailure True (FailedCreateWorkerPod) | " + truncate(strings.Repeat("quota ", 100), MaxMessage)},
		{"a condition goes away", cluster(), cluster(func(r *rayv1.RayCluster) { r.Status.Conditions = nil }), Written{},
			"condition HeadPodReady True (HeadPodRunningAndReady) → gone"},
		{"created", nil, cluster(), Written{Spec: kubectl}, "created (ready) by kubectl (kubectl-patch)"},
		{"deleted", cluster(), nil, Written{}, "deleted"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got []Entry // typed nils are not nil objects: pass nil itself
			switch {
			case c.old == nil:
				got = Diff(nil, c.new, c.w, now)
			case c.new == nil:
				got = Diff(c.old, nil, c.w, now)
			default:
				got = Diff(c.old, c.new, c.w, now)
			}
			if s := lines(got); s != c.want {
				t.Errorf("Diff =\n%s\nwant\n%s", s, c.want)
			}
			for _, e := range got {
				if e.Kind != rayv1.KindRayCluster || e.Namespace != "ml" || e.Name != "train" || e.UID != "u1" {
					t.Errorf("entry filed under %+v, want RayCluster ml/train u1", e.Ref)
				}
				if len(e.Message) > MaxMessage+len("…") {
					t.Errorf("message of %d bytes, want at most %d", len(e.Message), MaxMessage)
				}
			}
		})
	}
}

func TestDiffRayJobServiceCronJob(t *testing.T) {
	alice := &Author{Who: WhoRaydarUser, Manager: "raydar:alice", User: "alice"}
	job := func(js rayv1.JobStatus, ds rayv1.JobDeploymentStatus, suspend bool) *rayv1.RayJob {
		return &rayv1.RayJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "etl"}, Spec: rayv1.RayJobSpec{Suspend: suspend},
			Status: rayv1.RayJobStatus{JobStatus: js, JobDeploymentStatus: ds, Reason: "AppFailed", Message: "exit 1"}}
	}
	if got, want := lines(Diff(job("RUNNING", "Running", false), job("FAILED", "Failed", false), Written{}, now)),
		"job status RUNNING → FAILED | exit 1\ndeployment status Running → Failed | exit 1"; got != want {
		t.Errorf("RayJob failing:\n%s\nwant\n%s", got, want)
	}
	if got, want := lines(Diff(job("", "Initializing", false), job("", "Initializing", true), Written{Spec: alice}, now)),
		"suspend false → true by alice via raydar"; got != want {
		t.Errorf("RayJob suspended:\n%s\nwant\n%s", got, want)
	}
	svc := func(ready metav1.ConditionStatus) *rayv1.RayService {
		return &rayv1.RayService{ObjectMeta: metav1.ObjectMeta{Namespace: "serve", Name: "chat"},
			Status: rayv1.RayServiceStatuses{Conditions: []metav1.Condition{{Type: "Ready", Status: ready, Reason: "NonZeroServeEndpoints"}}}}
	}
	if got := Diff(svc(metav1.ConditionFalse), svc(metav1.ConditionTrue), Written{}, now); len(got) != 2 || got[0].What != WhatState || got[0].To != "Ready" || got[1].What != WhatCondition {
		t.Errorf("RayService becoming ready = %s", lines(got))
	}
	cj := func(s bool) *rayv1.RayCronJob {
		return &rayv1.RayCronJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "nightly"}, Spec: rayv1.RayCronJobSpec{Suspend: ptr.To(s)}}
	}
	if got, want := lines(Diff(cj(false), cj(true), Written{Spec: alice}, now)), "suspend false → true by alice via raydar\nstatus scheduled → suspended"; got != want {
		t.Errorf("RayCronJob suspended:\n%s\nwant\n%s", got, want)
	}
	if got := Diff(&corev1.Pod{}, &corev1.Pod{}, Written{}, now); got != nil {
		t.Errorf("Diff of pods = %v, want nothing (DiffPod's)", got)
	}
}

func pod(mut ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "train-small-abc",
		Labels:          map[string]string{rayv1.RayClusterLabelKey: "train", rayv1.RayNodeGroupLabelKey: "small"},
		OwnerReferences: []metav1.OwnerReference{{Kind: "RayCluster", Name: "train", UID: "u1", Controller: ptr.To(true)}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{Name: "ray-worker", Ready: true}}}}
	for _, m := range mut {
		m(p)
	}
	return p
}

func TestDiffPod(t *testing.T) {
	for _, c := range []struct {
		name     string
		old, new *corev1.Pod
		want     string
	}{
		{"nothing", pod(), pod(), ""},
		{"created", nil, pod(), "pod train-small-abc created (group small)"},
		{"deleted", pod(), nil, "pod train-small-abc deleted (was Running)"},
		{"evicted", pod(), pod(func(p *corev1.Pod) {
			p.Status.Phase, p.Status.Reason, p.Status.Message = corev1.PodFailed, "Evicted", "The node was low on resource: memory."
		}), "pod train-small-abc evicted | The node was low on resource: memory."},
		{"failed", pod(), pod(func(p *corev1.Pod) { p.Status.Phase = corev1.PodFailed }), "pod train-small-abc failed"},
		{"OOM-killed and restarted", pod(), pod(func(p *corev1.Pod) {
			cs := &p.Status.ContainerStatuses[0]
			cs.RestartCount = 1
			cs.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{Reason: "OOMKilled", ExitCode: 137}
		}), "container train-small-abc/ray-worker OOM-killed (exit 137) | 1 restart"},
		{"OOM-killed, still terminated (no restart yet)", pod(), pod(func(p *corev1.Pod) {
			p.Status.ContainerStatuses[0].State.Terminated = &corev1.ContainerStateTerminated{Reason: "OOMKilled", ExitCode: 137}
		}), "container train-small-abc/ray-worker OOM-killed (exit 137) | 0 restarts"},
		{"the same OOM kill seen again is not news", pod(func(p *corev1.Pod) {
			p.Status.ContainerStatuses[0].LastTerminationState.Terminated = &corev1.ContainerStateTerminated{Reason: "OOMKilled", ExitCode: 137}
		}), pod(func(p *corev1.Pod) {
			p.Status.ContainerStatuses[0].LastTerminationState.Terminated = &corev1.ContainerStateTerminated{Reason: "OOMKilled", ExitCode: 137}
			p.Status.ContainerStatuses[0].Ready = false
		}), ""},
		{"restarted after an error", pod(), pod(func(p *corev1.Pod) {
			cs := &p.Status.ContainerStatuses[0]
			cs.RestartCount = 2
			cs.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 1}
		}), "container train-small-abc/ray-worker restarted (0 → 2): Error | exit 1 "},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := DiffPod(podview.Of(c.old), podview.Of(c.new), now)
			if s := lines(got); s != c.want {
				t.Errorf("DiffPod =\n%q\nwant\n%q", s, c.want)
			}
			for _, e := range got {
				if e.Ref != (Ref{Kind: rayv1.KindRayCluster, Namespace: "ml", Name: "train", UID: "u1"}) {
					t.Errorf("filed under %+v, want the pod's RayCluster", e.Ref)
				}
			}
		})
	}
	orphan := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "x"}}
	if got := DiffPod(nil, podview.Of(orphan), now); got != nil {
		t.Errorf("a pod of no cluster: %v", got)
	}
}
