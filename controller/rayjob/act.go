package rayjob

// act: carries out a Plan, in the order it gives; every write idempotent
// (UID preconditions, optimistic locks, AlreadyExists and NotFound taken as
// done). No decisions: what a stop's answer leads to is StopCall.Outcome.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/raydar/raydar/controller/kit"
	"github.com/raydar/raydar/rayapi/dashboard"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// act carries out the plan in the Plan's order, one step each: the
// RayJob's own writes (finalizer, stop record, status) and the plan's
// Events, the children created, updated and deleted, the submission, the
// stop and the finalizer's release, the RayJob's own deletion. Every step
// is idempotent (an existing child, a submission ID in use, a child gone
// already are done); a failed write of the RayJob ends the act, a failed
// child write is said once and returned with the rest (the work queue's
// back-off retries).
func (r *reconciler) act(ctx context.Context, o *Observed, p *Plan) (ctrl.Result, error) {
	a := &acting{r: r, ctx: ctx, o: o, p: p, rj: o.Job.DeepCopy(), res: ctrl.Result{RequeueAfter: p.RequeueAfter}}
	if stop, err := a.writeJob(); stop {
		return a.res, err
	}
	a.createChildren()
	a.updateHeadService()
	a.deleteChildren()
	a.suspendWorkers()
	a.submit()
	if err := a.stopAndRelease(); err != nil {
		return a.res, err
	}
	a.deleteSelf()
	if len(a.errs) > 0 {
		// The work queue's back-off retries.
		return ctrl.Result{}, errors.Join(a.errs...)
	}
	return a.res, nil
}

// acting is one act: the plan, the RayJob as written so far, the result
// and the child writes that failed.
type acting struct {
	r    *reconciler
	ctx  context.Context
	o    *Observed
	p    *Plan
	rj   *rayv1.RayJob
	res  ctrl.Result
	errs []error
}

// fail records a failed child write and says it once (per key, reason and
// message) in a Warning. A 409 is no failure: the child changed since it
// was read (its status, most often, or a successor took its name), and the
// next pass, soon, reads it again and decides again.
func (a *acting) fail(key, reason, action, msg string, err error) {
	if apierrors.IsConflict(err) {
		a.res.RequeueAfter = soon
		return
	}
	a.errs = append(a.errs, fmt.Errorf("%s: %w", msg, err))
	if a.r.events.Once(a.rj.UID, key, reason+msg) {
		a.r.event(a.rj, kit.Event{Type: corev1.EventTypeWarning, Reason: reason, Action: action, Message: msg + ": " + err.Error()})
	}
}

// writeJob adds the finalizer, records a confirmed stop and writes the
// status, then emits the plan's Events. stop: the act ends here (a failed
// write, or the RayJob is gone).
func (a *acting) writeJob() (stop bool, err error) {
	r, rj := a.r, a.rj
	if a.p.AddFinalizer {
		if err := kit.UpdateFinalizers(a.ctx, r.client, r.exp, rj, func(f []string) []string { return append(f, rayv1.RayJobStopJobFinalizer) }, nil); err != nil {
			return true, err
		}
	}
	if v := a.p.StopRecord; v != "" {
		if err := r.patchStopRecord(a.ctx, rj, v); err != nil {
			return true, a.goneIsDone(err)
		}
	}
	if a.p.WriteStatus {
		if err := r.writeStatus(a.ctx, rj, a.p.Status); err != nil {
			return true, a.goneIsDone(err)
		}
	}
	for _, e := range a.p.Events {
		r.event(rj, e)
	}
	return false, nil
}

// goneIsDone: a RayJob that is gone ends the act without an error or a
// requeue.
func (a *acting) goneIsDone(err error) error {
	if apierrors.IsNotFound(err) {
		a.res = ctrl.Result{}
		return nil
	}
	return err
}

