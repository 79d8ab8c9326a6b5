package controller

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crevent "sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// childHandler maps events of pods and Services to their owning RayCluster,
// and tells the expectations what the cache has now seen. Pod updates that
// change nothing the reconciler looks at (most kubelet status churn) are
// dropped here.
type childHandler struct{ exp *expectations }

type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]

func owner(obj client.Object) (types.UID, reconcile.Request, bool) {
	for _, r := range obj.GetOwnerReferences() {
		if r.Controller != nil && *r.Controller && r.Kind == rayv1.KindRayCluster && r.APIVersion == rayv1.GroupVersion.String() {
			return r.UID, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: r.Name}}, true
		}
	}
	return "", reconcile.Request{}, false
}

func (h *childHandler) Create(_ context.Context, e crevent.CreateEvent, q queue) {
	if uid, req, ok := owner(e.Object); ok {
		h.exp.observedCreate(uid, e.Object)
		if e.Object.GetDeletionTimestamp() != nil {
			h.exp.observedDelete(uid, e.Object.GetUID())
		}
		q.Add(req)
	}
}

func (h *childHandler) Update(_ context.Context, e crevent.UpdateEvent, q queue) {
	uid, req, ok := owner(e.ObjectNew)
	if !ok {
		return
	}
	if e.ObjectNew.GetDeletionTimestamp() != nil {
		h.exp.observedDelete(uid, e.ObjectNew.GetUID())
	}
	if relevantChange(e.ObjectOld, e.ObjectNew) {
		q.Add(req)
	}
}

func (h *childHandler) Delete(_ context.Context, e crevent.DeleteEvent, q queue) {
	if uid, req, ok := owner(e.Object); ok {
		h.exp.observedCreate(uid, e.Object)
		h.exp.observedDelete(uid, e.Object.GetUID())
		q.Add(req)
	}
}

func (h *childHandler) Generic(_ context.Context, e crevent.GenericEvent, q queue) {
	if _, req, ok := owner(e.Object); ok {
		q.Add(req)
	}
}

// relevantChange reports whether an update changes what decide or the
// status computation reads.
func relevantChange(oldObj, newObj client.Object) bool {
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
	d := digest{phase: p.Status.Phase, reason: p.Status.Reason, ip: p.Status.PodIP, node: p.Spec.NodeName, ready: isRunningAndReady(p)}
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
