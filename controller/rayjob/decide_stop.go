package rayjob

// The stop protocol, exactly once, decided here (pure). A stop of the Ray
// job is sent for a stop request (annotation raydar.io/stop-requested, once
// per value) and for the deletion of a RayJob whose Ray job may run (its
// finalizer waits for the stop, at most StopConfirmTimeout):
//
//   - stopAnswered is the rule: no stop is sent while a confirmed record
//     answers it. The record Decide sees is the RayJob's as observe read it
//     (from the API server, not the cache, whenever stopMayBeDue), with a
//     confirmation this process remembers and the RayJob does not show yet
//     laid over it (remembered, decide.go).
//   - decideStopRequest and decideDeletion say when a stop is due, and what
//     is recorded instead when no Ray job runs.
//   - planStop is the one place a StopCall enters a Plan (after unconfirmed
//     attempts, once the back-off has passed).
//   - StopCall.Outcome says what each answer of the dashboard leads to: the
//     record to write (confirmed, or pending), the Event, whether the
//     finalizer goes.
//
// act.sendStop carries a StopCall out: it sends it, remembers a
// confirmation before anything else, writes the record Outcome gives (a
// confirmed one must land: conflicts are retried from fresh reads), and
// releases the finalizer when Outcome says so. Table tests:
// decide_stop_test.go.

