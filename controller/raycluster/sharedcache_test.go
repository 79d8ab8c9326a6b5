package raycluster

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// observe reads the cached pods without a deep copy (their maps and
// slices are the cache's): no pass may change them. The pods are served
// as the informer cache serves them with UnsafeDisableDeepCopy (each item
// a shallow copy of the one object the cache holds), through a scale-down
// (deletions, the overlay marking them terminating) and passes after it;
// what the cache holds must be as it was.
func TestPassesLeaveTheSharedCachedPodsAlone(t *testing.T) {
	rc := freshCluster("c", 3)
	var cache map[string]*corev1.Pod // nil: the fake's own copies
	r, c, _ := fakeReconciler(t, interceptor.Funcs{
		List: func(ctx context.Context, cl client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if err := cl.List(ctx, list, opts...); err != nil {
				return err
			}
			if pl, ok := list.(*corev1.PodList); ok && cache != nil {
				for i := range pl.Items {
					if shared, ok := cache[pl.Items[i].Name]; ok {
						pl.Items[i] = *shared
					}
				}
			}
			return nil
		},
	}, rc)
	req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: rc.Namespace, Name: rc.Name}}
	ctx := context.Background()
	if _, err := r.Reconcile(ctx, req); err != nil {
		t.Fatal(err)
	}
	pods := &corev1.PodList{}
	if err := c.List(ctx, pods); err != nil || len(pods.Items) != 4 {
		t.Fatalf("%d pods (%v), want 4", len(pods.Items), err)
	}
	cache, before := map[string]*corev1.Pod{}, map[string]*corev1.Pod{}
	for i := range pods.Items {
		p := &pods.Items[i]
		p.Status.Phase = corev1.PodRunning
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
		cache[p.Name], before[p.Name] = p, p.DeepCopy()
	}
	got := &rayv1.RayCluster{}
	if err := c.Get(ctx, req.NamespacedName, got); err != nil {
		t.Fatal(err)
	}
	got.Spec.WorkerGroupSpecs[0].Replicas = ptr.To(int32(1))
	got.Spec.WorkerGroupSpecs[0].MinReplicas = ptr.To(int32(1))
	if err := c.Update(ctx, got); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := r.Reconcile(ctx, req); err != nil {
			t.Fatal(err)
		}
	}
	left := &corev1.PodList{}
	if err := c.List(ctx, left); err != nil {
		t.Fatal(err)
	}
	if len(left.Items) != 2 {
		t.Fatalf("%d pods after scaling to 1 worker, want 2 (the passes did not act)", len(left.Items))
	}
	for name, p := range cache {
		if !equality.Semantic.DeepEqual(p, before[name]) {
			t.Errorf("a pass changed the cached pod %s in place", name)
		}
	}
}
