package rayjob

// The RayJob reconciler's I/O: observe (cache, the dashboard), act (writes
// in the order the plan gives), and its registration with the manager.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/raydar/raydar/controller/kit"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
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
	jobOpts := cache.Options{
		Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper(),
		DefaultTransform: cache.TransformStripManagedFields(),
		ByObject: map[client.Object]cache.ByObject{
			&batchv1.Job{}:    {Label: ofRayJobs},
			&corev1.Service{}: {Label: ofRayJobs},
		},
	}
	if len(namespaces) > 0 {
		jobOpts.DefaultNamespaces = map[string]cache.Config{}
		for _, ns := range namespaces {
			jobOpts.DefaultNamespaces[ns] = cache.Config{}
		}
	}
	jobs, err := cache.New(mgr.GetConfig(), jobOpts)
	if err != nil {
		return fmt.Errorf("controller: submitter Job cache: %w", err)
	}
	if err := mgr.Add(jobs); err != nil {
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
		recorder: mgr.GetEventRecorder(ControllerName),
		dash:     opts.Dashboards, gate: g, cfg: cfg, now: opts.Now, newSuffix: kit.RandomSuffix,
		afterStopRecorded: opts.AfterStopRecorded,
		written:           map[types.UID]*writtenJob{}, stops: map[types.UID]StopRecord{},
		stopFails: map[types.UID]*stopFailure{}, told: map[types.UID]map[string]string{},
		uids: map[types.NamespacedName]types.UID{}, checkFailSince: map[types.UID]checkFail{},
	}

	jobPredicate := predicate.Or[client.Object](predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{},
		predicate.LabelChangedPredicate{}, kit.FinalizersChanged(), predicate.Funcs{UpdateFunc: func(e crevent.UpdateEvent) bool {
			return (e.ObjectOld.GetDeletionTimestamp() == nil) != (e.ObjectNew.GetDeletionTimestamp() == nil)
		}})
	headPods := predicate.Funcs{
		CreateFunc:  func(e crevent.CreateEvent) bool { return isSidecarHead(e.Object) },
		DeleteFunc:  func(e crevent.DeleteEvent) bool { return isSidecarHead(e.Object) },
		GenericFunc: func(crevent.GenericEvent) bool { return false },
		UpdateFunc: func(e crevent.UpdateEvent) bool {
			return isSidecarHead(e.ObjectNew) && kit.RelevantChange(e.ObjectOld, e.ObjectNew)
		},
	}
	err = ctrl.NewControllerManagedBy(mgr).
		Named("rayjob").
		For(&rayv1.RayJob{}, builder.WithPredicates(jobPredicate)).
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
		WithOptions(controller.Options{MaxConcurrentReconciles: opts.Concurrency, SkipNameValidation: &skipNames}).
		Complete(r)
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
	recorder  recorder.EventRecorder
	dash      raydash.Resolver
	gate      *kit.Gate
	cfg       config
	now       func() time.Time
	newSuffix func() string

	afterStopRecorded func(*rayv1.RayJob) error

	mu sync.Mutex
	// written is this process's last write of each RayJob, until the cache
	// shows it.
	written map[types.UID]*writtenJob
	// stops are confirmed stops, until the RayJob's status shows them.
	stops map[types.UID]StopRecord
	// stopFails counts unconfirmed attempts of the current stop.
	stopFails map[types.UID]*stopFailure
	// told remembers which warnings were already given (key → message), so
	// that a failure repeating every pass gives one Event.
	told map[types.UID]map[string]string
	uids map[types.NamespacedName]types.UID
	// checkFailSince is the dashboard failure clock of RayJobs whose CRD
	// does not keep status.jobStatusCheckFailureStartTime.
	checkFailSince map[types.UID]checkFail
	// prunesConditions: the API server dropped the conditions of a status
	// this process wrote (KubeRay's RayJob CRD has none).
	prunesConditions atomic.Bool
}

type checkFail struct {
	jobID string
	since metav1.Time
}

type writtenJob struct {
	staleRV string
	obj     *rayv1.RayJob
}

