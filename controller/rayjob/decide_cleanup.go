package rayjob

// The clean-up of a finished RayJob: deletionRules, the legacy
// onSuccess/onFailure policies, shutdownAfterJobFinishes. Pure.

import (
	"fmt"
	"time"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// cleanupRule is one deletion to run after the job finished.
type cleanupRule struct {
	Policy rayv1.DeletionPolicyType
	Due    time.Time
	Why    string
}

// cleanupRules lists the deletions that apply to the finished job, each
// with its due time (from status.endTime): deletionRules whose condition
// matches, or the legacy onSuccess/onFailure policy (ttl
// ttlSecondsAfterFinished), or shutdownAfterJobFinishes.
func cleanupRules(j *rayv1.RayJob, st *rayv1.RayJobStatus, cfg config) []cleanupRule {
	if st.EndTime == nil {
		return nil
	}
	end := st.EndTime.Time
	s := &j.Spec
	var out []cleanupRule
	switch {
	case s.UsesDeletionRules():
		for _, r := range s.DeletionStrategy.DeletionRules {
			c := r.Condition
			var match bool
			var what string
			switch {
			case c.JobStatus != nil:
				match, what = st.JobStatus == *c.JobStatus, "jobStatus "+string(*c.JobStatus)
			case c.JobDeploymentStatus != nil:
				match, what = st.JobDeploymentStatus == *c.JobDeploymentStatus, "jobDeploymentStatus "+string(*c.JobDeploymentStatus)
			}
			if !match || r.Policy == rayv1.DeleteNone {
				continue
			}
			out = append(out, cleanupRule{Policy: r.Policy, Due: end.Add(time.Duration(c.TTLSeconds) * time.Second),
				Why: fmt.Sprintf("deletion rule %s on %s after %ds", r.Policy, what, c.TTLSeconds)})
		}
	case s.DeletionStrategy != nil:
		var pol *rayv1.DeletionPolicy
		var side string
		switch {
		case st.JobStatus == rayv1.JobStatusSucceeded:
			pol, side = s.DeletionStrategy.OnSuccess, "onSuccess"
		case st.JobDeploymentStatus == rayv1.JobDeploymentStatusFailed:
			pol, side = s.DeletionStrategy.OnFailure, "onFailure"
		}
		if pol != nil && pol.Policy != nil && *pol.Policy != rayv1.DeleteNone {
			out = append(out, cleanupRule{Policy: *pol.Policy, Due: end.Add(time.Duration(s.TTLSecondsAfterFinished) * time.Second),
				Why: fmt.Sprintf("deletionStrategy.%s %s after %ds", side, *pol.Policy, s.TTLSecondsAfterFinished)})
		}
	case s.ShutdownAfterJobFinishes:
		pol := rayv1.DeleteCluster
		if cfg.DeleteRayJobAfterJobFinishes {
			pol = rayv1.DeleteSelf
		}
		out = append(out, cleanupRule{Policy: pol, Due: end.Add(time.Duration(s.TTLSecondsAfterFinished) * time.Second),
			Why: fmt.Sprintf("shutdownAfterJobFinishes, ttlSecondsAfterFinished %ds", s.TTLSecondsAfterFinished)})
	}
	return out
}

// destructiveness orders policies: DeleteSelf > DeleteCluster > DeleteWorkers.
func destructiveness(p rayv1.DeletionPolicyType) int {
	switch p {
	case rayv1.DeleteSelf:
		return 3
	case rayv1.DeleteCluster:
		return 2
	case rayv1.DeleteWorkers:
		return 1
	}
	return 0
}

// decideFinished runs the clean-up of a Complete or Failed RayJob: of the
// rules that are due, the most destructive (it includes the gentler ones);
// a rule due later that would do more sets the requeue. A selected cluster
// is never touched. Every action is idempotent: a cluster already deleted
// or workers already suspended need nothing.
func decideFinished(o *Observed, p *Plan) {
	j, st := o.Job, &p.Status
	rules := cleanupRules(j, st, o.Config)
	var best *cleanupRule
	for i := range rules {
		r := &rules[i]
		if !o.Now.Before(r.Due) && (best == nil || destructiveness(r.Policy) > destructiveness(best.Policy)) {
			best = r
		}
	}
	for _, r := range rules {
		if o.Now.Before(r.Due) && (best == nil || destructiveness(r.Policy) > destructiveness(best.Policy)) {
			requeueAt(o, p, r.Due)
		}
	}
	if best == nil {
		return
	}
	rc := o.Cluster
	ours := rc != nil && !j.Spec.UsesClusterSelector() && owns(j, rc.OwnerReferences) && rc.DeletionTimestamp == nil
	switch best.Policy {
	case rayv1.DeleteSelf:
		p.DeleteSelf = best.Why
	case rayv1.DeleteCluster:
		if ours {
			p.DeleteCluster = &deletion{Name: rc.Name, UID: string(rc.UID), Reason: best.Why}
		}
	case rayv1.DeleteWorkers:
		if ours && hasRunningWorkerGroups(rc) {
			p.SuspendWorkers = rc.Name
		}
	}
}

func hasRunningWorkerGroups(rc *rayv1.RayCluster) bool {
	for i := range rc.Spec.WorkerGroupSpecs {
		if !rc.Spec.WorkerGroupSpecs[i].IsSuspended() {
			return true
		}
	}
	return false
}
