package rayservice

// act: the RayService reconciler carries out a plan. Every write is
// idempotent (names chosen before the request, UID preconditions on
// deletions, submissions of an unchanged config change nothing in Ray) and
// is recorded for read-your-writes; nothing here decides.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/raydar/raydar/controller/kit"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/raydar/raydar/rayapi/dashboard"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

func (r *reconciler) forgetProbe(uid types.UID) {
	r.mu.Lock()
	delete(r.probes, uid)
	r.mu.Unlock()
}

// act applies the plan, in order: the finalizer removed (a skipped
// RayService stops there), the plan's Events, the clusters created and
// updated, the Serve submissions, the serving labels and annotations, the
// Services created and updated, then (only once the Services are right,
// or while suspending) the clusters and Services deleted, and the status.
// Every write is idempotent: cluster names are chosen before the request,
// deletions carry a UID precondition, submissions of an unchanged config
// change nothing in Ray. Failed writes are returned together, after the
// status, for the work queue's back-off.
func (r *reconciler) act(ctx context.Context, obs *observed, p *plan) (ctrl.Result, error) {
	a := &acting{r: r, ctx: ctx, rs: obs.Service, p: p, now: obs.Now}
	if p.RemoveFinalizer {
		if err := a.removeFinalizer(); err != nil {
			return ctrl.Result{}, err
		}
	}
	if p.Skip {
		return ctrl.Result{}, nil
	}
	for _, e := range p.Events {
		r.events.Emit(a.rs, nil, e)
	}
	a.createCluster()
	a.updateClusters()
	// decide requeues within DeployPoll after a submission.
	for _, s := range p.Submit {
		_, err := r.submit(ctx, a.rs, s, a.now)
		a.fail(err)
	}
	a.targetCapacities()
	a.labelPods()
	a.annotateClusters()
	servicesOK := a.writeServices()
	servicesOK = a.writeGateway() && servicesOK
	a.deleteClusters(servicesOK)
	a.deleteServices()
	return a.writeStatus()
}

// acting is one act: the plan and the writes that failed.
type acting struct {
	r    *reconciler
	ctx  context.Context
	rs   *rayv1.RayService
	p    *plan
	now  time.Time
	errs []error
}

// fail records a failed write (nil: none).
func (a *acting) fail(err error) {
	if err != nil {
		a.errs = append(a.errs, err)
	}
}

