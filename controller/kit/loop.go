package kit

import (
	"context"
	"reflect"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// DefaultConflictRetries bounds the fresh-read retries of one Reconcile
// after a 409.
const DefaultConflictRetries = 3

// Loop is the Reconcile prologue every kind shares, and the one way a
// 409 is handled. Reconcile:
//
//  1. gets the object from the cache; not found: the object is gone, and
//     everything this process remembers about it is forgotten (Forget);
//  2. lays this process's own last write over it (Latest: read-your-writes
//     for the object itself);
//  3. asks the other-operator gate; an object raydar must leave alone is
//     said once, in an Event and the log, and not reconciled;
//  4. runs the pass (observe → decide → act); a 409 (someone else wrote
//     the object: the autoscaler, a user, a KubeRay operator) decides again
//     from a fresh live read, up to ConflictRetries times, then returns the
//     error to controller-runtime's back-off. The expectations keep the
//     writes already made from being repeated.
//
// Deletion and finalizers are the pass's: its decision reads the
// deletionTimestamp and plans the finalizer (UpdateFinalizers).
type Loop[O client.Object] struct {
	Cache client.Reader // the shared informer cache
	API   client.Reader // live reads, after a 409
	New   func() O      // an empty object of the kind

	Exp    *Expectations
	Events *Events
	Status *StatusWriter // forgotten with the object; may be nil
	Gate   *Gate         // nil: only spec.managedBy is checked

	// Noun names an object of the kind in the gate's messages: "cluster",
	// "RayJob", "RayService" (Setup: gateNoun of the kind's descriptor).
	Noun string
	// ManagedBy returns the object's spec.managedBy.
	ManagedBy func(O) *string
	// ListUnmanaged: the gate lists the skipped objects of this kind
	// (Gate.Unmanaged).
	ListUnmanaged bool
	// Forget drops the kind's own memory of an object that is gone; Exp,
	// Events, Status and the gate are forgotten by the Loop. May be nil.
	Forget func(uid types.UID, nn types.NamespacedName)
	// ConflictRetries: DefaultConflictRetries when 0.
	ConflictRetries int

	mu   sync.Mutex
	uids map[types.NamespacedName]types.UID
}

// Reconcile runs the prologue, then pass.
func (l *Loop[O]) Reconcile(ctx context.Context, req ctrl.Request, pass func(context.Context, O) (ctrl.Result, error)) (ctrl.Result, error) {
	obj := l.New()
	if err := l.Cache.Get(ctx, req.NamespacedName, obj); err != nil {
		if apierrors.IsNotFound(err) {
			l.forget(req.NamespacedName)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	l.mu.Lock()
	if l.uids == nil {
		l.uids = map[types.NamespacedName]types.UID{}
	}
	l.uids[req.NamespacedName] = obj.GetUID()
	l.mu.Unlock()
	obj = Latest(l.Exp, obj)
	if l.skip(ctx, obj) {
		return ctrl.Result{}, nil
	}
	retries := l.ConflictRetries
	if retries <= 0 {
		retries = DefaultConflictRetries
	}
	for attempt := 1; ; attempt++ {
		res, err := pass(ctx, obj)
		if !apierrors.IsConflict(err) || attempt >= retries {
			return res, err
		}
		log.FromContext(ctx).V(1).Info("conflict, deciding again from a fresh read", "attempt", attempt, "error", err.Error())
		fresh := l.New()
		if err := l.API.Get(ctx, req.NamespacedName, fresh); err != nil {
			if apierrors.IsNotFound(err) {
				return ctrl.Result{}, nil
			}
			return ctrl.Result{}, err
		}
		obj = fresh
	}
}

// UID is the UID of the object of that name last reconciled ("" if none).
func (l *Loop[O]) UID(nn types.NamespacedName) types.UID {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.uids[nn]
}

func (l *Loop[O]) forget(nn types.NamespacedName) {
	l.mu.Lock()
	uid, ok := l.uids[nn]
	delete(l.uids, nn)
	l.mu.Unlock()
	if !ok {
		return
	}
	l.Exp.Forget(uid)
	l.Events.Forget(uid)
	if l.Status != nil {
		l.Status.Forget(uid)
	}
	if l.Gate != nil {
		l.Gate.Forget(uid, nn)
	}
	if l.Forget != nil {
		l.Forget(uid, nn)
	}
}

// skipKey is the Events key of the gate's message.
const skipKey = "skip"

// skip reports whether to leave obj alone; the first time for each object
// and reason it says why in an Event and the log.
func (l *Loop[O]) skip(ctx context.Context, obj O) bool {
	var mb *string
	if l.ManagedBy != nil {
		mb = l.ManagedBy(obj)
	}
	why := l.Gate.SkipReasonFor(obj.GetAnnotations(), mb, l.Noun)
	nn := types.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetName()}
	if l.ListUnmanaged {
		l.Gate.setUnmanaged(nn, why)
	}
	if why == "" {
		l.Events.Unsay(obj.GetUID(), skipKey)
		return false
	}
	reason := ReasonManagedElsewhere
	if rayv1.IsManagedBy(mb, rayv1.KubeRayController) {
		reason = ReasonOtherOperator
	}
	if l.Events.EmitOnce(obj, skipKey, Event{Type: corev1.EventTypeNormal, Reason: reason, Action: "Skip",
		Message: "raydar does not reconcile this " + l.Noun + ": " + why}) {
		log.FromContext(ctx).Info("not reconciling", "reason", why)
	}
	return true
}

// UpdateFinalizers writes obj with f applied to its finalizers. It writes
// the whole object (Update), as KubeRay adds and removes its finalizers
// (r.Update), after prepare (nil: nothing) has brought the copy to be
// written into shape (KubeRay's setDefaults); the write carries the
// resourceVersion read, so a stale view fails with a 409 (Loop decides
// again). On success obj is the stored object and the write is remembered
// (Latest).
func UpdateFinalizers[O client.Object](ctx context.Context, c client.Writer, exp *Expectations, obj O, f func([]string) []string, prepare func(O)) error {
	prev := obj.GetResourceVersion()
	cp := obj.DeepCopyObject().(O)
	cp.SetFinalizers(f(append([]string(nil), obj.GetFinalizers()...)))
	if prepare != nil {
		prepare(cp)
	}
	if err := c.Update(ctx, cp); err != nil {
		return err
	}
	reflect.ValueOf(obj).Elem().Set(reflect.ValueOf(cp).Elem())
	exp.Updated(obj.GetUID(), prev, obj)
	return nil
}

// Known is the number of objects reconciled and not yet forgotten.
func (l *Loop[O]) Known() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.uids)
}
