package rayjob

// The RayJob reconciler's registration with the manager (Setup: caches,
// watches, index) and Reconcile: kit.Loop's prologue, then observe,
// Decide, act.

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	crevent "sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/raydar/raydar/controller/kit"
	"github.com/raydar/raydar/kube/raydash"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// The RayJob reconciler's permissions (on top of the RayCluster
// reconciler's).
//
// +kubebuilder:rbac:groups=ray.io,resources=rayjobs,verbs=get;list;watch;update;patch;delete
// +kubebuilder:rbac:groups=ray.io,resources=rayjobs/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=ray.io,resources=rayjobs/finalizers,verbs=update
// +kubebuilder:rbac:groups=ray.io,resources=rayclusters,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch;create;update
// +kubebuilder:rbac:groups="",resources=services/proxy,verbs=get;create

// ControllerName names the RayJob controller in logs and Events.
const ControllerName = "raydar-rayjob"

// DefaultConcurrency is the number of RayJobs reconciled at once.
const DefaultConcurrency = 4

// clusterNameField indexes cached RayJobs by status.rayClusterName.
const clusterNameField = "raydar.status.rayClusterName"

// Options configure Setup. The zero value is usable.
type Options struct {
	// Dashboards reaches each cluster's Ray dashboard: set by New from
	// Options.Dashboards.
	Dashboards raydash.Resolver
	// Gate is the operator's other-operator gate (raydar leaves KubeRay's
	// objects alone while a KubeRay operator runs); set by New.
	Gate *kit.Gate
	// Namespaces restricts the submitter-Job watch (set by New from
	// Options.Namespaces; empty: all).
	Namespaces []string
	// DisableProbeInjection: set by New from Options.DisableProbeInjection.
	DisableProbeInjection bool
	// Concurrency is the number of RayJobs reconciled at once. Default 4.
	Concurrency int
	// StopConfirmTimeout bounds how long a deleted RayJob whose Ray job may
	// run keeps its finalizer while the dashboard does not confirm the
	// stop. Default DefaultStopConfirmTimeout (2 min).
	StopConfirmTimeout time.Duration
	// StatusCheckTimeout: a running job whose dashboard cannot be asked
	// for this long fails (JobStatusCheckTimeoutExceeded). Default 300 s.
	StatusCheckTimeout time.Duration
	// TransitionGracePeriod: how long a terminal Ray job waits for its
	// K8sJobMode submitter to finish. Default 300 s.
	TransitionGracePeriod time.Duration
	// MinPollInterval and MaxPollInterval bound how often the dashboard is
	// asked about a running job (defaults 1 s and 10 s): often while it is
	// young, less as it ages.
	MinPollInterval, MaxPollInterval time.Duration
	// DeleteRayJobAfterJobFinishes makes shutdownAfterJobFinishes delete
	// the RayJob (and so its cluster) instead of only the cluster, like
	// KubeRay's DELETE_RAYJOB_CR_AFTER_JOB_FINISHES=true.
	DeleteRayJobAfterJobFinishes bool
	// ClusterDomain for status.dashboardURL: set by New from
	// Options.ClusterDomain.
	ClusterDomain string
	// SkipControllerNameValidation allows several reconcilers in one
	// process (tests).
	SkipControllerNameValidation bool
	// Now replaces time.Now (tests).
	Now func() time.Time

	// AfterStopRecorded, when set, runs after a confirmed stop has been
	// recorded on the RayJob and before anything else (the finalizer); an
	// error ends the pass there. Tests use it to stand for a crash.
	AfterStopRecorded func(*rayv1.RayJob) error
}

