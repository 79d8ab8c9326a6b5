package raycluster

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/raydar/raydar/controller/kit"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
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
const OwnerUIDField = "raydar.metadata.controllerUID"

// maxConflictRetries bounds the fresh-read retries after a 409.
const maxConflictRetries = 3

// writeConcurrency bounds the parallel writes of one reconcile.
const writeConcurrency = 16

// reconciler reconciles RayClusters: observe → decide → act.
type Reconciler struct {
	client    client.Client // reads from the shared cache, writes to the API server
	api       client.Reader // live reads, when the cache cannot be trusted
	recorder  recorder.EventRecorder
	Exp       *expectations
	gate      *kit.Gate
	cfg       BuildConfig
	coalesce  time.Duration
	now       func() time.Time
	newSuffix func() string

	Mu sync.Mutex
	// written remembers this process's writes to RayClusters until the cache
	// shows them, keyed by UID (see readYourWrites).
	written map[types.UID]*writtenCluster
	// dirtySince is when each cluster's status first differed from what is
	// written (for coalescing).
	dirtySince map[types.UID]time.Time
	// rbacReady remembers clusters whose autoscaler RBAC exists.
	rbacReady map[types.UID]bool
	// authSecretReady remembers clusters whose auth Secret exists (auth.go).
	authSecretReady map[types.UID]bool
	// serveServiceReady remembers clusters whose serve Service exists
	// (serve_service.go).
	serveServiceReady map[types.UID]bool
	// headlessServiceReady remembers clusters whose headless worker
	// Service exists (read live: KubeRay's labels are not cached).
	headlessServiceReady map[types.UID]bool
	// uids maps names to UIDs, to forget a cluster once it is gone.
	Uids map[types.NamespacedName]types.UID
}

type writtenCluster struct {
	stale map[string]bool // resourceVersions our writes superseded
	obj   *rayv1.RayCluster
	at    time.Time
}

func NewReconciler(c client.Client, api client.Reader, rec recorder.EventRecorder, g *kit.Gate, cfg BuildConfig, coalesce time.Duration) *Reconciler {
	return &Reconciler{
		client: c, api: api, recorder: rec, gate: g, cfg: cfg, coalesce: coalesce,
		Exp: newExpectations(), now: time.Now, newSuffix: kit.RandomSuffix,
		written: map[types.UID]*writtenCluster{}, dirtySince: map[types.UID]time.Time{},
		rbacReady: map[types.UID]bool{}, Uids: map[types.NamespacedName]types.UID{},
		authSecretReady: map[types.UID]bool{}, serveServiceReady: map[types.UID]bool{},
		headlessServiceReady: map[types.UID]bool{},
	}
}

