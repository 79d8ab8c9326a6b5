package rayjob

// Decisions of one attempt outside Running: New (the names it will use),
// Initializing (the cluster, the submitter), Waiting (InteractiveMode), the
// deadlines, suspension, Retrying/Suspending (releasing the children), and
// the end of an attempt (failAttempt, complete). Pure.

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/raydar/raydar/controller/kit"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// decideNew records the names the attempt will use: the submission ID,
// the cluster's name, the start time. They are written before anything is
// created, so a repeated pass never makes a second cluster or submission.
func decideNew(o *Observed, p *Plan) {
	j, st := o.Job, &p.Status
	mode := j.Spec.EffectiveSubmissionMode()
	switch {
	case j.Spec.JobId != "":
		st.JobId = j.Spec.JobId
	case mode == rayv1.InteractiveMode:
		st.JobId = ""
	case st.JobId == "":
		st.JobId = kit.RayJobGeneratedID(j.Name, o.NewSuffix())
	}
	if j.Spec.UsesClusterSelector() {
		st.RayClusterName = j.Spec.SelectedClusterName()
	} else if st.RayClusterName == "" {
		st.RayClusterName = kit.RayJobClusterName(j.Name, o.NewSuffix())
	}
	st.StartTime = apiTime(o.Now)
	st.EndTime = nil
	st.JobStatus = rayv1.JobStatusNew
	st.Reason, st.Message = "", ""
	st.JobDeploymentStatus = rayv1.JobDeploymentStatusInitializing
	requeueAfter(p, soon)
}

// checkDeadlines fails the job when activeDeadlineSeconds or (before the
// Ray job runs) preRunningDeadlineSeconds has passed since startTime, and
// otherwise asks to be woken at the earlier of them. It reports whether the
// job failed.
func checkDeadlines(o *Observed, p *Plan) bool {
	j, st := o.Job, &p.Status
	if st.StartTime == nil {
		return false
	}
	start := st.StartTime.Time
	if d := j.Spec.ActiveDeadlineSeconds; d != nil {
		at := start.Add(time.Duration(*d) * time.Second)
		if !o.Now.Before(at) {
			failAttempt(o, p, rayv1.DeadlineExceeded, fmt.Sprintf("The RayJob ran longer than activeDeadlineSeconds (%ds) since %s",
				*d, start.UTC().Format(time.RFC3339)))
			return true
		}
		requeueAt(o, p, at)
	}
	if d := j.Spec.PreRunningDeadlineSeconds; d != nil && st.JobStatus != rayv1.JobStatusRunning && !rayv1.IsJobTerminal(st.JobStatus) {
		at := start.Add(time.Duration(*d) * time.Second)
		if !o.Now.Before(at) {
			failAttempt(o, p, rayv1.PreRunningDeadlineExceeded, fmt.Sprintf("The Ray job did not reach RUNNING within preRunningDeadlineSeconds (%ds); its status is %s",
				*d, orWord(string(st.JobStatus), "not submitted")))
			return true
		}
		requeueAt(o, p, at)
	}
	return false
}

// suspendIfAsked moves to Suspending when spec.suspend is set.
func suspendIfAsked(o *Observed, p *Plan) bool {
	if !o.Job.Spec.Suspend {
		return false
	}
	p.Status.JobDeploymentStatus = rayv1.JobDeploymentStatusSuspending
	p.Events = append(p.Events, kit.Event{Type: corev1.EventTypeNormal, Reason: reasonSuspending, Action: "Suspend",
		Message: "spec.suspend is true: deleting the cluster and the submitter (the Ray job is not stopped first)"})
	requeueAfter(p, soon)
	return true
}

