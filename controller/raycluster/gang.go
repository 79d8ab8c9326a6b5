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
//
// Kubernetes WAS (the KubernetesWAS gate, controller/batchscheduler/
// kuberneteswas) has two immutable objects instead of one: getWAS reads
// its Workload and PodGroup, decideGang plans kuberneteswas.Plan's steps,
// holdPodsForGang holds the pods while they say so, applyWAS writes them.

import (
	"context"
	"fmt"

	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/controller/batchscheduler/kuberneteswas"
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
	if _, ok := s.(kuberneteswas.Scheduler); ok {
		p.WAS = kuberneteswas.Plan(o.Cluster, o.WAS[0], o.WAS[1])
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

// getWAS reads the cluster's Kubernetes WAS Workload and PodGroup from
// the cache (nil when absent), with the KubernetesWAS gate only.
func (r *Reconciler) getWAS(ctx context.Context, rc *rayv1.RayCluster) (got [2]*unstructured.Unstructured, err error) {
	s, ok := r.cfg.Scheduler.(kuberneteswas.Scheduler)
	if !ok || rc.DeletionTimestamp != nil {
		return got, nil
	}
	for i, gvk := range s.Kinds() {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		name := s.Names(rc)[i]
		switch err := r.client.Get(ctx, types.NamespacedName{Namespace: rc.Namespace, Name: name}, u); {
		case err == nil:
			got[i] = u
		case !apierrors.IsNotFound(err):
			return got, fmt.Errorf("reading %s %s: %w", gvk.Kind, name, err)
		}
	}
	return got, nil
}

// holdPodsForGang holds the pods while the Kubernetes WAS objects are
// not in place (KubeRay's pass ends with an error before the head), and
// looks again soon: the deletions it waits on bring watch events, this
// is the fallback.
func holdPodsForGang(p *plan) {
	if !p.WAS.Held() {
		return
	}
	p.CreatePods = nil
	if p.RequeueAfter == 0 || p.RequeueAfter > wasHoldRequeue {
		p.RequeueAfter = wasHoldRequeue
	}
}

// wasHoldRequeue is how soon a cluster held by its WAS objects is looked
// at again without an event.
const wasHoldRequeue = 2 * time.Second

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
	if p.WAS.Held() || len(p.WAS.Unprotect)+len(p.WAS.Delete)+len(p.WAS.Create) > 0 {
		return r.applyWAS(ctx, rc, p.WAS, out) && !p.WAS.Held()
	}
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

// applyWAS writes the Kubernetes WAS steps in order (finalizers removed,
// deletions with a UID precondition, creations); a collision or a failed
// write is a BatchSchedulingFailed Warning (KubeRay only returns it:
// its TODO at kubernetes_was_v1alpha2.go:135) and ends the writes.
func (r *Reconciler) applyWAS(ctx context.Context, rc *rayv1.RayCluster, s kuberneteswas.Steps, out *outcome) bool {
	fail := func(what string, u *unstructured.Unstructured, err error) bool {
		if kit.Ambiguous(err) {
			out.ambiguous = true
		}
		out.fail(EventBatchSchedulingFailed, fmt.Sprintf("Failed to %s the %s %s of RayCluster %s/%s for the KubernetesWAS feature gate: %v",
			what, u.GetKind(), u.GetName(), rc.Namespace, rc.Name, err))
		return false
	}
	if s.Err != nil {
		out.fail(EventBatchSchedulingFailed, fmt.Sprintf("RayCluster %s/%s cannot be gang-scheduled (KubernetesWAS): %v", rc.Namespace, rc.Name, s.Err))
		return false
	}
	for _, u := range s.Unprotect {
		if err := r.client.Update(ctx, u); err != nil && !apierrors.IsNotFound(err) {
			return fail("remove the protection finalizer of", u, err)
		}
	}
	for _, u := range s.Delete {
		uid := u.GetUID()
		if err := r.client.Delete(ctx, u, client.Preconditions{UID: &uid}); err != nil && !apierrors.IsNotFound(err) {
			return fail("delete", u, err)
		}
	}
	for _, u := range s.Create {
		if err := r.client.Create(ctx, u); err != nil && !apierrors.IsAlreadyExists(err) {
			return fail("create", u, err)
		}
	}
	return true
}
