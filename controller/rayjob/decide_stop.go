package rayjob

// The stop protocol, decided (pure).

import (
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/raydar/raydar/controller/kit"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// StopCall is a stop to send.
type StopCall struct {
	ClusterName string
	JobID       string
	// Request is the annotation value it answers; "" for the stop of a
	// deletion.
	Request string
}

// DefaultStopConfirmTimeout is how long a deleted RayJob waits for the
// dashboard to confirm the stop of its Ray job before its finalizer is
// released anyway.
const DefaultStopConfirmTimeout = 2 * time.Minute

// planStopRecord makes the plan record a stop: the annotation (written
// before the status) and the condition in the status.
func planStopRecord(o *Observed, p *Plan, r StopRecord, detail string) {
	p.StopRecord = stopRecordValue(r, detail)
	setStopCondition(&p.Status, p.StopRecord, r.Confirmed, r.Deletion, o.Now)
}

// currentStopRecord is the stop record as it stands after this plan.
func currentStopRecord(o *Observed, p *Plan) (StopRecord, bool) {
	if p.StopRecord != "" {
		return parseStopRecordText(p.StopRecord)
	}
	return StopRecordOf(o.Job)
}

// rayJobMayRun reports whether, by the status, a Ray job may be running
// and a stop has to be sent: the deployment is Running and the last known
// Ray status is not terminal.
func rayJobMayRun(st *rayv1.RayJobStatus) bool {
	return st.JobDeploymentStatus == rayv1.JobDeploymentStatusRunning && st.JobId != "" && !rayv1.IsJobTerminal(st.JobStatus)
}

// decideStopRequest carries out the annotation's stop request once per
// value. It reports whether the request ended the decision (nothing was
// submitted yet: the RayJob ends STOPPED without a call).
func decideStopRequest(o *Observed, p *Plan) bool {
	j, st := o.Job, &p.Status
	req := j.Annotations[rayv1.StopRequestedAnnotationKey]
	if req == "" {
		return false
	}
	if r, ok := currentStopRecord(o, p); ok && r.Confirmed && !r.Deletion && r.Request == req {
		return false // done; the poll sees STOPPED
	}
	rec := StopRecord{JobID: st.JobId, Request: req, Confirmed: true}
	switch {
	case rayJobMayRun(st) && o.Cluster != nil:
		planStop(o, p, &StopCall{ClusterName: st.RayClusterName, JobID: st.JobId, Request: req})
		return false
	case rayv1.IsJobDeploymentTerminal(st.JobDeploymentStatus):
		planStopRecord(o, p, rec, fmt.Sprintf("the Ray job had already ended (%s)", orWord(string(st.JobStatus), string(st.JobDeploymentStatus))))
		return false
	case st.JobDeploymentStatus == rayv1.JobDeploymentStatusValidationFailed:
		planStopRecord(o, p, rec, "the RayJob is invalid; nothing was submitted")
		return false
	}
	// New, Initializing, Waiting, Retrying, Suspending, Suspended, or
	// Running on a cluster that is gone: no Ray job runs. The RayJob ends
	// here, STOPPED, and no attempt starts.
	detail := "nothing was submitted yet; the RayJob will not submit"
	if rayJobMayRun(st) {
		detail = "RayCluster " + st.RayClusterName + " is gone, so no Ray job runs; the RayJob will not submit again"
	}
	planStopRecord(o, p, rec, detail)
	st.JobStatus = rayv1.JobStatusStopped
	st.JobDeploymentStatus = rayv1.JobDeploymentStatusComplete
	st.Reason = ""
	st.Message = "Stopped on request: " + detail
	st.EndTime = apiTime(o.Now)
	p.Events = append(p.Events, kit.Event{Type: corev1.EventTypeNormal, Reason: ReasonStopConfirmed, Action: "Stop",
		Message: "Stop requested (" + req + "): " + detail + "; the RayJob ends STOPPED"})
	decideFinished(o, p)
	return true
}

// decideDeletion: a deleted RayJob whose Ray job may run keeps its
// finalizer until a stop is confirmed (and recorded), or until
// StopConfirmTimeout has passed since the deletion.
func decideDeletion(o *Observed, p *Plan) {
	j, st := o.Job, &p.Status
	if !slices.Contains(j.Finalizers, rayv1.RayJobStopJobFinalizer) {
		return
	}
	switch {
	case !rayJobMayRun(st), o.Cluster == nil, o.ClusterEmpty, StopConfirmedFor(j, st.JobId):
		p.RemoveFinalizer = true
		return
	}
	deadline := j.DeletionTimestamp.Add(o.Config.StopConfirmTimeout)
	if !o.Now.Before(deadline) {
		last := o.StopLastError
		if last == "" {
			if r, ok := StopRecordOf(j); ok && !r.Confirmed {
				last = stopRecordText(j)
			}
		}
		msg := fmt.Sprintf("Released finalizer %s without a confirmed stop of Ray job %s: the dashboard of RayCluster %s did not confirm it within %s of the deletion",
			rayv1.RayJobStopJobFinalizer, st.JobId, st.RayClusterName, o.Config.StopConfirmTimeout)
		if last != "" {
			msg += " (last error: " + kit.Truncate(last, 400) + ")"
		}
		msg += "; the Ray job may still run"
		p.Events = append(p.Events, kit.Event{Type: corev1.EventTypeWarning, Reason: ReasonStopNotConfirmed, Action: "Stop", Message: msg})
		p.RemoveFinalizer = true
		return
	}
	planStop(o, p, &StopCall{ClusterName: st.RayClusterName, JobID: st.JobId})
	requeueAt(o, p, deadline)
}

// stopBackoff is the wait after the n-th unconfirmed attempt of a stop:
// 1 s, 2 s, 4 s, … up to 15 s.
func stopBackoff(n int) time.Duration {
	if n <= 0 {
		return 0
	}
	return min(time.Second<<min(n-1, 4), 15*time.Second)
}

// planStop sends the stop now, or, after failed attempts, once the
// back-off has passed; it asks to be woken for the next attempt.
func planStop(o *Observed, p *Plan, s *StopCall) {
	if o.StopFailures > 0 {
		if next := o.StopLastAttempt.Add(stopBackoff(o.StopFailures)); o.Now.Before(next) {
			requeueAt(o, p, next)
			return
		}
	}
	p.Stop = s
	requeueAfter(p, max(stopBackoff(o.StopFailures+1), time.Second))
}
