package raycluster

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/raydar/raydar/controller/features"
	"github.com/raydar/raydar/controller/internal/fixture"
	"github.com/raydar/raydar/controller/kit"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/raydar/raydar/rayapi/scheme"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// fakeReconciler runs the reconciler against controller-runtime's fake
// client, for the act-side rules that need no real API server.
func fakeReconciler(t *testing.T, funcs interceptor.Funcs, objs ...client.Object) (*Reconciler, client.Client, *events.FakeRecorder) {
	t.Helper()
	return fakeReconcilerWith(t, features.Gates{}, funcs, objs...)
}

// fakeReconcilerWith is fakeReconciler under the feature gates g.
func fakeReconcilerWith(t *testing.T, g features.Gates, funcs interceptor.Funcs, objs ...client.Object) (*Reconciler, client.Client, *events.FakeRecorder) {
	t.Helper()
	c := fakeAPI(objs...).WithInterceptorFuncs(funcs).Build()
	rec := events.NewFakeRecorder(100)
	gate := kit.NewGate(c, true)
	r := newReconciler(c, c, rec, kit.Shared{Gate: gate, ClusterDomain: "cluster.local", InjectProbes: true, Features: g}, -1)
	return r, c, rec
}

// fakeAPI is a fake API server holding objs, with the pods' owner index
// the reconciler's cache reads.
func fakeAPI(objs ...client.Object) *fake.ClientBuilder {
	return fake.NewClientBuilder().WithScheme(scheme.New()).
		WithStatusSubresource(&rayv1.RayCluster{}).
		WithIndex(&corev1.Pod{}, ownerUIDField, func(o client.Object) []string {
			if uid := kit.ControllerUID(o.GetOwnerReferences()); uid != "" {
				return []string{uid}
			}
			return nil
		}).
		WithObjects(objs...)
}

func freshCluster(name string, workers int32) *rayv1.RayCluster {
	rc := fixture.Cluster(name, fixture.Group("small", workers))
	rc.ResourceVersion = ""
	return rc
}

func TestReconcileRetriesConflictsFromAFreshRead(t *testing.T) {
	rc := freshCluster("c", 2)
	conflicts := 0
	r, c, _ := fakeReconciler(t, interceptor.Funcs{
		SubResourceUpdate: func(ctx context.Context, cl client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			if conflicts < 2 {
				conflicts++
				return apierrors.NewConflict(schema.GroupResource{Group: "ray.io", Resource: "rayclusters"}, obj.GetName(), errors.New("the object has been modified"))
			}
			return cl.SubResource(sub).Update(ctx, obj, opts...)
		},
	}, rc)
	req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "c"}}
	if _, err := r.Reconcile(context.Background(), req); err != nil {
		t.Fatalf("reconcile: %v", err)
	}
	if conflicts != 2 {
		t.Fatalf("conflicts = %d", conflicts)
	}
	got := &rayv1.RayCluster{}
	if err := c.Get(context.Background(), req.NamespacedName, got); err != nil {
		t.Fatal(err)
	}
	if got.Status.DesiredWorkerReplicas != 2 || got.Status.ObservedGeneration == 0 && got.Generation != 0 {
		t.Fatalf("status not written after the conflicts: %+v", got.Status)
	}
	// The retries did not create anything twice.
	pods := &corev1.PodList{}
	if err := c.List(context.Background(), pods); err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) != 3 {
		t.Fatalf("%d pods after three attempts, want 3", len(pods.Items))
	}
}

func TestReconcileCreateFailureIsACondition(t *testing.T) {
	rc := freshCluster("c", 2)
	r, c, rec := fakeReconciler(t, interceptor.Funcs{
		Create: func(ctx context.Context, cl client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if p, ok := obj.(*corev1.Pod); ok && kit.IsWorkerPod(p) {
				return apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, p.Name, errors.New("exceeded quota: pods=10"))
			}
			return cl.Create(ctx, obj, opts...)
		},
	}, rc)
	req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "c"}}
	_, err := r.Reconcile(context.Background(), req)
	if err == nil || !strings.Contains(err.Error(), "exceeded quota") {
		t.Fatalf("reconcile error %v, want the quota error (retried with back-off)", err)
	}
	got := &rayv1.RayCluster{}
	_ = c.Get(context.Background(), req.NamespacedName, got)
	cond := meta.FindStatusCondition(got.Status.Conditions, string(rayv1.RayClusterReplicaFailure))
	// KubeRay's ReplicaFailure reason and message (errors.Join of its
	// marker and the API error), and its Warning Event reason and message.
	if cond == nil || cond.Reason != rayv1.FailedCreateWorkerPod || !strings.HasPrefix(cond.Message, "FailedCreateWorkerPod\npods \"c-small-worker-") ||
		!strings.HasSuffix(cond.Message, `" is forbidden: exceeded quota: pods=10`) {
		t.Fatalf("ReplicaFailure %+v", cond)
	}
	var evs []string
	for len(rec.Events) > 0 {
		evs = append(evs, <-rec.Events)
	}
	joined := strings.Join(evs, "\n")
	if !strings.Contains(joined, "Warning FailedToCreateWorkerPod Failed to create worker Pod for the cluster ns/c, pods \"c-small-worker-") ||
		!strings.Contains(joined, "Normal CreatedHeadPod Created head Pod ns/c-head-") {
		t.Errorf("events:\n%s", joined)
	}
	// The failed creations left no expectation behind (the next pass tries
	// again); the head, created, is expected until the informer sees it.
	got.UID = rc.UID
	over := kit.Overlay(r.exp, got.UID, []*corev1.Pod(nil))
	if len(over) != 1 || !kit.IsHeadPod(over[0]) {
		t.Errorf("expected pods after the failure: %v", podNames(over))
	}
}

