package raycluster

import (
	"context"
	"fmt"

	"github.com/raydar/raydar/controller/kit"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// observe reads what decide needs: from the cache, with this process's
// unseen writes laid over it, or live from the API server after a write
// whose outcome is unknown (kit.Observed picks).
//
// The cached pods are read without a deep copy (their maps and slices are
// the cache's own): a pass runs on every event of every pod, so copying
// the cluster's pods each time made the pass O(pods) in allocations: in a
// 0 → 100-worker scale-up of 100 clusters, Pod.DeepCopy was 15 % of the
// operator's CPU, the collector's share grew with it, and the run took
// 42.2 CPU-s, 29.6 without the copies (issue 47, docs/benchmarks.md). Nothing
// downstream changes a pod in place: kit.Overlay copies before it marks one
// terminating, stampPod patches a copy (both tested).
func (r *Reconciler) observe(ctx context.Context, rc *rayv1.RayCluster) (*observed, error) {
	o := &observed{Cluster: rc, Now: r.now(), Config: r.cfg, NewSuffix: r.newSuffix}
	var pods []*corev1.Pod
	list := &corev1.PodList{}
	live := r.exp.TakeUncertain(rc.UID)
	if live {
		if err := r.api.List(ctx, list, client.InNamespace(rc.Namespace),
			client.MatchingLabelsSelector{Selector: kit.ClusterPodsSelector(rc.Name)}); err != nil {
			r.exp.MarkUncertain(rc.UID)
			return nil, fmt.Errorf("listing pods: %w", err)
		}
	} else if err := r.client.List(ctx, list, client.InNamespace(rc.Namespace),
		client.MatchingFields{ownerUIDField: string(rc.UID)}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing pods: %w", err)
	}
	for i := range list.Items {
		p := &list.Items[i]
		if kit.ControllerUID(p.OwnerReferences) == string(rc.UID) && (kit.IsHeadPod(p) || kit.IsWorkerPod(p)) {
			pods = append(pods, p)
		}
	}
	o.Pods = kit.Observed(r.exp, rc.UID, pods, live)

	var err error
	if o.HeadService, err = r.getService(ctx, rc, kit.HeadServiceName(rc)); err != nil {
		return nil, err
	}
	if needsHeadlessWorkerService(rc) && rc.DeletionTimestamp == nil {
		if o.HeadlessServiceReady, err = r.existsOnce(ctx, rc, "Service", kit.HeadlessWorkerServiceName(rc.Name)); err != nil {
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
	if o.NetworkPolicies, err = r.listNetworkPolicies(ctx, rc); err != nil {
		return nil, err
	}
	if o.MTLS, err = r.readMTLS(ctx, rc); err != nil {
		return nil, err
	}
	if o.GCSStoragePVC, err = r.getGCSStoragePVC(ctx, rc); err != nil {
		return nil, err
	}
	if o.Group, err = r.getGroup(ctx, rc); err != nil {
		return nil, err
	}
	if o.WAS, err = r.getWAS(ctx, rc); err != nil {
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
	return kit.OverlayOne(r.exp, rc.UID, rc.Namespace, name, svc), nil
}

// rbacKey is the existsMemo key of the autoscaler's RBAC objects.
const rbacKey = "AutoscalerRBAC"

// autoscalerRBACExists reads the autoscaler's RBAC objects live, once per
// cluster per process (they are not cached: nothing else needs them).
func (r *Reconciler) autoscalerRBACExists(ctx context.Context, rc *rayv1.RayCluster) (bool, error) {
	if r.exists.has(rc.UID, rbacKey) {
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
	r.exists.set(rc.UID, rbacKey)
	return true, nil
}

// existsOnce reads whether the core/v1 object kind/name exists in rc's
// namespace, live and metadata only, unless it is already known to; a
// found object is remembered (r.exists, keyed by rc's UID), so it is read
// once per cluster per process.
func (r *Reconciler) existsOnce(ctx context.Context, rc *rayv1.RayCluster, kind, name string) (bool, error) {
	if r.exists.has(rc.UID, kind+"/"+name) {
		return true, nil
	}
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind(kind))
	err := r.api.Get(ctx, types.NamespacedName{Namespace: rc.Namespace, Name: name}, m)
	switch {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("reading %s %s: %w", kind, name, err)
	}
	r.exists.set(rc.UID, kind+"/"+name)
	return true, nil
}
