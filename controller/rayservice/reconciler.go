package rayservice

// The RayService reconciler: observe (rayservice_reconciler.go) → decide
// (rayservice_decide.go, rayservice_status.go, pure) → act (here).
//
// What a restart must know lives in the API server, not in memory:
//   - which cluster serves: the selector of the serve Service;
//   - which config a cluster runs: the raydar.io/serve-config-hash
//     annotation written after the dashboard accepted it, checked against
//     the applications the dashboard shows;
//   - when an old cluster goes: its raydar.io/delete-after annotation.
//
// Memory holds only what may be lost: recent Serve probes (so a burst of
// watch events does not become a burst of dashboard calls), the back-off of
// a rejected submission, and this process's writes until the cache shows
// them (so a lagging cache never causes a second cluster or a second status
// write).

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/raydar/raydar/controller/kit"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	crevent "sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/recorder"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/raydar/raydar/kube/raydash"
	"github.com/raydar/raydar/rayapi/dashboard"
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
	g := opts.Gate
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
	sliceOpts := cache.Options{
		Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper(),
		DefaultTransform: cache.TransformStripManagedFields(),
		ByObject: map[client.Object]cache.ByObject{
			&discoveryv1.EndpointSlice{}: {Label: ofRayServices},
			&corev1.Service{}:            {Label: ofRayServices},
		},
	}
	if len(namespaces) > 0 {
		sliceOpts.DefaultNamespaces = map[string]cache.Config{}
		for _, ns := range namespaces {
			sliceOpts.DefaultNamespaces[ns] = cache.Config{}
		}
	}
	slices, err := cache.New(mgr.GetConfig(), sliceOpts)
	if err != nil {
		return fmt.Errorf("controller: EndpointSlice cache: %w", err)
	}
	if err := mgr.Add(slices); err != nil {
		return err
	}

	r := &reconciler{
		client: mgr.GetClient(), api: mgr.GetAPIReader(), slices: slices,
		recorder: mgr.GetEventRecorder(ControllerName),
		dash:     opts.Dashboards, proxy: opts.ProxyChecker, gate: g, cfg: cfg,
		coalesce: opts.StatusCoalesceWindow, carriedRefresh: opts.CarriedStatusRefresh,
		now: opts.Now, newSuffix: kit.RandomSuffix,
		probes: map[types.UID]*serveProbe{}, subs: map[types.UID]*submission{},
		written: map[types.UID]*writtenStatus{}, dirty: map[types.UID]time.Time{}, carriedDirty: map[types.UID]time.Time{},
		skipped: map[types.UID]string{}, overlay: newOwnWrites(),
		uids: map[types.NamespacedName]types.UID{}, clustersOf: map[types.UID]map[types.UID]bool{},
	}

	rsPredicate := predicate.Or[client.Object](predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{},
		predicate.LabelChangedPredicate{}, kit.FinalizersChanged(), predicate.Funcs{UpdateFunc: func(e crevent.UpdateEvent) bool {
			return (e.ObjectOld.GetDeletionTimestamp() == nil) != (e.ObjectNew.GetDeletionTimestamp() == nil)
		}})
	podPredicate := predicate.Funcs{UpdateFunc: func(e crevent.UpdateEvent) bool { return kit.RelevantChange(e.ObjectOld, e.ObjectNew) }}
	err = ctrl.NewControllerManagedBy(mgr).
		Named("rayservice").
		For(&rayv1.RayService{}, builder.WithPredicates(rsPredicate)).
		Owns(&rayv1.RayCluster{}).
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
		WithOptions(controller.Options{MaxConcurrentReconciles: opts.Concurrency, SkipNameValidation: &skipNames}).
		Complete(r)
	if err != nil {
		return fmt.Errorf("controller: building the RayService controller: %w", err)
	}
	return nil
}

// reconciler reconciles RayServices.
type reconciler struct {
	client         client.Client // reads from the shared cache, writes to the API server
	api            client.Reader
	slices         client.Reader // the Services of RayServices and the EndpointSlices of serve Services
	recorder       recorder.EventRecorder
	dash           raydash.Resolver
	proxy          ServeProxyChecker
	gate           *kit.Gate
	cfg            config
	coalesce       time.Duration
	carriedRefresh time.Duration
	now            func() time.Time
	newSuffix      func() string
	overlay        *ownWrites

	mu           sync.Mutex
	probes       map[types.UID]*serveProbe    // cluster UID → latest probe
	subs         map[types.UID]*submission    // cluster UID → latest submission
	written      map[types.UID]*writtenStatus // RayService UID → our last status write
	dirty        map[types.UID]time.Time      // RayService UID → since when its status differs materially
	carriedDirty map[types.UID]time.Time      // … differs only in what is carried
	skipped      map[types.UID]string         // RayService UID → reason told in an Event
	// uids and clustersOf let a RayService that is gone be forgotten.
	uids       map[types.NamespacedName]types.UID
	clustersOf map[types.UID]map[types.UID]bool
}

