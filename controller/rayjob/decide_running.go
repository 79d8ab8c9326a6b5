package rayjob

// Decisions while the Ray job runs: the submitter (K8sJobMode Job,
// SidecarMode container), the dashboard's answer, the RayJob's head
// Service, the dashboard failure clock. Pure.

import (
	"errors"
	"fmt"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/raydar/raydar/controller/kit"
	"github.com/raydar/raydar/kube/raydash"
	"github.com/raydar/raydar/rayapi/dashboard"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// SubmitterFinished reports whether a submitter Job has finished, when,
// and whether it failed.
func SubmitterFinished(job *batchv1.Job) (done, failed bool, at time.Time, msg string) {
	for _, c := range job.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case batchv1.JobFailed:
			return true, true, c.LastTransitionTime.Time, DescribeSubmitter(job)
		case batchv1.JobComplete:
			return true, false, c.LastTransitionTime.Time, DescribeSubmitter(job)
		}
	}
	return false, false, time.Time{}, ""
}

// submitterFailedCondition is the submitter Job's true Failed condition.
func submitterFailedCondition(job *batchv1.Job) batchv1.JobCondition {
	for _, c := range job.Status.Conditions {
		if c.Type == batchv1.JobFailed && c.Status == corev1.ConditionTrue {
			return c
		}
	}
	return batchv1.JobCondition{}
}

// submitterFinishedMessage is KubeRay's message for a submitter that
// finished while its Ray job did not end within the submitter grace
// (rayjob_controller.go checkSubmitterFinishedTimeoutAndUpdateStatusIfNeeded).
func submitterFinishedMessage(o *Observed, at time.Time) string {
	return fmt.Sprintf("The RayJob submitter finished at %v but the ray job did not reach terminal state within %v",
		at.Format(time.DateTime), o.Config.SubmitterFinishedGrace)
}

// notSubmittedPoll: while Ray does not know the job yet (its submitter,
// or in InteractiveMode its user, is on the way) the job is asked about at
// least this often in every mode but HTTPMode, which submits it; KubeRay's
// requeue in that state (v1.6.2 rayjob_controller.go:39,
// RayJobDefaultRequeueDuration). pollInterval's back-off is for a job that
// runs long; counted from the cluster's ready, it had grown to 10 s by the
// time a submitter whose pod waited 60-90 s for the plane submitted (1,000
// RayJobs, issue 47, docs/benchmarks.md), and the job was seen started
// 8 s after Ray started it at the median.
const notSubmittedPoll = 3 * time.Second

// pollInterval is how long to wait before asking the dashboard again about a
// running job: a quarter of the time since its latest step (its cluster
// read ready, Ray knew the job, Ray started it: the conditions' transition
// times and the dashboard's rayJobInfo.startTime, this pass's answer
// included), within [MinPoll, MaxPoll]; without any (a CRD that prunes the
// conditions), since the RayJob's own start. It was always the RayJob's
// age, which counts the cluster's bring-up: a job submitted after 20 s of
// bring-up was asked about every 5 s from its first second, and 100
// RayJobs created at once each read RUNNING ~9 s after their submission,
// against KubeRay's 4 s (issue 47, docs/benchmarks.md).
func pollInterval(o *Observed, st *rayv1.RayJobStatus) time.Duration {
	var step time.Time
	later := func(t time.Time) {
		if t.After(step) {
			step = t
		}
	}
	for _, c := range []string{string(rayv1.RayJobClusterReady), string(rayv1.RayJobSubmitted)} {
		if cond := meta.FindStatusCondition(st.Conditions, c); cond != nil && cond.Status == metav1.ConditionTrue {
			later(cond.LastTransitionTime.Time)
		}
	}
	if t := st.RayJobStatusInfo.StartTime; t != nil {
		later(t.Time)
	}
	if o.Dash != nil && o.Dash.Err == nil && o.Dash.Info != nil {
		later(o.Dash.Info.Started()) // this pass's answer, not yet in the status
	}
	if step.IsZero() && st.StartTime != nil {
		step = st.StartTime.Time
	}
	d := o.Config.MinPoll
	if !step.IsZero() {
		d = o.Now.Sub(step) / 4
	}
	return min(max(d, o.Config.MinPoll), o.Config.MaxPoll)
}

