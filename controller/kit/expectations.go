package kit

import (
	"reflect"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// DefaultExpectationTTL bounds how long a write this process made may stay
// unseen in the cache before it is forgotten and the cache trusted again
// (KubeRay's expectations use the same 30 s).
const DefaultExpectationTTL = 30 * time.Second

// Expectations is read-your-writes: it remembers this process's own writes
// until the informer cache shows them, and lays them over what the cache
// returns, so that a pass following a write too closely decides from the
// state after the write, never the state before it (a second pod, a second
// deletion, a status that goes back).
//
// Every write is remembered under an owner UID (the reconciled object:
// a RayCluster for its pods, a RayService for its clusters; an object's
// writes to itself under its own UID), so a deleted and re-created object
// of the same name starts clean (Forget).
//
//   - A create is keyed by kind and name, recorded before the request
//     leaves (names are chosen by the controller), so even a create whose
//     answer was lost is remembered: ExpectCreate, then Created (the
//     answer, with its UID) or CreateFailed (it certainly did not happen).
//     Overlay adds the object while the cache does not show it.
//   - A delete is keyed by the object's UID: ExpectDelete, DeleteFailed.
//     Overlay marks the object terminating while the cache shows it alive.
//   - An update (any write returning the stored object, the status
//     subresource included) is keyed by kind and name with every
//     resourceVersion it superseded: Updated. Overlay returns the written
//     version while the cache shows one of those.
//
// An entry ends when the cache shows the write (Overlay sees it, or the
// informer reports it through ObservedCreate / ObservedDelete, see
// ChildHandler), when it is forgotten, or after the TTL. Nothing here needs
// to survive a restart: a new process starts from a fresh LIST, which
// includes every write the previous one completed.
//
// After a write whose outcome is unknown (timeout, connection reset)
// MarkUncertain asks the next observation to read live (TakeUncertain).
type Expectations struct {
	ttl time.Duration
	now func() time.Time

	mu        sync.Mutex
	m         map[types.UID]*owned
	lastSweep time.Time
}

type owned struct {
	creates map[string]expected    // kind/namespace/name → the object
	deletes map[types.UID]expected // object UID → the object
	updates map[string]*written    // kind/namespace/name → the written version
	// uncertain: a write's outcome is unknown; read live next time.
	uncertain bool
}

type expected struct {
	obj client.Object
	at  time.Time
}

type written struct {
	stale map[string]bool // resourceVersions the writes superseded
	obj   client.Object
	at    time.Time
}

// NewExpectations returns empty expectations whose entries expire after
// ttl (DefaultExpectationTTL when 0); now is the clock (time.Now when nil).
func NewExpectations(ttl time.Duration, now func() time.Time) *Expectations {
	if ttl <= 0 {
		ttl = DefaultExpectationTTL
	}
	if now == nil {
		now = time.Now
	}
	return &Expectations{ttl: ttl, now: now, m: map[types.UID]*owned{}}
}

// SetClock replaces the clock (tests).
func (e *Expectations) SetClock(now func() time.Time) {
	e.mu.Lock()
	e.now = now
	e.mu.Unlock()
}

func (e *Expectations) get(owner types.UID) *owned {
	o := e.m[owner]
	if o == nil {
		o = &owned{creates: map[string]expected{}, deletes: map[types.UID]expected{}, updates: map[string]*written{}}
		e.m[owner] = o
	}
	return o
}

// kindName is the Go type name of an object (Pod, Service, RayCluster):
// every kind the reconcilers write is one Go type.
func kindName(obj client.Object) string {
	t := reflect.TypeOf(obj)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Name()
}

func key(obj client.Object) string { return keyOf(kindName(obj), obj.GetNamespace(), obj.GetName()) }

func keyOf(kind, namespace, name string) string { return kind + "/" + namespace + "/" + name }

// ExpectCreate records a create about to be sent.
func (e *Expectations) ExpectCreate(owner types.UID, obj client.Object) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.get(owner).creates[key(obj)] = expected{obj: obj.DeepCopyObject().(client.Object), at: e.now()}
}

// Created records the server's answer to a create (it carries the UID).
func (e *Expectations) Created(owner types.UID, obj client.Object) {
	e.mu.Lock()
	defer e.mu.Unlock()
	o := e.get(owner)
	if _, ok := o.creates[key(obj)]; ok {
		o.creates[key(obj)] = expected{obj: obj.DeepCopyObject().(client.Object), at: e.now()}
	}
}

// CreateFailed forgets a create that certainly did not happen.
func (e *Expectations) CreateFailed(owner types.UID, obj client.Object) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.get(owner).creates, key(obj))
}

