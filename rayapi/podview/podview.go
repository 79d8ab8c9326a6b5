// Package podview owns the record of a pod that raydar's views read: the
// TUI's cache and Store hold pods as a *Pod, and the status words
// (rayapi/status), the Why diagnosis (rayapi/why), history's pod diff,
// the views and the actions read it. A *corev1.Pod from anywhere else (the
// operator's cache when the loop is embedded, a LIST or GET of the CLI)
// becomes one with Of.
//
// A Pod has the field names and types of corev1.Pod for what it keeps, so
// p.Status.Phase, p.Spec.NodeName or p.Status.Conditions[i].Reason read the
// same, but only what the readers read: the metadata, nine spec fields and
// six status fields, with conditions (PodScheduled and Ready, see
// Condition) and container statuses in smaller structs of their own. The
// compiler keeps the field list honest: a reader of a field the record
// lacks does not build. A corev1.Pod is 1,240 bytes (1,280 with its
// allocation size class) before its conditions (120 bytes each, four or
// five) and container statuses (208 bytes each); a Pod is 512, with two
// conditions of 64 bytes and container statuses of 96 (docs/benchmarks.md,
// issue 27, round six). Describe's YAML and anything else that needs the
// whole pod GET it.
package podview

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Pod is a pod as the views read it (see the package comment). Cached Pods
// are shared by every reader and never modified.
type Pod struct {
	metav1.ObjectMeta
	Spec   Spec
	Status Status
}

// Spec is what the readers read of a pod's spec: the scheduling diagnosis
// (node selector, tolerations, affinity, overhead, the containers'
// resources while the pod is not ready, and the scheduler a pod waits
// for), the autoscaler diagnosis (the head's ServiceAccount), the views'
// node, and the containers' names and images (the logs page, why's image
// words).
type Spec struct {
	NodeName           string
	SchedulerName      string
	ServiceAccountName string
	NodeSelector       map[string]string
	Tolerations        []corev1.Toleration
	Affinity           *corev1.Affinity
	Overhead           corev1.ResourceList
	InitContainers     []corev1.Container
	Containers         []corev1.Container
}

// Status is what the readers read of a pod's status: its phase, reason
// and message, conditions, IP and container statuses.
type Status struct {
	Phase                 corev1.PodPhase
	Conditions            []Condition
	Message               string
	Reason                string
	PodIP                 string
	InitContainerStatuses []ContainerStatus
	ContainerStatuses     []ContainerStatus
}

// Condition is one of the two pod conditions the readers read, the
// scheduler's PodScheduled (why's Unschedulable and SchedulerNotBinding)
// and Ready (the views' and why's readiness), less its times: no reader
// reads when a condition changed. Of drops the other conditions
// (Initialized, ContainersReady, PodReadyToStartContainers, …): a kubelet
// writes four or five, 480-600 bytes a pod as corev1.PodConditions, two
// of 64 bytes here. A reader of another condition reads the pod whole.
type Condition struct {
	Type    corev1.PodConditionType
	Status  corev1.ConditionStatus
	Reason  string
	Message string
}

// kept is whether the record keeps a condition of type t.
func kept(t corev1.PodConditionType) bool { return t == corev1.PodScheduled || t == corev1.PodReady }

// ContainerStatus is what the readers read of a container's status: its
// state and last state (a terminated state's containerID aside), whether
// it is ready and started, and its restarts.
type ContainerStatus struct {
	Name                 string
	Image                string
	State                corev1.ContainerState
	LastTerminationState corev1.ContainerState
	Started              *bool
	RestartCount         int32
	Ready                bool
}

// Of is p's record. It shares p's maps, slices and pointers (neither may
// be modified afterwards, as for any cached object) but for the
// conditions and container statuses, which it converts. Nil is nil.
func Of(p *corev1.Pod) *Pod {
	if p == nil {
		return nil
	}
	st := &p.Status
	return &Pod{
		ObjectMeta: p.ObjectMeta,
		Spec:       SpecOf(&p.Spec),
		Status: Status{
			Phase:                 st.Phase,
			Conditions:            conditions(st.Conditions),
			Message:               st.Message,
			Reason:                st.Reason,
			PodIP:                 st.PodIP,
			InitContainerStatuses: containerStatuses(st.InitContainerStatuses),
			ContainerStatuses:     containerStatuses(st.ContainerStatuses),
		},
	}
}

