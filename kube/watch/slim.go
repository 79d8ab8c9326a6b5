package watch

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
//     image, resources and restartPolicy (what the scheduler counts a pod
//     as asking for, sidecars included; why's image and OOM words; the logs
//     page's container); the rest is dropped;
//   - status: all of it.
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
	p.Spec = corev1.PodSpec{
		NodeName:       p.Spec.NodeName,
		NodeSelector:   p.Spec.NodeSelector,
		Tolerations:    p.Spec.Tolerations,
		Affinity:       p.Spec.Affinity,
		Overhead:       p.Spec.Overhead,
		InitContainers: slimContainers(p.Spec.InitContainers),
		Containers:     slimContainers(p.Spec.Containers),
	}
	return p, nil
}

func slimContainers(cs []corev1.Container) []corev1.Container {
	if len(cs) == 0 {
		return nil
	}
	out := make([]corev1.Container, len(cs))
	for i, c := range cs {
		out[i] = corev1.Container{Name: c.Name, Image: c.Image, Resources: c.Resources, RestartPolicy: c.RestartPolicy}
	}
	return out
}