// removeFinalizer removes the RayService's finalizer with a merge patch
// (RBAC grants patch on rayservices, not update) carrying the
// resourceVersion read: a 409 goes back to the kit's Loop.
func (a *acting) removeFinalizer() error {
	rs := a.rs
	orig := rs.DeepCopy()
	rs.Finalizers = slices.DeleteFunc(slices.Clone(rs.Finalizers), func(f string) bool { return f == rayv1.RayServiceFinalizer })
	if err := a.r.client.Patch(a.ctx, rs, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return nil
}

// createCluster creates the planned cluster (one that exists was made by
// an earlier pass).
func (a *acting) createCluster() {
	r, rs, c := a.r, a.rs, a.p.CreateCluster
	if c == nil {
		return
	}
	r.exp.ExpectCreate(rs.UID, c)
	switch err := r.client.Create(a.ctx, c); {
	case err == nil:
		r.exp.Created(rs.UID, c)
	case apierrors.IsAlreadyExists(err):
	default:
		r.exp.CreateFailed(rs.UID, c)
		r.events.Emit(rs, nil, kit.Event{Type: corev1.EventTypeWarning, Reason: rayv1.EventFailedToCreateRayCluster, Action: "Create",
			Message: fmt.Sprintf("Creating RayCluster %s failed: %v", c.Name, err)})
		a.fail(fmt.Errorf("creating RayCluster %s: %w", c.Name, err))
	}
}

// updateClusters writes the clusters changed in place.
func (a *acting) updateClusters() {
	r, rs := a.r, a.rs
	for _, u := range a.p.UpdateClusters {
		prev := u.Cluster.ResourceVersion
		obj := u.Cluster.DeepCopy()
		if err := r.client.Update(a.ctx, obj); err != nil {
			a.fail(fmt.Errorf("updating RayCluster %s: %w", obj.Name, err))
			continue
		}
		r.exp.Updated(rs.UID, prev, obj)
		r.events.Emit(rs, obj, kit.Event{Type: corev1.EventTypeNormal, Reason: rayv1.EventUpdatedRayCluster, Action: "Update",
			Message: fmt.Sprintf("Updated RayCluster %s in place: %s", obj.Name, strings.Join(u.What, ", "))})
	}
}

// labelPods sets the serving label on pods (a pod gone is done).
func (a *acting) labelPods() {
	for _, l := range a.p.PodLabels {
		prev := l.Pod.ResourceVersion
		obj := l.Pod.DeepCopy()
		orig := l.Pod.DeepCopy()
		if obj.Labels == nil {
			obj.Labels = map[string]string{}
		}
		obj.Labels[rayv1.RayClusterServingServiceLabelKey] = l.Value
		if err := a.r.client.Patch(a.ctx, obj, client.MergeFrom(orig)); err != nil {
			if !apierrors.IsNotFound(err) {
				a.fail(fmt.Errorf("labelling pod %s: %w", obj.Name, err))
			}
			continue
		}
		a.r.exp.Updated(a.rs.UID, prev, obj)
	}
}

// annotateClusters sets or clears the planned annotations of clusters.
func (a *acting) annotateClusters() {
	for _, an := range a.p.Annotate {
		if err := a.r.annotate(a.ctx, a.rs, an.Cluster, an.Set); err != nil && !apierrors.IsNotFound(err) {
			a.fail(fmt.Errorf("annotating RayCluster %s: %w", an.Cluster.Name, err))
		}
	}
}

// writeServices creates and updates the head and serve Services; it
// reports whether they are all as planned (a Service that exists but is
// not ours is not).
func (a *acting) writeServices() (ok bool) {
	r, rs := a.r, a.rs
	ok = true
	for _, s := range a.p.CreateServices {
		r.exp.ExpectCreate(rs.UID, s)
		err := r.client.Create(a.ctx, s)
		switch {
		case err == nil:
			r.exp.Created(rs.UID, s)
			r.events.Emit(rs, nil, kit.Event{Type: corev1.EventTypeNormal, Reason: rayv1.EventCreatedService, Action: "Create",
				Message: fmt.Sprintf("Created Service %s selecting RayCluster %s", s.Name, s.Spec.Selector[rayv1.RayClusterLabelKey])})
		case apierrors.IsAlreadyExists(err):
			r.exp.CreateFailed(rs.UID, s) // not ours: the cache shows the one that exists
			ok = false
		default:
			r.exp.CreateFailed(rs.UID, s)
			ok = false
			a.fail(fmt.Errorf("creating Service %s: %w", s.Name, err))
		}
	}
	for _, s := range a.p.UpdateServices {
		prev := s.ResourceVersion
		obj := s.DeepCopy()
		if err := r.client.Update(a.ctx, obj); err != nil {
			ok = false
			a.fail(fmt.Errorf("updating Service %s: %w", s.Name, err))
			continue
		}
		r.exp.Updated(rs.UID, prev, obj)
	}
	return ok
}

// deleteClusters deletes the planned clusters, with UID preconditions;
// never while the Services may still route to them (unless suspending):
// the next pass retries.
func (a *acting) deleteClusters(servicesOK bool) {
	r, rs := a.r, a.rs
	if !servicesOK && !rs.Spec.Suspend {
		return
	}
	for _, d := range a.p.DeleteClusters {
		opts := []client.DeleteOption{client.PropagationPolicy(metav1.DeletePropagationBackground)}
		if uid := d.Cluster.UID; uid != "" {
			opts = append(opts, client.Preconditions{UID: &uid})
		}
		r.exp.ExpectDelete(rs.UID, d.Cluster)
		switch err := r.client.Delete(a.ctx, d.Cluster, opts...); {
		case err == nil:
			r.events.Emit(rs, nil, kit.Event{Type: corev1.EventTypeNormal, Reason: rayv1.EventDeletedRayCluster, Action: "Delete",
				Message: fmt.Sprintf("Deleted RayCluster %s: %s", d.Cluster.Name, d.Reason)})
		case apierrors.IsNotFound(err), apierrors.IsConflict(err):
		default:
			r.exp.DeleteFailed(rs.UID, d.Cluster)
			a.fail(fmt.Errorf("deleting RayCluster %s: %w", d.Cluster.Name, err))
		}
	}
}

// deleteServices deletes the planned Services, with UID preconditions.
func (a *acting) deleteServices() {
	r, rs := a.r, a.rs
	for _, s := range a.p.DeleteServices {
		uid := s.UID
		r.exp.ExpectDelete(rs.UID, s)
		if err := r.client.Delete(a.ctx, s, client.Preconditions{UID: &uid}); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			r.exp.DeleteFailed(rs.UID, s)
			a.fail(fmt.Errorf("deleting Service %s: %w", s.Name, err))
		}
	}
}

