package rayservice

// The RayService reconciler's wiring (Setup: Options, caches, watches) and
// Reconcile, which runs observe (observe.go) → decide (decide.go, pure) →
// act (act.go). See doc.go.

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/raydar/raydar/controller/kit"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
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

	"github.com/raydar/raydar/kube/raydash"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// +kubebuilder:rbac:groups=ray.io,resources=rayservices,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=ray.io,resources=rayservices/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=ray.io,resources=rayservices/finalizers,verbs=update
// +kubebuilder:rbac:groups=ray.io,resources=rayclusters,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups="",resources=pods/proxy,verbs=get
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get
// +kubebuilder:rbac:groups="",resources=services/proxy,verbs=get;create
// +kubebuilder:rbac:groups=discovery.k8s.io,resources=endpointslices,verbs=get;list;watch

// ControllerName names the RayService controller in logs and Events.
const ControllerName = "raydar-rayservice"

// Defaults of Options.
const (
	DefaultConcurrency          = 4
	DefaultStatusCoalesceWindow = 2 * time.Second
	DefaultCarriedRefresh       = 30 * time.Second
)

// Options configure the RayService reconciler. The zero value is
// usable.
type Options struct {
	// Dashboards and ProxyChecker: set by New from Options.Dashboards and
	// Options.ServeProxyChecker.
	Dashboards   raydash.Resolver
	ProxyChecker ServeProxyChecker
	// Gate is the operator's other-operator gate (raydar leaves KubeRay's
	// objects alone while a KubeRay operator runs); set by New.
	Gate *kit.Gate
	// Namespaces restricts the EndpointSlice watch (set by New from
	// Options.Namespaces; empty: all).
	Namespaces []string
	// ClusterDomain and DisableProbeInjection: set by New from Options.
	ClusterDomain         string
	DisableProbeInjection bool
	// Concurrency is the number of RayServices reconciled at once. Default 4.
	Concurrency int
	// StatusCoalesceWindow holds status changes that are not urgent for at
	// most this long, so that a bring-up writes few statuses. Default 2 s;
	// negative writes every change at once.
	StatusCoalesceWindow time.Duration
	// CarriedStatusRefresh: changes of the clusters' status copies alone
	// are written after they persisted this long. Default 30 s.
	CarriedStatusRefresh time.Duration
	// DeployPollInterval and SteadyPollInterval: how often Serve is read
	// while applications deploy, and otherwise (defaults 1 s and 10 s).
	DeployPollInterval, SteadyPollInterval time.Duration
	// UnreachableGrace before a silent dashboard shows in the Ready
	// condition (default 5 s).
	UnreachableGrace time.Duration
	// SkipControllerNameValidation allows several reconcilers in one
	// process (tests). Default: the Operator's setting.
	SkipControllerNameValidation bool
	// Now replaces time.Now (tests).
	Now func() time.Time
}

