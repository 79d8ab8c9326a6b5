package watch

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/raydar/raydar/rayapi/status"
)

// SlimPod is the informer transform of the observe-only TUI's cache
// (cmd/raydar's session): for a pod it keeps what the views, the Why
// diagnosis (rayapi/why) and describe's summary read, and drops the rest of
// a Ray pod's spec, most of its bytes (KubeRay's env vars, the ray start
// script, probes, volumes and mounts):
//
//   - metadata: all but managedFields;
//   - spec: nodeName, nodeSelector, tolerations, affinity, overhead (the
//     scheduling diagnosis), and per init and app container its name,
//     image and restartPolicy, and its resources while the pod is not
//     ready (what the scheduler counts a pod as asking for, sidecars
//     included; why's image and OOM words; the logs page's container); the
//     rest is dropped;
//   - status: phase, reason, message, conditions (less lastProbeTime,
//     which kubelets leave empty), hostIP, podIP, startTime,
//     nominatedNodeName, qosClass, observedGeneration, and per container
//     status its name, image, state and last state (less the terminated
//     state's containerID), ready, started and restart count: what the
//     views, the diagnosis (scheduling, image pulls, crash loops, OOM
//     kills) and history read. The rest is dropped: the IDs of containers
//     and images, and what a kubelet of 1.33 or later reports besides
//     (allocated resources, resources, volume mounts, the user a container
//     runs as, per container and for the pod): 2.5 KB of the 4.9 KB a pod
//     kept with such a status (BenchmarkPodDecode/kubelet-status/); the
//     sandbox's kwok writes only the IDs and the pod's IPs of them.
//
// What is kept is then shared with the pods before it where equal
// (compactPod: strings, label maps, tolerations, owner references).
//
// Describe's YAML of a pod therefore GETs the whole pod (Session.Get).
// Other objects pass through with their managedFields stripped.
func SlimPod(obj any) (any, error) {
	if m, ok := obj.(metav1.Object); ok {
		m.SetManagedFields(nil)
	}
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	ready := podReady(p)
	p.Spec = corev1.PodSpec{
		NodeName:       p.Spec.NodeName,
		NodeSelector:   p.Spec.NodeSelector,
		Tolerations:    p.Spec.Tolerations,
		Affinity:       p.Spec.Affinity,
		Overhead:       p.Spec.Overhead,
		InitContainers: slimContainers(p.Spec.InitContainers, ready),
		Containers:     slimContainers(p.Spec.Containers, ready),
	}
	p.Status = slimStatus(&p.Status)
	compactPod(p)
	return p, nil
}

// slimContainers keeps a container's name, image and restartPolicy, and
// its resources unless the pod is ready: only the diagnosis of a pod that
// is not (unschedulable: what it asks for; a crash loop: its memory limit)
// reads them, and every update brings the whole pod to the transform
// again, so a pod that stops being ready has them back.
func slimContainers(cs []corev1.Container, ready bool) []corev1.Container {
	if len(cs) == 0 {
		return nil
	}
	out := make([]corev1.Container, len(cs))
	for i, c := range cs {
		out[i] = corev1.Container{Name: c.Name, Image: c.Image, RestartPolicy: c.RestartPolicy}
		if !ready {
			out[i].Resources = c.Resources
		}
	}
	return out
}

// slimStatus is what SlimPod keeps of a pod's status (see there); it
// reuses st's slices.
func slimStatus(st *corev1.PodStatus) corev1.PodStatus {
	for i := range st.Conditions {
		st.Conditions[i].LastProbeTime = metav1.Time{}
	}
	return corev1.PodStatus{
		ObservedGeneration:         st.ObservedGeneration,
		Phase:                      st.Phase,
		Conditions:                 st.Conditions,
		Message:                    st.Message,
		Reason:                     st.Reason,
		NominatedNodeName:          st.NominatedNodeName,
		HostIP:                     st.HostIP,
		PodIP:                      st.PodIP,
		StartTime:                  st.StartTime,
		QOSClass:                   st.QOSClass,
		InitContainerStatuses:      slimContainerStatuses(st.InitContainerStatuses),
		ContainerStatuses:          slimContainerStatuses(st.ContainerStatuses),
		EphemeralContainerStatuses: slimContainerStatuses(st.EphemeralContainerStatuses),
	}
}

// slimContainerStatuses keeps, in place, a container status's name, image,
// state and last state (without the terminated state's containerID),
// ready, started and restart count.
func slimContainerStatuses(cs []corev1.ContainerStatus) []corev1.ContainerStatus {
	for i := range cs {
		c := &cs[i]
		*c = corev1.ContainerStatus{Name: c.Name, State: c.State, LastTerminationState: c.LastTerminationState,
			Ready: c.Ready, RestartCount: c.RestartCount, Image: c.Image, Started: c.Started}
		for _, t := range []*corev1.ContainerStateTerminated{c.State.Terminated, c.LastTerminationState.Terminated} {
			if t != nil {
				t.ContainerID = ""
			}
		}
	}
	return cs
}

// podReady: Running with the Ready condition true.
func podReady(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodRunning && status.PodIsReady(p)
}
