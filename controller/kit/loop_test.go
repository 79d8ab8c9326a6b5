package kit_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/raydar/raydar/controller/internal/fixture"
	"github.com/raydar/raydar/controller/kit"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/raydar/raydar/rayapi/scheme"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

func testLoop(t *testing.T, objs ...client.Object) (*kit.Loop[*rayv1.RayCluster], client.Client, *events.FakeRecorder, *[]types.UID) {
	t.Helper()
	c := fake.NewClientBuilder().WithScheme(scheme.New()).WithStatusSubresource(&rayv1.RayCluster{}).WithObjects(objs...).Build()
	rec := events.NewFakeRecorder(10)
	var forgotten []types.UID
	l := &kit.Loop[*rayv1.RayCluster]{
		Cache: c, API: c, New: func() *rayv1.RayCluster { return &rayv1.RayCluster{} },
		Exp: kit.NewExpectations(0, nil), Events: kit.NewEvents(rec), Gate: kit.NewGate(c, false),
		Noun: "cluster", ManagedBy: func(rc *rayv1.RayCluster) *string { return rc.Spec.ManagedBy }, ListUnmanaged: true,
		Forget: func(uid types.UID, _ types.NamespacedName) { forgotten = append(forgotten, uid) },
	}
	return l, c, rec, &forgotten
}

var conflict = apierrors.NewConflict(schema.GroupResource{Group: "ray.io", Resource: "rayclusters"}, "c", errors.New("modified"))

func TestLoopConflictDecidesAgainFromAFreshRead(t *testing.T) {
	rc := fixture.Cluster("c")
	rc.ResourceVersion = ""
	l, c, _, _ := testLoop(t, rc)
	req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "c"}}
	var seen []string
	pass := func(ctx context.Context, obj *rayv1.RayCluster) (ctrl.Result, error) {
		seen = append(seen, obj.ResourceVersion)
		if len(seen) == 1 {
			// Someone else writes in between: the next attempt reads it.
			fresh := obj.DeepCopy()
			fresh.Labels = map[string]string{"x": "y"}
			if err := c.Update(ctx, fresh); err != nil {
				t.Fatal(err)
			}
			return ctrl.Result{}, conflict
		}
		if obj.Labels["x"] != "y" {
			t.Errorf("attempt %d decided from a stale read", len(seen))
		}
		return ctrl.Result{RequeueAfter: time.Second}, nil
	}
	res, err := l.Reconcile(context.Background(), req, pass)
	if err != nil || res.RequeueAfter != time.Second || len(seen) != 2 || seen[0] == seen[1] {
		t.Fatalf("res %v err %v attempts %v", res, err, seen)
	}
	// A conflict every time: given up after DefaultConflictRetries, the
	// error goes to the back-off.
	n := 0
	_, err = l.Reconcile(context.Background(), req, func(context.Context, *rayv1.RayCluster) (ctrl.Result, error) {
		n++
		return ctrl.Result{}, conflict
	})
	if !apierrors.IsConflict(err) || n != kit.DefaultConflictRetries {
		t.Fatalf("persistent conflict: %d attempts, err %v", n, err)
	}
}

func TestLoopForgetsWhatIsGone(t *testing.T) {
	rc := fixture.Cluster("c")
	rc.ResourceVersion = ""
	l, c, _, forgotten := testLoop(t, rc)
	req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "c"}}
	ok := func(context.Context, *rayv1.RayCluster) (ctrl.Result, error) { return ctrl.Result{}, nil }
	if _, err := l.Reconcile(context.Background(), req, ok); err != nil {
		t.Fatal(err)
	}
	uid := l.UID(req.NamespacedName)
	l.Exp.MarkUncertain(uid)
	if err := c.Delete(context.Background(), rc); err != nil {
		t.Fatal(err)
	}
	called := false
	if _, err := l.Reconcile(context.Background(), req, func(context.Context, *rayv1.RayCluster) (ctrl.Result, error) {
		called = true
		return ctrl.Result{}, nil
	}); err != nil || called {
		t.Fatalf("gone object: err %v, pass called %v", err, called)
	}
	if len(*forgotten) != 1 || (*forgotten)[0] != uid || l.Exp.TakeUncertain(uid) || l.UID(req.NamespacedName) != "" {
		t.Fatalf("not forgotten: %v", *forgotten)
	}
}

