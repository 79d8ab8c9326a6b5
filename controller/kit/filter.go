package kit

import (
	rayv1 "github.com/raydar/raydar/rayapi/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// RelevantChange reports whether an update changes what decide or the
// status computation reads.
func RelevantChange(oldObj, newObj client.Object) bool {
	if (oldObj.GetDeletionTimestamp() == nil) != (newObj.GetDeletionTimestamp() == nil) {
		return true
	}
	switch n := newObj.(type) {
	case *corev1.Pod:
		o, ok := oldObj.(*corev1.Pod)
		if !ok {
			return true
		}
		return podDigest(o) != podDigest(n) || !equality.Semantic.DeepEqual(o.Labels, n.Labels)
	case *corev1.Service:
		o, ok := oldObj.(*corev1.Service)
		if !ok {
			return true
		}
		return o.Spec.ClusterIP != n.Spec.ClusterIP || !equality.Semantic.DeepEqual(o.Spec.Ports, n.Spec.Ports) ||
			!equality.Semantic.DeepEqual(o.Status.LoadBalancer, n.Status.LoadBalancer)
	}
	return true
}

// ReadinessChanged is whether a pod became running and ready or stopped
// being so (IsRunningAndReady): the change a status's ready count follows.
// Any other object: false.
func ReadinessChanged(oldObj, newObj client.Object) bool {
	o, ok1 := oldObj.(*corev1.Pod)
	n, ok2 := newObj.(*corev1.Pod)
	return ok1 && ok2 && IsRunningAndReady(o) != IsRunningAndReady(n)
}

type digest struct {
	phase      corev1.PodPhase
	reason     string
	ready      bool
	readyWhy   string
	ip         string
	node       string
	rayWaiting string
	rayExited  bool
}

func podDigest(p *corev1.Pod) digest {
	d := digest{phase: p.Status.Phase, reason: p.Status.Reason, ip: p.Status.PodIP, node: p.Spec.NodeName, ready: IsRunningAndReady(p)}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			d.readyWhy = c.Reason
		}
	}
	if len(p.Spec.Containers) > 0 {
		name := p.Spec.Containers[rayv1.RayContainerIndex].Name
		for _, cs := range p.Status.ContainerStatuses {
			if cs.Name != name {
				continue
			}
			if cs.State.Waiting != nil {
				d.rayWaiting = cs.State.Waiting.Reason
			}
			d.rayExited = cs.State.Terminated != nil
		}
	}
	return d
}
