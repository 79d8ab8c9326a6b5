package raycluster

import (
	"context"

	"github.com/raydar/raydar/controller/kit"

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
type ChildHandler struct{ Exp *expectations }

type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]

func owner(obj client.Object) (types.UID, reconcile.Request, bool) {
	for _, r := range obj.GetOwnerReferences() {
		if r.Controller != nil && *r.Controller && r.Kind == rayv1.KindRayCluster && r.APIVersion == rayv1.GroupVersion.String() {
			return r.UID, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: r.Name}}, true
		}
	}
	return "", reconcile.Request{}, false
}

func (h *ChildHandler) Create(_ context.Context, e crevent.CreateEvent, q queue) {
	if uid, req, ok := owner(e.Object); ok {
		h.Exp.observedCreate(uid, e.Object)
		if e.Object.GetDeletionTimestamp() != nil {
			h.Exp.observedDelete(uid, e.Object.GetUID())
		}
		q.Add(req)
	}
}

func (h *ChildHandler) Update(_ context.Context, e crevent.UpdateEvent, q queue) {
	uid, req, ok := owner(e.ObjectNew)
	if !ok {
		return
	}
	if e.ObjectNew.GetDeletionTimestamp() != nil {
		h.Exp.observedDelete(uid, e.ObjectNew.GetUID())
	}
	if kit.RelevantChange(e.ObjectOld, e.ObjectNew) {
		q.Add(req)
	}
}

func (h *ChildHandler) Delete(_ context.Context, e crevent.DeleteEvent, q queue) {
	if uid, req, ok := owner(e.Object); ok {
		h.Exp.observedCreate(uid, e.Object)
		h.Exp.observedDelete(uid, e.Object.GetUID())
		q.Add(req)
	}
}

func (h *ChildHandler) Generic(_ context.Context, e crevent.GenericEvent, q queue) {
	if _, req, ok := owner(e.Object); ok {
		q.Add(req)
	}
}