// createChildren creates the cluster, the submitter Job and the head
// Service the plan names; one that exists already was made by an earlier
// pass.
func (a *acting) createChildren() {
	rj := a.rj
	create := func(obj client.Object, done kit.Event, key, reason, msg string) {
		switch err := a.r.client.Create(a.ctx, obj); {
		case err == nil:
			a.r.event(rj, done)
		case apierrors.IsAlreadyExists(err): // an earlier pass made it
		default:
			a.fail(key, reason, "Create", msg, err)
		}
	}
	if !a.writeGroup() {
		return
	}
	if c := a.p.CreateCluster; c != nil {
		create(c, kit.Event{Type: corev1.EventTypeNormal, Reason: rayv1.EventCreatedRayCluster, Action: "Create",
			Message: fmt.Sprintf("Created RayCluster %s for the Ray job", c.Name)},
			"create-cluster", rayv1.EventFailedToCreateRayCluster, "Failed to create RayCluster "+c.Name)
	}
	if j := a.p.CreateSubmitter; j != nil {
		create(j, kit.Event{Type: corev1.EventTypeNormal, Reason: rayv1.EventCreatedRayJobSubmitter, Action: "Create",
			Message: fmt.Sprintf("Created submitter Job %s (submits Ray job %s to %s)", j.Name, rj.Status.JobId, rj.Status.DashboardURL)},
			"create-submitter", rayv1.EventFailedToCreateRayJobSubmitter, "Failed to create the submitter Job "+j.Name)
	}
	if s := a.p.CreateHeadService; s != nil {
		create(s, kit.Event{Type: corev1.EventTypeNormal, Reason: rayv1.EventCreatedService, Action: "Create",
			Message: fmt.Sprintf("Created the service %s/%s", s.Namespace, s.Name)},
			"create-service", rayv1.EventFailedToCreateService, fmt.Sprintf("Failed to create the service %s/%s", s.Namespace, s.Name))
	}
}

// updateHeadService writes the head Service the plan changed; a Service
// gone (or changed: fail) is seen by the next pass, soon.
func (a *acting) updateHeadService() {
	s := a.p.UpdateHeadService
	if s == nil {
		return
	}
	switch err := a.r.client.Update(a.ctx, s); {
	case err == nil:
		a.r.event(a.rj, kit.Event{Type: corev1.EventTypeNormal, Reason: rayv1.EventUpdatedService, Action: "Update",
			Message: fmt.Sprintf("Updated the service %s/%s", s.Namespace, s.Name)})
	case apierrors.IsNotFound(err):
		a.res.RequeueAfter = soon
	default:
		a.fail("update-service", rayv1.EventFailedToUpdateService, "Update", fmt.Sprintf("Failed to update the service %s/%s", s.Namespace, s.Name), err)
	}
}

// deleteChildren deletes the cluster and the submitter Job the plan
// names (deleteChild: never a same-named successor).
func (a *acting) deleteChildren() {
	remove := func(obj client.Object, d *deletion, done kit.Event, key, reason, msg string) {
		obj.SetNamespace(a.rj.Namespace)
		obj.SetName(d.Name)
		if err := a.r.deleteChild(a.ctx, obj, d); err != nil {
			a.fail(key, reason, "Delete", msg, err)
		} else {
			a.r.event(a.rj, done)
		}
	}
	if d := a.p.DeleteCluster; d != nil {
		remove(&rayv1.RayCluster{}, d, kit.Event{Type: corev1.EventTypeNormal, Reason: rayv1.EventDeletedRayCluster, Action: "Delete",
			Message: fmt.Sprintf("Deleted RayCluster %s: %s", d.Name, d.Reason)},
			"delete-cluster", rayv1.EventFailedToDeleteRayCluster, "Failed to delete RayCluster "+d.Name)
	}
	if d := a.p.DeleteSubmitter; d != nil {
		remove(&batchv1.Job{}, d, kit.Event{Type: corev1.EventTypeNormal, Reason: rayv1.EventDeletedRayJobSubmitter, Action: "Delete",
			Message: fmt.Sprintf("Deleted submitter Job %s: %s", d.Name, d.Reason)},
			"delete-submitter", rayv1.EventFailedToDeleteRayJobSubmitter, "Failed to delete the submitter Job "+d.Name)
	}
}