import (
	"errors"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/raydar/raydar/controller/kit"
	"github.com/raydar/raydar/rayapi/dashboard"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// DefaultStopConfirmTimeout is how long a deleted RayJob waits for the
// dashboard to confirm the stop of its Ray job before its finalizer is
// released anyway.
const DefaultStopConfirmTimeout = 2 * time.Minute

// StopCall is the one stop a pass sends to the dashboard.
type StopCall struct {
	ClusterName string
	JobID       string
	// Request is the annotation value it answers; "" for the stop of a
	// deletion.
	Request string
	// Retry: an unconfirmed attempt of this same stop came before (its
	// failure was told then, not again).
	Retry bool
	// ConfirmTimeout is, for the deletion, how long the finalizer waits for
	// a confirmation (said in the warning of a failure).
	ConfirmTimeout time.Duration
}

// stopKey names a stop (its Ray job and request) in this process's count
// of unconfirmed attempts.
func stopKey(jobID, request string) string { return jobID + "\x00" + request }

// stopAnswered is the exactly-once rule: a request is answered by a
// confirmed stop for the same request value; the deletion by any confirmed
// stop of the same Ray job. A pending (unconfirmed) record answers nothing.
func stopAnswered(rec StopRecord, ok bool, jobID, request string) bool {
	if !ok || !rec.Confirmed {
		return false
	}
	if request == "" {
		return rec.JobID == jobID
	}
	return !rec.Deletion && rec.Request == request
}

// rayJobMayRun reports whether, by the status, a Ray job may be running
// and a stop has to be sent: the deployment is Running and the last known
// Ray status is not terminal.
func rayJobMayRun(st *rayv1.RayJobStatus) bool {
	return st.JobDeploymentStatus == rayv1.JobDeploymentStatusRunning && st.JobId != "" && !rayv1.IsJobTerminal(st.JobStatus)
}

// dashSaysEnded is the Ray job's terminal status as the dashboard gave it
// this pass, "" when it was not asked, did not answer, or the job runs.
// A stop is decided on it, not on the status alone: a process SIGKILLed
// between a stop call and its record leaves the status saying RUNNING
// and no record, and its successor would send the stop again. Asked
// first, the dashboard says the job ended, and the stop is recorded
// instead. A successor that asks while Ray is still stopping the job
// (Ray's SIGTERM grace) sends it once more: Ray takes a stop of a job it
// is stopping as the same request (job_manager.py stop_job).
func dashSaysEnded(o *Observed) string {
	if o.Dash == nil || o.Dash.Err != nil || o.Dash.Info == nil || !o.Dash.Info.Status.IsTerminal() {
		return ""
	}
	return string(o.Dash.Info.Status)
}

// stopMayBeDue reports whether Decide may send a stop for j: a request or
// the deletion its record does not answer, while a Ray job may run. observe
// then reads the RayJob from the API server, so that a record written by
// another process (or by this one before a restart) is seen before a stop
// goes out.
func stopMayBeDue(j *rayv1.RayJob) bool {
	if !rayJobMayRun(&j.Status) {
		return false
	}
	rec, ok := StopRecordOf(j)
	if j.DeletionTimestamp != nil {
		return slices.Contains(j.Finalizers, rayv1.RayJobStopJobFinalizer) && !stopAnswered(rec, ok, j.Status.JobId, "")
	}
	req := j.Annotations[rayv1.StopRequestedAnnotationKey]
	return req != "" && !stopAnswered(rec, ok, j.Status.JobId, req)
}

// planStopRecord makes the plan record a stop without sending one: the
// annotation (written before the status) and the condition in the status.
func planStopRecord(o *Observed, p *Plan, r StopRecord, detail string) {
	p.StopRecord = encodeStopRecord(r, detail)
	showStopRecord(&p.Status, r, detail, o.Now)
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
	if rec, ok := StopRecordOf(j); stopAnswered(rec, ok, st.JobId, req) {
		return false // done; the poll sees STOPPED
	}
	rec := StopRecord{JobID: st.JobId, Request: req, Confirmed: true}
	ended := dashSaysEnded(o)
	switch {
	case rayJobMayRun(st) && o.Cluster != nil && ended != "":
		// A stop sent by a process that died before recording it: the
		// dashboard says the job ended, so none is sent again.
		planStopRecord(o, p, rec, "the Ray job had already ended ("+ended+") when the dashboard was asked")
		return false
	case rayJobMayRun(st) && o.Cluster != nil:
		planStop(o, p, StopCall{ClusterName: st.RayClusterName, JobID: st.JobId, Request: req})
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
	rec, ok := StopRecordOf(j)
	ended := dashSaysEnded(o)
	switch {
	case !rayJobMayRun(st), o.Cluster == nil, o.ClusterEmpty, stopAnswered(rec, ok, st.JobId, ""):
		p.RemoveFinalizer = true
		return
	case ended != "":
		// As for a request: ended, by a stop sent before a restart or on
		// its own; recorded, none sent.
		planStopRecord(o, p, StopRecord{JobID: st.JobId, Deletion: true, Confirmed: true},
			"the Ray job had already ended ("+ended+") when the dashboard was asked")
		p.RemoveFinalizer = true
		return
	}
	deadline := j.DeletionTimestamp.Add(o.Config.StopConfirmTimeout)
	if !o.Now.Before(deadline) {
		last := o.StopLastError
		if last == "" && ok && !rec.Confirmed {
			last = describeStopRecord(j)
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
	planStop(o, p, StopCall{ClusterName: st.RayClusterName, JobID: st.JobId, ConfirmTimeout: o.Config.StopConfirmTimeout})
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

// planStop is the one place a stop enters a Plan: now, or, after
// unconfirmed attempts, once the back-off has passed; it asks to be woken
// for the next attempt. Its callers have checked stopAnswered.
func planStop(o *Observed, p *Plan, s StopCall) {
	if o.StopFailures > 0 {
		if next := o.StopLastAttempt.Add(stopBackoff(o.StopFailures)); o.Now.Before(next) {
			requeueAt(o, p, next)
			return
		}
	}
	s.Retry = o.StopFailures > 0 && o.StopFailing == stopKey(s.JobID, s.Request)
	p.Stop = &s
	requeueAfter(p, max(stopBackoff(o.StopFailures+1), time.Second))
}

// StopOutcome is what an answer of the dashboard to a StopCall leads to.
type StopOutcome struct {
	// Confirmed: the Ray job is stopped or was never there (act remembers
	// it, so that this process never sends it again).
	Confirmed bool
	// Record and Detail are the record to write on the RayJob; a zero
	// Record writes none. A confirmed record must land (act retries
	// conflicts) and shows in the condition; a pending one is best effort.
	Record StopRecord
	Detail string
	// Event is the Event to give (nil: none).
	Event *kit.Event
	// ReleaseFinalizer: the deletion's stop is confirmed and recorded.
	ReleaseFinalizer bool
}

// Outcome says what the dashboard's answer to s (stopped, err from
// StopJob, or the error of reaching the dashboard) leads to.
func (s StopCall) Outcome(stopped bool, err error) StopOutcome {
	var detail string
	switch {
	case err == nil && stopped:
		detail = "the dashboard is stopping it"
	case err == nil:
		detail = "it had already ended"
	case errors.Is(err, dashboard.ErrNotFound):
		detail = "the dashboard does not know it"
	default:
		var out StopOutcome
		if s.Retry {
			return out // told at the first attempt
		}
		what := "the stop request " + s.Request
		if s.Request == "" {
			what = fmt.Sprintf("the deletion (the finalizer is released after %s without a confirmation)", s.ConfirmTimeout)
		}
		out.Event = &kit.Event{Type: corev1.EventTypeWarning, Reason: reasonStopFailed, Action: "Stop",
			Message: fmt.Sprintf("Could not stop Ray job %s for %s; retrying: %v", s.JobID, what, err)}
		if s.Request != "" {
			out.Record = StopRecord{JobID: s.JobID, Request: s.Request}
			out.Detail = "the dashboard did not answer: " + kit.Truncate(err.Error(), 300)
		}
		return out
	}
	what := "for request " + s.Request
	if s.Request == "" {
		what = "because the RayJob is deleted"
	}
	return StopOutcome{
		Confirmed: true,
		Record:    StopRecord{JobID: s.JobID, Request: s.Request, Deletion: s.Request == "", Confirmed: true},
		Detail:    detail,
		Event: &kit.Event{Type: corev1.EventTypeNormal, Reason: ReasonStopConfirmed, Action: "Stop",
			Message: fmt.Sprintf("Stopped Ray job %s %s: %s", s.JobID, what, detail)},
		ReleaseFinalizer: s.Request == "",
	}
}