type stopFailure struct {
	key  string // job ID and request the failures are about
	n    int
	at   time.Time
	last string
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

// Reconcile implements reconcile.Reconciler.
func (r *reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	rj := &rayv1.RayJob{}
	if err := r.client.Get(ctx, req.NamespacedName, rj); err != nil {
		if apierrors.IsNotFound(err) {
			r.forget(req.NamespacedName)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	r.mu.Lock()
	r.uids[req.NamespacedName] = rj.UID
	r.mu.Unlock()
	rj = r.readYourWrites(rj)
	obs, err := r.observe(ctx, rj)
	if err != nil {
		return ctrl.Result{}, err
	}
	p := Decide(obs)
	res, err := r.act(ctx, obs, p)
	if apierrors.IsConflict(err) {
		// Someone else wrote the RayJob: decide again from a fresh read,
		// soon (the cache brings the new version).
		log.FromContext(ctx).V(1).Info("conflict writing the RayJob; deciding again", "error", err.Error())
		return ctrl.Result{RequeueAfter: soon}, nil
	}
	return res, err
}

func (r *reconciler) forget(nn types.NamespacedName) {
	r.mu.Lock()
	defer r.mu.Unlock()
	uid, ok := r.uids[nn]
	if !ok {
		return
	}
	delete(r.uids, nn)
	delete(r.written, uid)
	delete(r.stops, uid)
	delete(r.stopFails, uid)
	delete(r.told, uid)
	delete(r.checkFailSince, uid)
}

// readYourWrites returns this process's last written version when the
// cache still shows the version that write replaced.
func (r *reconciler) readYourWrites(rj *rayv1.RayJob) *rayv1.RayJob {
	r.mu.Lock()
	defer r.mu.Unlock()
	w, ok := r.written[rj.UID]
	if !ok {
		return rj
	}
	if rj.ResourceVersion == w.staleRV {
		return w.obj.DeepCopy()
	}
	delete(r.written, rj.UID)
	return rj
}

func (r *reconciler) rememberWrite(prevRV string, obj *rayv1.RayJob) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if w, ok := r.written[obj.UID]; ok && w.obj.ResourceVersion == prevRV {
		// A second write in one pass: the cache may still show the
		// version before the first.
		prevRV = w.staleRV
	}
	r.written[obj.UID] = &writtenJob{staleRV: prevRV, obj: obj.DeepCopy()}
}

// skipReason says why raydar leaves rj alone: its spec.managedBy names
// another controller, or a KubeRay operator runs (the Operator's gate).
func (r *reconciler) skipReason(rj *rayv1.RayJob) string {
	probe := &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Annotations: rj.Annotations}, Spec: rayv1.RayClusterSpec{ManagedBy: rj.Spec.ManagedBy}}
	var why string
	if r.gate != nil {
		why = r.gate.SkipReason(probe)
	} else {
		why = kit.SkipReason(probe, kit.OtherOperator{})
	}
	return strings.ReplaceAll(why, "this cluster", "this RayJob")
}