// Reconcile implements reconcile.Reconciler.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	rc := &rayv1.RayCluster{}
	if err := r.client.Get(ctx, req.NamespacedName, rc); err != nil {
		if apierrors.IsNotFound(err) {
			r.forget(req.NamespacedName)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	r.Mu.Lock()
	r.Uids[req.NamespacedName] = rc.UID
	r.Mu.Unlock()
	rc = r.readYourWrites(rc)
	if r.gate.Skip(ctx, rc, r.recorder) {
		return ctrl.Result{}, nil
	}
	for attempt := 1; ; attempt++ {
		res, err := r.reconcileOnce(ctx, rc)
		if !apierrors.IsConflict(err) || attempt >= maxConflictRetries {
			return res, err
		}
		// 409: someone else wrote the RayCluster (the autoscaler patching
		// replicas, a user editing it). Decide again from a fresh read; the
		// expectations keep the writes already made from being repeated.
		log.FromContext(ctx).V(1).Info("conflict, retrying from a fresh read", "attempt", attempt)
		fresh := &rayv1.RayCluster{}
		if err := r.api.Get(ctx, req.NamespacedName, fresh); err != nil {
			if apierrors.IsNotFound(err) {
				return ctrl.Result{}, nil
			}
			return ctrl.Result{}, err
		}
		rc = fresh
	}
}

func (r *Reconciler) forget(nn types.NamespacedName) {
	r.Mu.Lock()
	uid, ok := r.Uids[nn]
	delete(r.Uids, nn)
	if ok {
		delete(r.written, uid)
		delete(r.dirtySince, uid)
		delete(r.rbacReady, uid)
		delete(r.authSecretReady, uid)
		delete(r.serveServiceReady, uid)
		delete(r.headlessServiceReady, uid)
	}
	r.Mu.Unlock()
	if ok {
		r.Exp.forget(uid)
		r.gate.Forget(uid, nn)
	}
}

// readYourWrites returns our last written version of rc when the cache still
// shows a version that write superseded.
func (r *Reconciler) readYourWrites(rc *rayv1.RayCluster) *rayv1.RayCluster {
	r.Mu.Lock()
	defer r.Mu.Unlock()
	w, ok := r.written[rc.UID]
	if !ok {
		return rc
	}
	if w.stale[rc.ResourceVersion] {
		return w.obj.DeepCopy()
	}
	delete(r.written, rc.UID)
	return rc
}

func (r *Reconciler) rememberWrite(prevRV string, obj *rayv1.RayCluster) {
	r.Mu.Lock()
	defer r.Mu.Unlock()
	w, ok := r.written[obj.UID]
	if !ok {
		w = &writtenCluster{stale: map[string]bool{}}
		r.written[obj.UID] = w
	}
	w.stale[prevRV] = true
	w.obj = obj.DeepCopy()
	w.at = r.now()
	// A cluster that is not reconciled again would keep its entry: drop
	// entries the cache has had ample time to catch up with.
	for uid, old := range r.written {
		if r.now().Sub(old.at) > expectationTTL {
			delete(r.written, uid)
		}
	}
}

func (r *Reconciler) reconcileOnce(ctx context.Context, rc *rayv1.RayCluster) (ctrl.Result, error) {
	obs, err := r.observe(ctx, rc)
	if err != nil {
		return ctrl.Result{}, err
	}
	p := decide(obs)
	return r.act(ctx, obs, p)
}

// observe reads what decide needs: from the cache, with this process's
// unseen writes laid over it, or live from the API server after a write
// whose outcome is unknown.
func (r *Reconciler) observe(ctx context.Context, rc *rayv1.RayCluster) (*observed, error) {
	o := &observed{Cluster: rc, Now: r.now(), Config: r.cfg, NewSuffix: r.newSuffix}
	var pods []*corev1.Pod
	list := &corev1.PodList{}
	if r.Exp.takeUncertain(rc.UID) {
		if err := r.api.List(ctx, list, client.InNamespace(rc.Namespace),
			client.MatchingLabelsSelector{Selector: kit.ClusterPodsSelector(rc.Name)}); err != nil {
			r.Exp.markUncertain(rc.UID)
			return nil, fmt.Errorf("listing pods: %w", err)
		}
	} else if err := r.client.List(ctx, list, client.InNamespace(rc.Namespace),
		client.MatchingFields{OwnerUIDField: string(rc.UID)}); err != nil {
		return nil, fmt.Errorf("listing pods: %w", err)
	}
	for i := range list.Items {
		p := &list.Items[i]
		if kit.ControllerUID(p.OwnerReferences) == string(rc.UID) && (kit.IsHeadPod(p) || kit.IsWorkerPod(p)) {
			pods = append(pods, p)
		}
	}
	o.Pods = r.Exp.overlayPods(rc.UID, pods)

	var err error
	if o.HeadService, err = r.getService(ctx, rc, kit.HeadServiceName(rc)); err != nil {
		return nil, err
	}
	if needsHeadlessWorkerService(rc) && rc.DeletionTimestamp == nil {
		if o.HeadlessServiceReady, err = r.existsOnce(ctx, rc, r.headlessServiceReady, "Service", kit.HeadlessWorkerServiceName(rc.Name)); err != nil {
			return nil, err
		}
	}
	if autoscalingEnabled(rc) && rc.DeletionTimestamp == nil {
		if o.RBACReady, err = r.autoscalerRBACExists(ctx, rc); err != nil {
			return nil, err
		}
	}
	if o.AuthSecretReady, err = r.authSecretExists(ctx, rc); err != nil {
		return nil, err
	}
	if o.ServeServiceReady, err = r.serveServiceExists(ctx, rc); err != nil {
		return nil, err
	}
	if o.Ingress, err = r.getIngress(ctx, rc); err != nil {
		return nil, err
	}
	if rc.DeletionTimestamp != nil && hasFinalizer(rc, rayv1.GCSFaultToleranceRedisCleanupFinalizer) {
		job := &batchv1.Job{}
		err := r.api.Get(ctx, types.NamespacedName{Namespace: rc.Namespace, Name: kit.RedisCleanupJobName(rc.Name)}, job)
		switch {
		case err == nil:
			o.CleanupJob = job
		case !apierrors.IsNotFound(err):
			return nil, fmt.Errorf("reading the Redis clean-up Job: %w", err)
		}
	}
	return o, nil
}

func (r *Reconciler) getService(ctx context.Context, rc *rayv1.RayCluster, name string) (*corev1.Service, error) {
	svc := &corev1.Service{}
	err := r.client.Get(ctx, types.NamespacedName{Namespace: rc.Namespace, Name: name}, svc)
	switch {
	case apierrors.IsNotFound(err):
		svc = nil
	case err != nil:
		return nil, fmt.Errorf("reading Service %s: %w", name, err)
	}
	return r.Exp.overlayService(rc.UID, name, svc), nil
}

// autoscalerRBACExists reads the autoscaler's RBAC objects live, once per
// cluster per process (they are not cached: nothing else needs them).
func (r *Reconciler) autoscalerRBACExists(ctx context.Context, rc *rayv1.RayCluster) (bool, error) {
	r.Mu.Lock()
	ok := r.rbacReady[rc.UID]
	r.Mu.Unlock()
	if ok {
		return true, nil
	}
	for _, obj := range buildAutoscalerRBAC(rc) {
		got := obj.DeepCopyObject().(client.Object)
		err := r.api.Get(ctx, client.ObjectKeyFromObject(obj), got)
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("reading autoscaler %T %s: %w", obj, obj.GetName(), err)
		}
	}
	r.setRBACReady(rc.UID)
	return true, nil
}