func TestLoopSkipsWhatIsManagedElsewhereSayingItOnce(t *testing.T) {
	rc := fixture.Cluster("c")
	rc.ResourceVersion = ""
	rc.Spec.ManagedBy = fixture.Ptr("example.com/other")
	l, c, rec, _ := testLoop(t, rc)
	req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "c"}}
	calls := 0
	pass := func(context.Context, *rayv1.RayCluster) (ctrl.Result, error) { calls++; return ctrl.Result{}, nil }
	for range 2 {
		if _, err := l.Reconcile(context.Background(), req, pass); err != nil {
			t.Fatal(err)
		}
	}
	if calls != 0 {
		t.Fatal("a cluster managed elsewhere was reconciled")
	}
	if got := drain(rec); len(got) != 1 || got[0] != `Normal ManagedElsewhere raydar does not reconcile this cluster: spec.managedBy is "example.com/other": that controller reconciles this cluster, raydar does not touch it` {
		t.Fatalf("events %q", got)
	}
	if why := l.Gate.Unmanaged()[req.NamespacedName]; why == "" {
		t.Error("not listed as unmanaged")
	}
	// Taken back: reconciled, no longer listed.
	fresh := &rayv1.RayCluster{}
	_ = c.Get(context.Background(), req.NamespacedName, fresh)
	fresh.Spec.ManagedBy = nil
	if err := c.Update(context.Background(), fresh); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Reconcile(context.Background(), req, pass); err != nil || calls != 1 {
		t.Fatalf("taken back: calls %d err %v", calls, err)
	}
	if _, listed := l.Gate.Unmanaged()[req.NamespacedName]; listed {
		t.Error("still listed as unmanaged")
	}
}

func TestSkipReasonForNamesTheKind(t *testing.T) {
	var g *kit.Gate
	why := g.SkipReasonFor(nil, fixture.Ptr("example.com/other"), "RayJob")
	if why != `spec.managedBy is "example.com/other": that controller reconciles this RayJob, raydar does not touch it` {
		t.Fatalf("%q", why)
	}
	if g.SkipReasonFor(nil, nil, "RayJob") != "" {
		t.Fatal("managedBy unset, no other operator: reconciled")
	}
}

func TestUpdateFinalizers(t *testing.T) {
	rc := fixture.Cluster("c")
	rc.ResourceVersion = ""
	_, c, _, _ := testLoop(t, rc)
	ctx := context.Background()
	read := &rayv1.RayCluster{}
	_ = c.Get(ctx, client.ObjectKeyFromObject(rc), read)
	cached := read.DeepCopy()
	exp := kit.NewExpectations(0, nil)
	err := kit.UpdateFinalizers(ctx, c, exp, read, func(f []string) []string { return append(f, "ray.io/x") },
		func(o *rayv1.RayCluster) { o.Labels = map[string]string{"defaulted": "yes"} })
	if err != nil {
		t.Fatal(err)
	}
	if len(read.Finalizers) != 1 || read.Labels["defaulted"] != "yes" || read.ResourceVersion == cached.ResourceVersion {
		t.Fatalf("obj is not the stored object: %+v", read.ObjectMeta)
	}
	if got := kit.Latest(exp, cached); len(got.Finalizers) != 1 {
		t.Fatal("the finalizer write is not read back")
	}
	// A stale view fails with a 409 and leaves obj as it was.
	stale := cached.DeepCopy()
	err = kit.UpdateFinalizers(ctx, c, exp, stale, func([]string) []string { return nil }, nil)
	if !apierrors.IsConflict(err) || stale.ResourceVersion != cached.ResourceVersion {
		t.Fatalf("stale write: %v", err)
	}
}