// observe reads what Decide needs.
func (r *reconciler) observe(ctx context.Context, rj *rayv1.RayJob) (*Observed, error) {
	o := &Observed{Job: rj, Now: r.now(), Config: r.cfg, NewSuffix: r.newSuffix}
	if o.SkipReason = r.skipReason(rj); o.SkipReason != "" {
		if r.tell(rj.UID, "skip", o.SkipReason) {
			log.FromContext(ctx).Info("not reconciling", "reason", o.SkipReason)
			r.recorder.Eventf(rj, nil, corev1.EventTypeNormal, kit.ReasonManagedElsewhere, "Skip", "raydar does not reconcile this RayJob: %s", o.SkipReason)
		}
		return o, nil
	}
	r.untell(rj.UID, "skip")
	st := &rj.Status
	mode := rj.Spec.EffectiveSubmissionMode()

	// A confirmed stop this process has not seen recorded yet.
	r.mu.Lock()
	rec, haveRec := r.stops[rj.UID]
	if f := r.stopFails[rj.UID]; f != nil {
		o.StopFailures, o.StopLastAttempt, o.StopLastError = f.n, f.at, f.last
	}
	r.mu.Unlock()
	if haveRec {
		if cur, ok := StopRecordOf(rj); !ok || !cur.Confirmed || cur.JobID != rec.JobID || cur.Request != rec.Request {
			rj = rj.DeepCopy()
			SetStopRecord(rj, rec, "confirmed by the dashboard", o.Now)
			o.Job, st = rj, &rj.Status
			o.UnrecordedStop = rj.Annotations[rayv1.JobStopRecordAnnotationKey]
		}
	}
	o.StatusPrunesConditions = r.prunesConditions.Load()
	// The dashboard failure clock, when the CRD prunes it (KubeRay v1.5.0's
	// RayJob status has no jobStatusCheckFailureStartTime).
	r.mu.Lock()
	if c, ok := r.checkFailSince[rj.UID]; ok && st.JobStatusCheckFailureStartTime == nil && c.jobID == st.JobId &&
		st.JobDeploymentStatus == rayv1.JobDeploymentStatusRunning {
		rj = rj.DeepCopy()
		rj.Status.JobStatusCheckFailureStartTime = c.since.DeepCopy()
		o.Job, st = rj, &rj.Status
	}
	r.mu.Unlock()

	if st.RayClusterName != "" {
		rc := &rayv1.RayCluster{}
		err := r.client.Get(ctx, types.NamespacedName{Namespace: rj.Namespace, Name: st.RayClusterName}, rc)
		switch {
		case err == nil:
			o.Cluster = rc
		case !apierrors.IsNotFound(err):
			return nil, fmt.Errorf("reading RayCluster %s: %w", st.RayClusterName, err)
		}
	}
	if rj.DeletionTimestamp != nil && o.Cluster != nil && o.Cluster.DeletionTimestamp != nil {
		pods := &corev1.PodList{}
		if err := r.client.List(ctx, pods, client.InNamespace(rj.Namespace),
			client.MatchingLabelsSelector{Selector: kit.ClusterPodsSelector(o.Cluster.Name)}); err != nil {
			return nil, fmt.Errorf("listing the pods of RayCluster %s: %w", o.Cluster.Name, err)
		}
		o.ClusterEmpty = len(pods.Items) == 0
	}
	if mode == rayv1.K8sJobMode {
		job := &batchv1.Job{}
		err := r.jobs.Get(ctx, types.NamespacedName{Namespace: rj.Namespace, Name: kit.RayJobSubmitterName(rj)}, job)
		switch {
		case err == nil:
			o.Submitter = job
		case !apierrors.IsNotFound(err):
			return nil, fmt.Errorf("reading the submitter Job: %w", err)
		}
	}
	if !rj.Spec.UsesClusterSelector() && rj.DeletionTimestamp == nil {
		svc := &corev1.Service{}
		err := r.jobs.Get(ctx, types.NamespacedName{Namespace: rj.Namespace, Name: HeadServiceName(rj)}, svc)
		switch {
		case err == nil:
			o.HeadService = svc
		case !apierrors.IsNotFound(err):
			return nil, fmt.Errorf("reading the head Service: %w", err)
		}
	}
	if mode == rayv1.SidecarMode && o.Cluster != nil {
		pods := &corev1.PodList{}
		if err := r.client.List(ctx, pods, client.InNamespace(rj.Namespace), client.MatchingLabels(kit.HeadSelector(o.Cluster.Name))); err != nil {
			return nil, fmt.Errorf("listing head pods: %w", err)
		}
		for i := range pods.Items {
			if p := &pods.Items[i]; p.DeletionTimestamp == nil && kit.ControllerUID(p.OwnerReferences) == string(o.Cluster.UID) {
				o.HeadPod = p
			}
		}
	}
	// Ask the dashboard about a running job.
	if rj.DeletionTimestamp == nil && st.JobDeploymentStatus == rayv1.JobDeploymentStatusRunning && st.JobId != "" &&
		o.Cluster != nil && o.Cluster.DeletionTimestamp == nil {
		o.Dash = &DashAnswer{}
		dc, err := r.dash.ClientFor(ctx, o.Cluster)
		if err == nil {
			o.Dash.Info, err = dc.GetJobInfo(ctx, st.JobId)
		}
		o.Dash.Err = err
		if errors.Is(err, context.Canceled) {
			return nil, err
		}
		if errors.Is(err, dashboard.ErrUnauthorized) {
			if fr, ok := r.dash.(interface{ ForgetToken(*rayv1.RayCluster) }); ok {
				fr.ForgetToken(o.Cluster)
			}
		}
	}
	return o, nil
}

// tell records that a warning with this key and message was given; it
// reports whether it is new.
func (r *reconciler) tell(uid types.UID, key, msg string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := r.told[uid]
	if m == nil {
		m = map[string]string{}
		r.told[uid] = m
	}
	if m[key] == msg {
		return false
	}
	m[key] = msg
	return true
}