// Setup adds the RayService reconciler to a manager
// (usually op.Manager() of the RayCluster Operator, so that both share one
// cache and one leader election).
func Setup(mgr manager.Manager, opts Options) error {
	cfg := defaultConfig()
	namespaces := opts.Namespaces
	skipNames := opts.SkipControllerNameValidation
	cfg.Build.ClusterDomain = opts.ClusterDomain
	cfg.Build.InjectProbes = !opts.DisableProbeInjection
	if opts.DeployPollInterval > 0 {
		cfg.DeployPoll = opts.DeployPollInterval
	}
	if opts.SteadyPollInterval > 0 {
		cfg.SteadyPoll = opts.SteadyPollInterval
	}
	if opts.UnreachableGrace > 0 {
		cfg.UnreachableGrace = opts.UnreachableGrace
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = DefaultConcurrency
	}
	if opts.StatusCoalesceWindow == 0 {
		opts.StatusCoalesceWindow = DefaultStatusCoalesceWindow
	}
	if opts.CarriedStatusRefresh <= 0 {
		opts.CarriedStatusRefresh = DefaultCarriedRefresh
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.ProxyChecker == nil {
		if raydash.InCluster(nil) {
			opts.ProxyChecker = PodIPServeProxyChecker()
		} else {
			cs, err := kubernetes.NewForConfig(mgr.GetConfig())
			if err != nil {
				return fmt.Errorf("controller: RayService proxy checks: %w", err)
			}
			opts.ProxyChecker = APIServerServeProxyChecker(cs)
		}
	}

	// The RayServices' Services and the EndpointSlices of their serve
	// Services are watched in a cache of their own, holding only objects
	// labelled ray.io/originated-from-crd=RayService (the EndpointSlice
	// controller copies the Service's labels). KubeRay labels these
	// Services without ray.io/cluster, so the shared cache (Services of
	// clusters) does not hold those it made: raydar must see them to adopt
	// them.
	ofRayServices := labels.SelectorFromSet(labels.Set{rayv1.RayOriginatedFromCRDLabelKey: rayv1.KindRayService})
	slices, err := kit.SideCache(mgr, "EndpointSlice", ofRayServices, namespaces, &discoveryv1.EndpointSlice{}, &corev1.Service{})
	if err != nil {
		return err
	}

	exp := kit.NewExpectations(writesTTL, opts.Now)
	r := &reconciler{
		client: mgr.GetClient(), slices: slices,
		exp: exp, events: kit.NewEvents(mgr.GetEventRecorder(ControllerName)), status: kit.NewStatusWriter(mgr.GetClient(), exp),
		dash: opts.Dashboards, proxy: opts.ProxyChecker, cfg: cfg,
		coalesce: opts.StatusCoalesceWindow, carriedRefresh: opts.CarriedStatusRefresh,
		now: opts.Now, newSuffix: kit.RandomSuffix,
		probes: map[types.UID]*serveProbe{}, subs: map[types.UID]*submission{},
		clustersOf: map[types.UID]map[types.UID]bool{},
	}
	r.loop = &kit.Loop[*rayv1.RayService]{
		Cache: mgr.GetClient(), API: mgr.GetAPIReader(), New: func() *rayv1.RayService { return &rayv1.RayService{} },
		Exp: exp, Events: r.events, Status: r.status, Gate: opts.Gate,
		Noun: "RayService", ManagedBy: func(rs *rayv1.RayService) *string { return rs.Spec.ManagedBy },
		Forget: r.forget,
	}

	podPredicate := predicate.Funcs{UpdateFunc: func(e crevent.UpdateEvent) bool { return kit.RelevantChange(e.ObjectOld, e.ObjectNew) }}
	b := ctrl.NewControllerManagedBy(mgr).
		Named("rayservice").
		For(&rayv1.RayService{}, builder.WithPredicates(kit.SpecOrMetaChanged())).
		Watches(&rayv1.RayCluster{}, &kit.ChildHandler{Exp: exp, Owner: kit.ControllerOwner(rayv1.KindRayService, rayv1.SchemeGroupVersion.String())}).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(r.podToRayService), builder.WithPredicates(podPredicate)).
		WatchesRawSource(source.Kind(slices, &discoveryv1.EndpointSlice{},
			handler.TypedEnqueueRequestsFromMapFunc(func(_ context.Context, s *discoveryv1.EndpointSlice) []reconcile.Request {
				if s.Labels[rayv1.RayOriginatedFromCRDLabelKey] != rayv1.KindRayService || s.Labels[rayv1.RayOriginatedFromCRNameLabelKey] == "" {
					return nil
				}
				return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: s.Namespace, Name: s.Labels[rayv1.RayOriginatedFromCRNameLabelKey]}}}
			}))).
		WatchesRawSource(source.Kind(slices, &corev1.Service{},
			handler.TypedEnqueueRequestForOwner[*corev1.Service](mgr.GetScheme(), mgr.GetRESTMapper(), &rayv1.RayService{}, handler.OnlyControllerOwner()))).
		WithOptions(controller.Options{MaxConcurrentReconciles: opts.Concurrency, SkipNameValidation: &skipNames})
	b = kit.WatchKicks(b, opts.Gate, func() client.ObjectList { return &rayv1.RayServiceList{} })
	err = b.Complete(r)
	if err != nil {
		return fmt.Errorf("controller: building the RayService controller: %w", err)
	}
	return nil
}

