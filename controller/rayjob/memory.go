package rayjob

// What this process remembers between passes: its own writes until the
// cache shows them, confirmed stops until the RayJob shows them, the
// attempts of a failing stop, the dashboard failure clock a pruning CRD
// drops, and which warnings were already given.

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

type writtenJob struct {
	staleRV string
	obj     *rayv1.RayJob
}

type stopFailure struct {
	key  string // job ID and request the failures are about
	n    int
	at   time.Time
	last string
}

// readYourWrites returns this process's last written version when the
// cache still shows the version that write replaced.
func (r *reconciler) readYourWrites(rj *rayv1.RayJob) *rayv1.RayJob {
	r.mu.Lock()
	defer r.mu.Unlock()
	w, ok := r.written[rj.UID]
	if !ok {
		return rj
	}
	if rj.ResourceVersion == w.staleRV {
		return w.obj.DeepCopy()
	}
	delete(r.written, rj.UID)
	return rj
}

func (r *reconciler) rememberWrite(prevRV string, obj *rayv1.RayJob) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if w, ok := r.written[obj.UID]; ok && w.obj.ResourceVersion == prevRV {
		// A second write in one pass: the cache may still show the
		// version before the first.
		prevRV = w.staleRV
	}
	r.written[obj.UID] = &writtenJob{staleRV: prevRV, obj: obj.DeepCopy()}
}

// tell records that a warning with this key and message was given; it
// reports whether it is new.
func (r *reconciler) tell(uid types.UID, key, msg string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := r.told[uid]
	if m == nil {
		m = map[string]string{}
		r.told[uid] = m
	}
	if m[key] == msg {
		return false
	}
	m[key] = msg
	return true
}

func (r *reconciler) untell(uid types.UID, key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.told[uid], key)
}

func (r *reconciler) event(rj *rayv1.RayJob, e kit.Event) {
	r.recorder.Eventf(rj, nil, e.Type, e.Reason, e.Action, "%s", kit.Truncate(e.Message, 1000))
}

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