// Setup adds the RayJob reconciler to mgr (normally
// Operator.Manager(), so that it shares the cache and the leader election).
func Setup(mgr manager.Manager, opts Options) error {
	cfg := defaultConfig()
	g := opts.Gate
	namespaces := opts.Namespaces
	skipNames := opts.SkipControllerNameValidation
	domain := opts.ClusterDomain
	cfg.ClusterDomain = domain
	cfg.Build.ClusterDomain = domain
	cfg.Build.InjectProbes = !opts.DisableProbeInjection
	if opts.StopConfirmTimeout > 0 {
		cfg.StopConfirmTimeout = opts.StopConfirmTimeout
	}
	if opts.StatusCheckTimeout > 0 {
		cfg.StatusCheckTimeout = opts.StatusCheckTimeout
	}
	if opts.TransitionGracePeriod > 0 {
		cfg.TransitionGracePeriod = opts.TransitionGracePeriod
	}
	if opts.MinPollInterval > 0 {
		cfg.MinPoll = opts.MinPollInterval
	}
	if opts.MaxPollInterval > 0 {
		cfg.MaxPoll = opts.MaxPollInterval
	}
	cfg.MaxPoll = max(cfg.MaxPoll, cfg.MinPoll)
	cfg.DeleteRayJobAfterJobFinishes = opts.DeleteRayJobAfterJobFinishes
	if opts.Concurrency <= 0 {
		opts.Concurrency = DefaultConcurrency
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}

	// Submitter Jobs and the RayJobs' head Services are watched in a cache
	// of their own that holds only the Jobs and Services of RayJobs (the
	// head Service carries KubeRay's labels, without ray.io/cluster, so
	// the shared cache does not hold it).
	ofRayJobs := labels.SelectorFromSet(labels.Set{rayv1.RayOriginatedFromCRDLabelKey: rayv1.RayOriginatedFromCRDLabelValue(rayv1.KindRayJob)})
	jobs, err := kit.SideCache(mgr, "submitter Job", ofRayJobs, namespaces, &batchv1.Job{}, &corev1.Service{})
	if err != nil {
		return err
	}
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &rayv1.RayJob{}, clusterNameField, func(obj client.Object) []string {
		if n := obj.(*rayv1.RayJob).Status.RayClusterName; n != "" {
			return []string{n}
		}
		return nil
	}); err != nil {
		return fmt.Errorf("controller: indexing RayJobs: %w", err)
	}

	r := &reconciler{
		client: mgr.GetClient(), api: mgr.GetAPIReader(), jobs: jobs,
		events: kit.NewEvents(mgr.GetEventRecorder(ControllerName)),
		dash:   opts.Dashboards, cfg: cfg, now: opts.Now, newSuffix: kit.RandomSuffix,
		afterStopRecorded: opts.AfterStopRecorded,
		stops:             map[types.UID]StopRecord{}, stopFails: map[types.UID]*stopFailure{},
		checkFailSince: map[types.UID]checkFail{},
	}
	r.exp = kit.NewExpectations(kit.DefaultExpectationTTL, func() time.Time { return r.now() })
	r.status = kit.NewStatusWriter(r.client, r.exp)
	r.loop = &kit.Loop[*rayv1.RayJob]{
		Cache: r.client, API: r.api, New: func() *rayv1.RayJob { return &rayv1.RayJob{} },
		Exp: r.exp, Events: r.events, Status: r.status, Gate: g,
		Noun: "RayJob", ManagedBy: func(j *rayv1.RayJob) *string { return j.Spec.ManagedBy },
		Forget: func(uid types.UID, _ types.NamespacedName) { r.forget(uid) },
	}

	headPods := predicate.Funcs{
		CreateFunc:  func(e crevent.CreateEvent) bool { return isSidecarHead(e.Object) },
		DeleteFunc:  func(e crevent.DeleteEvent) bool { return isSidecarHead(e.Object) },
		GenericFunc: func(crevent.GenericEvent) bool { return false },
		UpdateFunc: func(e crevent.UpdateEvent) bool {
			return isSidecarHead(e.ObjectNew) && kit.RelevantChange(e.ObjectOld, e.ObjectNew)
		},
	}
	b := ctrl.NewControllerManagedBy(mgr).
		Named("rayjob").
		For(&rayv1.RayJob{}, builder.WithPredicates(kit.SpecOrMetaChanged())).
		Watches(&rayv1.RayCluster{}, handler.EnqueueRequestsFromMapFunc(r.clusterToRayJobs)).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(r.podToRayJobs), builder.WithPredicates(headPods)).
		WatchesRawSource(source.Kind(jobs, &batchv1.Job{},
			handler.TypedEnqueueRequestsFromMapFunc(func(_ context.Context, j *batchv1.Job) []reconcile.Request {
				return ownerRequest(j)
			}))).
		WatchesRawSource(source.Kind(jobs, &corev1.Service{},
			handler.TypedEnqueueRequestsFromMapFunc(func(_ context.Context, s *corev1.Service) []reconcile.Request {
				return ownerRequest(s)
			}))).
		WithOptions(controller.Options{MaxConcurrentReconciles: opts.Concurrency, SkipNameValidation: &skipNames})
	b = kit.WatchKicks(b, opts.Gate, func() client.ObjectList { return &rayv1.RayJobList{} })
	err = b.Complete(r)
	if err != nil {
		return fmt.Errorf("controller: building the RayJob controller: %w", err)
	}
	return nil
}