func (r *Reconciler) setRBACReady(uid types.UID) {
	r.Mu.Lock()
	r.rbacReady[uid] = true
	r.Mu.Unlock()
}

// outcome is what acting on a plan did.
type outcome struct {
	createdServices []*corev1.Service
	createdRBAC     []client.Object
	createdPods     []*corev1.Pod
	deleted         []podDeletion
	createdJob      *batchv1.Job
	failures        []failure
	ambiguous       bool
}

// fail records a failure KubeRay reports by a Warning Event only: its
// reason and message.
func (o *outcome) fail(event, msg string) {
	o.failures = append(o.failures, failure{Event: event, Message: msg})
}

// failPod records a failed pod write, which KubeRay reports by a Warning
// Event and the ReplicaFailure condition.
func (o *outcome) failPod(cond, event, msg string, err error) {
	o.failures = append(o.failures, failure{Condition: cond, Event: event, Message: msg, Err: err})
}

// act applies the plan: every write is idempotent (names are fixed before
// the request, deletions carry a UID precondition), so a plan applied half
// (killed, timed out) is completed by the next pass, never doubled.
func (r *Reconciler) act(ctx context.Context, obs *observed, p *plan) (ctrl.Result, error) {
	rc := obs.Cluster
	logger := log.FromContext(ctx)

	if p.AddFinalizer {
		if err := r.patchFinalizers(ctx, rc, func(f []string) []string {
			return append(f, rayv1.GCSFaultToleranceRedisCleanupFinalizer)
		}); err != nil {
			return ctrl.Result{}, err
		}
	}

	out := r.applyWrites(ctx, rc, p)
	for _, e := range append(p.Events, summarizeEvents(p, out)...) {
		r.recorder.Eventf(rc, nil, e.Type, e.Reason, e.Action, "%s", kit.Truncate(e.Message, 1000))
	}
	if out.ambiguous {
		r.Exp.markUncertain(rc.UID)
	}

	if p.RemoveFinalizer {
		if err := r.patchFinalizers(ctx, rc, func(f []string) []string {
			out := f[:0:0]
			for _, x := range f {
				if x != rayv1.GCSFaultToleranceRedisCleanupFinalizer {
					out = append(out, x)
				}
			}
			return out
		}); err != nil && !apierrors.IsNotFound(err) {
			return ctrl.Result{}, err
		}
	}

	res := ctrl.Result{RequeueAfter: p.RequeueAfter}
	if out.ambiguous && (res.RequeueAfter == 0 || res.RequeueAfter > time.Second) {
		// Look again soon, live, even if no watch event comes.
		res.RequeueAfter = time.Second
	}
	if !p.SkipStatus {
		status := p.Status
		if len(out.failures) > 0 {
			done := &plan{CreatePods: out.createdPods, DeletePods: out.deleted, Invalid: p.Invalid}
			svc := obs.HeadService
			for _, s := range out.createdServices {
				if s.Name == kit.HeadServiceName(rc) {
					svc = s
				}
			}
			status = computeStatus(rc, podsAfter(obs.Pods, done, obs.Now), svc, done, out.failures, obs.Now)
		}
		after, err := r.writeStatus(ctx, rc, status, len(out.failures) > 0)
		if err != nil {
			if apierrors.IsNotFound(err) {
				return ctrl.Result{}, nil
			}
			return ctrl.Result{}, err
		}
		if after > 0 && (res.RequeueAfter == 0 || after < res.RequeueAfter) {
			res.RequeueAfter = after
		}
	}
	if len(out.failures) > 0 {
		msgs := make([]string, 0, len(out.failures))
		for _, f := range out.failures {
			msgs = append(msgs, f.Message)
		}
		// Returning an error requeues with controller-runtime's exponential
		// back-off: a persistent failure is retried, never hot-looped.
		err := errors.New(strings.Join(msgs, "; "))
		logger.Info("some writes failed; retrying with back-off", "error", err.Error())
		return ctrl.Result{}, err
	}
	return res, nil
}