// suspendWorkers suspends every worker group of the cluster the plan
// names (deletion rule DeleteWorkers).
func (a *acting) suspendWorkers() {
	name := a.p.SuspendWorkers
	if name == "" {
		return
	}
	if err := a.r.suspendWorkers(a.ctx, a.rj.Namespace, name); err != nil {
		a.fail("suspend-workers", rayv1.EventFailedToUpdateRayCluster, "Update", "Failed to suspend the worker groups of RayCluster "+name, err)
		return
	}
	a.r.event(a.rj, kit.Event{Type: corev1.EventTypeNormal, Reason: rayv1.EventUpdatedRayCluster, Action: "Update",
		Message: fmt.Sprintf("Suspended every worker group of RayCluster %s (its worker pods go): deletion rule DeleteWorkers", name)})
}

// submit submits the Ray job to the cluster's dashboard (HTTPMode). A
// submission ID in use was submitted by an earlier pass; a failure is no
// error for the work queue: the next poll tries again.
func (a *acting) submit() {
	s, rj := a.p.Submit, a.rj
	if s == nil || a.o.Cluster == nil {
		return
	}
	dc, err := a.r.dash.ClientFor(a.ctx, a.o.Cluster)
	if err == nil {
		_, err = dc.SubmitJob(a.ctx, s.Request)
	}
	switch {
	case err == nil:
		a.r.events.Unsay(rj.UID, "submit")
		a.r.event(rj, kit.Event{Type: corev1.EventTypeNormal, Reason: ReasonSubmitted, Action: "Submit",
			Message: fmt.Sprintf("Submitted Ray job %s to the dashboard of RayCluster %s", s.Request.SubmissionID, s.ClusterName)})
	case errors.Is(err, dashboard.ErrSubmissionIDInUse):
	default:
		log.FromContext(a.ctx).Info("submission failed; retrying", "error", err.Error())
		if a.r.events.Once(rj.UID, "submit", "failed") {
			a.r.event(rj, kit.Event{Type: corev1.EventTypeWarning, Reason: reasonSubmitFailed, Action: "Submit",
				Message: fmt.Sprintf("Failed to submit Ray job %s (retrying): %v", s.Request.SubmissionID, err)})
		}
	}
}

// stopAndRelease sends the planned stop, then releases the finalizer when
// the plan or the stop's outcome says so.
func (a *acting) stopAndRelease() error {
	rj := a.rj
	release := a.p.RemoveFinalizer
	if a.p.Stop != nil {
		out, err := a.r.sendStop(a.ctx, rj, a.o, a.p.Stop)
		if err != nil {
			return err
		}
		release = release || out.ReleaseFinalizer && slices.Contains(rj.Finalizers, rayv1.RayJobStopJobFinalizer)
	}
	if !release {
		return nil
	}
	err := kit.UpdateFinalizers(a.ctx, a.r.client, a.r.exp, rj, func(f []string) []string {
		out := f[:0:0]
		for _, x := range f {
			if x != rayv1.RayJobStopJobFinalizer {
				out = append(out, x)
			}
		}
		return out
	}, nil)
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return nil
}

// deleteSelf deletes the RayJob (with its UID as precondition) when the
// plan says why: DeleteRayJobAfterJobFinishes and the deletion rules.
func (a *acting) deleteSelf() {
	why, rj := a.p.DeleteSelf, a.rj
	if why == "" {
		return
	}
	uid := rj.UID
	err := a.r.client.Delete(a.ctx, rj, client.Preconditions{UID: &uid}, client.PropagationPolicy(metav1.DeletePropagationBackground))
	switch {
	case err == nil:
		a.r.event(rj, kit.Event{Type: corev1.EventTypeNormal, Reason: reasonDeletedOnFinish, Action: "Delete",
			Message: "Deleting this RayJob (and so its cluster and submitter): " + why})
	case apierrors.IsNotFound(err):
	default:
		a.fail("delete-self", reasonDeleteFailed, "Delete", "Failed to delete this RayJob", err)
	}
}

// deleteChild deletes a child with a UID precondition (never a same-named
// successor), its dependents in the background.
func (r *reconciler) deleteChild(ctx context.Context, obj client.Object, d *deletion) error {
	opts := []client.DeleteOption{client.PropagationPolicy(metav1.DeletePropagationBackground)}
	if d.UID != "" {
		uid := types.UID(d.UID)
		opts = append(opts, client.Preconditions{UID: &uid})
	}
	err := r.client.Delete(ctx, obj, opts...)
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil // gone already, or a successor we must not touch
	}
	return err
}