// SpecOf is what the record keeps of s, sharing its parts: for a pod
// template's spec too (what a group's pods will ask for).
func SpecOf(s *corev1.PodSpec) Spec {
	return Spec{NodeName: s.NodeName, SchedulerName: s.SchedulerName, ServiceAccountName: s.ServiceAccountName,
		NodeSelector: s.NodeSelector, Tolerations: s.Tolerations, Affinity: s.Affinity, Overhead: s.Overhead,
		InitContainers: s.InitContainers, Containers: s.Containers}
}

// All is Of of each pod of ps.
func All(ps []*corev1.Pod) []*Pod {
	if ps == nil {
		return nil
	}
	out := make([]*Pod, len(ps))
	for i, p := range ps {
		out[i] = Of(p)
	}
	return out
}

// From is obj's record when obj is a pod: a *Pod as it is, a *corev1.Pod
// through Of. A deleted-final-state tombstone is not unwrapped: callers
// pass its Obj.
func From(obj any) (*Pod, bool) {
	switch o := obj.(type) {
	case *Pod:
		return o, o != nil
	case *corev1.Pod:
		return Of(o), o != nil
	}
	return nil, false
}

func conditions(cs []corev1.PodCondition) []Condition {
	if len(cs) == 0 {
		return nil
	}
	n := 0
	for _, c := range cs {
		if kept(c.Type) {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	out := make([]Condition, 0, n)
	for _, c := range cs {
		if kept(c.Type) {
			out = append(out, Condition{Type: c.Type, Status: c.Status, Reason: c.Reason, Message: c.Message})
		}
	}
	return out
}

func containerStatuses(cs []corev1.ContainerStatus) []ContainerStatus {
	if len(cs) == 0 {
		return nil
	}
	out := make([]ContainerStatus, len(cs))
	for i, c := range cs {
		out[i] = ContainerStatus{Name: c.Name, Image: c.Image, State: c.State, LastTerminationState: c.LastTerminationState,
			Started: c.Started, RestartCount: c.RestartCount, Ready: c.Ready}
	}
	return out
}

// Corev1 is the pod p records, as a new *corev1.Pod holding p's parts:
// for the few readers that need Kubernetes' type (a cache read through
// controller-runtime, which DeepCopyObject serves). Fields p does not keep
// are empty.
func (p *Pod) Corev1() *corev1.Pod {
	if p == nil {
		return nil
	}
	s, st := &p.Spec, &p.Status
	out := &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: p.ObjectMeta,
		Spec: corev1.PodSpec{NodeName: s.NodeName, SchedulerName: s.SchedulerName, ServiceAccountName: s.ServiceAccountName, NodeSelector: s.NodeSelector, Tolerations: s.Tolerations, Affinity: s.Affinity,
			Overhead: s.Overhead, InitContainers: s.InitContainers, Containers: s.Containers},
		Status: corev1.PodStatus{Phase: st.Phase, Message: st.Message, Reason: st.Reason, PodIP: st.PodIP,
			InitContainerStatuses: corev1Statuses(st.InitContainerStatuses),
			ContainerStatuses:     corev1Statuses(st.ContainerStatuses)},
	}
	for _, c := range st.Conditions {
		out.Status.Conditions = append(out.Status.Conditions, corev1.PodCondition{Type: c.Type, Status: c.Status,
			Reason: c.Reason, Message: c.Message})
	}
	return out.DeepCopy()
}

func corev1Statuses(cs []ContainerStatus) []corev1.ContainerStatus {
	if len(cs) == 0 {
		return nil
	}
	out := make([]corev1.ContainerStatus, len(cs))
	for i, c := range cs {
		out[i] = corev1.ContainerStatus{Name: c.Name, Image: c.Image, State: c.State, LastTerminationState: c.LastTerminationState,
			Started: c.Started, RestartCount: c.RestartCount, Ready: c.Ready}
	}
	return out
}

// DeepCopy is a copy of p that shares nothing with it, for a reader that
// changes it.
func (p *Pod) DeepCopy() *Pod {
	if p == nil {
		return nil
	}
	c := Of(p.Corev1()) // Corev1 copies deeply; Of shares that copy's parts
	return c
}

// GetObjectKind is a pod's (Pods in a cache carry no TypeMeta).
func (p *Pod) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

// DeepCopyObject is Corev1: a deep copy as a *corev1.Pod, so that a
// controller-runtime cache holding Pods (the observe-only TUI's) still
// answers a Get of a corev1.Pod or a List of a corev1.PodList, with what
// the record keeps.
func (p *Pod) DeepCopyObject() runtime.Object { return p.Corev1() }

// Condition is p's condition of type t, nil when it has none.
func (p *Pod) Condition(t corev1.PodConditionType) *Condition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == t {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}