// writeStatus writes the status (at once when urgent or a write failed),
// then returns the failures, if any, for the back-off, else the requeue.
func (a *acting) writeStatus() (ctrl.Result, error) {
	res := ctrl.Result{RequeueAfter: a.p.RequeueAfter}
	after, err := a.r.writeStatus(a.ctx, a.rs, a.p.Status, a.p.Urgent || len(a.errs) > 0, a.now)
	if err != nil && !apierrors.IsNotFound(err) {
		a.fail(fmt.Errorf("writing status: %w", err))
	}
	if after > 0 && (res.RequeueAfter == 0 || after < res.RequeueAfter) {
		res.RequeueAfter = after
	}
	if len(a.errs) > 0 {
		err := errors.Join(a.errs...)
		log.FromContext(a.ctx).Info("some RayService writes failed; retrying with back-off", "error", err.Error())
		return ctrl.Result{}, err
	}
	return res, nil
}

// submit sends the serve config to a cluster and, once the dashboard took
// it, records its hash on the cluster.
func (r *reconciler) submit(ctx context.Context, rs *rayv1.RayService, s submitStep, now time.Time) (accepted bool, _ error) {
	rc := s.Cluster
	defer r.forgetProbe(rc.UID) // look again at once
	dc, err := r.dash.ClientFor(ctx, rc)
	if err == nil {
		err = dc.DeployApplications(ctx, s.Config.JSON)
	}
	r.mu.Lock()
	last := r.subs[rc.UID]
	rec := &submission{Hash: s.Config.Hash, At: now}
	switch {
	case err == nil:
		rec.JSON, rec.Apps = s.Config.JSON, s.Config.Apps
	case errors.Is(err, dashboard.ErrUnavailable) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled):
		// Not a rejection: the dashboard went away; the next probe sees it.
		r.mu.Unlock()
		return false, nil
	default:
		rec.Err = err.Error()
		rec.Attempts = 1
		if last != nil && last.Hash == rec.Hash && last.Err != "" {
			rec.Attempts = last.Attempts + 1
		}
	}
	r.subs[rc.UID] = rec
	r.mu.Unlock()
	if err != nil {
		if s.TargetCapacity != nil {
			r.events.Emit(rs, rc, kit.Event{Type: corev1.EventTypeWarning, Reason: rayv1.EventFailedToUpdateTargetCapacity, Action: "Submit",
				Message: fmt.Sprintf("The Ray dashboard of RayCluster %s rejected target_capacity %d: %v", rc.Name, *s.TargetCapacity, err)})
		} else if rec.Attempts == 1 {
			r.events.Emit(rs, rc, kit.Event{Type: corev1.EventTypeWarning, Reason: rayv1.EventFailedToUpdateServeApplications, Action: "Submit",
				Message: fmt.Sprintf("The Ray dashboard of RayCluster %s rejected serveConfigV2: %v", rc.Name, err)})
		}
		return false, nil // reported in the status; retried with back-off
	}
	if s.TargetCapacity != nil {
		r.events.Emit(rs, rc, kit.Event{Type: corev1.EventTypeNormal, Reason: rayv1.EventUpdatedServeTargetCapacity, Action: "Submit",
			Message: fmt.Sprintf("Set the Serve target_capacity of RayCluster %s to %d%%", rc.Name, *s.TargetCapacity)})
	} else {
		r.events.Emit(rs, rc, kit.Event{Type: corev1.EventTypeNormal, Reason: rayv1.EventUpdatedServeApplications, Action: "Submit",
			Message: fmt.Sprintf("Submitted serveConfigV2 (%s) to RayCluster %s: %s", strings.Join(s.Config.Apps, ", "), rc.Name, s.Why)})
	}
	h := s.Config.Hash
	return true, r.annotate(ctx, rs, rc, map[string]*string{ServeConfigHashKey: &h})
}

