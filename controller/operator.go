package controller

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/raydar/raydar/controller/batchscheduler"
	"github.com/raydar/raydar/controller/batchscheduler/kuberneteswas"
	"github.com/raydar/raydar/controller/features"
	"github.com/raydar/raydar/controller/kit"
	"github.com/raydar/raydar/controller/metrics"
	"github.com/raydar/raydar/controller/raycluster"
	"github.com/raydar/raydar/controller/raycronjob"
	"github.com/raydar/raydar/controller/rayjob"
	"github.com/raydar/raydar/controller/rayservice"

	"github.com/go-logr/logr"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/raydar/raydar/kube/history"
	"github.com/raydar/raydar/kube/raydash"
	kdesc "github.com/raydar/raydar/rayapi/kinds"
	"github.com/raydar/raydar/rayapi/scheme"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// Defaults of Options.
const (
	DefaultLeaderElectionID        = "raydar-operator"
	DefaultLeaderElectionNamespace = "raydar-system"
	DefaultConcurrency             = 32
	DefaultStatusCoalesceWindow    = 2 * time.Second
	DefaultOtherOperatorInterval   = 30 * time.Second
	DefaultQPS                     = 300
	DefaultBurst                   = 600
)

// inClusterNamespaceFile holds the pod's namespace when running in a cluster.
const inClusterNamespaceFile = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// Options configure an Operator. The zero value is usable: leader election
// on, metrics and health probes off, all namespaces.
type Options struct {
	// DisableLeaderElection makes this process reconcile without electing a
	// leader. Only safe when it is the only raydar running.
	DisableLeaderElection bool
	// LeaderElectionNamespace holds the Lease. Default: the pod's namespace
	// in a cluster, else "raydar-system" if it exists… callers outside a
	// cluster usually pass the namespace they may write Leases in.
	LeaderElectionNamespace string
	// LeaderElectionID names the Lease. Default "raydar-operator".
	LeaderElectionID string
	// Identity of this process in the election, shown by LeaderStatus.
	// Default "<hostname>_<random>".
	Identity string
	// LeaseDuration, RenewDeadline and RetryPeriod tune the election
	// (defaults 15 s, 10 s, 2 s as in controller-runtime).
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration

	// MetricsBindAddress serves Prometheus metrics; "" or "0" turns them off.
	MetricsBindAddress string
	// HealthProbeBindAddress serves /healthz and /readyz; "" or "0" turns them off.
	HealthProbeBindAddress string
	// PprofBindAddress serves Go's /debug/pprof (heap, CPU profiles);
	// "" or "0" turns it off.
	PprofBindAddress string

	// Concurrency is the number of objects of each kind (RayClusters,
	// RayJobs, RayServices, RayCronJobs) reconciled at once, as KubeRay's
	// --reconcile-concurrency is for each of its controllers (main.go:277-297);
	// RayJob and RayService take their own when set. Default 32: a
	// bring-up pass is three round trips to the API server (Services, head,
	// workers), so 8 workers left RayClusters created at 80 a second
	// waiting up to 5 s for their first pass (audit log, N=100). RayJobs
	// had 4 whatever the flag said; 32 did not measurably change the 100 and
	// 1,000 RayJob scenarios (docs/benchmarks.md, issue 47), and keep a few
	// RayJobs with unreachable dashboards from holding every RayJob worker.
	Concurrency int
	// Namespaces restricts the operator (and the cache) to these
	// namespaces; empty means all.
	Namespaces []string
	// IgnoreOtherOperators makes raydar reconcile even while a KubeRay
	// operator runs in the cluster.
	IgnoreOtherOperators bool
	// OtherOperatorInterval is how often to look for one. Default 30 s.
	OtherOperatorInterval time.Duration
	// StatusCoalesceWindow holds status changes that are not urgent (counts
	// and addresses while pods come up) for at most this long, so they are
	// written once. Default 2 s; negative writes every change at once.
	StatusCoalesceWindow time.Duration
	// QPS and Burst of the operator's client (a copy of the given config).
	// Defaults 300 and 600: bring-up of many clusters is write-bound.
	QPS   float32
	Burst int
	// ClusterDomain of the cluster DNS. Default $CLUSTER_DOMAIN or cluster.local.
	ClusterDomain string
	// DisableProbeInjection stops adding readiness/liveness probes.
	DisableProbeInjection bool
	// Logger; default controller-runtime's global logger.
	Logger logr.Logger
	// SkipControllerNameValidation allows several Operators in one process
	// (tests).
	SkipControllerNameValidation bool
	// Scheme to use; default scheme.New() (client-go's types and ray.io/v1).
	Scheme *runtime.Scheme
	// PodTransform is what the shared cache keeps of each Ray pod. Default
	// kit.ReconcilerPod: what the reconcilers read (metadata, status, the
	// node, the restart policy, container names and ports), not the rest
	// of the spec. An embedder that reads pods from Cache for more (the
	// TUI's views) passes a transform that keeps what it reads as well,
	// at least what ReconcilerPod keeps; cache.TransformStripManagedFields
	// keeps every pod whole.
	PodTransform toolscache.TransformFunc

	// AddressBook, when set, reaches dashboards and Serve proxies through
	// it (the sandbox's simulated heads) instead of service DNS in a pod or
	// the API server's proxy outside.
	AddressBook AddressBook
	// Dashboards reaches each cluster's Ray dashboard (RayJob, RayService).
	// Default: a raydash resolver with ClusterDomain and AddressBook.
	Dashboards raydash.Resolver
	// ServeProxyChecker checks pods' Serve proxies (RayService). Default:
	// AddressBook's when set, else pod IPs in a pod, the API server's pod
	// proxy outside.
	ServeProxyChecker ServeProxyChecker
	// RayJob and RayService hold the settings of those two kinds alone
	// (RayService.ProxyChecker comes from ServeProxyChecker); what all
	// kinds share (the gate, Namespaces, ClusterDomain, Dashboards, probe
	// injection, name validation) goes to every kind through kit.Shared.
	RayJob     rayjob.Options
	RayService rayservice.Options
	// FeatureGates are KubeRay's feature gates (controller/features); the
	// zero value is raydar's defaults. RayClusterNetworkPolicy on makes
	// spec.networkPolicy into NetworkPolicies instead of refusing it.
	FeatureGates features.Gates
	// BatchScheduler is the batch scheduler of --batch-scheduler
	// (controller/batchscheduler), nil for none: RayClusters and RayJobs
	// get its gang objects (a PodGroup of Volcano's or scheduler-plugins', none for yunikorn and kai-scheduler) and their pods its
	// metadata, as KubeRay v1.6.2 with the same flag. The API server must
	// serve its gang object (its CRDs), if it has one: New refuses otherwise.
	BatchScheduler batchscheduler.Scheduler
	// Authors, when set, is told who wrote each Ray object's spec (from
	// its managedFields, before the cache strips them) for raydar's
	// history (kube/history).
	Authors *history.Authors
	// PodDefaults shape every Ray pod (KubeRay's Configuration
	// headSidecarContainers, workerSidecarContainers, defaultContainerEnvs,
	// defaultPodLabels, defaultPodAnnotations).
	PodDefaults kit.PodDefaults
	// EnableMetrics serves KubeRay's kuberay_* metrics (controller/metrics)
	// on the metrics address, as KubeRay's --enable-metrics.
	EnableMetrics bool
	// UseKubernetesProxy reaches dashboards through the API server's
	// services/proxy even in a pod, as KubeRay's --use-kubernetes-proxy.
	UseKubernetesProxy bool
}

