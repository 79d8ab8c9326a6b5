package raycluster

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/raydar/raydar/controller/kit"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// The reconciler's permissions; `make generate` turns these markers into
// config/rbac/role.yaml. pods patch, pods/resize and rayclusters patch are
// needed only because the autoscaler's Role grants them and Kubernetes lets
// nobody grant what they do not hold.
//
// +kubebuilder:rbac:groups=ray.io,resources=rayclusters,verbs=get;list;watch;patch;update
// +kubebuilder:rbac:groups=ray.io,resources=rayclusters/status,verbs=update
// +kubebuilder:rbac:groups=ray.io,resources=rayclusters/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;create;delete;deletecollection;patch
// +kubebuilder:rbac:groups="",resources=pods/resize,verbs=patch
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch;create
// +kubebuilder:rbac:groups="",resources=serviceaccounts,verbs=get;create
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;create
// +kubebuilder:rbac:groups=networking.k8s.io,resources=ingresses,verbs=get;create;update
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=roles;rolebindings,verbs=get;create
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;create
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;create;update,namespace=raydar-system

// ownerUIDField indexes cached pods by their controller's UID.
const ownerUIDField = "raydar.metadata.controllerUID"

// writeConcurrency bounds the parallel writes of one reconcile.
const writeConcurrency = 16

// Options configure the RayCluster reconciler (package controller fills
// them from its one Options).
type Options struct {
	// Gate is the other-operator gate shared by the three kinds.
	Gate *kit.Gate
	// Build configures the children built (cluster domain, probes).
	Build BuildConfig
	// StatusCoalesceWindow holds status changes that are not urgent for
	// up to this long; 0 or less writes every change at once.
	StatusCoalesceWindow time.Duration
	// Concurrency is the number of RayClusters reconciled at once.
	Concurrency int
	// Recorder emits the Events (default: the manager's, for name).
	Recorder recorder.EventRecorder
}

// Reconciler reconciles RayClusters: the kit's Reconcile prologue, then
// observe → decide → act.
type Reconciler struct {
	client    client.Client // reads from the shared cache, writes to the API server
	api       client.Reader // live reads, when the cache cannot be trusted
	events    *kit.Events
	exp       *kit.Expectations
	status    *kit.StatusWriter
	loop      *kit.Loop[*rayv1.RayCluster]
	cfg       BuildConfig
	coalesce  time.Duration
	now       func() time.Time
	newSuffix func() string

	// exists remembers the children read live once per cluster per
	// process (observe.go).
	exists existsMemo
}

// newReconciler builds the reconciler; Setup wires it into a manager.
func newReconciler(c client.Client, api client.Reader, rec recorder.EventRecorder, g *kit.Gate, cfg BuildConfig, coalesce time.Duration) *Reconciler {
	r := &Reconciler{
		client: c, api: api, events: kit.NewEvents(rec), cfg: cfg, coalesce: coalesce,
		now: time.Now, newSuffix: kit.RandomSuffix,
		exists: existsMemo{m: map[types.UID]map[string]bool{}},
	}
	r.exp = kit.NewExpectations(kit.DefaultExpectationTTL, func() time.Time { return r.now() })
	r.status = kit.NewStatusWriter(c, r.exp)
	r.loop = &kit.Loop[*rayv1.RayCluster]{
		Cache: c, API: api, New: func() *rayv1.RayCluster { return &rayv1.RayCluster{} },
		Exp: r.exp, Events: r.events, Status: r.status, Gate: g,
		Noun: "cluster", ManagedBy: func(rc *rayv1.RayCluster) *string { return rc.Spec.ManagedBy }, ListUnmanaged: true,
		Forget: func(uid types.UID, _ types.NamespacedName) { r.exists.forget(uid) },
	}
	return r
}

// Setup builds the RayCluster reconciler and registers it with mgr: it
// watches RayClusters (spec, labels, annotations, finalizers), their pods
// and Services (kit.ChildHandler: owner's queue, expectations), and the
// gate's re-queues.
func Setup(mgr manager.Manager, name string, opts Options) (*Reconciler, error) {
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &corev1.Pod{}, ownerUIDField, func(obj client.Object) []string {
		if uid := kit.ControllerUID(obj.GetOwnerReferences()); uid != "" {
			return []string{uid}
		}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("indexing pods: %w", err)
	}
	rec := opts.Recorder
	if rec == nil {
		rec = mgr.GetEventRecorder(name)
	}
	r := newReconciler(mgr.GetClient(), mgr.GetAPIReader(), rec, opts.Gate, opts.Build, opts.StatusCoalesceWindow)
	h := &kit.ChildHandler{Exp: r.exp, Owner: kit.ControllerOwner(rayv1.KindRayCluster, rayv1.GroupVersion.String())}
	b := ctrl.NewControllerManagedBy(mgr).
		Named("raycluster").
		For(&rayv1.RayCluster{}, builder.WithPredicates(predicate.Or(
			predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{},
			predicate.LabelChangedPredicate{}, kit.FinalizersChanged()))).
		Watches(&corev1.Pod{}, h).
		Watches(&corev1.Service{}, h).
		WithOptions(controller.Options{MaxConcurrentReconciles: opts.Concurrency})
	b = kit.WatchKicks(b, opts.Gate, func() client.ObjectList { return &rayv1.RayClusterList{} })
	if err := b.Complete(r); err != nil {
		return nil, fmt.Errorf("building the RayCluster controller: %w", err)
	}
	return r, nil
}

// Reconcile implements reconcile.Reconciler: the kit's prologue (get,
// forget what is gone, read this process's own writes, the gate, 409 →
// fresh read), then one pass.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return r.loop.Reconcile(ctx, req, r.reconcileOnce)
}

// Known is the number of RayClusters this reconciler has seen and not yet
// forgotten.
func (r *Reconciler) Known() int { return r.loop.Known() }

func (r *Reconciler) reconcileOnce(ctx context.Context, rc *rayv1.RayCluster) (ctrl.Result, error) {
	obs, err := r.observe(ctx, rc)
	if err != nil {
		return ctrl.Result{}, err
	}
	p := decide(obs)
	return r.act(ctx, obs, p)
}

// existsMemo remembers, per cluster UID, the children known to exist that
// observe reads live (not cached: nothing else needs them), so each is
// read once per cluster per process.
type existsMemo struct {
	mu sync.Mutex
	m  map[types.UID]map[string]bool // cluster UID → "Kind/name"
}

func (e *existsMemo) has(uid types.UID, what string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.m[uid][what]
}

func (e *existsMemo) set(uid types.UID, what string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.m[uid] == nil {
		e.m[uid] = map[string]bool{}
	}
	e.m[uid][what] = true
}

func (e *existsMemo) forget(uid types.UID) {
	e.mu.Lock()
	delete(e.m, uid)
	e.mu.Unlock()
}