func decideRunning(o *Observed, p *Plan) {
	j, st := o.Job, &p.Status
	mode := j.Spec.EffectiveSubmissionMode()
	if suspendIfAsked(o, p) || checkDeadlines(o, p) {
		return
	}
	if !ensureCluster(o, p) {
		requeueAfter(p, pollInterval(o, st))
		return
	}
	rc := o.Cluster
	decideHeadService(o, p, rc)

	// The submitter.
	var subDone bool
	var subAt time.Time
	switch mode {
	case rayv1.K8sJobMode:
		if o.Submitter == nil {
			planSubmitter(o, p, rc)
			break
		}
		done, failed, at, _ := SubmitterFinished(o.Submitter)
		if failed {
			c := submitterFailedCondition(o.Submitter)
			submitterFailed(o, p, fmt.Sprintf("Job submission has failed. Reason: %s. Message: %s", c.Reason, c.Message))
			return
		}
		subDone, subAt = done, at
	case rayv1.SidecarMode:
		if o.HeadPod == nil {
			// KubeRay: the head (and with it the submitter) is gone.
			failAttempt(o, p, rayv1.AppFailed, "Ray head pod not found.")
			return
		}
		cs := containerStatus(o.HeadPod, rayv1.RayJobSubmitterContainerName)
		var t *corev1.ContainerStateTerminated
		if cs != nil {
			t = cs.State.Terminated
		}
		switch {
		case sidecarRestartOn(o.Config.Build.Features):
			// A restartable submitter fails the job only once its restarts
			// are used up (sidecar_restart.go).
			if restartsExhausted(cs, sidecarSubmitterRestarts) {
				submitterFailed(o, p, restartsExhaustedMessage(cs))
				return
			}
		case t != nil && t.ExitCode != 0:
			submitterFailed(o, p, fmt.Sprintf("Ray head pod container %s terminated with exit code %d: %s", cs.Name, t.ExitCode, t.Reason))
			return
		}
		if t != nil {
			// Terminated and not failing the job: the submitter-finished
			// grace starts (whatever the exit code, with restarts).
			subDone, subAt = true, t.FinishedAt.Time
		}
	}

	poll := pollInterval(o, st)
	switch {
	case o.Dash == nil:
		requeueAfter(p, poll)
		return
	case o.Dash.Err != nil && errors.Is(o.Dash.Err, dashboard.ErrNotFound):
		st.JobStatusCheckFailureStartTime = nil
		if mode == rayv1.HTTPMode && st.JobStatus != "" {
			// Ray reported this job before and no longer knows it: the
			// head that ran it was replaced and took the job with it (no
			// GCS fault tolerance). Submitting it again would run it a
			// second time (KubeRay v1.5.0 does); the attempt fails
			// instead, and spec.backoffLimit, if set, retries it on a
			// fresh cluster.
			msg := fmt.Sprintf("The Ray job %s was %s and the Ray head no longer knows it: "+
				"the head was replaced and the job's state was lost with it; raydar does not submit it a second time", st.JobId, st.JobStatus)
			st.JobStatus = rayv1.JobStatusFailed // it did not finish; no Ray job runs any more
			failAttempt(o, p, rayv1.AppFailed, msg)
			return
		}
		if mode == rayv1.HTTPMode {
			req, err := raydash.SubmitRequest(j, st.JobId)
			if err != nil {
				failAttempt(o, p, rayv1.SubmissionFailed, err.Error())
				return
			}
			p.Submit = &submission{ClusterName: rc.Name, Request: req}
			requeueAfter(p, o.Config.MinPoll)
			return
		}
		if subDone {
			// The submitter followed the job to its end, yet Ray does not
			// know it (KubeRay: AppFailed at once, or past the 30 s
			// submitter grace its timeout reason).
			if !subAt.IsZero() && !o.Now.Before(subAt.Add(o.Config.SubmitterFinishedGrace)) {
				st.JobStatus = rayv1.JobStatusFailed
				failAttempt(o, p, rayv1.JobDeploymentStatusTransitionGracePeriodExceeded, submitterFinishedMessage(o, subAt))
				return
			}
			failAttempt(o, p, rayv1.AppFailed, "Submitter completed but Ray job not found in RayCluster.")
			return
		}
		requeueAfter(p, min(poll, max(o.Config.MinPoll, notSubmittedPoll)))
		return
	case o.Dash.Err != nil:
		dashboardFailing(o, p, o.Dash.Err)
		return
	}

	// The dashboard answered. KubeRay copies the cluster's status with
	// every job status it records (rayjob_controller.go, Running: "Always
	// update RayClusterStatus along with JobStatus"), and only then.
	info := o.Dash.Info
	st.RayClusterStatus = *rc.Status.DeepCopy()
	st.JobStatusCheckFailureStartTime = nil
	st.JobStatus = rayv1.JobStatus(info.Status)
	st.Message = kit.Truncate(info.Message, 2000)
	if t := info.Started(); !t.IsZero() {
		st.RayJobStatusInfo.StartTime = apiTime(t)
	}
	if t := info.Ended(); !t.IsZero() {
		st.RayJobStatusInfo.EndTime = apiTime(t)
	}
	if !rayv1.IsJobTerminal(st.JobStatus) {
		if subDone && !subAt.IsZero() {
			at := subAt.Add(o.Config.SubmitterFinishedGrace)
			if !o.Now.Before(at) {
				st.JobStatus = rayv1.JobStatusFailed // as KubeRay records it
				failAttempt(o, p, rayv1.JobDeploymentStatusTransitionGracePeriodExceeded, submitterFinishedMessage(o, subAt))
				return
			}
			requeueAt(o, p, at)
		}
		requeueAfter(p, poll)
		return
	}
	if (mode == rayv1.K8sJobMode || mode == rayv1.SidecarMode) && !subDone {
		// Wait for the submitter (the K8sJobMode Job, the SidecarMode
		// container) to see the end: it still follows the logs. KubeRay
		// (rayjob_controller.go: isJobTerminal && finishedAt != nil, and
		// checkTransitionGracePeriodAndUpdateStatusIfNeeded) waits the
		// transition grace period from the Ray job's end, then ends the
		// RayJob as the Ray job did: Complete for SUCCEEDED or STOPPED —
		// never retried, the job ran — and Failed (retried within
		// backoffLimit) for FAILED. Without Ray's end time there is no
		// deadline, as in KubeRay.
		if st.RayJobStatusInfo.EndTime != nil {
			at := st.RayJobStatusInfo.EndTime.Add(o.Config.TransitionGracePeriod)
			if !o.Now.Before(at) {
				const msg = "JobDeploymentStatus does not transition to Complete or Failed within the grace period after JobStatus reaches a terminal state."
				if st.JobStatus == rayv1.JobStatusFailed {
					failAttempt(o, p, rayv1.JobDeploymentStatusTransitionGracePeriodExceeded, msg)
					return
				}
				completeWith(o, p, rayv1.JobDeploymentStatusTransitionGracePeriodExceeded, msg)
				return
			}
			requeueAt(o, p, at)
		}
		requeueAfter(p, poll)
		return
	}
	if st.JobStatus == rayv1.JobStatusFailed {
		failAttempt(o, p, rayv1.AppFailed, st.Message)
		return
	}
	complete(o, p)
}

