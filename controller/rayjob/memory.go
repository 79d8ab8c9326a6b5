package rayjob

// What this process remembers between passes besides the kit's (its own
// writes, what was said once): confirmed stops, the attempts of a failing
// stop, the dashboard failure clock a pruning CRD drops.

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/raydar/raydar/controller/kit"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

type checkFail struct {
	jobID string
	since metav1.Time
}

type stopFailure struct {
	key  string // job ID and request the failures are about
	n    int
	at   time.Time
	last string
}

func (r *reconciler) event(rj *rayv1.RayJob, e kit.Event) { r.events.Emit(rj, nil, e) }

// recall puts what this process remembers about a RayJob into o.
func (r *reconciler) recall(uid types.UID, o *Observed) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if rec, ok := r.stops[uid]; ok {
		o.RememberedStop = &rec
	}
	if f := r.stopFails[uid]; f != nil {
		o.StopFailures, o.StopFailing, o.StopLastAttempt, o.StopLastError = f.n, f.key, f.at, f.last
	}
	if c, ok := r.checkFailSince[uid]; ok {
		o.CheckFailJobID, o.CheckFailSince = c.jobID, c.since.DeepCopy()
	}
}

// rememberStop keeps a confirmed stop until the RayJob is forgotten, so
// that this process never sends it again, whether or not its record lands.
func (r *reconciler) rememberStop(uid types.UID, rec StopRecord) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stops[uid] = rec
	delete(r.stopFails, uid)
}

// countStopFailure counts an unconfirmed attempt of stop s (the count
// starts again for another stop).
func (r *reconciler) countStopFailure(uid types.UID, s *StopCall, at time.Time, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	key := stopKey(s.JobID, s.Request)
	f := r.stopFails[uid]
	if f == nil || f.key != key {
		f = &stopFailure{key: key}
		r.stopFails[uid] = f
	}
	f.n++
	f.at = at
	f.last = err.Error()
}

// rememberCheckFail keeps the dashboard failure clock of a status this
// process wrote when the API server dropped it (nil since: forget it).
func (r *reconciler) rememberCheckFail(uid types.UID, jobID string, since *metav1.Time, stored bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case since == nil:
		delete(r.checkFailSince, uid)
	case !stored:
		r.checkFailSince[uid] = checkFail{jobID: jobID, since: *since}
	}
}
