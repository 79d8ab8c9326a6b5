package watch

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/raydar/raydar/rayapi/podview"
	"github.com/raydar/raydar/rayapi/status"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// SlimPod is the informer transform of the observe-only TUI's cache
// (cmd/raydar's session): a pod becomes its *podview.Pod, the record every
// reader of the TUI's pods reads (the views, the Why diagnosis, history,
// the actions), which drops most of a Ray pod's bytes (KubeRay's env vars,
// the ray start script, probes, volumes and mounts) and the fields of the
// corev1 structs no reader reads:
//
//   - metadata: all but managedFields;
//   - spec: what podview.Spec keeps, and per init and app container its
//     name, image, restartPolicy and the port named "metrics" (where
//     kube/gauges reads Ray's gauges), and its resources while the pod is not
//     ready (what the scheduler counts a pod as asking for, sidecars
//     included; why's image and OOM words; the logs page's container);
//   - status: what podview.Status keeps, a terminated state's containerID
//     aside.
//
// What is kept is then shared with the pods before it where equal
// (compactPod: strings, label maps, tolerations, owner references,
// containers).
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
	r := podview.Of(p)
	ready := podReady(r)
	r.Spec.InitContainers = slimContainers(r.Spec.InitContainers, ready)
	r.Spec.Containers = slimContainers(r.Spec.Containers, ready)
	dropContainerIDs(r.Status.InitContainerStatuses)
	dropContainerIDs(r.Status.ContainerStatuses)
	compactPod(r)
	return r, nil
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
		for _, p := range c.Ports {
			if p.Name == rayv1.MetricsPortName {
				out[i].Ports = []corev1.ContainerPort{{Name: p.Name, ContainerPort: p.ContainerPort}}
			}
		}
		if !ready {
			out[i].Resources = c.Resources
		}
	}
	return out
}

// dropContainerIDs clears the terminated states' containerID (no reader
// reads it; a kubelet writes ~80 bytes of it).
func dropContainerIDs(cs []podview.ContainerStatus) {
	for i := range cs {
		for _, t := range []*corev1.ContainerStateTerminated{cs[i].State.Terminated, cs[i].LastTerminationState.Terminated} {
			if t != nil {
				t.ContainerID = ""
			}
		}
	}
}

// podReady: Running with the Ready condition true.
func podReady(p *podview.Pod) bool {
	return p.Status.Phase == corev1.PodRunning && status.PodIsReady(p)
}
