package raycluster

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/raydar/raydar/controller/internal/fixture"
	"github.com/raydar/raydar/controller/kit"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

func TestStatusTrueNow(t *testing.T) {
	rc := fixture.Cluster("c", fixture.Group("small", 3))
	svc := headSvc(rc)
	all := func(h *corev1.Pod, ws []*corev1.Pod) []*corev1.Pod { return append(one(h), ws...) }

	tests := []struct {
		name        string
		pods        []*corev1.Pod
		state       rayv1.ClusterState
		headReady   metav1.ConditionStatus
		headReason  string
		readyW      int32
		availW      int32
		provisioned metav1.ConditionStatus
	}{
		{"nothing yet", nil, "", metav1.ConditionFalse, rayv1.HeadPodNotFound, 0, 0, metav1.ConditionFalse},
		{"pending", all(headPod(rc, pending), workerPods(rc, "small", pending, 3)), "", metav1.ConditionFalse, rayv1.UnknownReason, 0, 0, metav1.ConditionFalse},
		{"head ready, workers not", all(headPod(rc, ready), workerPods(rc, "small", runningNotReady, 3)), "", metav1.ConditionTrue, rayv1.HeadPodRunningAndReady, 0, 3, metav1.ConditionFalse},
		{"all ready", all(headPod(rc, ready), workerPods(rc, "small", ready, 3)), rayv1.Ready, metav1.ConditionTrue, rayv1.HeadPodRunningAndReady, 3, 3, metav1.ConditionTrue},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := computeStatus(rc, tc.pods, svc, &plan{}, nil, fixture.T0)
			if s.State != tc.state {
				t.Errorf("state %q, want %q", s.State, tc.state)
			}
			h := condOf(s, rayv1.HeadPodReady)
			if h.Status != tc.headReady || h.Reason != tc.headReason {
				t.Errorf("HeadPodReady %s/%s, want %s/%s", h.Status, h.Reason, tc.headReady, tc.headReason)
			}
			if s.ReadyWorkerReplicas != tc.readyW || s.AvailableWorkerReplicas != tc.availW {
				t.Errorf("ready/available %d/%d, want %d/%d", s.ReadyWorkerReplicas, s.AvailableWorkerReplicas, tc.readyW, tc.availW)
			}
			if p := condOf(s, rayv1.RayClusterProvisioned); p.Status != tc.provisioned {
				t.Errorf("Provisioned %s, want %s", p.Status, tc.provisioned)
			}
			if s.DesiredWorkerReplicas != 3 || s.MinWorkerReplicas != 0 || s.MaxWorkerReplicas != 10 || s.ObservedGeneration != 1 {
				t.Errorf("counts %+v", s)
			}
		})
	}

	// Ready, then the head stops being ready: HeadPodReady and its reason
	// say so at once (KubeRay #2188); state stays "ready" as in KubeRay
	// (it only moves to ready or suspended); Provisioned stays (it means
	// "came up once").
	ws := workerPods(rc, "small", ready, 3)
	rc.Status = computeStatus(rc, all(headPod(rc, ready), ws), svc, &plan{}, nil, fixture.T0)
	readyAt := rc.Status.StateTransitionTimes[rayv1.Ready]
	if readyAt == nil || !readyAt.Time.Equal(fixture.T0) {
		t.Fatalf("no ready transition time: %+v", rc.Status.StateTransitionTimes)
	}
	s := computeStatus(rc, all(headPod(rc, runningNotReady), ws), svc, &plan{}, nil, fixture.T0.Add(time.Minute))
	if s.State != rayv1.Ready || !s.StateTransitionTimes[rayv1.Ready].Time.Equal(fixture.T0) {
		t.Errorf("state %q (since %v) after the head stopped being ready, want ready since %v", s.State, s.StateTransitionTimes[rayv1.Ready], fixture.T0)
	}
	h := condOf(s, rayv1.HeadPodReady)
	if h.Status != metav1.ConditionFalse || h.Reason != "ContainersNotReady" || !h.LastTransitionTime.Time.Equal(fixture.T0.Add(time.Minute)) {
		t.Errorf("HeadPodReady %+v", h)
	}
	if !statusUrgent(rc.Status, s) {
		t.Error("the head no longer ready is not urgent")
	}
	if condOf(s, rayv1.RayClusterProvisioned).Status != metav1.ConditionTrue {
		t.Error("Provisioned forgot the cluster came up")
	}
	// A worker stops being ready: the counts say so, state stays ready.
	ws2 := append(workerPods(rc, "small", ready, 2), mkPod(rc, false, "small", "c-small-worker-x", runningNotReady))
	s = computeStatus(rc, all(headPod(rc, ready), ws2), svc, &plan{}, nil, fixture.T0.Add(time.Minute))
	if s.State != rayv1.Ready || s.ReadyWorkerReplicas != 2 || s.AvailableWorkerReplicas != 3 {
		t.Errorf("worker not ready: state %q ready %d available %d", s.State, s.ReadyWorkerReplicas, s.AvailableWorkerReplicas)
	}
}

