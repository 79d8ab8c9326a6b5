package why

import (
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/raydar/raydar/rayapi/status"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// maxLogLines bounds the submitter's log lines quoted as evidence.
const maxLogLines = 5

func jobObject(j *rayv1.RayJob) object {
	st := &j.Status
	written := st.JobDeploymentStatus != "" || st.ObservedGeneration != 0 || len(st.Conditions) > 0
	return newObject("RayJob", &j.ObjectMeta, j.Spec.ManagedBy, written, st.ObservedGeneration)
}

// jobCauses is Job, unsorted.
func jobCauses(in *JobInput) []Cause {
	j := in.Job
	st := &j.Status
	o := jobObject(j)
	var cs []Cause
	if st.JobDeploymentStatus == rayv1.JobDeploymentStatusValidationFailed {
		cs = append(cs, invalidCause(o, st.Message))
	} else if c, ok := invalidFromEvents(o, in.Events, rayv1.EventInvalidRayJobSpec, rayv1.EventInvalidRayJobMetadata); ok {
		cs = append(cs, c)
	}
	cs = whoCauses(o, in.Events, in.Reconciler, cs)
	contra, contradicts := statusContradiction(in)
	if contradicts {
		cs = append(cs, contra)
	}
	switch st.JobDeploymentStatus {
	case rayv1.JobDeploymentStatusComplete:
		if st.JobStatus != rayv1.JobStatusFailed {
			if contradicts { // Complete, but jobStatus says it still runs
				return []Cause{contra}
			}
			return nil // finished as asked
		}
		return append(cs, jobFailed(in))
	case rayv1.JobDeploymentStatusFailed:
		cs = append(cs, jobFailed(in))
		if st.Reason == rayv1.PreRunningDeadlineExceeded {
			cs = nested(cs, in.Cluster, cs) // why it never ran
		}
		return cs
	case rayv1.JobDeploymentStatusValidationFailed:
		return cs
	}
	if j.Spec.Suspend || st.JobDeploymentStatus == rayv1.JobDeploymentStatusSuspended {
		return onlyContext(o, append(cs, suspendedCause(o)))
	}
	cs = writeCauses(o, in.Events, "", "", cs)
	if c, ok := submitterFailed(in); ok {
		cs = append(cs, c)
	} else if c, ok := submitFailed(o, in.Events); ok {
		cs = append(cs, c)
	}
	if c, ok := dashboardUnreachable(o, in.Events, st.JobStatusCheckFailureStartTime != nil, in.Now, st); ok {
		cs = append(cs, c)
	}
	cs = waitingForOperator(o, in.Events, in.Reconciler, in.Now, in.SpecSeen, cs, "jobDeploymentStatus: "+status.JobDeployment(j))
	cs = deadlines(in, cs)
	cs = jobDemand(in, cs)
	cs = clusterNotReady(in, cs)
	return onlyContext(o, cs)
}

// clusterNotReady: before the job runs, its cluster's causes (stated as
// the cluster's), or ClusterNotReady when the cluster has none of its own
// (or is not there, and no other cause of the job says why).
func clusterNotReady(in *JobInput, cs []Cause) []Cause {
	j := in.Job
	st := &j.Status
	n := len(cs)
	cs = nested(cs, in.Cluster, cs)
	if blocking(cs[n:]) || st.JobDeploymentStatus == rayv1.JobDeploymentStatusRunning || clusterReady(in.Cluster) {
		return cs
	}
	if in.Cluster == nil && (hasCode(cs, CodeNotReconciled) || hasCode(cs, CodeOtherOperator) ||
		hasCode(cs, CodeCreateRefused) || hasCode(cs, CodeWriteFailed)) {
		return cs // those say why there is no cluster
	}
	name := st.RayClusterName
	if j.Spec.UsesClusterSelector() {
		name = j.Spec.SelectedClusterName()
	}
	c := Cause{Code: CodeClusterNotReady, Rank: rankClusterReady}
	switch {
	case in.Cluster != nil && in.Cluster.Cluster != nil:
		rc := in.Cluster.Cluster
		c.Subject = in.Cluster.subject()
		c.Summary = "RayCluster " + rc.Name + " not ready (" + status.Cluster(rc) + ")"
		c.Evidence = append([]string{"cluster status: " + status.Cluster(rc) + ", workers " + status.Workers(rc)},
			clusterProgress(in.Cluster, headOf(in.Cluster.Pods), cs)...)
		c.Fix = "wait for the cluster, or look at its pods (its Why names no cause yet)"
	case j.Spec.UsesClusterSelector():
		c.Subject = "RayCluster " + j.Namespace + "/" + name
		c.Summary = "RayCluster " + name + " not found"
		c.Evidence = []string{"spec.clusterSelector names RayCluster " + name}
		c.Fix = "create RayCluster " + name + " in namespace " + j.Namespace + ", or fix spec.clusterSelector"
	default:
		if name == "" {
			c.Subject = jobSubject(j)
			c.Summary = "its RayCluster is not created yet"
		} else {
			c.Subject = "RayCluster " + j.Namespace + "/" + name
			c.Summary = "RayCluster " + name + " not created yet"
		}
		c.Evidence = []string{"jobDeploymentStatus: " + status.JobDeployment(j)}
		c.Fix = "wait for the reconciler to create it; its Events say if it cannot"
	}
	return append(cs, c)
}

func jobSubject(j *rayv1.RayJob) string { return "RayJob " + j.Namespace + "/" + j.Name }

// jobFailed is a failed job's cause: its failure.
func jobFailed(in *JobInput) Cause {
	j := in.Job
	st := &j.Status
	c := Cause{Subject: jobSubject(j), Rank: rankJobFailed}
	msg := strings.TrimSpace(st.Message)
	if msg != "" {
		c.Evidence = append(c.Evidence, string(st.Reason)+": "+msg)
	}
	switch st.Reason {
	case rayv1.SubmissionFailed:
		c.Code, c.Rank = CodeSubmitterFailed, rankSubmitter
		c.Summary = "submission failed"
		if sc, ok := submitterFailed(in); ok {
			c.Summary = sc.Summary
			c.Evidence = append(c.Evidence, sc.Evidence...)
		} else if msg != "" {
			c.Summary += ": " + shortReason(msg)
		}
		c.Fix = "read the submitter's log for why `ray job submit` failed, fix the entrypoint or runtime env, and run the job again"
	case rayv1.JobStatusCheckTimeoutExceeded:
		c.Code, c.Rank = CodeDashboardUnreachable, rankDashboard
		c.Summary = "failed: dashboard unreachable too long"
		c.Fix = "check the head pod and its dashboard (port 8265), then run the job again"
	case rayv1.DeadlineExceeded:
		c.Code = CodeJobFailed
		c.Summary = "failed: activeDeadlineSeconds " + int32Words(j.Spec.ActiveDeadlineSeconds) + " passed"
		c.Fix = "raise spec.activeDeadlineSeconds, or make the job faster"
	case rayv1.PreRunningDeadlineExceeded:
		c.Code = CodeJobFailed
		c.Summary = "failed: not running within preRunningDeadlineSeconds " + int32Words(j.Spec.PreRunningDeadlineSeconds)
		c.Fix = "fix what kept the cluster from getting ready (below), or raise spec.preRunningDeadlineSeconds"
	default:
		c.Code = CodeJobFailed
		c.Summary = "Ray job failed"
		if msg != "" {
			c.Summary += ": " + shortReason(msg)
		}
		if sc, ok := submitterFailed(in); ok {
			c.Evidence = append(c.Evidence, sc.Evidence...)
		}
		c.Fix = "read the job's log (the submitter's, or the dashboard's job log) for the error"
	}
	return c
}

func int32Words(p *int32) string {
	if p == nil {
		return "?"
	}
	return itoa(int64(*p)) + "s"
}

// submitterFailed: the newest submitter pod's container terminated
// non-zero (now, or before its restart).
func submitterFailed(in *JobInput) (Cause, bool) {
	if len(in.Submitters) == 0 {
		return Cause{}, false
	}
	p := in.Submitters[len(in.Submitters)-1]
	for i := range p.Status.ContainerStatuses {
		cs := &p.Status.ContainerStatuses[i]
		t := cs.State.Terminated
		if t == nil {
			t = cs.LastTerminationState.Terminated
		}
		if t == nil || t.ExitCode == 0 {
			continue
		}
		ev := "pod " + p.Name + " container " + cs.Name + ": " + exitWords(t)
		c := Cause{Code: CodeSubmitterFailed, Subject: "pod " + p.Name, Rank: rankSubmitter,
			Summary:  "submitter exited " + itoa(int64(t.ExitCode)),
			Evidence: []string{ev},
			Fix:      "read the submitter's log: the entrypoint failed, or `ray job submit` could not reach the cluster"}
		if len(in.Submitters) > 1 {
			c.Summary += " (" + itoa(int64(len(in.Submitters))) + " attempts)"
		}
		logs := in.SubmitterLog
		if len(logs) > maxLogLines {
			logs = logs[len(logs)-maxLogLines:]
		}
		for _, l := range logs {
			c.Evidence = append(c.Evidence, "log: "+l)
		}
		return c, true
	}
	return Cause{}, false
}

// submitFailed: raydar's FailedSubmit Warning (HTTPMode: the dashboard
// refused the submission), not followed by Submitted.
func submitFailed(o object, events []*corev1.Event) (Cause, bool) {
	var last *corev1.Event
	for _, e := range events {
		if !o.about(e) {
			continue
		}
		switch e.Reason {
		case reasonFailedSubmit:
			last = e
		case reasonSubmitted:
			last = nil
		}
	}
	if last == nil {
		return Cause{}, false
	}
	return Cause{Code: CodeSubmitterFailed, Subject: o.subject(), Rank: rankSubmitter,
		Summary:  "submit failed: " + shortReason(afterLast(last.Message, "): ")),
		Evidence: []string{last.Message},
		Fix:      "read the message: the dashboard refused the job (entrypoint, runtime env, or the dashboard is not up yet); raydar retries"}, true
}

// dashboardUnreachable: raydar's DashboardUnreachable Warning about the
// object, while its status says the checks still fail (failing), or while
// no Normal Event followed it.
func dashboardUnreachable(o object, events []*corev1.Event, failing bool, now time.Time, st *rayv1.RayJobStatus) (Cause, bool) {
	var last *corev1.Event
	for _, e := range events {
		if !o.about(e) {
			continue
		}
		switch {
		case e.Reason == reasonDashboardUnreachable && e.Type == corev1.EventTypeWarning:
			last = e
		case e.Type == corev1.EventTypeNormal && !failing:
			last = nil
		}
	}
	if last == nil && !failing {
		return Cause{}, false
	}
	c := Cause{Code: CodeDashboardUnreachable, Subject: o.subject(), Rank: rankDashboard,
		Summary: "dashboard unreachable",
		Fix:     "check the head pod and its dashboard (port 8265) and the network between raydar and it"}
	if st != nil && st.JobStatusCheckFailureStartTime != nil && !now.IsZero() {
		c.Summary += " for " + duration.HumanDuration(now.Sub(st.JobStatusCheckFailureStartTime.Time))
		c.Fix += "; the job fails once the status-check timeout passes"
	}
	if last != nil {
		c.Evidence = []string{last.Message}
	}
	return c, true
}

// deadlines: activeDeadlineSeconds (from status.startTime) or, before the
// job runs, preRunningDeadlineSeconds, with under 10% or under a minute
// left.
func deadlines(in *JobInput, cs []Cause) []Cause {
	j := in.Job
	st := &j.Status
	if st.StartTime == nil || in.Now.IsZero() {
		return cs
	}
	check := func(field string, secs *int32) {
		if secs == nil || *secs <= 0 {
			return
		}
		total := time.Duration(*secs) * time.Second
		left := st.StartTime.Add(total).Sub(in.Now)
		if left <= 0 || (left >= time.Minute && left*10 >= total) {
			return
		}
		cs = append(cs, Cause{Code: CodeDeadlineSoon, Subject: jobSubject(j), Rank: rankDeadline,
			Summary:  field + " fires in " + duration.HumanDuration(left),
			Evidence: []string{"spec." + field + " is " + itoa(int64(*secs)) + ", started " + status.Since(in.Now, st.StartTime) + " ago"},
			Fix:      "raise spec." + field + " if the job needs longer; the RayJob fails when it fires"})
	}
	check("activeDeadlineSeconds", j.Spec.ActiveDeadlineSeconds)
	if st.JobDeploymentStatus != rayv1.JobDeploymentStatusRunning {
		check("preRunningDeadlineSeconds", j.Spec.PreRunningDeadlineSeconds)
	}
	return cs
}
