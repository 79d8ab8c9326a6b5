package rayjob

// The RayJob's status conditions, computed from the status (pure), and
// the status write.

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/raydar/raydar/controller/kit"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// apiTime is t as the API stores it (whole seconds), so that a status
// computed now compares equal to the same status read back.
func apiTime(t time.Time) *metav1.Time {
	mt := metav1.NewTime(t).Rfc3339Copy()
	return &mt
}

// setConditions derives raydar's conditions from the status.
func setConditions(o *Observed, st *rayv1.RayJobStatus) {
	now := o.Now
	set := func(t string, ok bool, reason, msg string) {
		s := metav1.ConditionFalse
		if ok {
			s = metav1.ConditionTrue
		}
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: t, Status: s, Reason: reason, Message: kit.Truncate(msg, 1000),
			ObservedGeneration: o.Job.Generation, LastTransitionTime: *apiTime(now)})
	}
	ds := st.JobDeploymentStatus

	// ClusterReady.
	switch rc := o.Cluster; {
	case rc != nil && rc.Name == st.RayClusterName:
		if rc.Status.State == rayv1.Ready {
			set(rayv1.RayJobClusterReady, true, rayv1.RayJobReasonClusterReady, "RayCluster "+rc.Name+" is ready")
		} else {
			set(rayv1.RayJobClusterReady, false, rayv1.RayJobReasonClusterCreating, "RayCluster "+rc.Name+" is not ready yet")
		}
	case st.RayClusterName != "" && ds != rayv1.JobDeploymentStatusInitializing:
		set(rayv1.RayJobClusterReady, false, reasonClusterNotFound, "RayCluster "+st.RayClusterName+" does not exist")
	case st.RayClusterName != "":
		set(rayv1.RayJobClusterReady, false, rayv1.RayJobReasonClusterCreating, "RayCluster "+st.RayClusterName+" is being created")
	default:
		set(rayv1.RayJobClusterReady, false, reasonWaitingForCluster, "No cluster yet")
	}

	// JobSubmitted.
	if st.JobStatus != rayv1.JobStatusNew && st.JobId != "" {
		set(rayv1.RayJobSubmitted, true, rayv1.RayJobReasonSubmitted, "Ray job "+st.JobId+" is known to the dashboard")
	} else {
		set(rayv1.RayJobSubmitted, false, reasonNotSubmitted, "The Ray job is not submitted yet")
	}

	// Complete / Failed / Suspended.
	switch ds {
	case rayv1.JobDeploymentStatusComplete:
		reason := rayv1.RayJobReasonSucceeded
		if st.JobStatus == rayv1.JobStatusStopped {
			reason = reasonStopped
		}
		set(rayv1.RayJobComplete, true, reason, fmt.Sprintf("Ray job %s ended %s", st.JobId, st.JobStatus))
	default:
		set(rayv1.RayJobComplete, false, reasonNotComplete, "Deployment status "+orWord(string(ds), "New"))
	}
	if ds == rayv1.JobDeploymentStatusFailed || ds == rayv1.JobDeploymentStatusValidationFailed {
		set(rayv1.RayJobFailedCondition, true, orWord(string(st.Reason), "Failed"), st.Message)
	} else {
		set(rayv1.RayJobFailedCondition, false, reasonNotFailed, "Deployment status "+orWord(string(ds), "New"))
	}
	if ds == rayv1.JobDeploymentStatusSuspended || ds == rayv1.JobDeploymentStatusSuspending {
		set(rayv1.RayJobSuspended, ds == rayv1.JobDeploymentStatusSuspended, rayv1.RayJobReasonSuspended, "spec.suspend is true")
	} else {
		set(rayv1.RayJobSuspended, false, reasonNotSuspended, "Not suspended")
	}
}

// writeStatus replaces the status (optimistic lock: a stale view fails
// with a conflict instead of overwriting).
func (r *reconciler) writeStatus(ctx context.Context, rj *rayv1.RayJob, st rayv1.RayJobStatus) error {
	next := rj.DeepCopy()
	next.Status = st
	// Decide compared the statuses (Plan.WriteStatus): a RayJob's status is
	// written at once, never held.
	if _, err := r.status.Write(ctx, rj, next, kit.StatusChange{}, r.now(), nil); err != nil {
		return err
	}
	// What the API server kept: KubeRay's RayJob CRD prunes the conditions
	// and (v1.5.0) the dashboard failure clock, so they are neither compared
	// nor relied on from the stored object.
	if len(st.Conditions) > 0 && len(next.Status.Conditions) == 0 {
		r.prunesConditions.Store(true)
	}
	r.rememberCheckFail(rj.UID, st.JobId, st.JobStatusCheckFailureStartTime, next.Status.JobStatusCheckFailureStartTime != nil)
	*rj = *next
	return nil
}