// Operator is raydar's reconcile loop for RayClusters, on a
// controller-runtime manager whose cache other parts of raydar (the TUI)
// share.
type Operator struct {
	mgr  manager.Manager
	gate *kit.Gate
	rec  kit.Known // the RayClusters reconciled and not forgotten
	lock *observingLock
	opts Options
	ns   string
}

// New builds an Operator for all four kinds (RayCluster, RayJob,
// RayService, RayCronJob) on one manager, cache and leader election; Start runs it.
func New(cfg *rest.Config, opts Options) (*Operator, error) {
	if cfg == nil {
		return nil, errors.New("controller: nil rest.Config")
	}
	opts = withDefaults(opts)
	if err := opts.PodDefaults.Validate(); err != nil {
		return nil, fmt.Errorf("controller: the pod defaults (KubeRay's configuration file): %w", err)
	}
	if opts.FeatureGates.Enabled(features.KubernetesWAS) {
		// KubeRay's gate selects its own scheduler and excludes the
		// others (apis/config/v1alpha1/config_utils.go:16-22).
		if opts.BatchScheduler != nil {
			return nil, fmt.Errorf("controller: the KubernetesWAS feature gate cannot be combined with --batch-scheduler or --enable-batch-scheduler (--batch-scheduler %s)", opts.BatchScheduler.Name())
		}
		opts.BatchScheduler = kuberneteswas.Scheduler{}
	}
	cfg = rest.CopyConfig(cfg)
	if opts.FeatureGates.Enabled(features.SidecarSubmitterRestart) {
		if err := checkSidecarRestartServer(cfg); err != nil { // sidecar_restart.go
			return nil, err
		}
	}
	cfg.QPS, cfg.Burst = opts.QPS, opts.Burst
	if cfg.UserAgent == "" {
		cfg.UserAgent = "raydar-operator"
	}

	cacheOpts := cache.Options{
		DefaultTransform: opts.Authors.Keep(cache.TransformStripManagedFields()),
		ByObject: map[client.Object]cache.ByObject{
			&corev1.Pod{}:     {Label: kit.RayPodsCacheSelector(), Transform: opts.PodTransform},
			&corev1.Service{}: {Label: kit.RayServicesCacheSelector()},
		},
	}
	if len(opts.Namespaces) > 0 {
		cacheOpts.DefaultNamespaces = map[string]cache.Config{}
		for _, ns := range opts.Namespaces {
			cacheOpts.DefaultNamespaces[ns] = cache.Config{}
		}
	}
	mopts := manager.Options{
		Scheme: opts.Scheme,
		Logger: opts.Logger,
		Cache:  cacheOpts,
		Client: client.Options{Cache: &client.CacheOptions{
			// Unstructured objects are read from the cache too: the
			// Kubernetes WAS Workloads and PodGroups the RayCluster
			// controller owns and watches (its other unstructured reads,
			// cert-manager's, go through the live reader).
			Unstructured: true,
			// Read live, never cached: nothing needs a watch on these.
			DisableFor: []client.Object{&batchv1.Job{}, &corev1.ServiceAccount{}, &rbacv1.Role{},
				&rbacv1.RoleBinding{}, &coordinationv1.Lease{}},
		}},
		Metrics:                metricsserver.Options{BindAddress: orZero(opts.MetricsBindAddress)},
		HealthProbeBindAddress: orZero(opts.HealthProbeBindAddress),
		PprofBindAddress:       orZero(opts.PprofBindAddress),
		LeaseDuration:          &opts.LeaseDuration,
		RenewDeadline:          &opts.RenewDeadline,
		RetryPeriod:            &opts.RetryPeriod,
		Controller:             ctrlConfig(opts),
	}

	o := &Operator{opts: opts}
	if !opts.DisableLeaderElection {
		ns := opts.LeaderElectionNamespace
		lcfg := rest.CopyConfig(cfg)
		lcfg.Timeout = max(opts.RenewDeadline/2, time.Second)
		cs, err := kubernetes.NewForConfig(rest.AddUserAgent(lcfg, "leader-election"))
		if err != nil {
			return nil, err
		}
		l, err := resourcelock.New(resourcelock.LeasesResourceLock, ns, opts.LeaderElectionID,
			cs.CoreV1(), cs.CoordinationV1(), resourcelock.ResourceLockConfig{Identity: opts.Identity})
		if err != nil {
			return nil, err
		}
		o.lock = &observingLock{Interface: l}
		o.ns = ns
		mopts.LeaderElection = true
		mopts.LeaderElectionID = opts.LeaderElectionID
		mopts.LeaderElectionNamespace = ns
		mopts.LeaderElectionResourceLockInterface = o.lock
		mopts.LeaderElectionReleaseOnCancel = true
		mopts.Logger = quietRelease(mopts.Logger)
	}

	// client-go's REST client histograms, which KubeRay's operator serves
	// with or without --enable-metrics (controllers/ray/metrics/
	// client_go_metrics.go) and controller-runtime registers on request
	// only: the same names, labels and buckets (but DNS resolution's,
	// which reach 60 s here, 30 s in KubeRay). Once per process, as
	// client-go's adapters are the process's.
	ctrlmetrics.RegisterRESTClientMetrics(ctrlmetrics.MetricRequestLatency, ctrlmetrics.MetricDNSResolutionLatency,
		ctrlmetrics.MetricRequestSize, ctrlmetrics.MetricResponseSize, ctrlmetrics.MetricRateLimiterLatency, ctrlmetrics.MetricRequestRetry)
	if s := opts.BatchScheduler; s != nil {
		if err := s.AddToScheme(opts.Scheme); err != nil {
			return nil, fmt.Errorf("controller: --batch-scheduler %s: %w", s.Name(), err)
		}
	}
	mgr, err := ctrl.NewManager(cfg, mopts)
	if err != nil {
		return nil, fmt.Errorf("controller: creating the manager: %w", err)
	}
	if err := checkBatchScheduler(mgr, opts.BatchScheduler); err != nil {
		return nil, err
	}
	o.mgr = mgr
	o.gate = kit.NewGate(mgr.GetAPIReader(), opts.IgnoreOtherOperators)
	o.gate.Cache = mgr.GetClient()
	dash, err := dashboards(mgr, opts)
	if err != nil {
		return nil, err
	}
	known, err := kit.Setup(mgr, kit.Shared{
		Gate: o.gate, Namespaces: opts.Namespaces, ClusterDomain: opts.ClusterDomain,
		InjectProbes: !opts.DisableProbeInjection, Dashboards: dash,
		SkipNameValidation: opts.SkipControllerNameValidation, Features: opts.FeatureGates,
		BatchScheduler: opts.BatchScheduler, PodDefaults: opts.PodDefaults,
	}, kinds(opts)...)
	if err != nil {
		return nil, err
	}
	o.rec = known[kdesc.RayCluster]
	if err := mgr.Add(&kit.OtherOperatorWatcher{G: o.gate, Interval: opts.OtherOperatorInterval}); err != nil {
		return nil, err
	}
	if opts.EnableMetrics {
		// KubeRay's kuberay_* metrics, on every replica as KubeRay serves
		// them (its collectors read the cache, leader or not).
		m := metrics.New(mgr.GetCache(), opts.Logger.WithName("metrics"))
		if err := mgr.Add(metrics.Runnable{M: m, Reg: ctrlmetrics.Registry, Src: mgr.GetCache()}); err != nil {
			return nil, err
		}
	}
	if opts.HealthProbeBindAddress != "" && opts.HealthProbeBindAddress != "0" {
		if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
			return nil, err
		}
		if err := mgr.AddReadyzCheck("cache", func(r *http.Request) error {
			if !mgr.GetCache().WaitForCacheSync(r.Context()) {
				return errors.New("cache not synced")
			}
			return nil
		}); err != nil {
			return nil, err
		}
	}
	return o, nil
}

