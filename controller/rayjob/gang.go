package rayjob

// Gang scheduling of a RayJob with a batch scheduler (--batch-scheduler,
// controller/batchscheduler), as KubeRay v1.6.2's RayJob controller does
// it: in Initializing, before its cluster, the RayJob's own gang object
// (rayjob_controller.go:200-208, DoBatchSchedulingOnSubmission: a Volcano
// PodGroup counting the cluster and the submitter's resources); in
// K8sJobMode the cluster it creates and the submitter Job's pod template
// carry the scheduler's metadata (:940-947, :563-569); once the RayJob is
// Complete or Failed, on every pass, the gang object brought to what its
// cluster still holds (:419, :1511-1533, CleanupOnCompletion), with a
// Normal BatchSchedulerCleanedUp when it changed. The cluster's pods get
// theirs from the RayCluster reconciler (controller/raycluster gang.go),
// which makes no gang object of its own for a RayJob's cluster.

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/controller/batchscheduler"
	"github.com/raydar/raydar/controller/kit"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// gangPhase: the RayJob's gang object is decided in these phases only
// (Running too: the pass that finishes the job cleans it up).
func gangPhase(st *rayv1.RayJobStatus) bool {
	switch st.JobDeploymentStatus {
	case rayv1.JobDeploymentStatusInitializing, rayv1.JobDeploymentStatusRunning,
		rayv1.JobDeploymentStatusComplete, rayv1.JobDeploymentStatusFailed:
		return true
	}
	return false
}

// getGroup reads the RayJob's gang object live (nil when absent or when no
// scheduler is configured): RayJobs do not watch it, and it is read only
// in Initializing and once finished.
func (r *reconciler) getGroup(ctx context.Context, rj *rayv1.RayJob) (client.Object, error) {
	s := r.cfg.Build.Scheduler
	if s == nil || rj.DeletionTimestamp != nil || !gangPhase(&rj.Status) || rj.Spec.UsesClusterSelector() {
		return nil, nil
	}
	want, err := s.JobGroup(rj)
	if err != nil || want == nil {
		return nil, nil
	}
	got := s.NewGroup()
	if err := r.api.Get(ctx, types.NamespacedName{Namespace: rj.Namespace, Name: want.GetName()}, got); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("reading %s %s: %w", s.GroupKind().Kind, want.GetName(), err)
	}
	return got, nil
}

// decideJobGang plans the gang object of an Initializing RayJob; false
// when it cannot be made (a clusterSelector RayJob: KubeRay v1.6.2 refuses
// it on every pass, volcano_scheduler.go:74-76, and goes no further).
func decideJobGang(o *Observed, p *Plan) bool {
	s := o.Config.Build.Scheduler
	if s == nil {
		return true
	}
	want, err := s.JobGroup(o.Job)
	if err != nil {
		buildFailed(p, rayv1.EventFailedToCreateRayCluster, groupWhat(s), err)
		return false
	}
	planGroup(o, p, want)
	return true
}

// groupWhat names what JobGroup refused: the gang object, or the
// submission itself for a scheduler without one (kai-scheduler refuses
// K8sJobMode RayJobs).
func groupWhat(s batchscheduler.Scheduler) string {
	if batchscheduler.HasGroup(s) {
		return "the " + s.GroupKind().Kind + " for --batch-scheduler=" + s.Name()
	}
	return "the RayJob's batch scheduling for --batch-scheduler=" + s.Name()
}

// decideFinishedGang plans the gang object of a finished RayJob: what its
// cluster still holds.
func decideFinishedGang(o *Observed, p *Plan) {
	s := o.Config.Build.Scheduler
	if s == nil {
		return
	}
	want, ok, err := s.FinishedJobGroup(o.Job, o.Cluster)
	if err != nil {
		p.Events = append(p.Events, kit.Event{Type: corev1.EventTypeWarning, Reason: rayv1.EventFailedToCleanupBatchScheduler, Action: "Cleanup",
			Message: fmt.Sprintf("Failed to cleanup batch scheduler resources for RayJob %s/%s: %v", o.Job.Namespace, o.Job.Name, err)})
		return
	}
	if ok {
		planGroup(o, p, want)
		p.GroupCleanup = p.CreateGroup != nil || p.UpdateGroup != nil
	}
}

// planGroup plans want's creation, or the update of the one observed.
func planGroup(o *Observed, p *Plan, want client.Object) {
	if o.Group == nil {
		p.CreateGroup = want
		return
	}
	p.UpdateGroup = o.Config.Build.Scheduler.UpdateGroup(o.Group, want)
}

// decorateCluster gives the cluster a K8sJobMode RayJob creates the
// scheduler's metadata (rayjob_controller.go:940-947: task "").
func decorateCluster(o *Observed, rc *rayv1.RayCluster) {
	if s := o.Config.Build.Scheduler; s != nil && o.Job.Spec.EffectiveSubmissionMode() == rayv1.K8sJobMode {
		s.Decorate(o.Job, rc, "")
	}
}

// writeGroup writes the planned gang object; false when that failed (the
// cluster is not created in this pass, as KubeRay's error ends its pass).
func (a *acting) writeGroup() bool {
	p, s := a.p, a.r.cfg.Build.Scheduler
	if s == nil || (p.CreateGroup == nil && p.UpdateGroup == nil) {
		return true
	}
	var err error
	if p.CreateGroup != nil {
		if err = a.r.client.Create(a.ctx, p.CreateGroup); apierrors.IsAlreadyExists(err) {
			err = nil
		}
	} else {
		err = a.r.client.Update(a.ctx, p.UpdateGroup)
	}
	rj := a.rj
	switch {
	case err != nil && p.GroupCleanup:
		a.fail("gang", rayv1.EventFailedToCleanupBatchScheduler, "Cleanup",
			fmt.Sprintf("Failed to cleanup batch scheduler resources for RayJob %s/%s", rj.Namespace, rj.Name), err)
		return false
	case err != nil:
		a.fail("gang", rayv1.EventFailedToCreateRayCluster, "Create",
			fmt.Sprintf("Failed to create or update the %s of RayJob %s/%s for --batch-scheduler=%s", s.GroupKind().Kind, rj.Namespace, rj.Name, s.Name()), err)
		return false
	case p.GroupCleanup:
		a.r.event(rj, kit.Event{Type: corev1.EventTypeNormal, Reason: rayv1.EventBatchSchedulerCleanedUp, Action: "Cleanup",
			Message: fmt.Sprintf("Cleaned up batch scheduler resources for RayJob %s/%s", rj.Namespace, rj.Name)})
	}
	return true
}