// patchFinalizers changes the finalizers by writing the whole object, as
// KubeRay v1.7.0 does (r.Update after setDefaults, raycluster_controller.go
// :163, :256, :312): so the stored spec comes out as KubeRay's would,
// every rayStartParams at least {} and explicit zero values its types omit
// dropped. The write carries the resourceVersion read: a conflict goes back
// to Reconcile, which retries from a fresh read.
func (r *Reconciler) patchFinalizers(ctx context.Context, rc *rayv1.RayCluster, f func([]string) []string) error {
	prev := rc.ResourceVersion
	obj := rc.DeepCopy()
	obj.Finalizers = f(append([]string(nil), rc.Finalizers...))
	defaultRayStartParams(&obj.Spec)
	if err := r.client.Update(ctx, obj); err != nil {
		return err
	}
	*rc = *obj
	r.rememberWrite(prev, rc)
	return nil
}

// defaultRayStartParams makes every nil rayStartParams an empty map, as
// KubeRay's setDefaults does before it writes a RayCluster.
func defaultRayStartParams(s *rayv1.RayClusterSpec) {
	if s.HeadGroupSpec.RayStartParams == nil {
		s.HeadGroupSpec.RayStartParams = map[string]string{}
	}
	for i := range s.WorkerGroupSpecs {
		if s.WorkerGroupSpecs[i].RayStartParams == nil {
			s.WorkerGroupSpecs[i].RayStartParams = map[string]string{}
		}
	}
}

