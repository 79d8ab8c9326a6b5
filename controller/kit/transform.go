package kit

import (
	corev1 "k8s.io/api/core/v1"
)

// ReconcilerPod is the shared cache's transform of Ray pods: it keeps what
// a reconciler reads of a pod and drops the rest of its spec, the bulk of
// the object (env, args, resources, volumes, probes, security contexts,
// affinity, tolerations), which no reconciler reads back: pods are built
// from their owner's spec and compared through their labels and
// annotations (the template hash), never through the spec read back.
//
// Kept: the whole metadata but managed fields (labels, annotations, owner
// references, deletion timestamp), the whole status (phase, reason,
// conditions, container statuses, pod IP), and of the spec the node
// (scheduled or not), the restart policy (an exited Ray container under
// Never is replaced), and each container's name and ports (the Ray
// container's name finds its status; the Serve port; the RayJob submitter
// container). Pods are only ever patched from what is cached (merge
// patches of annotations), so a pod read back this way is never written
// whole. Objects other than pods pass unchanged.
func ReconcilerPod(obj any) (any, error) {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	lean := &corev1.Pod{TypeMeta: p.TypeMeta, ObjectMeta: p.ObjectMeta, Status: p.Status}
	lean.ManagedFields = nil
	lean.Spec = corev1.PodSpec{NodeName: p.Spec.NodeName, RestartPolicy: p.Spec.RestartPolicy}
	if len(p.Spec.Containers) > 0 {
		lean.Spec.Containers = make([]corev1.Container, len(p.Spec.Containers))
		for i, c := range p.Spec.Containers {
			lean.Spec.Containers[i] = corev1.Container{Name: c.Name, Ports: c.Ports}
		}
	}
	return lean, nil
}