// ensureCluster makes sure the cluster exists (creating it when the
// RayJob owns it), reporting whether it is there to use.
func ensureCluster(o *Observed, p *Plan) bool {
	j, st := o.Job, &p.Status
	rc := o.Cluster
	if j.Spec.UsesClusterSelector() {
		if rc == nil {
			msg := fmt.Sprintf("Waiting for RayCluster %s (spec.clusterSelector) to exist", st.RayClusterName)
			if st.Message != msg {
				p.Events = append(p.Events, kit.Event{Type: corev1.EventTypeWarning, Reason: rayv1.EventRayClusterNotFound, Action: "Validate",
					Message: fmt.Sprintf("RayCluster %s/%s set in the clusterSelector is not found", j.Namespace, st.RayClusterName)})
			}
			st.Message = msg
			return false
		}
		return rc.DeletionTimestamp == nil
	}
	if rc == nil {
		want, err := buildCluster(j, st.RayClusterName, sidecarRestartOn(o.Config.Build.Features))
		if err != nil {
			buildFailed(p, rayv1.EventFailedToCreateRayCluster, "RayCluster "+st.RayClusterName, err)
			return false
		}
		decorateCluster(o, want)
		p.CreateCluster = want
		st.Message = fmt.Sprintf("Creating RayCluster %s", st.RayClusterName)
		return false
	}
	if !owns(j, rc.OwnerReferences) {
		msg := fmt.Sprintf("RayCluster %s exists but does not belong to this RayJob; waiting for it to go", rc.Name)
		if st.Message != msg {
			p.Events = append(p.Events, kit.Event{Type: corev1.EventTypeWarning, Reason: reasonClusterNameTaken, Action: "Create", Message: msg})
		}
		st.Message = msg
		requeueAfter(p, 30*time.Second)
		return false
	}
	return rc.DeletionTimestamp == nil
}

func decideInitializing(o *Observed, p *Plan) {
	j, st := o.Job, &p.Status
	if suspendIfAsked(o, p) || checkDeadlines(o, p) {
		return
	}
	// The gang before the cluster (gang.go).
	if !decideJobGang(o, p) {
		return
	}
	if !ensureCluster(o, p) {
		if p.CreateCluster != nil {
			// KubeRay copies the status of the cluster it just created.
			st.RayClusterStatus = rayv1.RayClusterStatus{}
		}
		return
	}
	rc := o.Cluster
	if st.DashboardURL == "" {
		// KubeRay (v1.6.2 rayjob_controller.go:216-223, v1.7.0 the same)
		// copies the cluster's status while it waits for it to be ready,
		// and not on the pass that finds it ready: its copy is whichever
		// not-ready status its last pass saw, a snapshot that depends on
		// timing. raydar copies on that pass too, so a RayJob that never
		// reaches a dashboard answer (InteractiveMode waiting for its
		// jobId, a submitter that fails) shows the cluster as it was when
		// the job left Initializing. In Running the copy comes with each
		// Ray job status, as in KubeRay.
		st.RayClusterStatus = *rc.Status.DeepCopy()
		if rc.Status.State != rayv1.Ready {
			st.Message = fmt.Sprintf("Waiting for RayCluster %s to be ready", rc.Name)
			return // the cluster's status change wakes us
		}
		st.DashboardURL = dashboardURLOf(rc, o.Config.ClusterDomain)
	}
	mode := j.Spec.EffectiveSubmissionMode()
	switch mode {
	case rayv1.K8sJobMode:
		if o.Submitter == nil {
			if !planSubmitter(o, p, rc) {
				return
			}
		} else if !owns(j, o.Submitter.OwnerReferences) {
			msg := fmt.Sprintf("A Job named %s exists but does not belong to this RayJob; waiting for it to go", o.Submitter.Name)
			if st.Message != msg {
				p.Events = append(p.Events, kit.Event{Type: corev1.EventTypeWarning, Reason: rayv1.EventFailedToCreateRayJobSubmitter, Action: "Create", Message: msg})
			}
			st.Message = msg
			requeueAfter(p, 30*time.Second)
			return
		}
	case rayv1.InteractiveMode:
		if j.Spec.JobId == "" {
			st.JobDeploymentStatus = rayv1.JobDeploymentStatusWaiting
			st.Message = "Waiting for spec.jobId: submit the job to " + st.DashboardURL + " and set its submission ID"
			p.Events = append(p.Events, kit.Event{Type: corev1.EventTypeNormal, Reason: reasonWaitingForJobID, Action: "Wait",
				Message: fmt.Sprintf("RayCluster %s is ready; InteractiveMode waits for spec.jobId", rc.Name)})
			return
		}
		st.JobId = j.Spec.JobId
	}
	st.JobDeploymentStatus = rayv1.JobDeploymentStatusRunning
	st.Message = ""
	p.Events = append(p.Events, kit.Event{Type: corev1.EventTypeNormal, Reason: reasonRunning, Action: "Submit",
		Message: fmt.Sprintf("RayCluster %s is ready; running Ray job %s (%s)", rc.Name, orWord(st.JobId, "?"), mode)})
	requeueAfter(p, soon)
}