func (r *reconciler) untell(uid types.UID, key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.told[uid], key)
}

func (r *reconciler) event(rj *rayv1.RayJob, e kit.Event) {
	r.recorder.Eventf(rj, nil, e.Type, e.Reason, e.Action, "%s", kit.Truncate(e.Message, 1000))
}

// act carries out the plan.
func (r *reconciler) act(ctx context.Context, o *Observed, p *Plan) (ctrl.Result, error) {
	logger := log.FromContext(ctx)
	rj := o.Job.DeepCopy()
	res := ctrl.Result{RequeueAfter: p.RequeueAfter}

	if p.AddFinalizer {
		if err := r.patchFinalizers(ctx, rj, func(f []string) []string { return append(f, rayv1.RayJobStopJobFinalizer) }); err != nil {
			return res, err
		}
	}
	if v := p.StopRecord; v != "" {
		if err := r.patchStopRecord(ctx, rj, v); err != nil {
			if apierrors.IsNotFound(err) {
				return ctrl.Result{}, nil
			}
			return res, err
		}
	}
	if p.WriteStatus {
		if err := r.writeStatus(ctx, rj, p.Status); err != nil {
			if apierrors.IsNotFound(err) {
				return ctrl.Result{}, nil
			}
			return res, err
		}
	}
	for _, e := range p.Events {
		r.event(rj, e)
	}

	var errs []error
	fail := func(key, reason, action, msg string, err error) {
		errs = append(errs, fmt.Errorf("%s: %w", msg, err))
		if r.tell(rj.UID, key, reason+msg) {
			r.event(rj, kit.Event{Type: corev1.EventTypeWarning, Reason: reason, Action: action, Message: msg + ": " + err.Error()})
		}
	}

	if c := p.CreateCluster; c != nil {
		err := r.client.Create(ctx, c)
		switch {
		case err == nil:
			r.event(rj, kit.Event{Type: corev1.EventTypeNormal, Reason: ReasonCreatedCluster, Action: "Create",
				Message: fmt.Sprintf("Created RayCluster %s for the Ray job", c.Name)})
		case apierrors.IsAlreadyExists(err):
		default:
			fail("create-cluster", reasonCreateClusterFailed, "Create", "Failed to create RayCluster "+c.Name, err)
		}
	}
	if j := p.CreateSubmitter; j != nil {
		err := r.client.Create(ctx, j)
		switch {
		case err == nil:
			r.event(rj, kit.Event{Type: corev1.EventTypeNormal, Reason: ReasonCreatedSubmitter, Action: "Create",
				Message: fmt.Sprintf("Created submitter Job %s (submits Ray job %s to %s)", j.Name, rj.Status.JobId, rj.Status.DashboardURL)})
		case apierrors.IsAlreadyExists(err):
		default:
			fail("create-submitter", reasonCreateSubFailed, "Create", "Failed to create the submitter Job "+j.Name, err)
		}
	}
	if s := p.CreateHeadService; s != nil {
		err := r.client.Create(ctx, s)
		switch {
		case err == nil:
			r.event(rj, kit.Event{Type: corev1.EventTypeNormal, Reason: ReasonCreatedService, Action: "Create",
				Message: fmt.Sprintf("Created the service %s/%s", s.Namespace, s.Name)})
		case apierrors.IsAlreadyExists(err):
		default:
			fail("create-service", reasonCreateServiceFailed, "Create", fmt.Sprintf("Failed to create the service %s/%s", s.Namespace, s.Name), err)
		}
	}
	if s := p.UpdateHeadService; s != nil {
		err := r.client.Update(ctx, s)
		switch {
		case err == nil:
			r.event(rj, kit.Event{Type: corev1.EventTypeNormal, Reason: ReasonUpdatedService, Action: "Update",
				Message: fmt.Sprintf("Updated the service %s/%s", s.Namespace, s.Name)})
		case apierrors.IsConflict(err), apierrors.IsNotFound(err):
			// The next pass sees the new version.
			res.RequeueAfter = soon
		default:
			fail("update-service", reasonUpdateServiceFailed, "Update", fmt.Sprintf("Failed to update the service %s/%s", s.Namespace, s.Name), err)
		}
	}
	if d := p.DeleteCluster; d != nil {
		if err := r.deleteChild(ctx, &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Namespace: rj.Namespace, Name: d.Name}}, d); err != nil {
			fail("delete-cluster", reasonDeleteClusterFailed, "Delete", "Failed to delete RayCluster "+d.Name, err)
		} else {
			r.event(rj, kit.Event{Type: corev1.EventTypeNormal, Reason: ReasonDeletedCluster, Action: "Delete",
				Message: fmt.Sprintf("Deleted RayCluster %s: %s", d.Name, d.Reason)})
		}
	}
	if d := p.DeleteSubmitter; d != nil {
		if err := r.deleteChild(ctx, &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: rj.Namespace, Name: d.Name}}, d); err != nil {
			fail("delete-submitter", reasonDeleteSubFailed, "Delete", "Failed to delete the submitter Job "+d.Name, err)
		} else {
			r.event(rj, kit.Event{Type: corev1.EventTypeNormal, Reason: reasonDeletedSubmitter, Action: "Delete",
				Message: fmt.Sprintf("Deleted submitter Job %s: %s", d.Name, d.Reason)})
		}
	}
	if name := p.SuspendWorkers; name != "" {
		if err := r.suspendWorkers(ctx, rj.Namespace, name); err != nil {
			fail("suspend-workers", reasonUpdateClusterFailed, "Update", "Failed to suspend the worker groups of RayCluster "+name, err)
		} else {
			r.event(rj, kit.Event{Type: corev1.EventTypeNormal, Reason: reasonSuspendedWorkers, Action: "Delete",
				Message: fmt.Sprintf("Suspended every worker group of RayCluster %s (its worker pods go): deletion rule DeleteWorkers", name)})
		}
	}
	if s := p.Submit; s != nil && o.Cluster != nil {
		dc, err := r.dash.ClientFor(ctx, o.Cluster)
		if err == nil {
			_, err = dc.SubmitJob(ctx, s.Request)
		}
		switch {
		case err == nil:
			r.untell(rj.UID, "submit")
			r.event(rj, kit.Event{Type: corev1.EventTypeNormal, Reason: ReasonSubmitted, Action: "Submit",
				Message: fmt.Sprintf("Submitted Ray job %s to the dashboard of RayCluster %s", s.Request.SubmissionID, s.ClusterName)})
		case errors.Is(err, dashboard.ErrSubmissionIDInUse):
		default:
			// Not an error for the work queue: the next poll tries again.
			logger.Info("submission failed; retrying", "error", err.Error())
			if r.tell(rj.UID, "submit", "failed") {
				r.event(rj, kit.Event{Type: corev1.EventTypeWarning, Reason: reasonSubmitFailed, Action: "Submit",
					Message: fmt.Sprintf("Failed to submit Ray job %s (retrying): %v", s.Request.SubmissionID, err)})
			}
		}
	}

	if p.Stop != nil {
		confirmed, err := r.stop(ctx, rj, o, p.Stop)
		switch {
		case err != nil:
			return res, err
		case confirmed && p.Stop.Request == "" && slices.Contains(rj.Finalizers, rayv1.RayJobStopJobFinalizer):
			p.RemoveFinalizer = true
		}
	}

	if p.RemoveFinalizer {
		err := r.patchFinalizers(ctx, rj, func(f []string) []string {
			out := f[:0:0]
			for _, x := range f {
				if x != rayv1.RayJobStopJobFinalizer {
					out = append(out, x)
				}
			}
			return out
		})
		if err != nil && !apierrors.IsNotFound(err) {
			return res, err
		}
	}
	if why := p.DeleteSelf; why != "" {
		uid := rj.UID
		err := r.client.Delete(ctx, rj, client.Preconditions{UID: &uid}, client.PropagationPolicy(metav1.DeletePropagationBackground))
		switch {
		case err == nil:
			r.event(rj, kit.Event{Type: corev1.EventTypeNormal, Reason: reasonDeletedOnFinish, Action: "Delete",
				Message: "Deleting this RayJob (and so its cluster and submitter): " + why})
		case apierrors.IsNotFound(err):
		default:
			fail("delete-self", reasonDeleteFailed, "Delete", "Failed to delete this RayJob", err)
		}
	}
	if len(errs) > 0 {
		// The work queue's back-off retries.
		return ctrl.Result{}, errors.Join(errs...)
	}
	return res, nil
}

