package raycluster

// Gang scheduling with a batch scheduler (controller/batchscheduler), when
// the operator runs with --batch-scheduler. KubeRay v1.6.2's RayCluster
// controller asks its scheduler on every pass that reaches the pods, after
// the suspend and Recreate checks and before the head pod
// (raycluster_controller.go:693-703, DoBatchSchedulingOnSubmission), and
// gives each pod it creates the scheduler's metadata
// (:1335-1343 head, :1360-1366 and :1384-1390 workers,
// AddMetadataToChildResource). Here: observe reads the gang object (a
// Volcano or scheduler-plugins PodGroup, owned and so cached; yunikorn and
// kai-scheduler have none and only decorate), decideGang plans its creation or
// update, decoratePods gives the planned pods the scheduler's metadata,
// act writes the gang object among the children
// before any pod (a failure holds the pods back, as KubeRay's error ends
// its pass before the head).

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/controller/kit"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// EventBatchSchedulingFailed is raydar's Warning when the gang object
// cannot be built or written (KubeRay returns the error from its pass,
// without an Event).
const EventBatchSchedulingFailed = "BatchSchedulingFailed"

// getGroup reads the cluster's gang object from the cache (nil when
// absent, or when no scheduler is configured or it makes none for rc).
func (r *Reconciler) getGroup(ctx context.Context, rc *rayv1.RayCluster) (client.Object, error) {
	s := r.cfg.Scheduler
	if s == nil || rc.DeletionTimestamp != nil {
		return nil, nil
	}
	want, err := s.ClusterGroup(rc)
	if want == nil || err != nil {
		return nil, nil // decide says why
	}
	got := s.NewGroup()
	if err := r.client.Get(ctx, types.NamespacedName{Namespace: rc.Namespace, Name: want.GetName()}, got); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("reading %s %s: %w", s.GroupKind().Kind, want.GetName(), err)
	}
	return got, nil
}

// decideGang plans the cluster's gang object: created when absent,
// updated when its size changed (the scheduler says what it compares).
func decideGang(o *observed, p *plan) {
	s := o.Config.Scheduler
	if s == nil {
		return
	}
	want, err := s.ClusterGroup(o.Cluster)
	switch {
	case err != nil:
		p.GroupErr = err
	case want == nil:
	case o.Group == nil:
		p.CreateGroup = want
	default:
		p.UpdateGroup = s.UpdateGroup(o.Group, want)
	}
}

// decoratePods gives each planned pod the scheduler's metadata, its Ray
// group the task (headgroup or the worker group).
func decoratePods(o *observed, p *plan) {
	s := o.Config.Scheduler
	if s == nil {
		return
	}
	for _, pod := range p.CreatePods {
		s.Decorate(o.Cluster, pod, pod.Labels[rayv1.RayNodeGroupLabelKey])
	}
}

// applyGroup writes the planned gang object; false holds the pods back.
// One made meanwhile (AlreadyExists) is left for the next pass to compare,
// as KubeRay does (volcano_scheduler.go:172-177).
func (r *Reconciler) applyGroup(ctx context.Context, rc *rayv1.RayCluster, p *plan, out *outcome) bool {
	var err error
	var what string
	switch {
	case p.GroupErr != nil:
		err, what = p.GroupErr, "build"
	case p.CreateGroup != nil:
		what = "create"
		if err = r.client.Create(ctx, p.CreateGroup); apierrors.IsAlreadyExists(err) {
			err = nil
		}
	case p.UpdateGroup != nil:
		what = "update"
		err = r.client.Update(ctx, p.UpdateGroup)
	}
	if err == nil {
		return true
	}
	if kit.Ambiguous(err) {
		out.ambiguous = true
	}
	out.fail(EventBatchSchedulingFailed, fmt.Sprintf("Failed to %s the %s of RayCluster %s/%s for --batch-scheduler=%s: %v",
		what, r.cfg.Scheduler.GroupKind().Kind, rc.Namespace, rc.Name, r.cfg.Scheduler.Name(), err))
	return false
}