func ctrlConfig(opts Options) (c config.Controller) {
	c.SkipNameValidation = &opts.SkipControllerNameValidation
	c.MaxConcurrentReconciles = opts.Concurrency
	return c
}

func orZero(addr string) string {
	if addr == "" {
		return "0"
	}
	return addr
}

func withDefaults(o Options) Options {
	if o.LeaderElectionID == "" {
		o.LeaderElectionID = DefaultLeaderElectionID
	}
	if o.LeaderElectionNamespace == "" {
		o.LeaderElectionNamespace = DefaultLeaderElectionNamespace
		if b, err := os.ReadFile(inClusterNamespaceFile); err == nil && strings.TrimSpace(string(b)) != "" {
			o.LeaderElectionNamespace = strings.TrimSpace(string(b))
		}
	}
	if o.Identity == "" {
		host, _ := os.Hostname()
		o.Identity = host + "_" + string(uuid.NewUUID())[:8]
	}
	if o.LeaseDuration == 0 {
		o.LeaseDuration = 15 * time.Second
	}
	if o.RenewDeadline == 0 {
		o.RenewDeadline = 10 * time.Second
	}
	if o.RetryPeriod == 0 {
		o.RetryPeriod = 2 * time.Second
	}
	if o.Concurrency <= 0 {
		o.Concurrency = DefaultConcurrency
	}
	if o.OtherOperatorInterval <= 0 {
		o.OtherOperatorInterval = DefaultOtherOperatorInterval
	}
	if o.StatusCoalesceWindow == 0 {
		o.StatusCoalesceWindow = DefaultStatusCoalesceWindow
	}
	if o.QPS == 0 {
		o.QPS = DefaultQPS
	}
	if o.Burst == 0 {
		o.Burst = DefaultBurst
	}
	if o.ClusterDomain == "" {
		o.ClusterDomain = os.Getenv("CLUSTER_DOMAIN")
	}
	if o.ClusterDomain == "" {
		o.ClusterDomain = "cluster.local"
	}
	if o.Scheme == nil {
		o.Scheme = scheme.New()
	}
	if o.PodTransform == nil {
		o.PodTransform = kit.ReconcilerPod
	}
	return o
}

