package raycronjob

// The RayCronJob reconciler's registration (Registration, for kit.Setup:
// watches, Options) and its pass: observe, Decide, act.

import (
	"context"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crevent "sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/raydar/raydar/controller/kit"
	"github.com/raydar/raydar/rayapi/kinds"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// The RayCronJob reconciler's permissions (on top of the other kinds'; the
// RayJobs it creates are reconciled by the RayJob reconciler). It writes
// a RayCronJob's status only, never the object: no finalizer, its RayJobs
// go with it through their owner references.
//
// +kubebuilder:rbac:groups=ray.io,resources=raycronjobs,verbs=get;list;watch
// +kubebuilder:rbac:groups=ray.io,resources=raycronjobs/status,verbs=update;patch
// +kubebuilder:rbac:groups=ray.io,resources=rayjobs,verbs=get;list;watch;create

// DefaultConcurrency is the number of RayCronJobs reconciled at once.
const DefaultConcurrency = 2

// Options are the RayCronJob reconciler's own settings; the gate comes in
// kit.Shared. The zero value is usable.
type Options struct {
	// Local is the time zone of a RayCronJob without spec.timeZone
	// (KubeRay: the operator's); nil is time.Local.
	Local *time.Location
	// Concurrency is the number of RayCronJobs reconciled at once.
	// Default DefaultConcurrency.
	Concurrency int
	// Now replaces time.Now (tests).
	Now func() time.Time
}

// reconciler reconciles RayCronJobs.
type reconciler struct {
	client client.Client // reads from the shared cache, writes to the API server
	api    client.Reader // live reads, after a write whose outcome is unknown
	local  *time.Location
	now    func() time.Time

	// The kit: the Reconcile prologue (get, forget, read-your-writes, the
	// other-operator gate, 409s), this process's writes (the RayJobs it
	// created, its status writes), the status writer, say-once Events.
	loop   *kit.Loop[*rayv1.RayCronJob]
	exp    *kit.Expectations
	status *kit.StatusWriter
	events *kit.Events
}

// Registration is the RayCronJob reconciler's registration for kit.Setup
// (normally on Operator.Manager(), so that it shares the cache and the
// leader election). It watches RayCronJobs (spec, labels, annotations) and
// the RayJobs they own (created and deleted: kit.ChildHandler, which also
// tells the expectations what the cache shows). An API server that does
// not serve RayCronJobs (KubeRay's CRDs before v1.7) gets no RayCronJob
// reconciler, and the others run as before; a RayCronJob CRD installed
// later is reconciled from the operator's next start.
func Registration(opts Options) *kit.Kind[*rayv1.RayCronJob] {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Local == nil {
		opts.Local = time.Local
	}
	// Decide reads only which RayJobs exist: their updates are not watched.
	createdOrDeleted := predicate.Funcs{UpdateFunc: func(crevent.UpdateEvent) bool { return false }}
	return &kit.Kind[*rayv1.RayCronJob]{
		Desc:      kinds.RayCronJob,
		ManagedBy: gateManagedBy,
		Predicates: []predicate.Predicate{predicate.Or[client.Object](
			predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}, predicate.LabelChangedPredicate{})},
		Owns:        []kit.Owned{{Object: &rayv1.RayJob{}, Predicates: []predicate.Predicate{createdOrDeleted}}},
		Concurrency: kit.OrDefault(opts.Concurrency, DefaultConcurrency),
		Now:         opts.Now,
		Build: func(p *kit.Parts[*rayv1.RayCronJob]) (kit.Reconciler[*rayv1.RayCronJob], error) {
			return &reconciler{client: p.Client, api: p.API, local: opts.Local, now: opts.Now,
				loop: p.Loop, exp: p.Exp, status: p.Status, events: p.Events}, nil
		},
	}
}

// Pass is one observe → Decide → act (kit.Reconciler), after kit.Loop's
// prologue.
func (r *reconciler) Pass(ctx context.Context, cj *rayv1.RayCronJob) (ctrl.Result, error) {
	in, err := r.observe(ctx, cj)
	if err != nil {
		return ctrl.Result{}, err
	}
	return r.act(ctx, cj, Decide(in))
}

// gateManagedBy is what the other-operator gate reads as a RayCronJob's
// spec.managedBy. KubeRay's RayCronJob has none, and KubeRay v1.7's
// RayCronJob controller (behind its RayCronJob feature gate) schedules
// every RayCronJob, so a RayCronJob is gated as an object whose managedBy
// is unset: raydar schedules it unless a KubeRay operator runs. It opts in
// to raydar the way the RayJobs it creates do, through its jobTemplate:
// spec.jobTemplate.managedBy raydar.io/raydar, or kueue.x-k8s.io/multikueue
// with the annotation raydar.io/managed-by-raydar: "true" on the
// RayCronJob. Any other jobTemplate.managedBy names who runs the RayJobs,
// not who creates them, and counts as unset. Should both operators
// schedule one RayCronJob, a tick is still made once: both name its RayJob
// rayv1.CronJobTickName, and the second create is AlreadyExists.
func gateManagedBy(cj *rayv1.RayCronJob) *string {
	mb := cj.Spec.JobTemplate.ManagedBy
	switch {
	case rayv1.IsManagedBy(mb, rayv1.ManagedByRaydar):
		return mb
	case rayv1.IsManagedBy(mb, rayv1.MultiKueueController) && cj.Annotations[rayv1.ManagedByRaydarAnnotationKey] == "true":
		return mb
	}
	return nil
}