// writeStatus writes the status if it really changed. Changes that are not
// urgent (see statusUrgent) are held for up to r.coalesce and written once,
// so a cluster coming up does not write a status per pod transition. It
// returns how long to wait before the held status is due.
func (r *Reconciler) writeStatus(ctx context.Context, rc *rayv1.RayCluster, status rayv1.RayClusterStatus, urgent bool) (time.Duration, error) {
	now := r.now()
	r.Mu.Lock()
	if statusEqual(rc.Status, status) {
		delete(r.dirtySince, rc.UID)
		r.Mu.Unlock()
		return 0, nil
	}
	if !urgent && r.coalesce > 0 && !statusUrgent(rc.Status, status) {
		since, ok := r.dirtySince[rc.UID]
		if !ok {
			since = now
			r.dirtySince[rc.UID] = now
		}
		if wait := r.coalesce - now.Sub(since); wait > 0 {
			r.Mu.Unlock()
			return wait, nil
		}
	}
	delete(r.dirtySince, rc.UID)
	r.Mu.Unlock()

	prev := rc.ResourceVersion
	obj := rc.DeepCopy()
	t := metav1.NewTime(now)
	status.LastUpdateTime = &t
	obj.Status = status
	if err := r.client.Status().Update(ctx, obj); err != nil {
		return 0, err
	}
	r.rememberWrite(prev, obj)
	return 0, nil
}