// decideHeadService keeps the RayJob's head Service "<rayjob>-head-svc"
// on the head of its cluster while the job runs, as KubeRay's
// reconcileServices does: created when absent, its spec replaced (the
// cluster IP kept) only when it selects another cluster. A RayJob on a
// selected cluster has none. A Service of that name the RayJob does not own
// is left alone.
func decideHeadService(o *Observed, p *Plan, rc *rayv1.RayCluster) {
	j := o.Job
	if j.Spec.UsesClusterSelector() {
		return
	}
	want := buildHeadService(j, rc, o.Config.Build)
	have := o.HeadService
	switch {
	case have == nil:
		p.CreateHeadService = want
	case have.DeletionTimestamp != nil || !owns(j, have.OwnerReferences):
	case have.Spec.Selector[rayv1.RayClusterLabelKey] != want.Spec.Selector[rayv1.RayClusterLabelKey]:
		upd := have.DeepCopy()
		want.Spec.ClusterIP = have.Spec.ClusterIP
		want.Spec.ClusterIPs = have.Spec.ClusterIPs
		upd.Spec = want.Spec
		p.UpdateHeadService = upd
	}
}

func containerStatus(pod *corev1.Pod, name string) *corev1.ContainerStatus {
	for i := range pod.Status.ContainerStatuses {
		if pod.Status.ContainerStatuses[i].Name == name {
			return &pod.Status.ContainerStatuses[i]
		}
	}
	return nil
}