// suspendWorkers sets suspend on every worker group of a cluster.
func (r *reconciler) suspendWorkers(ctx context.Context, ns, name string) error {
	rc := &rayv1.RayCluster{}
	if err := r.client.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, rc); err != nil {
		return client.IgnoreNotFound(err)
	}
	orig := rc.DeepCopy()
	t := true
	for i := range rc.Spec.WorkerGroupSpecs {
		rc.Spec.WorkerGroupSpecs[i].Suspend = &t
	}
	return r.client.Patch(ctx, rc, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}))
}

// sendStop carries out a StopCall: it sends the stop and does what
// s.Outcome says of the answer. A confirmation is remembered first (this
// process never sends it again), then recorded on the RayJob before
// anything else happens; an unconfirmed attempt is counted for the
// back-off. It returns the Outcome.
func (r *reconciler) sendStop(ctx context.Context, rj *rayv1.RayJob, o *Observed, s *StopCall) (StopOutcome, error) {
	var stopped bool
	dc, err := r.dash.ClientFor(ctx, o.Cluster)
	if err == nil {
		stopped, err = dc.StopJob(ctx, s.JobID)
	}
	out := s.Outcome(stopped, err)
	if !out.Confirmed {
		r.countStopFailure(rj.UID, s, r.now(), err)
		log.FromContext(ctx).Info("stop not confirmed; retrying", "job", s.JobID, "error", err.Error())
		if out.Event != nil {
			r.event(rj, *out.Event)
		}
		if out.Record != (StopRecord{}) {
			if err := r.patchStopRecord(ctx, rj, encodeStopRecord(out.Record, out.Detail)); err != nil && !apierrors.IsConflict(err) {
				return out, err
			}
		}
		return out, nil
	}
	r.rememberStop(rj.UID, out.Record)
	if err := r.recordStop(ctx, rj, out.Record, out.Detail, o.Now); err != nil {
		return out, err
	}
	if out.Event != nil {
		r.event(rj, *out.Event)
	}
	if r.afterStopRecorded != nil {
		if err := r.afterStopRecorded(rj.DeepCopy()); err != nil {
			return out, err
		}
	}
	return out, nil
}

// recordStop writes a confirmed stop into the RayJob's annotation (with a
// resourceVersion precondition), retrying conflicts from fresh reads: the
// record must land. The condition that shows it follows in the status,
// best effort (a CRD without status.conditions drops it).
func (r *reconciler) recordStop(ctx context.Context, rj *rayv1.RayJob, rec StopRecord, detail string, now time.Time) error {
	v := encodeStopRecord(rec, detail)
	for attempt := 0; ; attempt++ {
		err := r.patchStopRecord(ctx, rj, v)
		if err == nil {
			break
		}
		if !apierrors.IsConflict(err) || attempt >= 4 {
			return err
		}
		live := &rayv1.RayJob{}
		if err := r.api.Get(ctx, client.ObjectKeyFromObject(rj), live); err != nil {
			return err
		}
		*rj = *live
	}
	st := rj.Status.DeepCopy()
	showStopRecord(st, rec, detail, now)
	if err := r.writeStatus(ctx, rj, *st); err != nil && !apierrors.IsConflict(err) {
		log.FromContext(ctx).Info("the stop is recorded; showing it in the status failed", "error", err.Error())
	}
	return nil
}

// patchStopRecord writes the stop record annotation, with an optimistic
// lock: a stale view fails with a conflict instead of overwriting a record
// another process wrote.
func (r *reconciler) patchStopRecord(ctx context.Context, rj *rayv1.RayJob, value string) error {
	if rj.Annotations[rayv1.JobStopRecordAnnotationKey] == value {
		return nil
	}
	prev := rj.ResourceVersion
	orig := rj.DeepCopy()
	rj.Annotations = maps.Clone(rj.Annotations)
	if rj.Annotations == nil {
		rj.Annotations = map[string]string{}
	}
	rj.Annotations[rayv1.JobStopRecordAnnotationKey] = value
	if err := r.client.Patch(ctx, rj, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
		rj.Annotations = orig.Annotations
		return err
	}
	r.exp.Updated(rj.UID, prev, rj)
	return nil
}
