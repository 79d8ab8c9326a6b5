package kit

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// StatusChange is how a kind classifies the difference between the status
// it read and the one it computed (a pure function of the two, table-tested
// in the kind's status.go); the StatusWriter acts on it.
type StatusChange struct {
	// Unchanged: nothing worth writing (the statuses are equal but for
	// what is never compared, such as lastUpdateTime). A held change is
	// dropped.
	Unchanged bool
	// Hold delays the write until the change has been pending this long,
	// so that a burst of small changes (pods coming up one by one) is
	// written once. 0 or less writes at once (an urgent change: a state or
	// a condition's status changed).
	Hold time.Duration
	// Class names the clock a held change runs on; a held change of
	// another class starts the clock again ("" is a class too). RayService
	// holds changes of what is only carried (copies of the clusters'
	// statuses) longer than its own.
	Class string
}

// StatusWriter is the one status writer: it writes the status subresource
// when the StatusChange says so, coalescing held changes, and remembers the
// write in the Expectations so that the next pass reads its own status
// (Latest). A 409 (another writer won) is returned to the caller: the
// Reconcile prologue (Loop) decides again from a fresh read.
type StatusWriter struct {
	client client.Client
	exp    *Expectations

	mu    sync.Mutex
	dirty map[types.UID]heldSince
}

type heldSince struct {
	class string
	at    time.Time
}

// NewStatusWriter writes through c and remembers its writes in exp.
func NewStatusWriter(c client.Client, exp *Expectations) *StatusWriter {
	return &StatusWriter{client: c, exp: exp, dirty: map[types.UID]heldSince{}}
}

// StatusPatch builds the patch of a status write from the object read
// (orig) to the one to store (obj); nil writes the whole status (Update).
type StatusPatch func(orig, obj client.Object) (client.Patch, error)

// Hold applies ch to the clock of the object uid at now: it reports
// whether to write now and, when not, how long until the held change is
// due (0 when there is nothing to write).
func (w *StatusWriter) Hold(uid types.UID, ch StatusChange, now time.Time) (write bool, wait time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if ch.Unchanged {
		delete(w.dirty, uid)
		return false, 0
	}
	if ch.Hold > 0 {
		h, ok := w.dirty[uid]
		if !ok || h.class != ch.Class {
			h = heldSince{class: ch.Class, at: now}
			w.dirty[uid] = h
		}
		if wait := ch.Hold - now.Sub(h.at); wait > 0 {
			return false, wait
		}
	}
	delete(w.dirty, uid)
	return true, 0
}

// Write writes obj's status (obj is orig with the new status) when ch says
// so at now, through the status subresource: patch builds a patch, nil
// replaces the whole status with the resourceVersion read (a stale view
// fails with a 409 instead of overwriting). On success obj is the stored
// object. It returns how long until a held change is due.
func (w *StatusWriter) Write(ctx context.Context, orig, obj client.Object, ch StatusChange, now time.Time, patch StatusPatch) (time.Duration, error) {
	write, wait := w.Hold(orig.GetUID(), ch, now)
	if !write {
		return wait, nil
	}
	prev := orig.GetResourceVersion()
	var err error
	if patch != nil {
		var p client.Patch
		if p, err = patch(orig, obj); err == nil {
			err = w.client.Status().Patch(ctx, obj, p)
		}
	} else {
		err = w.client.Status().Update(ctx, obj)
	}
	if err != nil {
		return 0, err
	}
	w.exp.Updated(orig.GetUID(), prev, obj)
	return 0, nil
}

// Forget drops the clock of an object that is gone.
func (w *StatusWriter) Forget(uid types.UID) {
	w.mu.Lock()
	delete(w.dirty, uid)
	w.mu.Unlock()
}