// Start runs the operator until ctx is done: the shared cache, the leader
// election, and (while leading) the reconcile loop. It first looks once for
// another operator, so that nothing is touched before that is known. It
// returns an error if leadership is lost; callers that want to stay a
// candidate start a new Operator.
func (o *Operator) Start(ctx context.Context) error {
	o.gate.Check(ctx)
	return o.mgr.Start(ctx)
}

// StartInBackground builds an Operator and runs it until ctx is done, for
// embedding (the TUI): it returns at once; Start's result arrives on the
// channel (nil when ctx ends, an error when leadership is lost or the
// manager fails).
func StartInBackground(ctx context.Context, cfg *rest.Config, opts Options) (*Operator, <-chan error, error) {
	op, err := New(cfg, opts)
	if err != nil {
		return nil, nil, err
	}
	done := make(chan error, 1)
	go func() { done <- op.Start(ctx) }()
	return op, done, nil
}

// Cache is the manager's informer cache, shared with the TUI. It holds
// RayClusters, Ray pods (those labelled ray.io/node-type, as
// Options.PodTransform keeps them) and Ray Services (labelled
// ray.io/cluster), without managed fields; other kinds are added on first
// use. Reads block until the cache has synced.
func (o *Operator) Cache() cache.Cache { return o.mgr.GetCache() }