// ExpectDelete records a deletion about to be sent. An object without a
// UID (a create whose answer was lost) has nothing to key on and is not
// recorded.
func (e *Expectations) ExpectDelete(owner types.UID, obj client.Object) {
	if obj.GetUID() == "" {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.get(owner).deletes[obj.GetUID()] = expected{obj: obj.DeepCopyObject().(client.Object), at: e.now()}
}

// DeleteFailed forgets a deletion that certainly did not happen.
func (e *Expectations) DeleteFailed(owner types.UID, obj client.Object) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.get(owner).deletes, obj.GetUID())
}

// Updated records a write that replaced the version prevRV with obj (the
// stored object the API server answered). Two writes in one pass supersede
// both versions before them.
func (e *Expectations) Updated(owner types.UID, prevRV string, obj client.Object) {
	e.mu.Lock()
	defer e.mu.Unlock()
	o := e.get(owner)
	k := key(obj)
	w := o.updates[k]
	if w == nil || w.obj.GetUID() != obj.GetUID() {
		w = &written{stale: map[string]bool{}}
		o.updates[k] = w
	}
	w.stale[prevRV] = true
	w.obj = obj.DeepCopyObject().(client.Object)
	w.at = e.now()
	// An owner that is not reconciled again would keep its entries: once
	// per TTL, drop those the cache has had ample time to catch up with.
	if now := e.now(); now.Sub(e.lastSweep) > e.ttl {
		e.lastSweep = now
		for uid, o := range e.m {
			if e.expireLocked(o, now) {
				delete(e.m, uid)
			}
		}
	}
}

// expireLocked drops the owner's entries older than the TTL and reports
// whether nothing is left.
func (e *Expectations) expireLocked(o *owned, now time.Time) bool {
	for k, c := range o.creates {
		if now.Sub(c.at) > e.ttl {
			delete(o.creates, k)
		}
	}
	for u, d := range o.deletes {
		if now.Sub(d.at) > e.ttl {
			delete(o.deletes, u)
		}
	}
	for k, w := range o.updates {
		if now.Sub(w.at) > e.ttl {
			delete(o.updates, k)
		}
	}
	return len(o.creates)+len(o.deletes)+len(o.updates) == 0 && !o.uncertain
}

// ObservedCreate is called by the informer for every object it shows
// (added or deleted): a create of it is no longer expected.
func (e *Expectations) ObservedCreate(owner types.UID, obj client.Object) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if o := e.m[owner]; o != nil {
		delete(o.creates, key(obj))
	}
}

// ObservedDelete is called by the informer when an object is seen
// terminating or gone.
func (e *Expectations) ObservedDelete(owner, uid types.UID) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if o := e.m[owner]; o != nil {
		delete(o.deletes, uid)
	}
}

// MarkUncertain asks for a live read at the owner's next observation.
func (e *Expectations) MarkUncertain(owner types.UID) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.get(owner).uncertain = true
}

// TakeUncertain reports and clears the uncertain flag.
func (e *Expectations) TakeUncertain(owner types.UID) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	o := e.m[owner]
	if o == nil || !o.uncertain {
		return false
	}
	o.uncertain = false
	return true
}

// Forget drops everything about an owner (it is gone).
func (e *Expectations) Forget(owner types.UID) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.m, owner)
}

// Pending reports whether a create or delete of the owner's is still
// unseen.
func (e *Expectations) Pending(owner types.UID) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	o := e.m[owner]
	return o != nil && (len(o.creates) > 0 || len(o.deletes) > 0)
}

// overlayLocked lays the owner's writes over one cached object (not nil).
func (e *Expectations) overlayLocked(o *owned, cached client.Object, now time.Time) client.Object {
	k := key(cached)
	delete(o.creates, k) // the cache shows it
	out := cached
	if w := o.updates[k]; w != nil {
		switch {
		case now.Sub(w.at) > e.ttl, w.obj.GetUID() != cached.GetUID(), !w.stale[cached.GetResourceVersion()]:
			delete(o.updates, k)
		default:
			out = w.obj.DeepCopyObject().(client.Object)
		}
	}
	if d, ok := o.deletes[cached.GetUID()]; ok {
		switch {
		case cached.GetDeletionTimestamp() != nil:
			delete(o.deletes, cached.GetUID()) // the cache shows it terminating
		case now.Sub(d.at) > e.ttl:
			delete(o.deletes, cached.GetUID())
		default:
			out = terminating(out, d.at, out == cached)
		}
	}
	return out
}

func terminating(obj client.Object, at time.Time, shared bool) client.Object {
	if shared {
		obj = obj.DeepCopyObject().(client.Object)
	}
	t := metav1.NewTime(at)
	obj.SetDeletionTimestamp(&t)
	return obj
}