// writtenStatus is a status this process wrote, until the cache shows it.
type writtenStatus struct {
	staleRV string
	status  rayv1.RayServiceStatuses
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

// Reconcile implements reconcile.Reconciler.
func (r *reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	rs := &rayv1.RayService{}
	if err := r.client.Get(ctx, req.NamespacedName, rs); err != nil {
		if apierrors.IsNotFound(err) {
			r.forget(req.NamespacedName)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	r.mu.Lock()
	r.uids[req.NamespacedName] = rs.UID
	r.mu.Unlock()
	r.readYourStatus(rs)
	obs, err := r.observe(ctx, rs)
	if err != nil {
		return ctrl.Result{}, err
	}
	p := decide(obs)
	return r.act(ctx, obs, p)
}

// forget drops what memory holds about a RayService that is gone.
func (r *reconciler) forget(nn types.NamespacedName) {
	r.mu.Lock()
	defer r.mu.Unlock()
	uid, ok := r.uids[nn]
	if !ok {
		return
	}
	delete(r.uids, nn)
	for c := range r.clustersOf[uid] {
		delete(r.probes, c)
		delete(r.subs, c)
	}
	delete(r.clustersOf, uid)
	delete(r.written, uid)
	delete(r.dirty, uid)
	delete(r.carriedDirty, uid)
	delete(r.skipped, uid)
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

// readYourStatus lays our last status write over a cache that has not
// shown it yet.
func (r *reconciler) readYourStatus(rs *rayv1.RayService) {
	r.mu.Lock()
	defer r.mu.Unlock()
	w, ok := r.written[rs.UID]
	if !ok {
		return
	}
	if rs.ResourceVersion == w.staleRV {
		rs.Status = *w.status.DeepCopy()
		return
	}
	delete(r.written, rs.UID)
}

// skipReason says why raydar leaves rs alone: its spec.managedBy names
// another controller, or a KubeRay operator runs (the Operator's gate).
func (r *reconciler) skipReason(rs *rayv1.RayService) string {
	probe := &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Annotations: rs.Annotations}, Spec: rayv1.RayClusterSpec{ManagedBy: rs.Spec.ManagedBy}}
	var why string
	if r.gate != nil {
		why = r.gate.SkipReason(probe)
	} else {
		why = kit.SkipReason(probe, kit.OtherOperator{})
	}
	return strings.ReplaceAll(why, "this cluster", "this RayService")
}

// observe reads what decide needs.
func (r *reconciler) observe(ctx context.Context, rs *rayv1.RayService) (*observed, error) {
	now := r.now()
	o := &observed{Service: rs, Now: now, NewSuffix: r.newSuffix, Config: r.cfg, Pods: map[string][]*corev1.Pod{},
		Probes: map[string]*serveProbe{}, Submissions: map[string]*submission{}}
	if rs.DeletionTimestamp != nil {
		return o, nil
	}
	if o.SkipReason = r.skipReason(rs); o.SkipReason != "" {
		return o, nil
	}

	// Clusters.
	list := &rayv1.RayClusterList{}
	if err := r.client.List(ctx, list, client.InNamespace(rs.Namespace), client.MatchingLabels{
		rayv1.RayOriginatedFromCRNameLabelKey: rs.Name, rayv1.RayOriginatedFromCRDLabelKey: rayv1.KindRayService,
	}); err != nil {
		return nil, fmt.Errorf("listing RayClusters: %w", err)
	}
	var cached []*rayv1.RayCluster
	for i := range list.Items {
		if ownedBy(&list.Items[i], rs) {
			cached = append(cached, &list.Items[i])
		}
	}
	o.Clusters = r.overlay.clusters(rs, cached, now)
	r.noteClusters(rs, o.Clusters)

	// Pods.
	for _, c := range o.Clusters {
		pods := &corev1.PodList{}
		if err := r.client.List(ctx, pods, client.InNamespace(rs.Namespace), client.MatchingLabels{rayv1.RayClusterLabelKey: c.Name}); err != nil {
			return nil, fmt.Errorf("listing pods of RayCluster %s: %w", c.Name, err)
		}
		for i := range pods.Items {
			pod := &pods.Items[i]
			if kit.ControllerUID(pod.OwnerReferences) == string(c.UID) || c.UID == "" {
				o.Pods[c.Name] = append(o.Pods[c.Name], r.overlay.pod(pod, now))
			}
		}
	}

	// Services and serve endpoints.
	var err error
	if o.HeadService, err = r.getService(ctx, rs.Namespace, kit.RayServiceHeadServiceName(rs), now); err != nil {
		return nil, err
	}
	if o.ServeService, err = r.getService(ctx, rs.Namespace, kit.RayServiceServeServiceName(rs), now); err != nil {
		return nil, err
	}
	if o.ServeService != nil {
		if o.ServeEndpoints, err = r.countServeEndpoints(ctx, o.ServeService); err != nil {
			return nil, err
		}
	}

	// Serve probes of the clusters that may serve (not those retiring).
	activeName := ""
	if o.ServeService != nil {
		activeName = o.ServeService.Spec.Selector[rayv1.RayClusterLabelKey]
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	for _, c := range o.Clusters {
		if c.DeletionTimestamp != nil || c.UID == "" {
			continue
		}
		if _, retiring := deleteAfter(c); retiring && c.Name != activeName {
			continue
		}
		r.mu.Lock()
		if s := r.subs[c.UID]; s != nil {
			o.Submissions[c.Name] = s
		}
		r.mu.Unlock()
		head := headPod(o.Pods[c.Name])
		if head == nil || !kit.IsRunningAndReady(head) {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			pr := r.probe(ctx, c, head, o.Pods[c.Name], c.Name == activeName, now)
			mu.Lock()
			o.Probes[c.Name] = pr
			mu.Unlock()
		}()
	}
	wg.Wait()
	return o, nil
}

func (r *reconciler) getService(ctx context.Context, ns, name string, now time.Time) (*corev1.Service, error) {
	svc := &corev1.Service{}
	err := r.slices.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, svc)
	switch {
	case apierrors.IsNotFound(err):
		svc = nil
	case err != nil:
		return nil, fmt.Errorf("reading Service %s: %w", name, err)
	}
	return r.overlay.service(ns, name, svc, now), nil
}

// countServeEndpoints counts the distinct ready endpoints in the serve
// Service's EndpointSlices (kube-controller-manager's EndpointSlice
// controller maintains them; the sandbox runs it). An endpoint without a
// ready condition counts as ready, as the API says.
func (r *reconciler) countServeEndpoints(ctx context.Context, svc *corev1.Service) (int32, error) {
	list := &discoveryv1.EndpointSliceList{}
	if err := r.slices.List(ctx, list, client.InNamespace(svc.Namespace), client.MatchingLabels{discoveryv1.LabelServiceName: svc.Name}); err != nil {
		return 0, fmt.Errorf("listing the EndpointSlices of Service %s: %w", svc.Name, err)
	}
	seen := map[string]bool{}
	for _, s := range list.Items {
		for _, ep := range s.Endpoints {
			if ep.Conditions.Ready != nil && !*ep.Conditions.Ready {
				continue
			}
			key := strings.Join(ep.Addresses, ",")
			if ep.TargetRef != nil {
				key = ep.TargetRef.Name
			}
			seen[key] = true
		}
	}
	return int32(len(seen)), nil
}

// probe returns the cluster's latest Serve probe, taking a new one when the
// last is stale (see probeInterval), the head pod changed, or a
// submission was made since.
func (r *reconciler) probe(ctx context.Context, rc *rayv1.RayCluster, head *corev1.Pod, pods []*corev1.Pod, active bool, now time.Time) *serveProbe {
	r.mu.Lock()
	last := r.probes[rc.UID]
	r.mu.Unlock()
	if last != nil && last.HeadUID == string(head.UID) && last.Active == active && now.Before(last.At.Add(probeInterval(last, r.cfg))) {
		return last
	}
	pr := &serveProbe{At: now, HeadUID: string(head.UID), Active: active}
	details, err := r.serveDetails(ctx, rc)
	if err != nil {
		pr.Err = err.Error()
		pr.FailingSince = now
		if last != nil && !last.OK && last.HeadUID == pr.HeadUID {
			pr.FailingSince = last.FailingSince
		}
	} else {
		pr.OK = true
		pr.Apps = details.Applications
	}
	if pr.OK && len(pr.Apps) > 0 {
		pr.Proxies = r.checkProxies(ctx, rc, pods)
	}
	r.mu.Lock()
	r.probes[rc.UID] = pr
	r.mu.Unlock()
	return pr
}

func (r *reconciler) serveDetails(ctx context.Context, rc *rayv1.RayCluster) (*dashboard.ServeDetails, error) {
	dc, err := r.dash.ClientFor(ctx, rc)
	if err != nil {
		return nil, err
	}
	return dc.GetServeApplications(ctx)
}

// checkProxies checks the Serve proxy of every Running and Ready pod, a few
// at a time.
func (r *reconciler) checkProxies(ctx context.Context, rc *rayv1.RayCluster, pods []*corev1.Pod) map[string]proxyHealth {
	out := map[string]proxyHealth{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for _, pod := range pods {
		if !kit.IsRunningAndReady(pod) || (!kit.IsHeadPod(pod) && !kit.IsWorkerPod(pod)) {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			cctx, cancel := context.WithTimeout(ctx, dashboard.DefaultTimeout)
			err := r.proxy.CheckServeProxy(cctx, rc, pod)
			cancel()
			h := proxyHealth{Healthy: err == nil}
			if err != nil {
				h.Err = err.Error()
			}
			mu.Lock()
			out[pod.Name] = h
			mu.Unlock()
		}()
	}
	wg.Wait()
	return out
}

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
		orig := rs.DeepCopy()
		rs.Finalizers = removeString(rs.Finalizers, rayv1.RayServiceFinalizer)
		if err := r.client.Patch(ctx, rs, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil && !apierrors.IsNotFound(err) {
			return ctrl.Result{}, err
		}
	}
	if p.Skip {
		r.noteSkip(ctx, obs)
		return ctrl.Result{}, nil
	}
	r.mu.Lock()
	delete(r.skipped, rs.UID)
	r.mu.Unlock()

	for _, e := range p.Events {
		r.recorder.Eventf(rs, nil, e.Type, e.Reason, e.Action, "%s", kit.Truncate(e.Message, 1000))
	}

	if c := p.CreateCluster; c != nil {
		r.overlay.expectCluster(c, now)
		if err := r.client.Create(ctx, c); err != nil && !apierrors.IsAlreadyExists(err) {
			r.overlay.forgetCluster(c)
			r.recorder.Eventf(rs, nil, corev1.EventTypeWarning, reasonClusterCreateFailed, "Create", "Creating RayCluster %s failed: %v", c.Name, err)
			fail(fmt.Errorf("creating RayCluster %s: %w", c.Name, err))
		} else if err == nil {
			r.overlay.createdCluster(c, now)
		}
	}

	for _, u := range p.UpdateClusters {
		prev := u.Cluster.ResourceVersion
		obj := u.Cluster.DeepCopy()
		if err := r.client.Update(ctx, obj); err != nil {
			fail(fmt.Errorf("updating RayCluster %s: %w", obj.Name, err))
			continue
		}
		r.overlay.updatedCluster(prev, obj, now)
		r.recorder.Eventf(rs, obj, corev1.EventTypeNormal, reasonClusterUpdated, "Update", "Updated RayCluster %s in place: %s", obj.Name, strings.Join(u.What, ", "))
	}

	submitted := false
	for _, s := range p.Submit {
		if err := r.submit(ctx, rs, s, now); err != nil {
			fail(err)
		}
		submitted = true
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
		r.overlay.updatedPod(prev, obj, now)
	}

	for _, a := range p.Annotate {
		if err := r.annotate(ctx, a.Cluster, a.Set, now); err != nil && !apierrors.IsNotFound(err) {
			fail(fmt.Errorf("annotating RayCluster %s: %w", a.Cluster.Name, err))
		}
	}

	servicesOK := true
	for _, s := range p.CreateServices {
		err := r.client.Create(ctx, s)
		switch {
		case err == nil:
			r.overlay.wroteService(s, "", now)
			r.recorder.Eventf(rs, nil, corev1.EventTypeNormal, reasonServiceCreated, "Create", "Created Service %s selecting RayCluster %s", s.Name, s.Spec.Selector[rayv1.RayClusterLabelKey])
		case apierrors.IsAlreadyExists(err):
			servicesOK = false
		default:
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
		r.overlay.wroteService(obj, prev, now)
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
		err := r.client.Delete(ctx, d.Cluster, opts...)
		switch {
		case err == nil, apierrors.IsNotFound(err), apierrors.IsConflict(err):
			r.overlay.deletedCluster(d.Cluster, now)
			if err == nil {
				r.recorder.Eventf(rs, nil, corev1.EventTypeNormal, reasonClusterDeleted, "Delete", "Deleted RayCluster %s: %s", d.Cluster.Name, d.Reason)
			}
		default:
			fail(fmt.Errorf("deleting RayCluster %s: %w", d.Cluster.Name, err))
		}
	}
	for _, s := range p.DeleteServices {
		uid := s.UID
		if err := r.client.Delete(ctx, s, client.Preconditions{UID: &uid}); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			fail(fmt.Errorf("deleting Service %s: %w", s.Name, err))
			continue
		}
		r.overlay.deletedService(s, now)
	}

	res := ctrl.Result{RequeueAfter: p.RequeueAfter}
	if submitted && (res.RequeueAfter == 0 || res.RequeueAfter > r.cfg.DeployPoll) {
		res.RequeueAfter = r.cfg.DeployPoll
	}
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
			r.recorder.Eventf(rs, rc, corev1.EventTypeWarning, reasonServeRejected, "Submit",
				"The Ray dashboard of RayCluster %s rejected serveConfigV2: %v", rc.Name, err)
		}
		return nil // reported in the status; retried with back-off
	}
	r.recorder.Eventf(rs, rc, corev1.EventTypeNormal, reasonServeSubmitted, "Submit",
		"Submitted serveConfigV2 (%s) to RayCluster %s: %s", strings.Join(s.Config.Apps, ", "), rc.Name, s.Why)
	h := s.Config.Hash
	return r.annotate(ctx, rc, map[string]*string{ServeConfigHashKey: &h}, now)
}

