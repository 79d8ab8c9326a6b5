package rayservice

// The RayService reconciler's registration (Registration, for kit.Setup:
// Options, side cache, watches) and its pass, observe (observe.go) →
// decide (decide.go, pure) → act (act.go). See doc.go.

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/raydar/raydar/controller/kit"
	"github.com/raydar/raydar/controller/raycluster"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crevent "sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/raydar/raydar/kube/raydash"
	"github.com/raydar/raydar/rayapi/kinds"
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
// +kubebuilder:rbac:groups=gateway.networking.k8s.io,resources=gateways;httproutes,verbs=get;create;update

// Defaults of Options.
const (
	DefaultConcurrency          = 4
	DefaultStatusCoalesceWindow = 2 * time.Second
	DefaultCarriedRefresh       = 30 * time.Second
)

// Options are the RayService reconciler's own settings; what all kinds
// share (the gate, namespaces, cluster domain, probes, dashboards) comes
// in kit.Shared. The zero value is usable.
type Options struct {
	// ProxyChecker checks pods' Serve proxies: set by New from
	// Options.ServeProxyChecker. Default: pod IPs in a pod, the API
	// server's pod proxy outside.
	ProxyChecker ServeProxyChecker
	// ThroughAPIServer checks Serve proxies through the API server's pod
	// proxy in a pod too (KubeRay's --use-kubernetes-proxy), when
	// ProxyChecker is nil.
	ThroughAPIServer bool
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
	// Now replaces time.Now (tests).
	Now func() time.Time
}

// config is o over the defaults (defaultConfig), with what all kinds
// share.
func (o Options) config(sh kit.Shared) config {
	c := defaultConfig()
	c.Build = raycluster.SharedBuildConfig(sh)
	c.DeployPoll = kit.OrDefault(o.DeployPollInterval, c.DeployPoll)
	c.SteadyPoll = kit.OrDefault(o.SteadyPollInterval, c.SteadyPoll)
	c.UnreachableGrace = kit.OrDefault(o.UnreachableGrace, c.UnreachableGrace)
	return c
}

// Registration is the RayService reconciler's registration for
// kit.Setup (normally on Operator.Manager(), so that every kind shares
// one cache and one leader election). It watches RayServices (spec and
// metadata), the RayClusters they own (kit.ChildHandler), the pods of
// their clusters, and in a side cache their Services and the
// EndpointSlices of their serve Services.
func Registration(opts Options) *kit.Kind[*rayv1.RayService] {
	if opts.StatusCoalesceWindow == 0 {
		opts.StatusCoalesceWindow = DefaultStatusCoalesceWindow
	}
	opts.CarriedStatusRefresh = kit.OrDefault(opts.CarriedStatusRefresh, DefaultCarriedRefresh)
	if opts.Now == nil {
		opts.Now = time.Now
	}
	// The RayServices' Services and the EndpointSlices of their serve
	// Services are watched in a cache of their own, holding only objects
	// labelled ray.io/originated-from-crd=RayService (the EndpointSlice
	// controller copies the Service's labels). KubeRay labels these
	// Services without ray.io/cluster, so the shared cache (Services of
	// clusters) does not hold those it made: raydar must see them to adopt
	// them.
	ofRayServices := labels.SelectorFromSet(labels.Set{rayv1.RayOriginatedFromCRDLabelKey: rayv1.KindRayService})
	return &kit.Kind[*rayv1.RayService]{
		Desc:       kinds.RayService,
		ManagedBy:  func(rs *rayv1.RayService) *string { return rs.Spec.ManagedBy },
		Predicates: []predicate.Predicate{kit.SpecOrMetaChanged()},
		Owns:       []kit.Owned{{Object: &rayv1.RayCluster{}}},
		Side: &kit.Side{What: "EndpointSlice", Selector: ofRayServices,
			Objects: []client.Object{&discoveryv1.EndpointSlice{}, &corev1.Service{}}},
		Concurrency:    kit.OrDefault(opts.Concurrency, DefaultConcurrency),
		ExpectationTTL: writesTTL,
		Now:            opts.Now,
		Build: func(p *kit.Parts[*rayv1.RayService]) (kit.Reconciler[*rayv1.RayService], error) {
			proxy := opts.ProxyChecker
			if proxy == nil {
				var err error
				if proxy, err = defaultProxyChecker(p.Manager, opts.ThroughAPIServer); err != nil {
					return nil, err
				}
			}
			var reader client.Reader
			if p.Manager != nil {
				reader = p.Manager.GetAPIReader()
			}
			return &reconciler{
				client: p.Client, slices: p.Side, mgr: p.Manager, reader: reader,
				exp: p.Exp, events: p.Events, status: p.Status, loop: p.Loop,
				dash: p.Dashboards, proxy: proxy, cfg: opts.config(p.Shared),
				coalesce: opts.StatusCoalesceWindow, carriedRefresh: opts.CarriedStatusRefresh,
				now: opts.Now, newSuffix: kit.RandomSuffix,
				probes: map[types.UID]*serveProbe{}, subs: map[types.UID]*submission{},
				clustersOf: map[types.UID]map[types.UID]bool{},
			}, nil
		},
	}
}