func TestReconcileStatusCoalescing(t *testing.T) {
	rc := freshCluster("c", 1)
	r, c, _ := fakeReconciler(t, interceptor.Funcs{}, rc)
	r.coalesce = time.Hour
	now := fixture.T0
	r.now = func() time.Time { return now }
	req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "c"}}
	res, err := r.Reconcile(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	got := &rayv1.RayCluster{}
	_ = c.Get(context.Background(), req.NamespacedName, got)
	if got.Status.ObservedGeneration != 0 || got.Status.DesiredWorkerReplicas != 0 {
		t.Fatalf("a non-urgent status was written at once: %+v", got.Status)
	}
	if res.RequeueAfter != bringUpWindows*time.Hour {
		t.Fatalf("requeue after %s, want %d coalescing windows (a cluster never ready yet)", res.RequeueAfter, bringUpWindows)
	}
	now = now.Add(time.Hour)
	if _, err := r.Reconcile(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	_ = c.Get(context.Background(), req.NamespacedName, got)
	if got.Status.DesiredWorkerReplicas != 0 {
		t.Fatalf("a coming-up cluster's status was written after one window: %+v", got.Status)
	}
	now = now.Add((bringUpWindows - 1) * time.Hour)
	if _, err := r.Reconcile(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	_ = c.Get(context.Background(), req.NamespacedName, got)
	if got.Status.DesiredWorkerReplicas != 1 || got.Status.LastUpdateTime == nil {
		t.Fatalf("held status not written when due: %+v", got.Status)
	}
}

// TestReconcileAdoptsKubeRaysHeadlessService: a multi-host cluster taken
// over from KubeRay already has <cluster>-headless, labelled only
// ray.io/headless-worker-svc (no ray.io/cluster, so not in raydar's cache):
// raydar reads it live and never creates it again (no AlreadyExists pass
// after pass). A cluster without one gets it with KubeRay's labels.
func TestReconcileAdoptsKubeRaysHeadlessService(t *testing.T) {
	multiHost := func() *rayv1.RayCluster {
		g := fixture.Group("tpu", 1)
		g.NumOfHosts = 2
		rc := fixture.Cluster("c", g)
		rc.ResourceVersion = ""
		return rc
	}
	kuberays := buildHeadlessWorkerService(multiHost())
	kuberays.OwnerReferences = nil
	for _, tc := range []struct {
		name     string
		existing []client.Object
		creates  int
	}{
		{"KubeRay's exists", []client.Object{kuberays}, 0},
		{"none", nil, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			creates := 0
			r, c, _ := fakeReconciler(t, interceptor.Funcs{
				Create: func(ctx context.Context, cl client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
					if obj.GetName() == "c-headless" {
						creates++
					}
					return cl.Create(ctx, obj, opts...)
				},
			}, append(tc.existing, multiHost())...)
			// The shared cache holds only Services labelled ray.io/cluster.
			r.client = interceptor.NewClient(c.(client.WithWatch), interceptor.Funcs{
				Get: func(ctx context.Context, cl client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
					if err := cl.Get(ctx, key, obj, opts...); err != nil {
						return err
					}
					if _, ok := obj.(*corev1.Service); ok && obj.GetLabels()[rayv1.RayClusterLabelKey] == "" {
						return apierrors.NewNotFound(schema.GroupResource{Resource: "services"}, key.Name)
					}
					return nil
				},
			})
			req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "c"}}
			for range 2 {
				if _, err := r.Reconcile(context.Background(), req); err != nil {
					t.Fatal(err)
				}
			}
			if creates != tc.creates {
				t.Errorf("%d creates of c-headless, want %d", creates, tc.creates)
			}
			svc := &corev1.Service{}
			if err := c.Get(context.Background(), types.NamespacedName{Namespace: "ns", Name: "c-headless"}, svc); err != nil {
				t.Fatal(err)
			}
			if want := map[string]string{"ray.io/headless-worker-svc": "c"}; !maps.Equal(svc.Labels, want) {
				t.Errorf("labels %v, want KubeRay's %v", svc.Labels, want)
			}
		})
	}
}