// applyWrites runs the plan's writes in KubeRay v1.7.0's order, step by
// step, the writes of one step in parallel:
//
//  1. the children before the pods (raycluster_controller.go:359-370
//     reconcileFuncs): the autoscaler's RBAC, the Ingress, the auth Secret,
//     the Services;
//  2. the head pod (reconcilePods, :1013-1052);
//  3. the other pod writes: head deletions, workers (:1068), Recreate stamps.
//
// A step that fails ends the pass as KubeRay's first error does: no pod is
// written while a child before them could not be created, and no worker is
// created or deleted in a pass whose head pod could not be created. A head
// that exists, ready or not, holds nothing back.
func (r *Reconciler) applyWrites(ctx context.Context, rc *rayv1.RayCluster, p *plan) *outcome {
	out := &outcome{}
	var mu sync.Mutex
	record := func(f func()) { mu.Lock(); f(); mu.Unlock() }
	sem := make(chan struct{}, writeConcurrency)
	var wg sync.WaitGroup
	run := func(f func()) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			f()
		}()
	}

	for _, svc := range p.CreateServices {
		run(func() {
			r.Exp.expectCreate(rc.UID, svc)
			err := r.client.Create(ctx, svc)
			record(func() {
				switch {
				case err == nil:
					r.Exp.created(rc.UID, svc)
					out.createdServices = append(out.createdServices, svc)
				case apierrors.IsAlreadyExists(err):
					// Made by someone else (KubeRay, before a takeover):
					// adopted by name, never created again.
					r.Exp.createFailed(rc.UID, svc)
					if svc.Name == kit.HeadlessWorkerServiceName(rc.Name) {
						r.remember(r.headlessServiceReady, rc.UID)
					}
				default:
					r.Exp.createFailed(rc.UID, svc)
					out.fail(rayv1.EventFailedToCreateService, fmt.Sprintf("Failed creating service %s/%s, %v", svc.Namespace, svc.Name, err))
				}
			})
		})
	}

	rbacOK := true
	if len(p.CreateRBAC) > 0 {
		for _, obj := range p.CreateRBAC {
			err := r.client.Create(ctx, obj)
			switch {
			case err == nil:
				out.createdRBAC = append(out.createdRBAC, obj)
			case apierrors.IsAlreadyExists(err):
			default:
				rbacOK = false
				reason, what := rbacEvent(obj, false)
				out.fail(reason, fmt.Sprintf("Failed creating %s %s/%s, %v", what, obj.GetNamespace(), obj.GetName(), err))
			}
		}
		if rbacOK {
			r.setRBACReady(rc.UID)
		}
	}

	r.applyIngress(ctx, rc, p, out)
	// Pods read their Ray auth token from the Secret: none without it.
	secretOK := r.createAuthSecret(ctx, rc, p.CreateAuthSecret, out)
	wg.Wait()
	if !rbacOK || !secretOK || slices.ContainsFunc(out.failures, endsPass) {
		// Step 1 failed: KubeRay's pass ends before reconcilePods.
		return r.finishWrites(ctx, p, out, &wg)
	}

	// Step 2: the head pod.
	headOK := true
	var workers []*corev1.Pod
	for _, pod := range p.CreatePods {
		if !kit.IsHeadPod(pod) {
			workers = append(workers, pod)
			continue
		}
		run(func() {
			ok := r.createPod(ctx, rc, pod, out, record)
			record(func() { headOK = headOK && ok })
		})
	}
	wg.Wait()

	// Step 3: the other pod writes; without the head that was wanted,
	// those of the head only.
	if headOK {
		for _, pod := range workers {
			run(func() { r.createPod(ctx, rc, pod, out, record) })
		}
	}

	for _, st := range p.StampPods {
		run(func() {
			err := r.stampPod(ctx, st)
			record(func() {
				if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
					out.ambiguous = out.ambiguous || ambiguous(err)
					log.FromContext(ctx).Info("stamping the Recreate hash onto a pod failed; next pass retries", "pod", st.Pod.Name, "error", err.Error())
				}
			})
		})
	}

	if p.DeleteAll && len(p.DeletePods) > 0 {
		for _, d := range p.DeletePods {
			r.Exp.expectDelete(rc.UID, d.Pod)
		}
		run(func() {
			err := r.client.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace(rc.Namespace),
				client.MatchingLabelsSelector{Selector: kit.ClusterPodsSelector(rc.Name)})
			record(func() {
				if err != nil && !apierrors.IsNotFound(err) {
					for _, d := range p.DeletePods {
						r.Exp.deleteFailed(rc.UID, d.Pod)
					}
					out.failPod(rayv1.FailedDeleteAllPods, rayv1.EventFailedToDeletePodCollection,
						fmt.Sprintf("Failed deleting Pods for RayCluster %s/%s: %s, %v", rc.Namespace, rc.Name, p.DeletePods[0].Reason, err), err)
					return
				}
				out.deleted = append(out.deleted, p.DeletePods...)
			})
		})
	} else {
		for _, d := range p.DeletePods {
			if !headOK && !kit.IsHeadPod(d.Pod) {
				continue
			}
			run(func() {
				r.Exp.expectDelete(rc.UID, d.Pod)
				var opts []client.DeleteOption
				if d.Pod.UID != "" {
					// Never delete a same-named successor by accident.
					opts = append(opts, client.Preconditions{UID: &d.Pod.UID})
				}
				err := r.client.Delete(ctx, d.Pod, opts...)
				record(func() {
					switch {
					case err == nil, apierrors.IsNotFound(err):
						out.deleted = append(out.deleted, d)
					case apierrors.IsConflict(err):
						// UID precondition failed: that pod is gone already.
						r.Exp.deleteFailed(rc.UID, d.Pod)
					default:
						if !ambiguous(err) {
							r.Exp.deleteFailed(rc.UID, d.Pod)
						} else {
							out.ambiguous = true
						}
						if kit.IsHeadPod(d.Pod) {
							out.failPod(rayv1.FailedDeleteHeadPod, rayv1.EventFailedToDeleteHeadPod,
								fmt.Sprintf("Failed deleting head Pod %s/%s, %v", d.Pod.Namespace, d.Pod.Name, err), err)
						} else {
							out.failPod(rayv1.FailedDeleteWorkerPod, rayv1.EventFailedToDeleteWorkerPod,
								fmt.Sprintf("Failed deleting Pod %s/%s, %v", d.Pod.Namespace, d.Pod.Name, err), err)
						}
					}
				})
			})
		}
	}

	return r.finishWrites(ctx, p, out, &wg)
}

