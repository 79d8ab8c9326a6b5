package raycronjob

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// act carries out the Plan, in order: create the tick's RayJob, emit the
// Events, write the status, look again at the next tick. Every write is
// idempotent: the RayJob's name is the tick's (rayv1.CronJobTickName), so
// a create repeated by a pass, a restarted process or another operator is
// AlreadyExists, which counts as done; the status is written only after
// the tick's RayJob exists, so a pass cut short (killed, failed) loses no
// tick: the next one finds the RayJob, or creates it, and then writes.
func (r *reconciler) act(ctx context.Context, cj *rayv1.RayCronJob, p Plan) (ctrl.Result, error) {
	created, err := r.create(ctx, cj, p.Create)
	if err != nil {
		return ctrl.Result{}, err
	}
	r.emit(cj, p, created)
	if err := r.writeStatus(ctx, cj, p.Status); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: p.RequeueAfter}, nil
}

// create creates the tick's RayJob (nil: none), recorded in the
// expectations before the request leaves, so a pass that follows before
// the cache shows it does not create it again. It reports whether this
// call created it (false: nothing to create, or it already existed). A
// failed create is forgotten and the next pass reads the RayJobs live: if
// it happened after all, the second create is AlreadyExists.
func (r *reconciler) create(ctx context.Context, cj *rayv1.RayCronJob, job *rayv1.RayJob) (*rayv1.RayJob, error) {
	if job == nil {
		return nil, nil
	}
	r.exp.ExpectCreate(cj.UID, job)
	err := r.client.Create(ctx, job)
	switch {
	case err == nil:
		r.exp.Created(cj.UID, job)
		log.FromContext(ctx).Info("created the RayJob of a tick", "rayJob", job.Name)
		return job, nil
	case apierrors.IsAlreadyExists(err):
		log.FromContext(ctx).V(1).Info("the RayJob of the tick exists", "rayJob", job.Name)
		return nil, nil
	}
	r.exp.CreateFailed(cj.UID, job)
	r.exp.MarkUncertain(cj.UID)
	return nil, fmt.Errorf("creating RayJob %s: %w", job.Name, err)
}

// emit emits the Plan's Events: those of a state (Event.Key) once while it
// lasts, those of the create only when this pass created the RayJob.
func (r *reconciler) emit(cj *rayv1.RayCronJob, p Plan, created *rayv1.RayJob) {
	for _, e := range p.Events {
		switch {
		case e.Key != "":
			r.events.EmitOnce(cj, e.Key, e.Event)
		case created != nil:
			r.events.Emit(cj, created, e.Event)
		}
	}
	r.unsayEnded(cj.UID, p)
}

// unsayEnded forgets the states the Plan no longer says (resumed, fixed),
// so that they are said again when they come back.
func (r *reconciler) unsayEnded(uid types.UID, p Plan) {
	for _, k := range StateKeys {
		said := false
		for _, e := range p.Events {
			said = said || e.Key == k
		}
		if !said {
			r.events.Unsay(uid, k)
		}
	}
}