// deleteChild deletes a child with a UID precondition (never a same-named
// successor), its dependents in the background.
func (r *reconciler) deleteChild(ctx context.Context, obj client.Object, d *deletion) error {
	opts := []client.DeleteOption{client.PropagationPolicy(metav1.DeletePropagationBackground)}
	if d.UID != "" {
		uid := types.UID(d.UID)
		opts = append(opts, client.Preconditions{UID: &uid})
	}
	err := r.client.Delete(ctx, obj, opts...)
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil // gone already, or a successor we must not touch
	}
	return err
}

// suspendWorkers sets suspend on every worker group of a cluster.
func (r *reconciler) suspendWorkers(ctx context.Context, ns, name string) error {
	rc := &rayv1.RayCluster{}
	if err := r.client.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, rc); err != nil {
		return client.IgnoreNotFound(err)
	}
	orig := rc.DeepCopy()
	t := true
	for i := range rc.Spec.WorkerGroupSpecs {
		rc.Spec.WorkerGroupSpecs[i].Suspend = &t
	}
	return r.client.Patch(ctx, rc, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}))
}

// patchFinalizers changes the finalizers with an optimistic lock. It writes
// the whole object (Update), as KubeRay adds and removes its finalizer
// (rayjob_controller.go r.Update): the stored spec then leaves out what the
// types omit when empty (a manifest's "shutdownAfterJobFinishes: false" or
// an empty jobId) exactly as under KubeRay.
func (r *reconciler) patchFinalizers(ctx context.Context, rj *rayv1.RayJob, f func([]string) []string) error {
	prev := rj.ResourceVersion
	orig := rj.DeepCopy()
	rj.Finalizers = f(append([]string(nil), rj.Finalizers...))
	if err := r.client.Update(ctx, rj); err != nil {
		rj.Finalizers = orig.Finalizers
		return err
	}
	r.rememberWrite(prev, rj)
	return nil
}

