package raycluster

// Batch-scheduler labels no configured scheduler reads. KubeRay v1.6.2
// picks its scheduler by its operator's --batch-scheduler flag
// (batchscheduler/schedulermanager.go:58-70) and, without it, uses a
// no-op scheduler that makes no PodGroup and leaves the pods as built
// (schedulermanager.go:71-75; interface/interface.go's
// DefaultBatchScheduler). raydar does the same (gang.go for the scheduler
// it runs with). What it adds is that it says when a label is read by no
// scheduler it runs: a cluster carrying a label one of KubeRay's batch
// schedulers reads (rayapi/v1 BatchSchedulerLabels:
// ray.io/gang-scheduling-enabled, volcano.sh/queue-name,
// yunikorn.apache.org/queue, kai.scheduler/queue, …) and the configured
// scheduler (or none) does not, gets a Warning
// BatchSchedulerNotImplemented naming it, once while its labels stay the
// same, and `raydar why` names it (GangSchedulingIgnored). A RayJob's
// or RayService's cluster carries its owner's labels (KubeRay v1.6.2
// rayjob_controller.go:970-971, rayservice_controller.go:1263-1264;
// raydar's rayjob clusterLabels and rayservice build.go), so the Warning
// is on that cluster.
//
// A sample that asks for gang scheduling by the operator flag alone
// (ray-cluster.volcano-scheduler.yaml has no label) cannot be told apart
// from any other cluster, and is not warned about.

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/raydar/raydar/controller/batchscheduler"
	"github.com/raydar/raydar/controller/kit"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// ReasonBatchSchedulerNotImplemented is the reason of the Warning that a
// cluster's batch-scheduler labels are ignored.
const ReasonBatchSchedulerNotImplemented = "BatchSchedulerNotImplemented"

// batchSchedulerKey is the key the Warning is said once under.
const batchSchedulerKey = "batch-scheduler"

// batchSchedulerWarning is the Warning for rc's batch-scheduler labels
// that s (nil: no --batch-scheduler) does not read, nil when there is none.
func batchSchedulerWarning(rc *rayv1.RayCluster, s batchscheduler.Scheduler) *kit.Event {
	msg := rayv1.BatchSchedulerIgnored(rc.Labels, batchscheduler.NameOf(s))
	if msg == "" {
		return nil
	}
	return &kit.Event{Type: corev1.EventTypeWarning, Reason: ReasonBatchSchedulerNotImplemented, Action: "Reconcile", Message: msg}
}

// sayBatchScheduler says the plan's batch-scheduler Warning once while it
// lasts (again when the labels change, or after they were removed and
// came back).
func (r *Reconciler) sayBatchScheduler(rc *rayv1.RayCluster, p *plan) {
	if p.BatchScheduler == nil {
		r.events.Unsay(rc.UID, batchSchedulerKey)
		return
	}
	r.events.EmitOnce(rc, batchSchedulerKey, *p.BatchScheduler)
}
