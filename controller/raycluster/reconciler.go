package raycluster

import (
	"context"
	"sync"
	"time"

	"github.com/raydar/raydar/controller/batchscheduler"
	"github.com/raydar/raydar/controller/batchscheduler/kuberneteswas"
	"github.com/raydar/raydar/controller/kit"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	"github.com/raydar/raydar/rayapi/kinds"
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
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;create;update
// +kubebuilder:rbac:groups=scheduling.volcano.sh,resources=podgroups,verbs=get;list;watch;create;update
// +kubebuilder:rbac:groups=cert-manager.io,resources=issuers,verbs=get;create
// +kubebuilder:rbac:groups=cert-manager.io,resources=certificates,verbs=get;create;update
// +kubebuilder:rbac:groups="",resources=persistentvolumeclaims,verbs=get;create;update
// +kubebuilder:rbac:groups=networking.k8s.io,resources=ingresses,verbs=get;create;update
// +kubebuilder:rbac:groups=networking.k8s.io,resources=networkpolicies,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=roles;rolebindings,verbs=get;create
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;create
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;create;update,namespace=raydar-system

// ownerUIDField indexes cached pods by their controller's UID.
const ownerUIDField = "raydar.metadata.controllerUID"

// writeConcurrency bounds the parallel writes of one reconcile.
const writeConcurrency = 16

// Options are the RayCluster reconciler's own settings (package
// controller fills them from its one Options; what all kinds share comes
// in kit.Shared).
type Options struct {
	// StatusCoalesceWindow holds status changes that are not urgent for
	// up to this long; 0 or less writes every change at once.
	StatusCoalesceWindow time.Duration
	// Concurrency is the number of RayClusters reconciled at once.
	Concurrency int
	// NetworkPolicies: the RayClusterNetworkPolicy gate is on, so the
	// cluster's NetworkPolicies are watched (owned) and reconciled. The
	// same gate reaches the pass through kit.Shared.Features.
	NetworkPolicies bool
	// BatchScheduler is the scheduler of --batch-scheduler (nil: none):
	// its gang objects are watched (owned). It reaches the pass through
	// kit.Shared.BatchScheduler.
	BatchScheduler batchscheduler.Scheduler
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
	// mtlsPending: since when each cluster's certificates have been
	// pending with nothing changed (mtls.go's back-off).
	mtlsPending sync.Map // types.UID → time.Time
}

// Registration is the RayCluster reconciler's registration for
// kit.Setup: it watches RayClusters (spec, labels, annotations,
// finalizers), their pods and Services (kit.ChildHandler: owner's queue,
// expectations), and the gate's re-queues; pods are indexed by their
// controller's UID.
func Registration(opts Options) *kit.Kind[*rayv1.RayCluster] {
	return &kit.Kind[*rayv1.RayCluster]{
		Desc:      kinds.RayCluster,
		ManagedBy: func(rc *rayv1.RayCluster) *string { return rc.Spec.ManagedBy }, ListUnmanaged: true,
		Predicates: []predicate.Predicate{predicate.Or(
			predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{},
			predicate.LabelChangedPredicate{}, kit.FinalizersChanged())},
		Owns:        owns(opts),
		Indexes:     []kit.Index{{Object: &corev1.Pod{}, Field: ownerUIDField, Extract: podOwnerUID}},
		Concurrency: opts.Concurrency,
		Build: func(p *kit.Parts[*rayv1.RayCluster]) (kit.Reconciler[*rayv1.RayCluster], error) {
			return fromParts(p, opts.StatusCoalesceWindow), nil
		},
	}
}

// owns are the children watched: pods and Services, and NetworkPolicies
// with the RayClusterNetworkPolicy gate (without it none is cached).
func owns(opts Options) []kit.Owned {
	o := []kit.Owned{{Object: &corev1.Pod{}}, {Object: &corev1.Service{}}}
	if opts.NetworkPolicies {
		o = append(o, kit.Owned{Object: &networkingv1.NetworkPolicy{}})
	}
	if batchscheduler.HasGroup(opts.BatchScheduler) {
		o = append(o, kit.Owned{Object: opts.BatchScheduler.NewGroup()})
	}
	if s, ok := opts.BatchScheduler.(kuberneteswas.Scheduler); ok {
		for _, gvk := range s.Kinds() {
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(gvk)
			o = append(o, kit.Owned{Object: u})
		}
	}
	return o
}

// podOwnerUID indexes a pod by its controller's UID (ownerUIDField).
func podOwnerUID(obj client.Object) []string {
	if uid := kit.ControllerUID(obj.GetOwnerReferences()); uid != "" {
		return []string{uid}
	}
	return nil
}

// SharedBuildConfig is the build configuration of every kind that builds a
// cluster's children (RayCluster, RayJob, RayService), from what the kinds
// share.
func SharedBuildConfig(sh kit.Shared) BuildConfig {
	cfg := DefaultBuildConfig()
	cfg.ClusterDomain = kit.OrDefault(sh.ClusterDomain, cfg.ClusterDomain)
	cfg.InjectProbes = sh.InjectProbes
	cfg.Features = sh.Features
	cfg.Scheduler = sh.BatchScheduler
	cfg.PodDefaults = sh.PodDefaults
	return cfg
}

// fromParts builds the reconciler around the parts kit made.
func fromParts(p *kit.Parts[*rayv1.RayCluster], coalesce time.Duration) *Reconciler {
	r := &Reconciler{
		client: p.Client, api: p.API, events: p.Events, exp: p.Exp, status: p.Status, loop: p.Loop,
		cfg: SharedBuildConfig(p.Shared), coalesce: coalesce,
		now: time.Now, newSuffix: kit.RandomSuffix,
		exists: existsMemo{m: map[types.UID]map[string]bool{}},
	}
	r.exp.SetClock(func() time.Time { return r.now() })
	return r
}

// newReconciler builds the reconciler without a manager (unit tests).
func newReconciler(c client.Client, api client.Reader, rec recorder.EventRecorder, sh kit.Shared, coalesce time.Duration) *Reconciler {
	k := Registration(Options{StatusCoalesceWindow: coalesce})
	r, _, err := k.Reconcile(kit.NewParts(k, c, api, rec, sh))
	if err != nil {
		panic(err) // Build does not fail
	}
	return r.(*Reconciler)
}

// Reconcile implements reconcile.Reconciler: the kit's prologue (get,
// forget what is gone, read this process's own writes, the gate, 409 →
// fresh read), then one pass.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return r.loop.Reconcile(ctx, req, r.Pass)
}

// Forget drops what the reconciler remembers of a cluster that is gone
// (kit.Forgetter; the Loop forgets the kit's memory).
func (r *Reconciler) Forget(uid types.UID, _ types.NamespacedName) {
	r.exists.forget(uid)
	r.mtlsPending.Delete(uid)
}

// Known is the number of RayClusters this reconciler has seen and not yet
// forgotten.
func (r *Reconciler) Known() int { return r.loop.Known() }

// Pass is one observe → decide → act (kit.Reconciler).
func (r *Reconciler) Pass(ctx context.Context, rc *rayv1.RayCluster) (ctrl.Result, error) {
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