// writeStatus replaces the status (optimistic lock: a stale view fails
// with a conflict instead of overwriting).
func (r *reconciler) writeStatus(ctx context.Context, rj *rayv1.RayJob, st rayv1.RayJobStatus) error {
	prev := rj.ResourceVersion
	old := rj.Status
	rj.Status = st
	if err := r.client.Status().Update(ctx, rj); err != nil {
		rj.Status = old
		return err
	}
	// What the API server kept: KubeRay's RayJob CRD prunes the conditions
	// and (v1.5.0) the dashboard failure clock, so they are neither compared
	// nor relied on from the stored object.
	if len(st.Conditions) > 0 && len(rj.Status.Conditions) == 0 {
		r.prunesConditions.Store(true)
	}
	r.mu.Lock()
	if t := st.JobStatusCheckFailureStartTime; t != nil && rj.Status.JobStatusCheckFailureStartTime == nil {
		r.checkFailSince[rj.UID] = checkFail{jobID: st.JobId, since: *t}
	} else if t == nil {
		delete(r.checkFailSince, rj.UID)
	}
	r.mu.Unlock()
	r.rememberWrite(prev, rj)
	return nil
}

// stop sends one stop request, unless a confirmed stop is already on
// record (in memory or, read live, on the object), and records a
// confirmation on the RayJob before returning. It reports whether the stop
// is confirmed and recorded.
func (r *reconciler) stop(ctx context.Context, rj *rayv1.RayJob, o *Observed, s *StopCall) (bool, error) {
	logger := log.FromContext(ctx)
	rec := StopRecord{JobID: s.JobID, Request: s.Request, Deletion: s.Request == "", Confirmed: true}
	failKey := s.JobID + "\x00" + s.Request

	// Never twice: a stop confirmed by another process (or before a
	// restart) shows on the live object.
	live := &rayv1.RayJob{}
	if err := r.api.Get(ctx, client.ObjectKeyFromObject(rj), live); err != nil {
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	}
	if cur, ok := StopRecordOf(live); ok && cur.Confirmed && cur.JobID == s.JobID && (s.Request == "" || cur.Request == s.Request) {
		r.rememberWrite(rj.ResourceVersion, live)
		*rj = *live
		return true, nil
	}

	var stopped bool
	dc, err := r.dash.ClientFor(ctx, o.Cluster)
	if err == nil {
		stopped, err = dc.StopJob(ctx, s.JobID)
	}
	var detail string
	switch {
	case err == nil && stopped:
		detail = "the dashboard is stopping it"
	case err == nil:
		detail = "it had already ended"
	case errors.Is(err, dashboard.ErrNotFound):
		detail = "the dashboard does not know it"
	default:
		r.mu.Lock()
		f := r.stopFails[rj.UID]
		if f == nil || f.key != failKey {
			f = &stopFailure{key: failKey}
			r.stopFails[rj.UID] = f
		}
		f.n++
		f.at = r.now()
		f.last = err.Error()
		first := f.n == 1
		r.mu.Unlock()
		logger.Info("stop not confirmed; retrying", "job", s.JobID, "error", err.Error())
		if first {
			what := "the stop request " + s.Request
			if s.Request == "" {
				what = fmt.Sprintf("the deletion (the finalizer is released after %s without a confirmation)", o.Config.StopConfirmTimeout)
			}
			r.event(rj, kit.Event{Type: corev1.EventTypeWarning, Reason: reasonStopFailed, Action: "Stop",
				Message: fmt.Sprintf("Could not stop Ray job %s for %s; retrying: %v", s.JobID, what, err)})
			if s.Request != "" {
				v := stopRecordValue(StopRecord{JobID: s.JobID, Request: s.Request}, "the dashboard did not answer: "+kit.Truncate(err.Error(), 300))
				if err := r.patchStopRecord(ctx, rj, v); err != nil && !apierrors.IsConflict(err) {
					return false, err
				}
			}
		}
		return false, nil
	}

	// Confirmed: remember it (so this process never sends it again), then
	// record it on the object before anything else happens.
	r.mu.Lock()
	r.stops[rj.UID] = rec
	delete(r.stopFails, rj.UID)
	r.mu.Unlock()
	if err := r.recordStop(ctx, rj, rec, detail, o.Now); err != nil {
		return false, err
	}
	what := "for request " + s.Request
	if s.Request == "" {
		what = "because the RayJob is deleted"
	}
	r.event(rj, kit.Event{Type: corev1.EventTypeNormal, Reason: ReasonStopConfirmed, Action: "Stop",
		Message: fmt.Sprintf("Stopped Ray job %s %s: %s", s.JobID, what, detail)})
	if r.afterStopRecorded != nil {
		if err := r.afterStopRecorded(rj.DeepCopy()); err != nil {
			return false, err
		}
	}
	return true, nil
}