// planSubmitter plans the creation of the K8sJobMode submitter Job,
// reporting false when it cannot be built.
func planSubmitter(o *Observed, p *Plan, rc *rayv1.RayCluster) bool {
	job, err := buildSubmitterJob(o.Job, rc, p.Status.DashboardURL)
	if err != nil {
		buildFailed(p, rayv1.EventFailedToCreateRayJobSubmitter, "the submitter Job "+kit.RayJobSubmitterName(o.Job), err)
		return false
	}
	if s := o.Config.Build.Scheduler; s != nil {
		s.Decorate(o.Job, &job.Spec.Template, rayv1.RayNodeSubmitterGroupLabelValue)
	}
	p.CreateSubmitter = job
	return true
}

// buildFailed records a child that cannot be built (KubeRay's submit
// command errors: it retries every 3 s, as here): the message says why,
// with one Warning Event per distinct message.
func buildFailed(p *Plan, reason, what string, err error) {
	msg := fmt.Sprintf("Cannot build %s: %v", what, err)
	if p.Status.Message != msg {
		p.Events = append(p.Events, kit.Event{Type: corev1.EventTypeWarning, Reason: reason, Action: "Create", Message: msg})
	}
	p.Status.Message = kit.Truncate(msg, 2000)
	requeueAfter(p, 3*time.Second)
}

func decideWaiting(o *Observed, p *Plan) {
	j, st := o.Job, &p.Status
	if suspendIfAsked(o, p) || checkDeadlines(o, p) {
		return
	}
	if rc := o.Cluster; rc != nil {
		// Kept current while the job waits for its jobId, from the cluster
		// it uses (created or selected), as Running copies it (KubeRay v1.6.2
		// copies nothing in Waiting: its copy stays the last not-ready one).
		st.RayClusterStatus = *rc.Status.DeepCopy()
	}
	if j.Spec.JobId == "" {
		return
	}
	st.JobId = j.Spec.JobId
	st.JobDeploymentStatus = rayv1.JobDeploymentStatusRunning
	st.Message = ""
	p.Events = append(p.Events, kit.Event{Type: corev1.EventTypeNormal, Reason: reasonRunning, Action: "Track",
		Message: "spec.jobId is set: following Ray job " + st.JobId})
	requeueAfter(p, soon)
}