// annotate merge-patches a cluster's annotations (nil values remove).
func (r *reconciler) annotate(ctx context.Context, rc *rayv1.RayCluster, set map[string]*string, now time.Time) error {
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
	r.overlay.updatedCluster(prev, obj, now)
	return nil
}

// writeStatus writes the status when it changed. Urgent changes go at
// once; other material changes are held for up to the coalesce window;
// changes of what is only carried (the clusters' status copies) are held
// for the carried refresh period. It returns when a held change is due.
func (r *reconciler) writeStatus(ctx context.Context, rs *rayv1.RayService, status rayv1.RayServiceStatuses, urgent bool, now time.Time) (time.Duration, error) {
	r.mu.Lock()
	if statusEqual(rs.Status, status) {
		delete(r.dirty, rs.UID)
		delete(r.carriedDirty, rs.UID)
		r.mu.Unlock()
		return 0, nil
	}
	material := !statusMaterialEqual(rs.Status, status)
	if !material {
		delete(r.dirty, rs.UID)
		since, ok := r.carriedDirty[rs.UID]
		if !ok {
			since = now
			r.carriedDirty[rs.UID] = now
		}
		if wait := r.carriedRefresh - now.Sub(since); wait > 0 {
			r.mu.Unlock()
			return wait, nil
		}
	} else if !urgent && r.coalesce > 0 {
		since, ok := r.dirty[rs.UID]
		if !ok {
			since = now
			r.dirty[rs.UID] = now
		}
		if wait := r.coalesce - now.Sub(since); wait > 0 {
			r.mu.Unlock()
			return wait, nil
		}
	}
	delete(r.dirty, rs.UID)
	delete(r.carriedDirty, rs.UID)
	r.mu.Unlock()

	prev := rs.ResourceVersion
	orig := rs.DeepCopy()
	obj := rs.DeepCopy()
	t := metav1.NewTime(now)
	status.LastUpdateTime = &t
	obj.Status = status
	patch, err := statusPatch(orig, obj)
	if err != nil {
		return 0, err
	}
	if err := r.client.Status().Patch(ctx, obj, patch); err != nil {
		return 0, err
	}
	r.mu.Lock()
	r.written[rs.UID] = &writtenStatus{staleRV: prev, status: *obj.Status.DeepCopy()}
	r.mu.Unlock()
	return 0, nil
}

// noteSkip tells once, in an Event, why raydar leaves a RayService alone.
func (r *reconciler) noteSkip(ctx context.Context, obs *observed) {
	rs := obs.Service
	if obs.SkipReason == "" {
		return
	}
	r.mu.Lock()
	told := r.skipped[rs.UID] == obs.SkipReason
	r.skipped[rs.UID] = obs.SkipReason
	r.mu.Unlock()
	if told {
		return
	}
	log.FromContext(ctx).Info("not reconciling", "reason", obs.SkipReason)
	reason := kit.ReasonManagedElsewhere
	if rayv1.IsManagedBy(rs.Spec.ManagedBy, rayv1.KubeRayController) {
		reason = kit.ReasonOtherOperator
	}
	r.recorder.Eventf(rs, nil, corev1.EventTypeNormal, reason, "Skip", "raydar does not reconcile this RayService: %s", obs.SkipReason)
}

func removeString(list []string, s string) []string {
	out := make([]string, 0, len(list))
	for _, x := range list {
		if x != s {
			out = append(out, x)
		}
	}
	return out
}