// Client reads from Cache and writes to the API server.
func (o *Operator) Client() client.Client { return o.mgr.GetClient() }

// Manager exposes the controller-runtime manager, to add more controllers
// (RayJob, RayService) to the same cache and election.
func (o *Operator) Manager() manager.Manager { return o.mgr }

// Elected is closed once this process leads (at once without election).
func (o *Operator) Elected() <-chan struct{} { return o.mgr.Elected() }

// BatchScheduler names the batch scheduler the loop runs with: the
// --batch-scheduler value, KubernetesWAS's scheduler, or "" for none.
func (o *Operator) BatchScheduler() string { return batchscheduler.NameOf(o.opts.BatchScheduler) }

// Leader says who leads the election, for the TUI header.
func (o *Operator) Leader() LeaderStatus {
	s := LeaderStatus{Enabled: !o.opts.DisableLeaderElection, Identity: o.opts.Identity, LeaseDuration: o.opts.LeaseDuration}
	select {
	case <-o.mgr.Elected():
		s.IsLeader = true
	default:
	}
	if o.lock == nil {
		s.Holder = o.opts.Identity
		return s
	}
	s.Lease = o.ns + "/" + o.opts.LeaderElectionID
	rec, at, lastErr := o.lock.snapshot()
	s.LastError = lastErr
	s.Holder = rec.HolderIdentity
	s.RenewTime = rec.RenewTime.Time
	if rec.LeaseDurationSeconds > 0 {
		s.LeaseDuration = time.Duration(rec.LeaseDurationSeconds) * time.Second
	}
	s.ObservedAt = at
	if s.IsLeader {
		s.Holder = o.opts.Identity
	}
	return s
}

// OtherOperator says whether a KubeRay operator was found in the cluster,
// and what raydar does about it.
func (o *Operator) OtherOperator() kit.OtherOperator { return o.gate.OtherOperator() }

// Unmanaged lists the RayClusters raydar leaves alone (spec.managedBy names
// another controller, or a KubeRay operator runs), with the reason. Only the
// leader fills it.
func (o *Operator) Unmanaged() map[types.NamespacedName]string { return o.gate.Unmanaged() }

// SkipReason says why raydar would not reconcile rc ("" if it would), from
// spec.managedBy and the current other-operator detection; any process can
// call it, leader or not.
func (o *Operator) SkipReason(rc *rayv1.RayCluster) string { return o.gate.SkipReason(rc) }