func TestStatusNoChurn(t *testing.T) {
	rc := fixture.Cluster("c", fixture.Group("small", 3))
	pods := append(one(headPod(rc, ready)), workerPods(rc, "small", ready, 3)...)
	s1 := computeStatus(rc, pods, headSvc(rc), &plan{}, nil, fixture.T0)
	rc.Status = s1
	// Later passes over an unchanged world compute an equal status: no write.
	s2 := computeStatus(rc, pods, headSvc(rc), &plan{}, nil, fixture.T0.Add(time.Hour))
	if !statusEqual(s1, s2) {
		t.Fatalf("status changed with nothing changed:\n%+v\n%+v", s1, s2)
	}
	// lastUpdateTime alone never makes a difference.
	now := metav1.NewTime(fixture.T0.Add(time.Hour))
	s2.LastUpdateTime = &now
	if !statusEqual(s1, s2) {
		t.Fatal("lastUpdateTime counted as a change")
	}
}

func TestStatusFields(t *testing.T) {
	g := fixture.Group("gpu", 2)
	g.Template.Spec.Containers[0].Resources.Limits["nvidia.com/gpu"] = resource.MustParse("1")
	g.Template.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")}
	rc := fixture.Cluster("c", g)
	rc.Spec.HeadGroupSpec.ServiceType = corev1.ServiceTypeNodePort
	svc := headSvc(rc)
	svc.Spec.ClusterIP = "10.96.0.10"
	svc.Spec.Ports[0].NodePort = 30001
	h := headPod(rc, ready)
	h.Status.PodIP = "10.0.0.7"
	s := computeStatus(rc, one(h), svc, &plan{}, nil, fixture.T0)

	// CPU: head 2 + 2 workers × 500m (request wins over the 1 CPU limit).
	if s.DesiredCPU.Cmp(resource.MustParse("3")) != 0 {
		t.Errorf("desiredCPU %s", s.DesiredCPU.String())
	}
	if s.DesiredMemory.Cmp(resource.MustParse("8Gi")) != 0 {
		t.Errorf("desiredMemory %s", s.DesiredMemory.String())
	}
	if s.DesiredGPU.Cmp(resource.MustParse("2")) != 0 {
		t.Errorf("desiredGPU %s", s.DesiredGPU.String())
	}
	if s.Head.PodIP != "10.0.0.7" || s.Head.PodName != h.Name || s.Head.ServiceName != "c-head-svc" || s.Head.ServiceIP != "10.96.0.10" {
		t.Errorf("head %+v", s.Head)
	}
	if s.Endpoints[svc.Spec.Ports[0].Name] != "30001" || s.Endpoints["metrics"] != "8080" {
		t.Errorf("endpoints %v", s.Endpoints)
	}
	// Headless service: the head pod's IP is the address.
	rc.Spec.HeadGroupSpec.ServiceType = ""
	s = computeStatus(rc, one(h), headSvc(rc), &plan{}, nil, fixture.T0)
	if s.Head.ServiceIP != "10.0.0.7" {
		t.Errorf("headless service IP %q", s.Head.ServiceIP)
	}
	// Failures of pod writes show as ReplicaFailure with KubeRay's reason
	// and message (errors.Join(ErrFailedCreateWorkerPod, err)) and go away
	// once nothing fails.
	quota := errors.New(`pods "c-gpu-worker-x" is forbidden: exceeded quota`)
	s = computeStatus(rc, one(h), svc, &plan{}, []failure{
		{Event: rayv1.EventFailedToCreateService, Message: "Failed creating service ns/c-head-svc, no"},
		{Condition: rayv1.FailedCreateWorkerPod, Event: rayv1.EventFailedToCreateWorkerPod, Err: quota},
	}, fixture.T0)
	if c := condOf(s, rayv1.RayClusterReplicaFailure); c == nil || c.Status != metav1.ConditionTrue || c.Reason != "FailedCreateWorkerPod" ||
		c.Message != "FailedCreateWorkerPod\n"+quota.Error() {
		t.Fatalf("ReplicaFailure %+v", c)
	}
	rc.Status = s
	if s := computeStatus(rc, one(h), svc, &plan{}, nil, fixture.T0); condOf(s, rayv1.RayClusterReplicaFailure) != nil {
		t.Error("ReplicaFailure stayed after success")
	}
	// A failure KubeRay gives no condition reason (a Service) leaves
	// ReplicaFailure as it was: absent stays absent, present stays.
	svcFail := []failure{{Event: rayv1.EventFailedToCreateService, Message: "Failed creating service ns/c-head-svc, no"}}
	if got := condOf(computeStatus(rc, one(h), svc, &plan{}, svcFail, fixture.T0), rayv1.RayClusterReplicaFailure); got == nil || got.Reason != "FailedCreateWorkerPod" {
		t.Errorf("a Service failure changed ReplicaFailure to %+v", got)
	}
	rc.Status.Conditions = nil
	if got := condOf(computeStatus(rc, one(h), svc, &plan{}, svcFail, fixture.T0), rayv1.RayClusterReplicaFailure); got != nil {
		t.Errorf("a Service failure set ReplicaFailure %+v", got)
	}
}