// writesTTL bounds how long a write of this process is laid over a cache
// that does not show it (a watch that lags this long has bigger problems).
const writesTTL = 2 * time.Minute

// reconciler reconciles RayServices.
type reconciler struct {
	client         client.Client // reads from the shared cache, writes to the API server
	slices         client.Reader // the Services of RayServices and the EndpointSlices of serve Services
	loop           *kit.Loop[*rayv1.RayService]
	exp            *kit.Expectations // read-your-writes, owner: the RayService
	events         *kit.Events
	status         *kit.StatusWriter
	dash           raydash.Resolver
	proxy          ServeProxyChecker
	cfg            config
	coalesce       time.Duration
	carriedRefresh time.Duration
	now            func() time.Time
	newSuffix      func() string

	mu     sync.Mutex
	probes map[types.UID]*serveProbe // cluster UID → latest probe
	subs   map[types.UID]*submission // cluster UID → latest submission
	// clustersOf lets the probes and submissions of a RayService that is
	// gone be forgotten.
	clustersOf map[types.UID]map[types.UID]bool
}

// podToRayService maps a Ray pod to the RayService owning its cluster.
func (r *reconciler) podToRayService(ctx context.Context, obj client.Object) []reconcile.Request {
	name := obj.GetLabels()[rayv1.RayClusterLabelKey]
	if name == "" {
		return nil
	}
	rc := &rayv1.RayCluster{}
	if err := r.client.Get(ctx, types.NamespacedName{Namespace: obj.GetNamespace(), Name: name}, rc); err != nil {
		return nil
	}
	if rc.Labels[rayv1.RayOriginatedFromCRDLabelKey] != rayv1.KindRayService {
		return nil
	}
	for _, ref := range rc.OwnerReferences {
		if ref.Controller != nil && *ref.Controller && ref.Kind == rayv1.KindRayService {
			return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: rc.Namespace, Name: ref.Name}}}
		}
	}
	return nil
}

// Reconcile implements reconcile.Reconciler: the kit's prologue (get, gone
// → forget, our own last write, the other-operator gate, 409 → again from
// a fresh read), then pass.
func (r *reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return r.loop.Reconcile(ctx, req, r.pass)
}

// pass is one observe → decide → act.
func (r *reconciler) pass(ctx context.Context, rs *rayv1.RayService) (ctrl.Result, error) {
	obs, err := r.observe(ctx, rs)
	if err != nil {
		return ctrl.Result{}, err
	}
	if rs.DeletionTimestamp == nil {
		r.noteClusters(rs, obs.Clusters)
	}
	return r.act(ctx, obs, decide(obs))
}

// forget drops what memory holds about a RayService that is gone (the
// Loop forgets the expectations, Events and status clock).
func (r *reconciler) forget(uid types.UID, _ types.NamespacedName) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for c := range r.clustersOf[uid] {
		delete(r.probes, c)
		delete(r.subs, c)
	}
	delete(r.clustersOf, uid)
}

// noteClusters records the RayService's clusters and forgets the probes
// and submissions of those that are gone.
func (r *reconciler) noteClusters(rs *rayv1.RayService, clusters []*rayv1.RayCluster) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := map[types.UID]bool{}
	for _, c := range clusters {
		if c.UID != "" {
			now[c.UID] = true
		}
	}
	for c := range r.clustersOf[rs.UID] {
		if !now[c] {
			delete(r.probes, c)
			delete(r.subs, c)
		}
	}
	r.clustersOf[rs.UID] = now
}