// ownerRequest is the request of the RayJob controlling obj.
func ownerRequest(obj client.Object) []reconcile.Request {
	for _, ref := range obj.GetOwnerReferences() {
		if ref.Controller != nil && *ref.Controller && ref.Kind == rayv1.KindRayJob {
			return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: ref.Name}}}
		}
	}
	return nil
}

// isSidecarHead: a head pod with a SidecarMode submitter.
func isSidecarHead(obj client.Object) bool {
	pod, ok := obj.(*corev1.Pod)
	return ok && kit.IsHeadPod(pod) && HasContainer(pod.Spec.Containers, rayv1.RayJobSubmitterContainerName)
}

// reconciler reconciles RayJobs.
type reconciler struct {
	client    client.Client // reads from the shared cache, writes to the API server
	api       client.Reader // live reads
	jobs      client.Reader // submitter Jobs and head Services of RayJobs
	dash      raydash.Resolver
	cfg       config
	now       func() time.Time
	newSuffix func() string

	// The kit: the Reconcile prologue (get, forget, read-your-writes, the
	// other-operator gate, 409s), this process's writes of each RayJob,
	// the status writer, the say-once Events.
	loop   *kit.Loop[*rayv1.RayJob]
	exp    *kit.Expectations
	status *kit.StatusWriter
	events *kit.Events

	afterStopRecorded func(*rayv1.RayJob) error

	// What else this process remembers of each RayJob (memory.go).
	mu sync.Mutex
	// stops are confirmed stops, until the RayJob is forgotten.
	stops map[types.UID]StopRecord
	// stopFails counts unconfirmed attempts of the current stop.
	stopFails map[types.UID]*stopFailure
	// checkFailSince is the dashboard failure clock of RayJobs whose CRD
	// does not keep status.jobStatusCheckFailureStartTime.
	checkFailSince map[types.UID]checkFail
	// prunesConditions: the API server dropped the conditions of a status
	// this process wrote (KubeRay's RayJob CRD has none).
	prunesConditions atomic.Bool
}

func (r *reconciler) clusterToRayJobs(ctx context.Context, obj client.Object) []reconcile.Request {
	return r.jobsOfCluster(ctx, obj.GetNamespace(), obj.GetName())
}

func (r *reconciler) podToRayJobs(ctx context.Context, obj client.Object) []reconcile.Request {
	if name := obj.GetLabels()[rayv1.RayClusterLabelKey]; name != "" {
		return r.jobsOfCluster(ctx, obj.GetNamespace(), name)
	}
	return nil
}

// jobsOfCluster lists the RayJobs that use a cluster (status.rayClusterName).
func (r *reconciler) jobsOfCluster(ctx context.Context, ns, cluster string) []reconcile.Request {
	list := &rayv1.RayJobList{}
	if err := r.client.List(ctx, list, client.InNamespace(ns), client.MatchingFields{clusterNameField: cluster}); err != nil {
		return nil
	}
	out := make([]reconcile.Request, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: list.Items[i].Name}})
	}
	return out
}

// Reconcile implements reconcile.Reconciler: the kit's prologue, then
// one pass.
func (r *reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return r.loop.Reconcile(ctx, req, r.pass)
}

// pass is observe → Decide → act.
func (r *reconciler) pass(ctx context.Context, rj *rayv1.RayJob) (ctrl.Result, error) {
	obs, err := r.observe(ctx, rj)
	if err != nil || obs == nil { // nil: gone (its deletion brings the pass that forgets it)
		return ctrl.Result{}, err
	}
	return r.act(ctx, obs, Decide(obs))
}

// forget drops what memory.go remembers of a RayJob that is gone.
func (r *reconciler) forget(uid types.UID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.stops, uid)
	delete(r.stopFails, uid)
	delete(r.checkFailSince, uid)
}
