package kit_test

import (
	"context"
	"testing"
	"time"

	"github.com/raydar/raydar/controller/internal/fixture"
	"github.com/raydar/raydar/controller/kit"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/raydar/raydar/rayapi/kinds"
	"github.com/raydar/raydar/rayapi/scheme"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// recorder is a kind's reconciler that remembers what it was asked.
type recorder struct {
	parts     *kit.Parts[*rayv1.RayCluster]
	passed    []string
	forgotten []types.UID
}

func (r *recorder) Pass(_ context.Context, rc *rayv1.RayCluster) (ctrl.Result, error) {
	r.passed = append(r.passed, rc.Name)
	return ctrl.Result{RequeueAfter: time.Minute}, nil
}

func (r *recorder) Forget(uid types.UID, _ types.NamespacedName) {
	r.forgotten = append(r.forgotten, uid)
}

// A kind's registration built without a manager: the reconciler gets the
// parts the Loop uses, runs after the Loop's prologue, and forgets an
// object that is gone together with the kit.
func TestKindReconcileWiresTheReconcilerIntoTheLoop(t *testing.T) {
	rc := fixture.Cluster("c")
	rc.ResourceVersion = ""
	rc.UID = "uid-c"
	c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(rc).Build()
	var built *recorder
	k := &kit.Kind[*rayv1.RayCluster]{
		Desc:      kinds.RayCluster,
		ManagedBy: func(rc *rayv1.RayCluster) *string { return rc.Spec.ManagedBy },
		Build: func(p *kit.Parts[*rayv1.RayCluster]) (kit.Reconciler[*rayv1.RayCluster], error) {
			built = &recorder{parts: p}
			return built, nil
		},
	}
	p := kit.NewParts(k, c, c, events.NewFakeRecorder(10), kit.Shared{Gate: kit.NewGate(c, true)})
	_, run, err := k.Reconcile(p)
	if err != nil {
		t.Fatal(err)
	}
	if built.parts.Loop.Exp != p.Exp || built.parts.Loop.Events != p.Events || built.parts.Loop.Status != p.Status {
		t.Error("the Loop and the reconciler do not share the kit's parts")
	}
	req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: rc.Namespace, Name: "c"}}
	res, err := run(context.Background(), req)
	if err != nil || res.RequeueAfter != time.Minute || len(built.passed) != 1 {
		t.Fatalf("first Reconcile: %v %v, passes %v; want the reconciler's pass once", res, err, built.passed)
	}
	if err := c.Delete(context.Background(), rc); err != nil {
		t.Fatal(err)
	}
	if _, err := run(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if len(built.passed) != 1 || len(built.forgotten) != 1 || built.forgotten[0] != "uid-c" {
		t.Errorf("after the delete: passes %v, forgotten %v; want no pass and uid-c forgotten", built.passed, built.forgotten)
	}
}

func TestOrDefault(t *testing.T) {
	for _, tc := range []struct {
		v, def, want time.Duration
	}{
		{0, time.Second, time.Second},
		{-time.Second, time.Second, time.Second},
		{3 * time.Second, time.Second, 3 * time.Second},
	} {
		if got := kit.OrDefault(tc.v, tc.def); got != tc.want {
			t.Errorf("OrDefault(%v, %v) = %v, want %v", tc.v, tc.def, got, tc.want)
		}
	}
	if got := kit.OrDefault("", "cluster.local"); got != "cluster.local" {
		t.Errorf(`OrDefault("", "cluster.local") = %q`, got)
	}
	if got := kit.OrDefault("corp.example", "cluster.local"); got != "corp.example" {
		t.Errorf(`OrDefault("corp.example", "cluster.local") = %q`, got)
	}
}

// A registration's controller and Events are named after its kind's
// descriptor, and one whose descriptor makes other objects is refused.
func TestKindIsNamedByItsDescriptor(t *testing.T) {
	k := &kit.Kind[*rayv1.RayJob]{Desc: kinds.RayJob}
	if k.Name() != "rayjob" || k.EventSource() != "raydar-rayjob" {
		t.Errorf("Name %q, EventSource %q; want rayjob, raydar-rayjob", k.Name(), k.EventSource())
	}
	for _, reg := range []kit.Registration{&kit.Kind[*rayv1.RayJob]{Desc: kinds.RayCluster}, &kit.Kind[*rayv1.RayJob]{}} {
		if _, err := kit.Setup(nil, kit.Shared{}, reg); err == nil {
			t.Errorf("%+v was set up; want it refused", reg)
		} else {
			t.Log(err)
		}
	}
}