// conds is a condition list without transition times, for comparison.
func conds(s rayv1.RayClusterStatus) []metav1.Condition {
	out := make([]metav1.Condition, len(s.Conditions))
	for i, c := range s.Conditions {
		c.LastTransitionTime = metav1.Time{}
		out[i] = c
	}
	return out
}

func cnd(t rayv1.RayClusterConditionType, st metav1.ConditionStatus, reason, msg string) metav1.Condition {
	return metav1.Condition{Type: string(t), Status: st, Reason: reason, Message: msg}
}

// TestStatusConditionsAsKubeRay walks a cluster through bring-up,
// suspension and resumption and compares the whole condition list, in
// order, with what KubeRay v1.7.0's calculateStatus writes
// (raycluster_controller.go:1970-2137).
func TestStatusConditionsAsKubeRay(t *testing.T) {
	const F, T = metav1.ConditionFalse, metav1.ConditionTrue
	rc := fixture.Cluster("c", fixture.Group("small", 1))
	svc := headSvc(rc)
	up := append(one(headPod(rc, ready)), workerPods(rc, "small", ready, 1)...)
	provisioning := cnd(rayv1.RayClusterProvisioned, F, "RayClusterPodsProvisioning", "RayCluster Pods are being provisioned for first time")
	provisioned := cnd(rayv1.RayClusterProvisioned, T, "AllPodRunningAndReadyFirstTime", "All Ray Pods are ready for the first time")
	notSuspended := cnd(rayv1.RayClusterSuspended, F, "RayClusterSuspended", "")
	notSuspending := cnd(rayv1.RayClusterSuspending, F, "RayClusterSuspending", "")
	headReady := cnd(rayv1.HeadPodReady, T, "HeadPodRunningAndReady", "")
	noHead := cnd(rayv1.HeadPodReady, F, "HeadPodNotFound", "Head Pod not found")

	steps := []struct {
		name    string
		suspend *bool
		pods    []*corev1.Pod
		state   rayv1.ClusterState
		want    []metav1.Condition
	}{
		{"new, no pods", nil, nil, "", []metav1.Condition{noHead, provisioning, notSuspended, notSuspending}},
		{"head unschedulable", nil, one(headPod(rc, pending)), "",
			[]metav1.Condition{cnd(rayv1.HeadPodReady, F, "Unknown", ""), provisioning, notSuspended, notSuspending}},
		{"all ready", nil, up, rayv1.Ready, []metav1.Condition{headReady, provisioned, notSuspended, notSuspending}},
		{"suspend asked", fixture.Ptr(true), up, rayv1.Ready,
			[]metav1.Condition{headReady, provisioned, notSuspended, cnd(rayv1.RayClusterSuspending, T, "RayClusterSuspending", "")}},
		{"all pods gone", fixture.Ptr(true), nil, rayv1.Suspended, []metav1.Condition{noHead,
			cnd(rayv1.RayClusterProvisioned, F, "RayClusterPodsProvisioning", "RayCluster has been suspended"),
			cnd(rayv1.RayClusterSuspended, T, "RayClusterSuspended", ""), notSuspending}},
		{"still suspended", fixture.Ptr(true), nil, rayv1.Suspended, []metav1.Condition{noHead,
			cnd(rayv1.RayClusterProvisioned, F, "RayClusterPodsProvisioning", "RayCluster has been suspended"),
			cnd(rayv1.RayClusterSuspended, T, "RayClusterSuspended", ""), notSuspending}},
		{"resumed", fixture.Ptr(false), nil, rayv1.Suspended, []metav1.Condition{noHead,
			cnd(rayv1.RayClusterProvisioned, F, "RayClusterPodsProvisioning", "RayCluster has been suspended"),
			notSuspended, notSuspending}},
		{"coming back", fixture.Ptr(false), up[:1], rayv1.Suspended, []metav1.Condition{headReady, provisioning, notSuspended, notSuspending}},
		{"back up", fixture.Ptr(false), up, rayv1.Ready, []metav1.Condition{headReady, provisioned, notSuspended, notSuspending}},
	}
	for _, st := range steps {
		rc.Spec.Suspend = st.suspend
		s := computeStatus(rc, st.pods, svc, &plan{}, nil, fixture.T0)
		if got := conds(s); !reflect.DeepEqual(got, st.want) {
			t.Errorf("%s: conditions\n got %+v\nwant %+v", st.name, got, st.want)
		}
		if s.State != st.state {
			t.Errorf("%s: state %q, want %q", st.name, s.State, st.state)
		}
		rc.Status = s
	}
}

