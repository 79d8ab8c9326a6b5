package raycluster

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/raydar/raydar/controller/kit"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

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

// act applies the plan, in order: the clean-up finalizer added, the
// writes (applyWrites) and their Events, the finalizer removed, the
// status (recomputed from what was written when a write failed), and the
// failures returned for the back-off. Every write is idempotent (names are
// fixed before the request, deletions carry a UID precondition), so a plan
// applied half (killed, timed out) is completed by the next pass, never
// doubled.
func (r *Reconciler) act(ctx context.Context, obs *observed, p *plan) (ctrl.Result, error) {
	rc := obs.Cluster
	if p.AddFinalizer {
		if err := r.patchFinalizers(ctx, rc, func(f []string) []string {
			return append(f, rayv1.GCSFaultToleranceRedisCleanupFinalizer)
		}); err != nil {
			return ctrl.Result{}, err
		}
	}
	out := r.applyWrites(ctx, rc, p)
	for _, e := range append(p.Events, summarizeEvents(p, out)...) {
		r.events.Emit(rc, nil, e)
	}
	r.sayBatchScheduler(rc, p)
	if out.ambiguous {
		r.exp.MarkUncertain(rc.UID)
	}
	if p.RemoveFinalizer {
		if err := r.patchFinalizers(ctx, rc, func(f []string) []string {
			return slices.DeleteFunc(f, func(x string) bool { return x == rayv1.GCSFaultToleranceRedisCleanupFinalizer })
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
		after, err := r.writeStatus(ctx, rc, r.statusAfter(obs, p, out), len(out.failures) > 0)
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
	if err := out.err(); err != nil {
		// Returning an error requeues with controller-runtime's exponential
		// back-off: a persistent failure is retried, never hot-looped.
		log.FromContext(ctx).Info("some writes failed; retrying with back-off", "error", err.Error())
		return ctrl.Result{}, err
	}
	return res, nil
}

// statusAfter is the planned status, or, when a write failed, the status
// of what the writes did (the pods created and deleted, the head Service
// created) with the failures.
func (r *Reconciler) statusAfter(obs *observed, p *plan, out *outcome) rayv1.RayClusterStatus {
	if len(out.failures) == 0 {
		return p.Status
	}
	rc := obs.Cluster
	done := &plan{CreatePods: out.createdPods, DeletePods: out.deleted, Invalid: p.Invalid}
	svc := obs.HeadService
	for _, s := range out.createdServices {
		if s.Name == kit.HeadServiceName(rc) {
			svc = s
		}
	}
	return computeStatus(rc, podsAfter(obs.Pods, done, obs.Now), svc, done, out.failures, obs.Now)
}

// err joins the failures' messages (nil without failures).
func (o *outcome) err() error {
	if len(o.failures) == 0 {
		return nil
	}
	msgs := make([]string, 0, len(o.failures))
	for _, f := range o.failures {
		msgs = append(msgs, f.Message)
	}
	return errors.New(strings.Join(msgs, "; "))
}

// patchFinalizers changes the finalizers by writing the whole object, as
// KubeRay v1.7.0 does (r.Update after setDefaults, raycluster_controller.go
// :163, :256, :312): so the stored spec comes out as KubeRay's would,
// every rayStartParams at least {} and explicit zero values its types omit
// dropped. The write carries the resourceVersion read: a conflict goes back
// to the kit's Loop, which decides again from a fresh read.
func (r *Reconciler) patchFinalizers(ctx context.Context, rc *rayv1.RayCluster, f func([]string) []string) error {
	return kit.UpdateFinalizers(ctx, r.client, r.exp, rc, f, func(obj *rayv1.RayCluster) { defaultRayStartParams(&obj.Spec) })
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
	w := &writes{r: r, ctx: ctx, rc: rc, p: p, out: &outcome{}, sem: make(chan struct{}, writeConcurrency)}
	if !w.children() {
		// Step 1 failed: KubeRay's pass ends before reconcilePods.
		return r.finishWrites(ctx, p, w.out, &w.wg)
	}
	headOK, workers := w.headPod()
	// Step 3: the other pod writes; without the head that was wanted,
	// those of the head only.
	if headOK {
		for _, pod := range workers {
			w.run(func() { r.createPod(ctx, rc, pod, w.out, w.record) })
		}
	}
	w.stampPods()
	if p.DeleteAll && len(p.DeletePods) > 0 {
		w.deleteAllPods()
	} else {
		w.deletePods(headOK)
	}
	return r.finishWrites(ctx, p, w.out, &w.wg)
}

// writes is one pass's writes under way: at most writeConcurrency at once,
// their outcome recorded under mu.
type writes struct {
	r   *Reconciler
	ctx context.Context
	rc  *rayv1.RayCluster
	p   *plan
	out *outcome
	mu  sync.Mutex
	sem chan struct{}
	wg  sync.WaitGroup
}

// record changes the outcome under the lock.
func (w *writes) record(f func()) { w.mu.Lock(); f(); w.mu.Unlock() }

// run starts f when fewer than writeConcurrency writes are under way.
func (w *writes) run(f func()) {
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		w.sem <- struct{}{}
		defer func() { <-w.sem }()
		f()
	}()
}

// children is step 1: the Services in parallel with the RBAC, the Ingress
// and the auth Secret; it reports whether the pods may be written.
func (w *writes) children() bool {
	r, rc := w.r, w.rc
	for _, svc := range w.p.CreateServices {
		w.run(func() { w.createService(svc) })
	}
	// The RBAC, the Ingress and the Secret record into an outcome of their
	// own, merged once the Services are done.
	own := &outcome{}
	rbacOK := w.createRBAC(own)
	r.applyIngress(w.ctx, rc, w.p, own)
	// Pods asked to be isolated start only once their policies exist.
	policiesOK := r.applyNetworkPolicies(w.ctx, rc, w.p, own)
	// Pods mount their certificates: none before they are issued.
	mtlsOK := r.applyMTLS(w.ctx, rc, w.p, own)
	// Pods read their Ray auth token from the Secret: none without it.
	secretOK := r.createAuthSecret(w.ctx, rc, w.p.CreateAuthSecret, own)
	// The head mounts the GCS store's claim (gcs_embedded.go).
	pvcOK := r.applyGCSStoragePVC(w.ctx, rc, w.p, own)
	// The gang before its pods (gang.go).
	groupOK := r.applyGroup(w.ctx, rc, w.p, own)
	w.wg.Wait()
	w.out.createdRBAC = append(w.out.createdRBAC, own.createdRBAC...)
	w.out.failures = append(w.out.failures, own.failures...)
	w.out.ambiguous = w.out.ambiguous || own.ambiguous
	return rbacOK && secretOK && policiesOK && mtlsOK && pvcOK && groupOK && !slices.ContainsFunc(w.out.failures, endsPass)
}

// createService creates one Service; one that exists is adopted by name.
func (w *writes) createService(svc *corev1.Service) {
	r, rc, out := w.r, w.rc, w.out
	err := kit.Create(w.ctx, r.client, r.exp, rc.UID, svc)
	w.record(func() {
		switch {
		case err == nil:
			out.createdServices = append(out.createdServices, svc)
		case apierrors.IsAlreadyExists(err):
			// Made by someone else (KubeRay, before a takeover):
			// adopted by name, never created again.
			if svc.Name == kit.HeadlessWorkerServiceName(rc.Name) {
				r.exists.set(rc.UID, "Service/"+svc.Name)
			}
		default:
			// Not expected even when it may have happened: the
			// next pass creates it again (AlreadyExists adopts it).
			r.exp.CreateFailed(rc.UID, svc)
			out.fail(rayv1.EventFailedToCreateService, fmt.Sprintf("Failed creating service %s/%s, %v", svc.Namespace, svc.Name, err))
		}
	})
}

// createRBAC creates the autoscaler's ServiceAccount, Role and
// RoleBinding one after the other; it reports whether all exist.
func (w *writes) createRBAC(out *outcome) bool {
	if len(w.p.CreateRBAC) == 0 {
		return true
	}
	ok := true
	for _, obj := range w.p.CreateRBAC {
		err := w.r.client.Create(w.ctx, obj)
		switch {
		case err == nil:
			out.createdRBAC = append(out.createdRBAC, obj)
		case apierrors.IsAlreadyExists(err):
		default:
			ok = false
			reason, what := rbacEvent(obj, false)
			out.fail(reason, fmt.Sprintf("Failed creating %s %s/%s, %v", what, obj.GetNamespace(), obj.GetName(), err))
		}
	}
	if ok {
		w.r.exists.set(w.rc.UID, rbacKey)
	}
	return ok
}

// headPod is step 2: it creates the head pod when planned, and returns
// whether that succeeded (true when none was planned) and the workers
// planned.
func (w *writes) headPod() (headOK bool, workers []*corev1.Pod) {
	headOK = true
	for _, pod := range w.p.CreatePods {
		if !kit.IsHeadPod(pod) {
			workers = append(workers, pod)
			continue
		}
		w.run(func() {
			ok := w.r.createPod(w.ctx, w.rc, pod, w.out, w.record)
			w.record(func() { headOK = headOK && ok })
		})
	}
	w.wg.Wait()
	return headOK, workers
}

// stampPods merges the Recreate hash into pods; a failure is retried by
// the next pass.
func (w *writes) stampPods() {
	for _, st := range w.p.StampPods {
		w.run(func() {
			err := w.r.stampPod(w.ctx, st)
			w.record(func() {
				if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
					w.out.ambiguous = w.out.ambiguous || kit.Ambiguous(err)
					log.FromContext(w.ctx).Info("stamping the Recreate hash onto a pod failed; next pass retries", "pod", st.Pod.Name, "error", err.Error())
				}
			})
		})
	}
}

// deleteAllPods deletes every pod of the cluster in one request.
func (w *writes) deleteAllPods() {
	r, rc, p := w.r, w.rc, w.p
	for _, d := range p.DeletePods {
		r.exp.ExpectDelete(rc.UID, d.Pod)
	}
	w.run(func() {
		err := r.client.DeleteAllOf(w.ctx, &corev1.Pod{}, client.InNamespace(rc.Namespace),
			client.MatchingLabelsSelector{Selector: kit.ClusterPodsSelector(rc.Name)})
		w.record(func() {
			if err != nil && !apierrors.IsNotFound(err) {
				for _, d := range p.DeletePods {
					r.exp.DeleteFailed(rc.UID, d.Pod)
				}
				w.out.failPod(rayv1.FailedDeleteAllPods, rayv1.EventFailedToDeletePodCollection,
					fmt.Sprintf("Failed deleting Pods for RayCluster %s/%s: %s, %v", rc.Namespace, rc.Name, p.DeletePods[0].Reason, err), err)
				return
			}
			w.out.deleted = append(w.out.deleted, p.DeletePods...)
		})
	})
}

// deletePods deletes the planned pods one by one, with UID
// preconditions; without the head that was wanted, only head pods.
func (w *writes) deletePods(headOK bool) {
	for _, d := range w.p.DeletePods {
		if !headOK && !kit.IsHeadPod(d.Pod) {
			continue
		}
		w.run(func() { w.deletePod(d) })
	}
}

// deletePod deletes one pod and records the outcome, with KubeRay's Event
// and ReplicaFailure reasons.
func (w *writes) deletePod(d podDeletion) {
	r, rc, out := w.r, w.rc, w.out
	r.exp.ExpectDelete(rc.UID, d.Pod)
	var opts []client.DeleteOption
	if d.Pod.UID != "" {
		// Never delete a same-named successor by accident.
		opts = append(opts, client.Preconditions{UID: &d.Pod.UID})
	}
	err := r.client.Delete(w.ctx, d.Pod, opts...)
	w.record(func() {
		switch {
		case err == nil, apierrors.IsNotFound(err):
			out.deleted = append(out.deleted, d)
		case apierrors.IsConflict(err):
			// UID precondition failed: that pod is gone already.
			r.exp.DeleteFailed(rc.UID, d.Pod)
		default:
			if !kit.Ambiguous(err) {
				r.exp.DeleteFailed(rc.UID, d.Pod)
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
}

// endsPass: a failed write of step 1 that keeps the pods from being written.
// A failed update of a drifted Ingress does not: KubeRay never updates one
// (raydar's own repair, ingress.go), so it holds nothing back.
func endsPass(f failure) bool { return f.Event != rayv1.EventFailedToUpdateIngress }

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
	err := kit.Create(ctx, r.client, r.exp, rc.UID, pod)
	record(func() {
		switch {
		case err == nil:
			out.createdPods = append(out.createdPods, pod)
		case apierrors.IsAlreadyExists(err):
			// Our own earlier create whose answer was lost, or a
			// name clash: read live next time to tell.
			out.ambiguous = true
		case kit.Ambiguous(err):
			out.ambiguous = true
			out.failPod(cond, reason, msg(err), err)
		default:
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
