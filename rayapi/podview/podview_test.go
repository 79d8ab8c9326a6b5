package podview

import (
	"reflect"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

// The record's point is its size: the package comment's figures.
func TestRecordIsSmallerThanAPod(t *testing.T) {
	for _, c := range []struct {
		what      string
		got, want uintptr
	}{
		{"Pod", unsafe.Sizeof(Pod{}), 512},
		{"Condition", unsafe.Sizeof(Condition{}), 64},
		{"ContainerStatus", unsafe.Sizeof(ContainerStatus{}), 96},
		{"corev1.Pod", unsafe.Sizeof(corev1.Pod{}), 1240},
	} {
		if c.got != c.want {
			t.Errorf("%s is %d bytes, want %d (the package comment's figure)", c.what, c.got, c.want)
		}
	}
}

func fullPod() *corev1.Pod {
	now := metav1.Now()
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "w-1", Namespace: "ns", UID: "u1", ResourceVersion: "7",
			Labels: map[string]string{"ray.io/cluster": "c"}, CreationTimestamp: now},
		Spec: corev1.PodSpec{NodeName: "n1", SchedulerName: "volcano", ServiceAccountName: "ray-head", NodeSelector: map[string]string{"a": "b"},
			Tolerations: []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists}},
			Overhead:    corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
			Containers: []corev1.Container{{Name: "ray-worker", Image: "rayproject/ray:2.52.0",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("4")}}}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, Reason: "r", Message: "m", PodIP: "10.1.0.1",
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, Reason: "x", Message: "y"},
				{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "ray-worker", Image: "img", Ready: true, RestartCount: 3, Started: ptr.To(true),
				State:                corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
				LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "OOMKilled", ExitCode: 137}}}}},
	}
}

// Of keeps every field the record has, and Corev1 gives them back: a
// reader sees the same values through either.
func TestOfThenCorev1KeepsWhatTheRecordHas(t *testing.T) {
	p := fullPod()
	r := Of(p)
	if r.Name != "w-1" || r.Spec.NodeName != "n1" || r.Status.Conditions[0].Reason != "x" ||
		r.Status.ContainerStatuses[0].LastTerminationState.Terminated.Reason != "OOMKilled" || r.Status.ContainerStatuses[0].RestartCount != 3 {
		t.Fatalf("Of lost a field: %+v", r)
	}
	if c := r.Condition(corev1.PodReady); c == nil || c.Status != corev1.ConditionTrue {
		t.Errorf("Condition(Ready) = %+v", c)
	}
	if r.Condition(corev1.PodInitialized) != nil {
		t.Error("Condition(Initialized) of a pod without it is not nil")
	}
	back := r.Corev1()
	want := p.DeepCopy()
	want.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}
	if d := cmp.Diff(want, back); d != "" {
		t.Errorf("Corev1(Of(p)) differs from p (-p +got):\n%s", d)
	}
	back.Labels["ray.io/cluster"] = "changed"
	if r.Labels["ray.io/cluster"] != "c" {
		t.Error("Corev1 shares the record's label map: a change to the copy changed the cache")
	}
	if got, ok := From(p); !ok || got.Name != "w-1" {
		t.Errorf("From(*corev1.Pod) = %v, %v", got, ok)
	}
	if got, ok := From(r); !ok || got != r {
		t.Errorf("From(*Pod) = %v, %v, want the same record", got, ok)
	}
	if _, ok := From(&corev1.Node{}); ok {
		t.Error("From(a Node) is a pod")
	}
	if _, ok := From((*corev1.Pod)(nil)); ok {
		t.Error("From(nil pod) is a pod")
	}
}

// DeepCopy is equal and shares nothing a reader may change; a cache read
// through controller-runtime (DeepCopyObject) gets Kubernetes' type.
func TestDeepCopySharesNothing(t *testing.T) {
	r := Of(fullPod())
	c := r.DeepCopy()
	if d := cmp.Diff(r, c); d != "" {
		t.Fatalf("DeepCopy differs (-record +copy):\n%s", d)
	}
	c.Labels["ray.io/cluster"] = "other"
	c.Status.Conditions[0].Reason = "changed"
	c.Status.ContainerStatuses[0].LastTerminationState.Terminated.Reason = "changed"
	c.Spec.Tolerations[0].Key = "changed"
	if r.Labels["ray.io/cluster"] != "c" || r.Status.Conditions[0].Reason != "x" ||
		r.Status.ContainerStatuses[0].LastTerminationState.Terminated.Reason != "OOMKilled" || r.Spec.Tolerations[0].Key != "k" {
		t.Errorf("a change to the copy changed the record: %+v", r)
	}
	if p, ok := r.DeepCopyObject().(*corev1.Pod); !ok || p.Name != "w-1" || p.Kind != "Pod" {
		t.Errorf("DeepCopyObject = %T %v", r.DeepCopyObject(), p)
	}
}

// controller-runtime's cache reader hands out DeepCopyObject's result:
// into a PodList with apimeta.SetList, into a Pod by assigning the value.
// A cache holding records answers both (the capacity poller lists a
// cluster's pods from the observe-only cache).
func TestACacheOfRecordsAnswersCorev1Reads(t *testing.T) {
	r := Of(fullPod())
	var l corev1.PodList
	if err := apimeta.SetList(&l, []runtime.Object{r.DeepCopyObject()}); err != nil {
		t.Fatal(err)
	}
	if len(l.Items) != 1 || l.Items[0].Name != "w-1" || l.Items[0].Status.Conditions[0].Reason != "x" {
		t.Errorf("listed %+v", l.Items)
	}
	var p corev1.Pod
	obj := reflect.ValueOf(r.DeepCopyObject())
	if !obj.Type().AssignableTo(reflect.TypeOf(&p)) {
		t.Fatalf("a Get of a corev1.Pod would fail: the cache has %s", obj.Type())
	}
	reflect.ValueOf(&p).Elem().Set(obj.Elem())
	if p.Spec.NodeName != "n1" {
		t.Errorf("got %+v", p)
	}
}

// Of keeps the two conditions the readers read, PodScheduled and Ready,
// without their times, and drops the others.
func TestOfKeepsTheConditionsReadersRead(t *testing.T) {
	now := metav1.Now()
	p := &corev1.Pod{Status: corev1.PodStatus{Conditions: []corev1.PodCondition{
		{Type: corev1.PodReadyToStartContainers, Status: corev1.ConditionTrue, LastTransitionTime: now},
		{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: now},
		{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady", Message: "containers with unready status: [ray-worker]", LastTransitionTime: now},
		{Type: corev1.ContainersReady, Status: corev1.ConditionFalse, LastTransitionTime: now},
		{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable", Message: "0/3 nodes are available", LastTransitionTime: now},
	}}}
	want := []Condition{
		{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady", Message: "containers with unready status: [ray-worker]"},
		{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable", Message: "0/3 nodes are available"},
	}
	if d := cmp.Diff(want, Of(p).Status.Conditions); d != "" {
		t.Errorf("conditions (-want +got):\n%s", d)
	}
	p.Status.Conditions = p.Status.Conditions[:2]
	if got := Of(p).Status.Conditions; got != nil {
		t.Errorf("a pod with neither condition: %v, want none", got)
	}
}
