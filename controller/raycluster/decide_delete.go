package raycluster

// The decision for a RayCluster being deleted: the GCS fault-tolerance
// finalizer, its Redis clean-up Job and its timeout. Pure, like decide.

import (
	"fmt"
	"time"

	"github.com/raydar/raydar/controller/kit"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// decideDeletion handles a RayCluster being deleted. Children go by
// garbage collection; only a GCS FT cluster (with the Redis clean-up
// finalizer) needs work: delete the pods, wait for the head to go, run the
// clean-up Job, then drop the finalizer. The finalizer is dropped anyway
// after the timeout, so a deletion never hangs forever.
func decideDeletion(o *observed, p *plan) {
	rc := o.Cluster
	p.SkipStatus = true
	if !hasFinalizer(rc, rayv1.GCSFaultToleranceRedisCleanupFinalizer) {
		return
	}
	if embeddedGCS(rc) {
		// A cluster that was Redis-backed and now uses the embedded store
		// (backend set where it was omitted) still carries the finalizer;
		// there is no Redis to clean: KubeRay v1.7.0 drops it at once
		// (raycluster_controller.go:229-246).
		p.RemoveFinalizer = true
		return
	}
	timeout := redisCleanupTimeout(rc)
	deadline := rc.DeletionTimestamp.Add(timeout)
	if !o.Now.Before(deadline) {
		p.RemoveFinalizer = true
		p.Events = append(p.Events, kit.Event{Type: corev1.EventTypeWarning, Reason: ReasonRedisCleanupTimedOut, Action: "Delete",
			Message: fmt.Sprintf("Redis clean-up did not finish within %s; removing finalizer %s anyway: "+
				"keys under namespace %q may remain in Redis", timeout, rayv1.GCSFaultToleranceRedisCleanupFinalizer,
				externalStorageNamespace(rc))})
		return
	}
	remaining := deadline.Sub(o.Now)
	poll := min(2*time.Second, remaining)
	var active []*corev1.Pod
	headLeft := false
	for _, pod := range o.Pods {
		if isActive(pod) {
			active = append(active, pod)
		}
		if kit.IsHeadPod(pod) {
			headLeft = true
		}
	}
	switch {
	case len(active) > 0:
		sortPods(active)
		deleteAll(p, active, "the cluster is being deleted")
		p.RequeueAfter = poll
	case headLeft:
		p.RequeueAfter = poll // wait for the head (and its GCS) to stop
	case o.CleanupJob == nil:
		p.CreateJob = buildRedisCleanupJob(rc, o.Config)
		p.RequeueAfter = poll
	case jobCondition(o.CleanupJob, batchv1.JobComplete):
		p.RemoveFinalizer = true
		p.Events = append(p.Events, kit.Event{Type: corev1.EventTypeNormal, Reason: reasonRedisCleanup, Action: "Delete",
			Message: "Redis clean-up Job " + o.CleanupJob.Name + " succeeded; removing finalizer"})
	case jobCondition(o.CleanupJob, batchv1.JobFailed):
		p.RemoveFinalizer = true
		p.Events = append(p.Events, kit.Event{Type: corev1.EventTypeWarning, Reason: reasonRedisCleanupFailed, Action: "Delete",
			Message: fmt.Sprintf("Redis clean-up Job %s failed; removing finalizer anyway: keys under namespace %q may remain in Redis",
				o.CleanupJob.Name, externalStorageNamespace(rc))})
	default:
		p.RequeueAfter = poll
	}
}

func jobCondition(j *batchv1.Job, t batchv1.JobConditionType) bool {
	for _, c := range j.Status.Conditions {
		if c.Type == t && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

func deleteAll(p *plan, pods []*corev1.Pod, why string) {
	p.DeleteAll = true
	for _, pod := range pods {
		p.DeletePods = append(p.DeletePods, podDeletion{Pod: pod, Reason: why})
	}
}