// recordStop writes a confirmed stop into the RayJob's annotation (with a
// resourceVersion precondition), retrying conflicts from fresh reads: the
// record must land. The condition that shows it follows in the status,
// best effort (a CRD without status.conditions drops it).
func (r *reconciler) recordStop(ctx context.Context, rj *rayv1.RayJob, rec StopRecord, detail string, now time.Time) error {
	v := stopRecordValue(rec, detail)
	for attempt := 0; ; attempt++ {
		err := r.patchStopRecord(ctx, rj, v)
		if err == nil {
			break
		}
		if !apierrors.IsConflict(err) || attempt >= 4 {
			return err
		}
		live := &rayv1.RayJob{}
		if err := r.api.Get(ctx, client.ObjectKeyFromObject(rj), live); err != nil {
			return err
		}
		*rj = *live
	}
	st := rj.Status.DeepCopy()
	setStopCondition(st, v, rec.Confirmed, rec.Deletion, now)
	if err := r.writeStatus(ctx, rj, *st); err != nil && !apierrors.IsConflict(err) {
		log.FromContext(ctx).Info("the stop is recorded; showing it in the status failed", "error", err.Error())
	}
	return nil
}

// patchStopRecord writes the stop record annotation, with an optimistic
// lock: a stale view fails with a conflict instead of overwriting a record
// another process wrote.
func (r *reconciler) patchStopRecord(ctx context.Context, rj *rayv1.RayJob, value string) error {
	if rj.Annotations[rayv1.JobStopRecordAnnotationKey] == value {
		return nil
	}
	prev := rj.ResourceVersion
	orig := rj.DeepCopy()
	rj.Annotations = maps.Clone(rj.Annotations)
	if rj.Annotations == nil {
		rj.Annotations = map[string]string{}
	}
	rj.Annotations[rayv1.JobStopRecordAnnotationKey] = value
	if err := r.client.Patch(ctx, rj, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
		rj.Annotations = orig.Annotations
		return err
	}
	r.rememberWrite(prev, rj)
	return nil
}