// defaultProxyChecker checks Serve proxies at pod IPs in a pod, through
// the API server's pod proxy outside (and in a pod with throughAPIServer).
func defaultProxyChecker(mgr manager.Manager, throughAPIServer bool) (ServeProxyChecker, error) {
	if raydash.InCluster(nil) && !throughAPIServer {
		return PodIPServeProxyChecker(), nil
	}
	cs, err := kubernetes.NewForConfig(mgr.GetConfig())
	if err != nil {
		return nil, fmt.Errorf("RayService proxy checks: %w", err)
	}
	return APIServerServeProxyChecker(cs), nil
}

// Watch adds the watches beyond the RayServices and their RayClusters
// (kit.Watcher): the pods of their clusters, and the side cache's
// EndpointSlices and Services.
func (r *reconciler) Watch(b *builder.Builder) *builder.Builder {
	podPredicate := predicate.Funcs{UpdateFunc: func(e crevent.UpdateEvent) bool { return kit.RelevantChange(e.ObjectOld, e.ObjectNew) }}
	return b.
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(r.podToRayService), builder.WithPredicates(podPredicate)).
		WatchesRawSource(source.Kind(r.slices, &discoveryv1.EndpointSlice{},
			handler.TypedEnqueueRequestsFromMapFunc(func(_ context.Context, s *discoveryv1.EndpointSlice) []reconcile.Request {
				if s.Labels[rayv1.RayOriginatedFromCRDLabelKey] != rayv1.KindRayService || s.Labels[rayv1.RayOriginatedFromCRNameLabelKey] == "" {
					return nil
				}
				return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: s.Namespace, Name: s.Labels[rayv1.RayOriginatedFromCRNameLabelKey]}}}
			}))).
		WatchesRawSource(source.Kind(r.slices, &corev1.Service{},
			handler.TypedEnqueueRequestForOwner[*corev1.Service](r.mgr.GetScheme(), r.mgr.GetRESTMapper(), &rayv1.RayService{}, handler.OnlyControllerOwner())))
}

// writesTTL bounds how long a write of this process is laid over a cache
// that does not show it (a watch that lags this long has bigger problems).
const writesTTL = 2 * time.Minute

// reconciler reconciles RayServices.
type reconciler struct {
	client client.Client // reads from the shared cache, writes to the API server
	slices cache.Cache   // the Services of RayServices and the EndpointSlices of serve Services (the side cache)
	// reader reads the Gateways and HTTPRoutes of incremental upgrades
	// from the API server, uncached: no informer is started for kinds
	// the cluster may not serve (the Gateway API's CRDs are optional).
	reader         client.Reader
	mgr            manager.Manager
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
	// Every pod event of every cluster comes here: read the cached
	// cluster's labels and owners without copying the whole cluster (a
	// 10,000-pod scale-up spent 6 % of the operator's CPU on those copies).
	rc := &rayv1.RayCluster{}
	if err := r.client.Get(ctx, types.NamespacedName{Namespace: obj.GetNamespace(), Name: name}, rc, client.UnsafeDisableDeepCopy); err != nil {
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

// Pass is one observe → decide → act (kit.Reconciler), after kit.Loop's
// prologue (get, gone → forget, our own last write, the other-operator
// gate, 409 → again from a fresh read).
func (r *reconciler) Pass(ctx context.Context, rs *rayv1.RayService) (ctrl.Result, error) {
	obs, err := r.observe(ctx, rs)
	if err != nil {
		return ctrl.Result{}, err
	}
	if rs.DeletionTimestamp == nil {
		r.noteClusters(rs, obs.Clusters)
	}
	return r.act(ctx, obs, decide(obs))
}

// Forget drops what memory holds about a RayService that is gone
// (kit.Forgetter; the Loop forgets the expectations, Events and status
// clock).
func (r *reconciler) Forget(uid types.UID, _ types.NamespacedName) {
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
