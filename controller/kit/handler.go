package kit

import (
	"context"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	crevent "sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// OwnerFunc maps a child to its owner: the owner's UID (the Expectations'
// key) and the request to queue; ok false for an object of no owner.
type OwnerFunc func(client.Object) (owner types.UID, req reconcile.Request, ok bool)

// ControllerOwner is the OwnerFunc of children whose controller owner
// reference names an object of this kind and group-version.
func ControllerOwner(kind, apiVersion string) OwnerFunc {
	return func(obj client.Object) (types.UID, reconcile.Request, bool) {
		for _, r := range obj.GetOwnerReferences() {
			if r.Controller != nil && *r.Controller && r.Kind == kind && r.APIVersion == apiVersion {
				return r.UID, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: r.Name}}, true
			}
		}
		return "", reconcile.Request{}, false
	}
}

// ChildHandler is the informer side of read-your-writes: it maps events of
// children to their owner's request and tells the Expectations what the
// cache now shows (a child added, terminating or gone). Updates that change
// nothing a decision reads (RelevantChange: most kubelet status churn) are
// dropped here.
type ChildHandler struct {
	Exp   *Expectations
	Owner OwnerFunc
}

type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]

// Create implements handler.EventHandler.
func (h *ChildHandler) Create(_ context.Context, e crevent.CreateEvent, q queue) {
	if uid, req, ok := h.Owner(e.Object); ok {
		h.Exp.ObservedCreate(uid, e.Object)
		if e.Object.GetDeletionTimestamp() != nil {
			h.Exp.ObservedDelete(uid, e.Object.GetUID())
		}
		q.Add(req)
	}
}

// Update implements handler.EventHandler.
func (h *ChildHandler) Update(_ context.Context, e crevent.UpdateEvent, q queue) {
	uid, req, ok := h.Owner(e.ObjectNew)
	if !ok {
		return
	}
	if e.ObjectNew.GetDeletionTimestamp() != nil {
		h.Exp.ObservedDelete(uid, e.ObjectNew.GetUID())
	}
	switch {
	case ReadinessChanged(e.ObjectOld, e.ObjectNew):
		addFirst(q, req)
	case RelevantChange(e.ObjectOld, e.ObjectNew):
		q.Add(req)
	}
}

// ReadyFirst is the queue priority of an owner whose pod became ready or
// stopped being ready; every other event queues at controller-runtime's
// default, 0.
const ReadyFirst = 1

// addFirst queues req ahead of the requests at the default priority (it
// moves up if already queued): a pod's readiness is what a status counts,
// and an owner whose last pod just became ready is one status write from
// ready. In a FIFO queue that write waited behind every cluster still being
// built: at 10,000 RayClusters a cluster whose pods were all Ready waited
// up to 378 s (p99) for its status to say so (docs/benchmarks.md, issue
// 47). A queue without priorities (tests) takes a plain Add.
func addFirst(q queue, req reconcile.Request) {
	if pq, ok := q.(priorityqueue.PriorityQueue[reconcile.Request]); ok {
		pq.AddWithOpts(priorityqueue.AddOpts{Priority: ptr.To(ReadyFirst)}, req)
		return
	}
	q.Add(req)
}

// Delete implements handler.EventHandler.
func (h *ChildHandler) Delete(_ context.Context, e crevent.DeleteEvent, q queue) {
	if uid, req, ok := h.Owner(e.Object); ok {
		h.Exp.ObservedCreate(uid, e.Object)
		h.Exp.ObservedDelete(uid, e.Object.GetUID())
		q.Add(req)
	}
}

// Generic implements handler.EventHandler.
func (h *ChildHandler) Generic(_ context.Context, e crevent.GenericEvent, q queue) {
	if _, req, ok := h.Owner(e.Object); ok {
		q.Add(req)
	}
}