// lockOwner locks e (the caller unlocks) and returns the owner's entries
// (nil: none) and the time.
func (e *Expectations) lockOwner(owner types.UID) (*owned, time.Time) {
	e.mu.Lock()
	return e.m[owner], e.now()
}

// Overlay lays the owner's unseen writes over objects of one kind read from
// the cache: objects created and not shown yet are added (in no particular
// order), objects whose deletion is not shown are marked terminating (their
// deletionTimestamp the time of the delete), objects the cache shows in a
// version a write superseded are replaced by the written version. The
// cached objects are never modified. cached must come from the informer
// cache: an object it holds ends its create expectation (Observed picks
// between Overlay and a live read).
func Overlay[T client.Object](e *Expectations, owner types.UID, cached []T) []T {
	o, now := e.lockOwner(owner)
	defer e.mu.Unlock()
	if o == nil {
		return cached
	}
	out := make([]T, 0, len(cached)+len(o.creates))
	for _, c := range cached {
		out = append(out, e.overlayLocked(o, c, now).(T)) // drops the creates the cache shows
	}
	for k, c := range o.creates {
		if _, ok := c.obj.(T); !ok {
			continue
		}
		if got, ok := e.unseenLocked(o, k, c, now); ok {
			out = append(out, got.(T))
		}
	}
	e.expireLocked(o, now)
	return out
}

// Observed is the children of owner a pass works from, given what it read:
// a cache read with this process's unseen writes laid over it (Overlay), or,
// when live (after an ambiguous write, TakeUncertain), the API server's read
// as it is, once the creates it shows were not made are forgotten
// (ForgetUnanswered). A live read is not laid under Overlay: Overlay ends the
// create expectation of every object it is given as shown by the cache, so
// the next pass, on a cache still lacking one, would create it again.
func Observed[T client.Object](e *Expectations, owner types.UID, read []T, live bool) []T {
	if live {
		ForgetUnanswered(e, owner, read)
		return read
	}
	return Overlay(e, owner, read)
}

// ForgetUnanswered drops the owner's expected creates of T whose answer was
// lost (an Ambiguous error: no UID came back) and that live, read from the
// API server after that write returned, does not hold: the create did not
// happen. Without this an unanswered create would stand for an object that
// does not exist until its TTL, and nothing would be created in its place.
func ForgetUnanswered[T client.Object](e *Expectations, owner types.UID, live []T) {
	e.mu.Lock()
	defer e.mu.Unlock()
	o := e.m[owner]
	if o == nil {
		return
	}
	present := make(map[string]bool, len(live))
	for _, l := range live {
		present[key(l)] = true
	}
	for k, c := range o.creates {
		if _, ok := c.obj.(T); ok && c.obj.GetUID() == "" && !present[k] {
			delete(o.creates, k)
		}
	}
}

// OverlayOne is Overlay for one object read by name: cached is what the
// cache returned, nil (a typed nil) when it has none. It returns the
// object as this process last wrote it, or nil when it is absent.
func OverlayOne[T client.Object](e *Expectations, owner types.UID, namespace, name string, cached T) T {
	o, now := e.lockOwner(owner)
	defer e.mu.Unlock()
	if o == nil {
		return cached
	}
	if !isNil(cached) {
		return e.overlayLocked(o, cached, now).(T)
	}
	var zero T
	k := keyOf(kindName(zero), namespace, name)
	if c, ok := o.creates[k]; ok {
		if got, ok := e.unseenLocked(o, k, c, now); ok {
			return got.(T)
		}
	}
	return cached
}

// unseenLocked is a copy of the created object the cache does not show
// yet, terminating if its deletion was sent too; false once it expired.
func (e *Expectations) unseenLocked(o *owned, k string, c expected, now time.Time) (client.Object, bool) {
	if now.Sub(c.at) > e.ttl {
		delete(o.creates, k)
		return nil, false
	}
	got := c.obj.DeepCopyObject().(client.Object)
	if d, gone := o.deletes[got.GetUID()]; gone && got.GetUID() != "" {
		got = terminating(got, d.at, false)
	}
	return got, true
}

// Latest is read-your-writes for the reconciled object itself (its own
// UID is the owner): this process's last written version while the cache
// still shows a version that write superseded, else cached.
func Latest[T client.Object](e *Expectations, cached T) T {
	return OverlayOne(e, cached.GetUID(), cached.GetNamespace(), cached.GetName(), cached)
}

func isNil(obj client.Object) bool {
	if obj == nil {
		return true
	}
	v := reflect.ValueOf(obj)
	return v.Kind() == reflect.Pointer && v.IsNil()
}
