package why

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/raydar/raydar/rayapi/podview"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

var now = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

func ptr[T any](v T) *T { return &v }

func rl(kv ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i+1 < len(kv); i += 2 {
		out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

func podTemplate(req corev1.ResourceList) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
		Name: "ray", Image: "rayproject/ray:2.9.0",
		Resources: corev1.ResourceRequirements{Requests: req, Limits: req},
	}}}}
}

// readyCluster is a RayCluster whose status is current and ready, with a
// head and worker groups cpu (2) and gpu (1, 4 GPUs per pod).
func readyCluster() *rayv1.RayCluster {
	return &rayv1.RayCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "rc", Namespace: "ns", Generation: 1},
		Spec: rayv1.RayClusterSpec{
			HeadGroupSpec: rayv1.HeadGroupSpec{RayStartParams: map[string]string{"num-cpus": "0"},
				Template: podTemplate(rl("cpu", "1", "memory", "2Gi"))},
			WorkerGroupSpecs: []rayv1.WorkerGroupSpec{
				{GroupName: "cpu", Replicas: ptr(int32(2)), MaxReplicas: ptr(int32(2)), RayStartParams: map[string]string{},
					Template: podTemplate(rl("cpu", "2", "memory", "4Gi"))},
				{GroupName: "gpu", Replicas: ptr(int32(1)), MaxReplicas: ptr(int32(4)), RayStartParams: map[string]string{},
					Template: podTemplate(rl("cpu", "4", "memory", "8Gi", "nvidia.com/gpu", "4"))},
			},
		},
		Status: rayv1.RayClusterStatus{State: rayv1.Ready, ObservedGeneration: 1, ReadyWorkerReplicas: 3,
			Conditions: []metav1.Condition{{Type: string(rayv1.HeadPodReady), Status: metav1.ConditionTrue, Reason: rayv1.HeadPodRunningAndReady}}},
	}
}

func pod(name string, head bool, group string, tmpl corev1.PodTemplateSpec) *podview.Pod {
	nt := rayv1.WorkerNode
	if head {
		nt, group = rayv1.HeadNode, rayv1.RayNodeHeadGroupLabelValue
	}
	p := &podview.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", Labels: map[string]string{
			rayv1.RayClusterLabelKey: "rc", rayv1.RayNodeTypeLabelKey: string(nt), rayv1.RayNodeGroupLabelKey: group}},
		Spec: podview.SpecOf(tmpl.Spec.DeepCopy()),
	}
	return p
}

func running(p *podview.Pod) *podview.Pod {
	p.Spec.NodeName = "node-1"
	p.Status.Phase = corev1.PodRunning
	p.Status.Conditions = []podview.Condition{
		{Type: corev1.PodScheduled, Status: corev1.ConditionTrue},
		{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	for _, c := range p.Spec.Containers {
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, podview.ContainerStatus{Name: c.Name, Image: c.Image, Ready: true,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}})
	}
	return p
}

func unschedulablePod(p *podview.Pod, msg string) *podview.Pod {
	p.Status.Phase = corev1.PodPending
	p.Status.Conditions = []podview.Condition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable", Message: msg}}
	return p
}

// waiting makes the pod's first container wait for reason.
func waiting(p *podview.Pod, phase corev1.PodPhase, reason, msg string) *podview.Pod {
	p.Spec.NodeName = "node-1"
	p.Status.Phase = phase
	p.Status.Conditions = []podview.Condition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}}
	c := p.Spec.Containers[0]
	p.Status.ContainerStatuses = []podview.ContainerStatus{{Name: c.Name, Image: c.Image,
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: msg}}}}
	return p
}

func healthyPods() []*podview.Pod {
	rc := readyCluster()
	return []*podview.Pod{
		running(pod("rc-head", true, "", rc.Spec.HeadGroupSpec.Template)),
		running(pod("rc-cpu-a", false, "cpu", rc.Spec.WorkerGroupSpecs[0].Template)),
		running(pod("rc-cpu-b", false, "cpu", rc.Spec.WorkerGroupSpecs[0].Template)),
		running(pod("rc-gpu-a", false, "gpu", rc.Spec.WorkerGroupSpecs[1].Template)),
	}
}

func node(name string, alloc corev1.ResourceList, labels map[string]string, taints ...corev1.Taint) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: corev1.NodeSpec{Taints: taints}, Status: corev1.NodeStatus{Allocatable: alloc}}
}

func event(kind, name, typ, reason, msg string) *corev1.Event {
	return &corev1.Event{InvolvedObject: corev1.ObjectReference{Kind: kind, Namespace: "ns", Name: name},
		Type: typ, Reason: reason, Message: msg}
}

func warn(kind, name, reason, msg string) *corev1.Event {
	return event(kind, name, corev1.EventTypeWarning, reason, msg)
}

func normal(kind, name, reason, msg string) *corev1.Event {
	return event(kind, name, corev1.EventTypeNormal, reason, msg)
}

func active() Reconciler { return Reconciler{Known: true, Active: true, Who: "this raydar"} }

// autoscaled turns on in-tree autoscaling and gives the head pod (the
// first pod) a running autoscaler sidecar, as the operator makes it.
func autoscaled(in *ClusterInput) {
	in.Cluster.Spec.EnableInTreeAutoscaling = ptr(true)
	h := in.Pods[0]
	h.Spec.ServiceAccountName = "rc"
	h.Spec.Containers = append(h.Spec.Containers, corev1.Container{Name: rayv1.AutoscalerContainerName, Image: "rayproject/ray:2.9.0"})
	h.Status.ContainerStatuses = append(h.Status.ContainerStatuses, podview.ContainerStatus{Name: rayv1.AutoscalerContainerName, Ready: true,
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}})
}
