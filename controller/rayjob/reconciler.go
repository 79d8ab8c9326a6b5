package rayjob

// The RayJob reconciler's registration (Registration, for kit.Setup:
// watches, side cache, index, Options) and its pass: observe, Decide, act.

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crevent "sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/raydar/raydar/controller/kit"
	"github.com/raydar/raydar/controller/raycluster"
	"github.com/raydar/raydar/kube/raydash"
	"github.com/raydar/raydar/rayapi/kinds"
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

// DefaultConcurrency is the number of RayJobs reconciled at once.
const DefaultConcurrency = 4

// clusterNameField indexes cached RayJobs by status.rayClusterName.
const clusterNameField = "raydar.status.rayClusterName"

// Options are the RayJob reconciler's own settings; what all kinds share
// (the gate, namespaces, cluster domain, probes, dashboards) comes in
// kit.Shared. The zero value is usable.
type Options struct {
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
	// Now replaces time.Now (tests).
	Now func() time.Time

	// AfterStopRecorded, when set, runs after a confirmed stop has been
	// recorded on the RayJob and before anything else (the finalizer); an
	// error ends the pass there. Tests use it to stand for a crash.
	AfterStopRecorded func(*rayv1.RayJob) error
}

// config is o over the defaults (defaultConfig), with what all kinds
// share.
func (o Options) config(sh kit.Shared) config {
	d := defaultConfig()
	c := config{
		ClusterDomain:                kit.OrDefault(sh.ClusterDomain, d.ClusterDomain),
		Build:                        raycluster.SharedBuildConfig(sh),
		StopConfirmTimeout:           kit.OrDefault(o.StopConfirmTimeout, d.StopConfirmTimeout),
		StatusCheckTimeout:           kit.OrDefault(o.StatusCheckTimeout, d.StatusCheckTimeout),
		TransitionGracePeriod:        kit.OrDefault(o.TransitionGracePeriod, d.TransitionGracePeriod),
		SubmitterFinishedGrace:       d.SubmitterFinishedGrace,
		MinPoll:                      kit.OrDefault(o.MinPollInterval, d.MinPoll),
		MaxPoll:                      kit.OrDefault(o.MaxPollInterval, d.MaxPoll),
		DeleteRayJobAfterJobFinishes: o.DeleteRayJobAfterJobFinishes,
	}
	c.MaxPoll = max(c.MaxPoll, c.MinPoll)
	c.DashboardWarnAfter = 10 * c.MinPoll
	return c
}

// Registration is the RayJob reconciler's registration for kit.Setup
// (normally on Operator.Manager(), so that it shares the cache and the
// leader election). It watches RayJobs (spec and metadata), the RayClusters
// they use and the head pods of SidecarMode submitters (by
// status.rayClusterName, indexed), and in a side cache their submitter
// Jobs and head Services.
func Registration(opts Options) *kit.Kind[*rayv1.RayJob] {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	// Submitter Jobs and the RayJobs' head Services are watched in a cache
	// of their own that holds only the Jobs and Services of RayJobs (the
	// head Service carries KubeRay's labels, without ray.io/cluster, so
	// the shared cache does not hold it).
	ofRayJobs := labels.SelectorFromSet(labels.Set{rayv1.RayOriginatedFromCRDLabelKey: rayv1.RayOriginatedFromCRDLabelValue(rayv1.KindRayJob)})
	return &kit.Kind[*rayv1.RayJob]{
		Desc:       kinds.RayJob,
		ManagedBy:  func(j *rayv1.RayJob) *string { return j.Spec.ManagedBy },
		Predicates: []predicate.Predicate{kit.SpecOrMetaChanged()},
		Indexes:    []kit.Index{{Object: &rayv1.RayJob{}, Field: clusterNameField, Extract: usedCluster}},
		Side: &kit.Side{What: "submitter Job", Selector: ofRayJobs,
			Objects: []client.Object{&batchv1.Job{}, &corev1.Service{}}},
		Concurrency: kit.OrDefault(opts.Concurrency, DefaultConcurrency),
		Now:         opts.Now,
		Build: func(p *kit.Parts[*rayv1.RayJob]) (kit.Reconciler[*rayv1.RayJob], error) {
			return &reconciler{
				client: p.Client, api: p.API, jobs: p.Side,
				events: p.Events, exp: p.Exp, status: p.Status, loop: p.Loop,
				dash: p.Dashboards, cfg: opts.config(p.Shared), now: opts.Now, newSuffix: kit.RandomSuffix,
				afterStopRecorded: opts.AfterStopRecorded,
				stops:             map[types.UID]StopRecord{}, stopFails: map[types.UID]*stopFailure{},
				checkFailSince: map[types.UID]checkFail{},
			}, nil
		},
	}
}

// usedCluster indexes a RayJob by status.rayClusterName (clusterNameField).
func usedCluster(obj client.Object) []string {
	if n := obj.(*rayv1.RayJob).Status.RayClusterName; n != "" {
		return []string{n}
	}
	return nil
}

// Watch adds the watches beyond the RayJobs themselves (kit.Watcher): the
// RayClusters they use, the head pods of SidecarMode submitters, and the
// side cache's submitter Jobs and head Services.
func (r *reconciler) Watch(b *builder.Builder) *builder.Builder {
	headPods := predicate.Funcs{
		CreateFunc:  func(e crevent.CreateEvent) bool { return isSidecarHead(e.Object) },
		DeleteFunc:  func(e crevent.DeleteEvent) bool { return isSidecarHead(e.Object) },
		GenericFunc: func(crevent.GenericEvent) bool { return false },
		UpdateFunc: func(e crevent.UpdateEvent) bool {
			return isSidecarHead(e.ObjectNew) && kit.RelevantChange(e.ObjectOld, e.ObjectNew)
		},
	}
	return b.
		Watches(&rayv1.RayCluster{}, handler.EnqueueRequestsFromMapFunc(r.clusterToRayJobs)).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(r.podToRayJobs), builder.WithPredicates(headPods)).
		WatchesRawSource(source.Kind(r.jobs, &batchv1.Job{},
			handler.TypedEnqueueRequestsFromMapFunc(func(_ context.Context, j *batchv1.Job) []reconcile.Request {
				return ownerRequest(j)
			}))).
		WatchesRawSource(source.Kind(r.jobs, &corev1.Service{},
			handler.TypedEnqueueRequestsFromMapFunc(func(_ context.Context, s *corev1.Service) []reconcile.Request {
				return ownerRequest(s)
			})))
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
	jobs      cache.Cache   // submitter Jobs and head Services of RayJobs (the side cache)
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

// Pass is observe → Decide → act (kit.Reconciler), after kit.Loop's
// prologue.
func (r *reconciler) Pass(ctx context.Context, rj *rayv1.RayJob) (ctrl.Result, error) {
	obs, err := r.observe(ctx, rj)
	if err != nil || obs == nil { // nil: gone (its deletion brings the pass that forgets it)
		return ctrl.Result{}, err
	}
	return r.act(ctx, obs, Decide(obs))
}

// Forget drops what memory.go remembers of a RayJob that is gone
// (kit.Forgetter).
func (r *reconciler) Forget(uid types.UID, _ types.NamespacedName) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.stops, uid)
	delete(r.stopFails, uid)
	delete(r.checkFailSince, uid)
}