// endsPass: a failed write of step 1 that keeps the pods from being written.
// A failed update of a drifted Ingress does not: KubeRay never updates one
// (raydar's own repair, ingress.go), so it holds nothing back.
func endsPass(f failure) bool { return f.Event != reasonFailedToUpdateIngress }

// createPod creates one planned pod and records the outcome, with KubeRay's
// Event and ReplicaFailure reasons and message; it reports whether the pod
// was created.
func (r *Reconciler) createPod(ctx context.Context, rc *rayv1.RayCluster, pod *corev1.Pod, out *outcome, record func(func())) bool {
	cond, reason := rayv1.FailedCreateWorkerPod, rayv1.EventFailedToCreateWorkerPod
	msg := func(err error) string {
		return fmt.Sprintf("Failed to create worker Pod for the cluster %s/%s, %v", rc.Namespace, rc.Name, err)
	}
	if kit.IsHeadPod(pod) {
		cond, reason = rayv1.FailedCreateHeadPod, rayv1.EventFailedToCreateHeadPod
		msg = func(err error) string {
			return fmt.Sprintf("Failed to create head Pod %s/%s, %v", pod.Namespace, pod.Name, err)
		}
	}
	r.Exp.expectCreate(rc.UID, pod)
	err := r.client.Create(ctx, pod)
	record(func() {
		switch {
		case err == nil:
			r.Exp.created(rc.UID, pod)
			out.createdPods = append(out.createdPods, pod)
		case apierrors.IsAlreadyExists(err):
			// Our own earlier create whose answer was lost, or a
			// name clash: read live next time to tell.
			r.Exp.createFailed(rc.UID, pod)
			out.ambiguous = true
		case ambiguous(err):
			out.ambiguous = true
			out.failPod(cond, reason, msg(err), err)
		default:
			r.Exp.createFailed(rc.UID, pod)
			out.failPod(cond, reason, msg(err), err)
		}
	})
	return err == nil
}

// finishWrites waits for the writes under way, then creates the Redis
// clean-up Job of a deleted cluster (its plan writes no pod), and returns
// the outcome.
func (r *Reconciler) finishWrites(ctx context.Context, p *plan, out *outcome, wg *sync.WaitGroup) *outcome {
	wg.Wait()
	if j := p.CreateJob; j != nil {
		err := r.client.Create(ctx, j)
		switch {
		case err == nil:
			out.createdJob = j
		case apierrors.IsAlreadyExists(err):
		default:
			out.fail(rayv1.EventFailedToCreateRedisCleanupJob, fmt.Sprintf("Failed to create Redis cleanup Job %s/%s, %v",
				j.Namespace, j.Name, err))
		}
	}
	sortPods(out.createdPods)
	return out
}

// ambiguous reports whether a failed write may nevertheless have happened.
func ambiguous(err error) bool {
	var netErr net.Error
	switch {
	case apierrors.IsTimeout(err), apierrors.IsServerTimeout(err), apierrors.IsInternalError(err),
		apierrors.IsUnexpectedServerError(err), apierrors.IsServiceUnavailable(err):
		return true
	case errors.As(err, &netErr), errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return true
	}
	var status apierrors.APIStatus
	return !errors.As(err, &status)
}

func kindOf(obj client.Object) string {
	switch obj.(type) {
	case *corev1.ServiceAccount:
		return "ServiceAccount"
	case *rbacv1.Role:
		return "Role"
	case *rbacv1.RoleBinding:
		return "RoleBinding"
	}
	return fmt.Sprintf("%T", obj)
}

// stampPod merges annotations into a pod (UID and resourceVersion
// preconditions: a successor or a newer version is left alone; the next
// pass decides again).
func (r *Reconciler) stampPod(ctx context.Context, st podStamp) error {
	orig := st.Pod
	pod := orig.DeepCopy()
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	maps.Copy(pod.Annotations, st.Annotations)
	return r.client.Patch(ctx, pod, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}))
}