// kinds are the four kinds' registrations, each with its own options:
// the one place Options reach a kind (what all kinds share goes to
// kit.Shared in New).
func kinds(opts Options) []kit.Registration {
	rs, rj := opts.RayService, opts.RayJob
	rs.Concurrency = cmp.Or(rs.Concurrency, opts.Concurrency)
	rj.Concurrency = cmp.Or(rj.Concurrency, opts.Concurrency)
	rs.ProxyChecker = opts.ServeProxyChecker
	rs.ThroughAPIServer = opts.UseKubernetesProxy // KubeRay's --use-kubernetes-proxy (dashboards: see dashboards)
	if rs.ProxyChecker == nil && opts.AddressBook != nil {
		rs.ProxyChecker = ServeProxyCheckerFromAddressBook(opts.AddressBook)
	}
	regs := []kit.Registration{
		raycluster.Registration(raycluster.Options{StatusCoalesceWindow: opts.StatusCoalesceWindow, Concurrency: opts.Concurrency,
			NetworkPolicies: opts.FeatureGates.Enabled(features.RayClusterNetworkPolicy), BatchScheduler: opts.BatchScheduler}),
		rayjob.Registration(rj),
		rayservice.Registration(rs),
	}
	// RayCronJob=false (KubeRay's default, which its chart renders) runs no
	// RayCronJob controller, as KubeRay's main.go does with the gate off.
	if opts.FeatureGates.Enabled(features.RayCronJob) {
		regs = append(regs, raycronjob.Registration(raycronjob.Options{Local: time.Local, Concurrency: opts.Concurrency}))
	}
	return regs
}

// checkBatchScheduler refuses a batch scheduler whose gang object the API
// server does not serve (its CRDs not installed): the controller would
// wait forever for a watch that cannot start. KubeRay's operator fails
// likewise, later and in fewer words.
func checkBatchScheduler(mgr manager.Manager, s batchscheduler.Scheduler) error {
	if was, ok := s.(kuberneteswas.Scheduler); ok {
		// KubeRay refuses to start likewise (kubernetes-was/scheduler.go,
		// selectProvider: "scheduling.k8s.io/v1alpha2 API is not available").
		for _, gvk := range was.Kinds() {
			if _, err := mgr.GetRESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version); err != nil {
				return fmt.Errorf("--feature-gates KubernetesWAS=true: the API server does not serve %s %s (%v): Kubernetes 1.36 serves it, "+
					"with --runtime-config=scheduling.k8s.io/v1alpha2=true and --feature-gates=GenericWorkload=true on kube-apiserver (1.37 removed it); "+
					"`raydar sandbox --kubernetes 1.36` runs such a control plane", gvk.GroupVersion(), gvk.Kind, err)
			}
		}
		return nil
	}
	if !batchscheduler.HasGroup(s) {
		return nil // none, or labels and annotations only (yunikorn, kai-scheduler)
	}
	gk := s.GroupKind()
	if _, err := mgr.GetRESTMapper().RESTMapping(gk); err != nil {
		if meta.IsNoMatchError(err) {
			return fmt.Errorf("--batch-scheduler %s: the API server does not serve %s (%s's CRDs are not installed; "+
				"`raydar sandbox --batch-scheduler %s` installs them in a sandbox)", s.Name(), gk.String(), s.Name(), s.Name())
		}
		return fmt.Errorf("--batch-scheduler %s: looking up %s: %w", s.Name(), gk.String(), err)
	}
	return nil
}

// dashboards is Options.Dashboards, or a raydash resolver with
// ClusterDomain and AddressBook (the API server's service proxy with
// UseKubernetesProxy and no AddressBook).
func dashboards(mgr manager.Manager, opts Options) (raydash.Resolver, error) {
	if opts.Dashboards != nil {
		return opts.Dashboards, nil
	}
	ro := raydash.Options{Config: mgr.GetConfig(), Secrets: raydash.SecretsFromReader(mgr.GetAPIReader()),
		HeadServiceName: kit.HeadServiceName, ClusterDomain: opts.ClusterDomain}
	if opts.AddressBook != nil {
		ro.AddressBook = opts.AddressBook
	} else if opts.UseKubernetesProxy {
		ro.Mode = raydash.ModeServiceProxy // KubeRay's --use-kubernetes-proxy: in a pod too
	}
	res, err := raydash.New(ro)
	if err != nil {
		return nil, fmt.Errorf("controller: dashboards: %w", err)
	}
	return res, nil
}