// failAttempt ends the attempt as failed, then retries it when the reason allows
// and backoffLimit is not used up.
func failAttempt(o *Observed, p *Plan, reason rayv1.JobFailedReason, msg string) {
	j, st := o.Job, &p.Status
	st.Failed = ptrTo(DerefInt32(st.Failed) + 1)
	st.Reason = reason
	st.Message = kit.Truncate(msg, 2000)
	// A job someone asked to stop is not retried.
	retryable := reason != rayv1.DeadlineExceeded && reason != rayv1.PreRunningDeadlineExceeded &&
		reason != rayv1.JobStatusCheckTimeoutExceeded && reason != rayv1.ValidationFailed &&
		j.Annotations[rayv1.StopRequestedAnnotationKey] == ""
	limit := j.Spec.BackoffLimitOrDefault()
	if retryable && *st.Failed <= limit {
		st.JobDeploymentStatus = rayv1.JobDeploymentStatusRetrying
		p.Events = append(p.Events, kit.Event{Type: corev1.EventTypeWarning, Reason: ReasonRetrying, Action: "Retry",
			Message: fmt.Sprintf("Attempt %d failed (%s: %s); retrying with a new cluster (backoffLimit %d)", *st.Failed, reason, kit.Truncate(msg, 300), limit)})
		requeueAfter(p, soon)
		return
	}
	st.JobDeploymentStatus = rayv1.JobDeploymentStatusFailed
	st.EndTime = apiTime(o.Now)
	p.Events = append(p.Events, kit.Event{Type: corev1.EventTypeWarning, Reason: string(reason), Action: "Fail",
		Message: "The RayJob failed: " + kit.Truncate(msg, 800)})
	decideFinished(o, p)
}

// complete ends the attempt as Complete (SUCCEEDED or STOPPED).
func complete(o *Observed, p *Plan) { completeWith(o, p, "", "") }

// completeWith ends the attempt as Complete with a reason and message
// (both kept as they are when reason is "").
func completeWith(o *Observed, p *Plan, reason rayv1.JobFailedReason, msg string) {
	st := &p.Status
	st.JobDeploymentStatus = rayv1.JobDeploymentStatusComplete
	st.Reason = reason
	if reason != "" {
		st.Message = kit.Truncate(msg, 2000)
	}
	st.EndTime = apiTime(o.Now)
	if st.JobStatus == rayv1.JobStatusSucceeded {
		st.Succeeded = ptrTo(DerefInt32(st.Succeeded) + 1)
	}
	p.Events = append(p.Events, kit.Event{Type: corev1.EventTypeNormal, Reason: ReasonCompleted, Action: "Complete",
		Message: fmt.Sprintf("Ray job %s is %s", st.JobId, st.JobStatus)})
	decideFinished(o, p)
}

// decideRelease deletes the cluster (unless selected) and the submitter
// of an attempt that is being retried or suspended, then moves on: Retrying
// → New, Suspending → Suspended.
func decideRelease(o *Observed, p *Plan) {
	j, st := o.Job, &p.Status
	why := "the attempt is being retried"
	if st.JobDeploymentStatus == rayv1.JobDeploymentStatusSuspending {
		why = "the RayJob is suspended"
	}
	pending := false
	if rc := o.Cluster; rc != nil && !j.Spec.UsesClusterSelector() && owns(j, rc.OwnerReferences) {
		pending = true
		if rc.DeletionTimestamp == nil {
			p.DeleteCluster = &deletion{Name: rc.Name, UID: string(rc.UID), Reason: why}
		}
	}
	if s := o.Submitter; s != nil && owns(j, s.OwnerReferences) {
		pending = true
		if s.DeletionTimestamp == nil {
			p.DeleteSubmitter = &deletion{Name: s.Name, UID: string(s.UID), Reason: why}
		}
	}
	if pending {
		requeueAfter(p, 2*time.Second) // deletions of children wake us too
		return
	}
	// KubeRay resets the cluster's name and status copy whether the
	// cluster was the RayJob's or selected (New names a selected one again).
	if st.JobDeploymentStatus == rayv1.JobDeploymentStatusSuspending {
		resetAttempt(st, true)
		st.JobDeploymentStatus = rayv1.JobDeploymentStatusSuspended
		p.Events = append(p.Events, kit.Event{Type: corev1.EventTypeNormal, Reason: string(rayv1.JobDeploymentStatusSuspended), Action: "Suspend",
			Message: "The cluster and the submitter are deleted; the RayJob is suspended"})
		return
	}
	resetAttempt(st, true)
	st.JobDeploymentStatus = rayv1.JobDeploymentStatusNew
	requeueAfter(p, soon)
}