// TestHeadPodReadyAsKubeRay: HeadPodReady as utils.FindHeadPodReadyCondition
// (v1.7.0 utils/util.go:84-138) derives it from the head pod.
func TestHeadPodReadyAsKubeRay(t *testing.T) {
	rc := fixture.Cluster("c")
	base := headPod(rc, pending)
	tests := []struct {
		name   string
		status corev1.PodStatus
		want   metav1.Condition
	}{
		{"unschedulable: no Ready condition", corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable", Message: "0/1 nodes are available"}}},
			cnd(rayv1.HeadPodReady, metav1.ConditionFalse, "Unknown", "")},
		{"ready without a reason", corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{
			{Type: corev1.PodReady, Status: corev1.ConditionTrue}}},
			cnd(rayv1.HeadPodReady, metav1.ConditionTrue, "HeadPodRunningAndReady", "")},
		{"containers not ready: the first waiting container", corev1.PodStatus{Phase: corev1.PodRunning,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady", Message: "containers with unready status: [ray-head]"}},
			ContainerStatuses: []corev1.ContainerStatus{
				{Name: "sidecar", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}},
				{Name: "ray-head", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 10s"}}},
			}},
			cnd(rayv1.HeadPodReady, metav1.ConditionFalse, "CrashLoopBackOff", "containers with unready status: [ray-head]; ray-head: back-off 10s")},
		{"containers not ready, all running", corev1.PodStatus{Phase: corev1.PodRunning,
			Conditions:        []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady", Message: "m"}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "ray-head", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}},
			cnd(rayv1.HeadPodReady, metav1.ConditionFalse, "ContainersNotReady", "m")},
		{"terminated", corev1.PodStatus{Phase: corev1.PodRunning,
			Conditions:        []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady"}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "ray-head", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "OOMKilled"}}}}},
			cnd(rayv1.HeadPodReady, metav1.ConditionFalse, "OOMKilled", "ray-head: ")},
		{"ready condition status unknown", corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{
			{Type: corev1.PodReady, Status: corev1.ConditionUnknown, Reason: "NodeLost"}}},
			cnd(rayv1.HeadPodReady, metav1.ConditionUnknown, "NodeLost", "")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pod := base.DeepCopy()
			pod.Status = tc.status
			if got := headPodReadyCondition(pod); got != tc.want {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestStatusUrgency(t *testing.T) {
	base := rayv1.RayClusterStatus{}
	counts := base
	counts.ReadyWorkerReplicas = 2
	if statusUrgent(base, counts) {
		t.Error("a count change while coming up is urgent")
	}
	ready := base
	ready.State = rayv1.Ready
	if !statusUrgent(base, ready) {
		t.Error("becoming ready is not urgent")
	}
	failing := base
	failing.Conditions = []metav1.Condition{{Type: string(rayv1.RayClusterReplicaFailure), Status: metav1.ConditionTrue}}
	if !statusUrgent(base, failing) {
		t.Error("a failure is not urgent")
	}
}

func TestConditionReason(t *testing.T) {
	for in, want := range map[string]string{"CrashLoopBackOff": "CrashLoopBackOff", "bad reason!": "badreason", "": "Fallback", "9x": "Fallback"} {
		if got := conditionReason(in, "Fallback"); got != want {
			t.Errorf("conditionReason(%q) = %q, want %q", in, got, want)
		}
	}
}

// A cluster coming up writes its status once, when it becomes ready: its
// count changes are held for bringUpWindows windows, its head becoming
// ready and a ready cluster's changes for one, and a change of state, a
// failure or a head that stops being ready is written at once.
func TestStatusChangeHolds(t *testing.T) {
	const w = 2 * time.Second
	ready := rayv1.RayClusterStatus{State: rayv1.Ready, ReadyWorkerReplicas: 3}
	failing := rayv1.RayClusterStatus{Conditions: []metav1.Condition{{Type: string(rayv1.RayClusterReplicaFailure), Status: metav1.ConditionTrue}}}
	headOK := metav1.Condition{Type: string(rayv1.HeadPodReady), Status: metav1.ConditionTrue}
	headNot := metav1.Condition{Type: string(rayv1.HeadPodReady), Status: metav1.ConditionFalse}
	for _, c := range []struct {
		name     string
		old, cur rayv1.RayClusterStatus
		failed   bool
		want     kit.StatusChange
	}{
		{"coming up: counts held for the bring-up", rayv1.RayClusterStatus{}, rayv1.RayClusterStatus{DesiredWorkerReplicas: 3}, false, kit.StatusChange{Hold: bringUpWindows * w}},
		{"becoming ready: at once", rayv1.RayClusterStatus{DesiredWorkerReplicas: 3}, ready, false, kit.StatusChange{}},
		{"ready: counts held one window", ready, rayv1.RayClusterStatus{State: rayv1.Ready, ReadyWorkerReplicas: 2}, false, kit.StatusChange{Hold: w}},
		{"coming up: a failure at once", rayv1.RayClusterStatus{}, failing, false, kit.StatusChange{}},
		{"coming up: a failed write at once", rayv1.RayClusterStatus{}, rayv1.RayClusterStatus{DesiredWorkerReplicas: 3}, true, kit.StatusChange{}},
		{"unchanged", ready, ready, false, kit.StatusChange{Unchanged: true}},
		{"coming up: the head ready, held one window", rayv1.RayClusterStatus{Conditions: []metav1.Condition{headNot}}, rayv1.RayClusterStatus{Conditions: []metav1.Condition{headOK}}, false, kit.StatusChange{Hold: w, Class: headReadyClass}},
		{"coming up: the head ready and a failure, at once", rayv1.RayClusterStatus{}, rayv1.RayClusterStatus{Conditions: []metav1.Condition{headOK, failing.Conditions[0]}}, false, kit.StatusChange{}},
		{"coming up: the head no longer ready, at once", rayv1.RayClusterStatus{Conditions: []metav1.Condition{headOK}}, rayv1.RayClusterStatus{Conditions: []metav1.Condition{headNot}}, false, kit.StatusChange{}},
		{"ready: the head ready again, at once", rayv1.RayClusterStatus{State: rayv1.Ready, Conditions: []metav1.Condition{headNot}}, rayv1.RayClusterStatus{State: rayv1.Ready, Conditions: []metav1.Condition{headOK}}, false, kit.StatusChange{}},
	} {
		if got := statusChange(c.old, c.cur, c.failed, w); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}
