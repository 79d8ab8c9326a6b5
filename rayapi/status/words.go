package status

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/raydar/raydar/rayapi/podview"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// None is the word for a value that is not set.
const None = "-"

// OrNone is s, or None when s is empty.
func OrNone(s string) string {
	if s == "" {
		return None
	}
	return s
}

// Cluster is the one-word status of a RayCluster, the first that holds of:
//   - deleting: it has a deletion timestamp;
//   - suspending: the RayClusterSuspending condition is true, or spec.suspend
//     is set and the RayClusterSuspended condition is not yet true (the
//     request is seen before the reconciler's first answer);
//   - suspended: spec.suspend is set and RayClusterSuspended is true;
//   - its status.state (ready, suspended, failed);
//   - without a state, the reason that explains why: a true ReplicaFailure
//     condition's reason, else status.reason, else provisioning while
//     RayClusterProvisioned is not true;
//   - pending (nothing written yet).
func Cluster(rc *rayv1.RayCluster) string {
	c := rc.Status.Conditions
	switch {
	case rc.DeletionTimestamp != nil:
		return "deleting"
	case meta.IsStatusConditionTrue(c, string(rayv1.RayClusterSuspending)):
		return "suspending"
	case rc.Spec.IsSuspended() && meta.IsStatusConditionTrue(c, string(rayv1.RayClusterSuspended)):
		return string(rayv1.Suspended)
	case rc.Spec.IsSuspended():
		return "suspending"
	case rc.Status.State != "":
		return string(rc.Status.State)
	}
	if f := meta.FindStatusCondition(c, string(rayv1.RayClusterReplicaFailure)); f != nil && f.Status == metav1.ConditionTrue && f.Reason != "" {
		return f.Reason
	}
	if rc.Status.Reason != "" {
		return rc.Status.Reason
	}
	if p := meta.FindStatusCondition(c, string(rayv1.RayClusterProvisioned)); p != nil && p.Status != metav1.ConditionTrue {
		return "provisioning"
	}
	return "pending"
}

// Job is a RayJob's STATUS word: the Ray job's status (RUNNING, SUCCEEDED,
// …), None before there is a Ray job. JobDeployment is its other column.
func Job(j *rayv1.RayJob) string { return OrNone(string(j.Status.JobStatus)) }

// JobDeployment is a RayJob's deployment status (Initializing, Running,
// Complete, Suspended, …), None before the reconciler wrote one.
func JobDeployment(j *rayv1.RayJob) string { return OrNone(string(j.Status.JobDeploymentStatus)) }

// Service is the one-word status of a RayService, the first that holds of:
// Deleting (a deletion timestamp), Suspended, Suspending, RollingBack,
// Upgrading, Ready (those conditions true), the Ready condition's reason
// when it is not true, status.serviceStatus, Pending.
func Service(s *rayv1.RayService) string {
	c := s.Status.Conditions
	is := func(t rayv1.RayServiceConditionType) bool { return meta.IsStatusConditionTrue(c, string(t)) }
	switch {
	case s.DeletionTimestamp != nil:
		return "Deleting"
	case is(rayv1.RayServiceSuspended):
		return "Suspended"
	case is(rayv1.RayServiceSuspending):
		return "Suspending"
	case is(rayv1.RollbackInProgress):
		return "RollingBack"
	case is(rayv1.UpgradeInProgress):
		return "Upgrading"
	case is(rayv1.RayServiceReady):
		return "Ready"
	}
	if r := meta.FindStatusCondition(c, string(rayv1.RayServiceReady)); r != nil && r.Reason != "" {
		return r.Reason
	}
	if s.Status.ServiceStatus != "" {
		return string(s.Status.ServiceStatus)
	}
	return "Pending"
}

// CronJob is the one-word status of a RayCronJob, the first that holds of:
//   - deleting: it has a deletion timestamp;
//   - invalid schedule, invalid time zone, invalid job template, invalid
//     name: the ScheduleValid condition is False for that reason (its
//     message names the field);
//   - suspended: spec.suspend is true;
//   - scheduled: it creates a RayJob on every tick.
func CronJob(c *rayv1.RayCronJob) string {
	if c.DeletionTimestamp != nil {
		return "deleting"
	}
	if v := meta.FindStatusCondition(c.Status.Conditions, rayv1.RayCronJobScheduleValid); v != nil && v.Status == metav1.ConditionFalse {
		switch v.Reason {
		case rayv1.RayCronJobReasonInvalidSchedule:
			return "invalid schedule"
		case rayv1.RayCronJobReasonInvalidTimeZone:
			return "invalid time zone"
		case rayv1.RayCronJobReasonInvalidJobTemplate:
			return "invalid job template"
		case rayv1.RayCronJobReasonInvalidName:
			return "invalid name"
		}
		return "invalid"
	}
	if c.Spec.IsSuspended() {
		return "suspended"
	}
	return "scheduled"
}

// Pod is kubectl's STATUS word for a pod, simplified, the first that holds
// of: Terminating (a deletion timestamp); Init:REASON for an init container
// that waits (other than PodInitializing); the reason a container waits
// (ContainerCreating, CrashLoopBackOff, ImagePullBackOff, …); the reason a
// container of a running pod terminated (Error, OOMKilled, Completed); the
// pod's status.reason (Evicted, …); its phase; Pending.
func Pod(p *podview.Pod) string {
	if p.DeletionTimestamp != nil {
		return "Terminating"
	}
	for _, cs := range p.Status.InitContainerStatuses {
		if w := cs.State.Waiting; w != nil && w.Reason != "" && w.Reason != "PodInitializing" {
			return "Init:" + w.Reason
		}
	}
	for _, cs := range p.Status.ContainerStatuses {
		if w := cs.State.Waiting; w != nil && w.Reason != "" {
			return w.Reason
		}
		if t := cs.State.Terminated; t != nil && t.Reason != "" && p.Status.Phase == corev1.PodRunning {
			return t.Reason
		}
	}
	if p.Status.Reason != "" {
		return p.Status.Reason
	}
	if p.Status.Phase == "" {
		return "Pending"
	}
	return string(p.Status.Phase)
}