// TestReconcileFinalizerWritesAsKubeRay: KubeRay adds the GCS FT finalizer
// with r.Update after setDefaults (raycluster_controller.go:163, :254-258),
// so the stored cluster gets rayStartParams {} on the head and every worker
// group; raydar writes it the same way.
func TestReconcileFinalizerWritesAsKubeRay(t *testing.T) {
	rc := freshCluster("c", 1)
	rc.Spec.GcsFaultToleranceOptions = &rayv1.GcsFaultToleranceOptions{RedisAddress: "redis:6379"}
	rc.Spec.HeadGroupSpec.RayStartParams = nil
	rc.Spec.WorkerGroupSpecs[0].RayStartParams = nil
	r, c, _ := fakeReconciler(t, interceptor.Funcs{}, rc)
	req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "c"}}
	if _, err := r.Reconcile(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	got := &rayv1.RayCluster{}
	if err := c.Get(context.Background(), req.NamespacedName, got); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(got.Finalizers, rayv1.GCSFaultToleranceRedisCleanupFinalizer) {
		t.Fatalf("finalizers %v", got.Finalizers)
	}
	if got.Spec.HeadGroupSpec.RayStartParams == nil || got.Spec.WorkerGroupSpecs[0].RayStartParams == nil {
		t.Errorf("rayStartParams head %v worker %v, want {} as KubeRay writes", got.Spec.HeadGroupSpec.RayStartParams, got.Spec.WorkerGroupSpecs[0].RayStartParams)
	}
}

// TestLiveReadLeavesTheCacheItsExpectations: after an ambiguous write a
// pass reads the pods live; what that read shows must not count as shown
// by the cache, which may still lag. Here the cache does not show worker
// index 0 yet: the live pass, then a pass on the cache, must create
// nothing, where consuming the expectation in the live pass made the
// cache pass create a second worker with index 0.
func TestLiveReadLeavesTheCacheItsExpectations(t *testing.T) {
	rc := freshCluster("c", 2)
	api := fakeAPI(rc).Build()
	hidden := "" // the pod the cache does not show yet
	cache := interceptor.NewClient(api, interceptor.Funcs{
		List: func(ctx context.Context, cl client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if err := cl.List(ctx, list, opts...); err != nil {
				return err
			}
			if pl, ok := list.(*corev1.PodList); ok {
				pl.Items = slices.DeleteFunc(pl.Items, func(p corev1.Pod) bool { return p.Name == hidden })
			}
			return nil
		},
	})
	r := newReconciler(cache, api, events.NewFakeRecorder(100), kit.Shared{Gate: kit.NewGate(api, true), ClusterDomain: "cluster.local", InjectProbes: true}, -1)
	ctx := context.Background()
	req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "c"}}
	workers := func() map[string]int {
		pods := &corev1.PodList{}
		if err := api.List(ctx, pods); err != nil {
			t.Fatal(err)
		}
		idx := map[string]int{}
		for _, p := range pods.Items {
			if kit.IsWorkerPod(&p) {
				idx[p.Labels[rayv1.RayWorkerReplicaIndexKey]]++
			}
		}
		return idx
	}
	if _, err := r.Reconcile(ctx, req); err != nil {
		t.Fatal(err)
	}
	if got := workers(); got["0"] != 1 || got["1"] != 1 {
		t.Fatalf("first pass: workers by replica index %v, want one each of 0 and 1", got)
	}
	pods := &corev1.PodList{}
	if err := api.List(ctx, pods); err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if kit.IsWorkerPod(&p) && p.Labels[rayv1.RayWorkerReplicaIndexKey] == "0" {
			hidden = p.Name
		}
	}
	got := &rayv1.RayCluster{}
	if err := api.Get(ctx, req.NamespacedName, got); err != nil {
		t.Fatal(err)
	}
	r.exp.MarkUncertain(got.UID) // as after an ambiguous write
	for pass := range 2 {        // live, then the lagging cache
		if _, err := r.Reconcile(ctx, req); err != nil {
			t.Fatal(err)
		}
		if got := workers(); got["0"] != 1 || got["1"] != 1 || len(got) != 2 {
			t.Fatalf("pass %d after the ambiguous write: workers by replica index %v, want one each of 0 and 1", pass+2, got)
		}
	}
}