// annotate merge-patches a cluster's annotations (nil values remove).
func (r *reconciler) annotate(ctx context.Context, rs *rayv1.RayService, rc *rayv1.RayCluster, set map[string]*string) error {
	if rc.UID == "" {
		return nil // not created yet
	}
	prev := rc.ResourceVersion
	orig := rc.DeepCopy()
	obj := rc.DeepCopy()
	if obj.Annotations == nil {
		obj.Annotations = map[string]string{}
	}
	for k, v := range set {
		if v == nil {
			delete(obj.Annotations, k)
		} else {
			obj.Annotations[k] = *v
		}
	}
	if err := r.client.Patch(ctx, obj, client.MergeFrom(orig)); err != nil {
		return err
	}
	r.exp.Updated(rs.UID, prev, obj)
	return nil
}

// targetCapacities makes the target_capacity steps of an incremental
// upgrade; a step the dashboard did not take is taken back out of the
// status (KubeRay v1.6.2 writes targetCapacity only after the dashboard
// took it, rayservice_controller.go:1486-1492).
func (a *acting) targetCapacities() {
	for _, c := range a.p.Incr.Capacity {
		ok, err := a.r.submit(a.ctx, a.rs, c.Step, a.now)
		a.fail(err)
		if ok {
			continue
		}
		st := &a.p.Status.ActiveServiceStatus
		if c.Pending {
			st = &a.p.Status.PendingServiceStatus
		}
		if st.RayClusterName == c.Step.Cluster.Name {
			st.TargetCapacity = c.Was
		}
	}
}

// writeGateway creates or updates the Gateway and HTTPRoute of an
// incremental upgrade (KubeRay v1.6.2 rayservice_controller.go:696-744,
// 920-965); it reports whether the route is as planned (the old cluster
// is not deleted while it may still route to it).
func (a *acting) writeGateway() (ok bool) {
	r, rs := a.r, a.rs
	ok = true
	write := func(obj client.Object, kind, created, updated, failedCreate, failedUpdate string) {
		if obj == nil {
			return
		}
		create := obj.GetResourceVersion() == ""
		var err error
		if create {
			err = r.client.Create(a.ctx, obj)
		} else {
			err = r.client.Update(a.ctx, obj)
		}
		switch {
		case err == nil && create:
			r.events.Emit(rs, nil, kit.Event{Type: corev1.EventTypeNormal, Reason: created, Action: "Create",
				Message: fmt.Sprintf("Created %s %s/%s", kind, obj.GetNamespace(), obj.GetName())})
		case err == nil:
			r.events.Emit(rs, nil, kit.Event{Type: corev1.EventTypeNormal, Reason: updated, Action: "Update",
				Message: fmt.Sprintf("Updated %s %s/%s", kind, obj.GetNamespace(), obj.GetName())})
		case create && apierrors.IsAlreadyExists(err), apierrors.IsConflict(err):
			ok = false // the next pass reads it
		default:
			ok = false
			reason := failedUpdate
			if create {
				reason = failedCreate
			}
			r.events.Emit(rs, nil, kit.Event{Type: corev1.EventTypeWarning, Reason: reason, Action: "Write",
				Message: fmt.Sprintf("Writing %s %s/%s failed: %v", kind, obj.GetNamespace(), obj.GetName(), err)})
			a.fail(fmt.Errorf("writing %s %s: %w", kind, obj.GetName(), err))
		}
	}
	if gw := a.p.Incr.Gateway; gw != nil {
		write(gw.DeepCopy(), "Gateway", rayv1.EventCreatedGateway, rayv1.EventUpdatedGateway, rayv1.EventFailedToCreateGateway, rayv1.EventFailedToUpdateGateway)
	}
	if rt := a.p.Incr.HTTPRoute; rt != nil {
		before := ok
		write(rt.DeepCopy(), "HTTPRoute", rayv1.EventCreatedHTTPRoute, rayv1.EventUpdatedHTTPRoute, rayv1.EventFailedToCreateHTTPRoute, rayv1.EventFailedToUpdateHTTPRoute)
		if before && !ok {
			// The traffic did not move: the status keeps saying where it is.
			for _, st := range []*rayv1.RayServiceStatus{&a.p.Status.ActiveServiceStatus, &a.p.Status.PendingServiceStatus} {
				old := statusFieldsOf(rs.Status, &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Name: st.RayClusterName}})
				st.TrafficRoutedPercent, st.LastTrafficMigratedTime = old.TrafficRoutedPercent, old.LastTrafficMigratedTime
			}
		}
	}
	return ok
}
