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

// act applies the plan. Every write is idempotent: cluster names are chosen
// before the request, deletions carry a UID precondition, submissions of an
// unchanged config change nothing in Ray.
func (r *reconciler) act(ctx context.Context, obs *observed, p *plan) (ctrl.Result, error) {
	rs := obs.Service
	logger := log.FromContext(ctx)
	now := obs.Now
	var errs []error
	fail := func(err error) { errs = append(errs, err) }

	if p.RemoveFinalizer {
		// A merge patch (RBAC grants patch on rayservices, not update)
		// with the resourceVersion read: a 409 goes back to the kit's Loop.
		orig := rs.DeepCopy()
		rs.Finalizers = slices.DeleteFunc(slices.Clone(rs.Finalizers), func(f string) bool { return f == rayv1.RayServiceFinalizer })
		if err := r.client.Patch(ctx, rs, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil && !apierrors.IsNotFound(err) {
			return ctrl.Result{}, err
		}
	}
	if p.Skip {
		return ctrl.Result{}, nil
	}

	for _, e := range p.Events {
		r.events.Emit(rs, nil, e)
	}

	if c := p.CreateCluster; c != nil {
		r.exp.ExpectCreate(rs.UID, c)
		if err := r.client.Create(ctx, c); err != nil && !apierrors.IsAlreadyExists(err) {
			r.exp.CreateFailed(rs.UID, c)
			r.events.Emit(rs, nil, kit.Event{Type: corev1.EventTypeWarning, Reason: reasonClusterCreateFailed, Action: "Create",
				Message: fmt.Sprintf("Creating RayCluster %s failed: %v", c.Name, err)})
			fail(fmt.Errorf("creating RayCluster %s: %w", c.Name, err))
		} else if err == nil {
			r.exp.Created(rs.UID, c)
		}
	}

	for _, u := range p.UpdateClusters {
		prev := u.Cluster.ResourceVersion
		obj := u.Cluster.DeepCopy()
		if err := r.client.Update(ctx, obj); err != nil {
			fail(fmt.Errorf("updating RayCluster %s: %w", obj.Name, err))
			continue
		}
		r.exp.Updated(rs.UID, prev, obj)
		r.events.Emit(rs, obj, kit.Event{Type: corev1.EventTypeNormal, Reason: reasonClusterUpdated, Action: "Update",
			Message: fmt.Sprintf("Updated RayCluster %s in place: %s", obj.Name, strings.Join(u.What, ", "))})
	}

	// decide requeues within DeployPoll after a submission.
	for _, s := range p.Submit {
		if err := r.submit(ctx, rs, s, now); err != nil {
			fail(err)
		}
	}

	for _, l := range p.PodLabels {
		prev := l.Pod.ResourceVersion
		obj := l.Pod.DeepCopy()
		orig := l.Pod.DeepCopy()
		if obj.Labels == nil {
			obj.Labels = map[string]string{}
		}
		obj.Labels[rayv1.RayClusterServingServiceLabelKey] = l.Value
		if err := r.client.Patch(ctx, obj, client.MergeFrom(orig)); err != nil {
			if !apierrors.IsNotFound(err) {
				fail(fmt.Errorf("labelling pod %s: %w", obj.Name, err))
			}
			continue
		}
		r.exp.Updated(rs.UID, prev, obj)
	}

	for _, a := range p.Annotate {
		if err := r.annotate(ctx, rs, a.Cluster, a.Set); err != nil && !apierrors.IsNotFound(err) {
			fail(fmt.Errorf("annotating RayCluster %s: %w", a.Cluster.Name, err))
		}
	}

	servicesOK := true
	for _, s := range p.CreateServices {
		r.exp.ExpectCreate(rs.UID, s)
		err := r.client.Create(ctx, s)
		switch {
		case err == nil:
			r.exp.Created(rs.UID, s)
			r.events.Emit(rs, nil, kit.Event{Type: corev1.EventTypeNormal, Reason: reasonServiceCreated, Action: "Create",
				Message: fmt.Sprintf("Created Service %s selecting RayCluster %s", s.Name, s.Spec.Selector[rayv1.RayClusterLabelKey])})
		case apierrors.IsAlreadyExists(err):
			r.exp.CreateFailed(rs.UID, s) // not ours: the cache shows the one that exists
			servicesOK = false
		default:
			r.exp.CreateFailed(rs.UID, s)
			servicesOK = false
			fail(fmt.Errorf("creating Service %s: %w", s.Name, err))
		}
	}
	for _, s := range p.UpdateServices {
		prev := s.ResourceVersion
		obj := s.DeepCopy()
		if err := r.client.Update(ctx, obj); err != nil {
			servicesOK = false
			fail(fmt.Errorf("updating Service %s: %w", s.Name, err))
			continue
		}
		r.exp.Updated(rs.UID, prev, obj)
	}

	for _, d := range p.DeleteClusters {
		if !servicesOK && !rs.Spec.Suspend {
			// Never delete a cluster while the Services may still route
			// to it; the next pass retries.
			break
		}
		uid := d.Cluster.UID
		bg := metav1.DeletePropagationBackground
		opts := []client.DeleteOption{client.PropagationPolicy(bg)}
		if uid != "" {
			opts = append(opts, client.Preconditions{UID: &uid})
		}
		r.exp.ExpectDelete(rs.UID, d.Cluster)
		err := r.client.Delete(ctx, d.Cluster, opts...)
		switch {
		case err == nil:
			r.events.Emit(rs, nil, kit.Event{Type: corev1.EventTypeNormal, Reason: reasonClusterDeleted, Action: "Delete",
				Message: fmt.Sprintf("Deleted RayCluster %s: %s", d.Cluster.Name, d.Reason)})
		case apierrors.IsNotFound(err), apierrors.IsConflict(err):
		default:
			r.exp.DeleteFailed(rs.UID, d.Cluster)
			fail(fmt.Errorf("deleting RayCluster %s: %w", d.Cluster.Name, err))
		}
	}
	for _, s := range p.DeleteServices {
		uid := s.UID
		r.exp.ExpectDelete(rs.UID, s)
		if err := r.client.Delete(ctx, s, client.Preconditions{UID: &uid}); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			r.exp.DeleteFailed(rs.UID, s)
			fail(fmt.Errorf("deleting Service %s: %w", s.Name, err))
		}
	}

	res := ctrl.Result{RequeueAfter: p.RequeueAfter}
	after, err := r.writeStatus(ctx, rs, p.Status, p.Urgent || len(errs) > 0, now)
	if err != nil && !apierrors.IsNotFound(err) {
		fail(fmt.Errorf("writing status: %w", err))
	}
	if after > 0 && (res.RequeueAfter == 0 || after < res.RequeueAfter) {
		res.RequeueAfter = after
	}
	if len(errs) > 0 {
		err := errors.Join(errs...)
		logger.Info("some RayService writes failed; retrying with back-off", "error", err.Error())
		return ctrl.Result{}, err
	}
	return res, nil
}

// submit sends the serve config to a cluster and, once the dashboard took
// it, records its hash on the cluster.
func (r *reconciler) submit(ctx context.Context, rs *rayv1.RayService, s submitStep, now time.Time) error {
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
	case errors.Is(err, dashboard.ErrUnavailable) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled):
		// Not a rejection: the dashboard went away; the next probe sees it.
		r.mu.Unlock()
		return nil
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
		if rec.Attempts == 1 {
			r.events.Emit(rs, rc, kit.Event{Type: corev1.EventTypeWarning, Reason: reasonServeRejected, Action: "Submit",
				Message: fmt.Sprintf("The Ray dashboard of RayCluster %s rejected serveConfigV2: %v", rc.Name, err)})
		}
		return nil // reported in the status; retried with back-off
	}
	r.events.Emit(rs, rc, kit.Event{Type: corev1.EventTypeNormal, Reason: reasonServeSubmitted, Action: "Submit",
		Message: fmt.Sprintf("Submitted serveConfigV2 (%s) to RayCluster %s: %s", strings.Join(s.Config.Apps, ", "), rc.Name, s.Why)})
	h := s.Config.Hash
	return r.annotate(ctx, rs, rc, map[string]*string{ServeConfigHashKey: &h})
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