// dashboardFailing handles a dashboard that cannot be asked: the failure
// clock starts (written once, so a failing dashboard causes no status
// writes after that), the outage is said by one Warning once it has lasted
// DashboardWarnAfter, the job fails once StatusCheckTimeout has passed, and
// the next look backs off with the length of the outage.
func dashboardFailing(o *Observed, p *Plan, err error) {
	st := &p.Status
	if st.JobStatusCheckFailureStartTime == nil {
		st.JobStatusCheckFailureStartTime = apiTime(o.Now)
	}
	since := st.JobStatusCheckFailureStartTime.Time
	at := since.Add(o.Config.StatusCheckTimeout)
	if !o.Now.Before(at) {
		failAttempt(o, p, rayv1.JobStatusCheckTimeoutExceeded, fmt.Sprintf("The dashboard could not be asked about Ray job %s for %s: %s",
			st.JobId, o.Config.StatusCheckTimeout, kit.Truncate(err.Error(), 500)))
		return
	}
	if warn := since.Add(o.Config.DashboardWarnAfter); !o.Now.Before(warn) {
		p.Events = append(p.Events, kit.Event{Type: corev1.EventTypeWarning, Reason: ReasonDashboardUnreachable, Action: "GetJobInfo",
			Once: st.JobId + " since " + since.UTC().Format(time.RFC3339Nano),
			Message: fmt.Sprintf("Cannot read Ray job %s from the dashboard of RayCluster %s for %s (retrying with back-off; the RayJob fails after %s): %s",
				st.JobId, st.RayClusterName, o.Now.Sub(since).Round(time.Second), o.Config.StatusCheckTimeout, kit.Truncate(err.Error(), 500))})
	} else {
		requeueAt(o, p, warn)
	}
	back := min(max(o.Now.Sub(since), o.Config.MinPoll), 3*o.Config.MaxPoll)
	requeueAfter(p, back)
	requeueAt(o, p, at)
}

// submitterFailed fails the attempt after its submitter failed, as KubeRay
// does (rayjob_controller.go checkSubmitterAndUpdateStatusIfNeeded): a Ray
// job already seen FAILED is the application's failure, its message kept;
// otherwise the submission failed, with msg.
func submitterFailed(o *Observed, p *Plan, msg string) {
	if st := &p.Status; st.JobStatus == rayv1.JobStatusFailed {
		failAttempt(o, p, rayv1.AppFailed, st.Message)
		return
	}
	failAttempt(o, p, rayv1.SubmissionFailed, msg)
}
