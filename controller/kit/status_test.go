package kit_test

import (
	"context"
	"testing"
	"time"

	"github.com/raydar/raydar/controller/internal/fixture"
	"github.com/raydar/raydar/controller/kit"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/raydar/raydar/rayapi/scheme"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

func TestStatusWriterHold(t *testing.T) {
	w := kit.NewStatusWriter(nil, nil)
	const uid = types.UID("u")
	t0 := fixture.T0
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	steps := []struct {
		name  string
		ch    kit.StatusChange
		now   time.Time
		write bool
		wait  time.Duration
	}{
		{"urgent writes at once", kit.StatusChange{}, at(0), true, 0},
		{"held change starts the clock", kit.StatusChange{Hold: 2 * time.Second}, at(0), false, 2 * time.Second},
		{"still held", kit.StatusChange{Hold: 2 * time.Second}, at(time.Second), false, time.Second},
		{"due", kit.StatusChange{Hold: 2 * time.Second}, at(2 * time.Second), true, 0},
		{"held again from a new clock", kit.StatusChange{Hold: 2 * time.Second}, at(3 * time.Second), false, 2 * time.Second},
		{"unchanged drops the held change", kit.StatusChange{Unchanged: true}, at(4 * time.Second), false, 0},
		{"after unchanged the clock starts again", kit.StatusChange{Hold: 2 * time.Second}, at(5 * time.Second), false, 2 * time.Second},
		{"another class restarts the clock", kit.StatusChange{Hold: 10 * time.Second, Class: "carried"}, at(6 * time.Second), false, 10 * time.Second},
		{"same class keeps it", kit.StatusChange{Hold: 10 * time.Second, Class: "carried"}, at(15 * time.Second), false, time.Second},
		{"urgent ends every hold", kit.StatusChange{}, at(15 * time.Second), true, 0},
		{"and the next hold starts fresh", kit.StatusChange{Hold: time.Second}, at(16 * time.Second), false, time.Second},
	}
	for _, s := range steps {
		write, wait := w.Hold(uid, s.ch, s.now)
		if write != s.write || wait != s.wait {
			t.Errorf("%s: write=%v wait=%v, want %v %v", s.name, write, wait, s.write, s.wait)
		}
	}
	// Clocks are per object.
	if write, _ := w.Hold("other", kit.StatusChange{Hold: time.Second}, at(100*time.Second)); write {
		t.Error("another object's clock was used")
	}
}

func TestStatusWriterWritesAndRemembers(t *testing.T) {
	ctx := context.Background()
	rc := fixture.Cluster("c")
	rc.ResourceVersion = ""
	c := fake.NewClientBuilder().WithScheme(scheme.New()).WithStatusSubresource(&rayv1.RayCluster{}).WithObjects(rc).Build()
	read := &rayv1.RayCluster{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(rc), read); err != nil {
		t.Fatal(err)
	}
	exp := kit.NewExpectations(0, func() time.Time { return fixture.T0 })
	w := kit.NewStatusWriter(c, exp)

	obj := read.DeepCopy()
	obj.Status.State = rayv1.Ready
	if wait, err := w.Write(ctx, read, obj, kit.StatusChange{Hold: time.Second}, fixture.T0, nil); err != nil || wait != time.Second {
		t.Fatalf("held write: wait %v, err %v", wait, err)
	}
	stored := &rayv1.RayCluster{}
	_ = c.Get(ctx, client.ObjectKeyFromObject(rc), stored)
	if stored.Status.State != "" {
		t.Fatal("a held change was written")
	}
	if _, err := w.Write(ctx, read, obj, kit.StatusChange{}, fixture.T0, nil); err != nil {
		t.Fatal(err)
	}
	_ = c.Get(ctx, client.ObjectKeyFromObject(rc), stored)
	if stored.Status.State != rayv1.Ready {
		t.Fatalf("status not written: %+v", stored.Status)
	}
	// The next pass, from a cache that still shows the version read, sees
	// the written status.
	if got := kit.Latest(exp, read); got.Status.State != rayv1.Ready {
		t.Fatal("the status write is not read back")
	}
	// A patch builder writes by patch.
	patched := stored.DeepCopy()
	patched.Status.Reason = "patched"
	if _, err := w.Write(ctx, stored, patched, kit.StatusChange{}, fixture.T0, func(orig, obj client.Object) (client.Patch, error) {
		return client.MergeFrom(orig), nil
	}); err != nil {
		t.Fatal(err)
	}
	_ = c.Get(ctx, client.ObjectKeyFromObject(rc), stored)
	if stored.Status.Reason != "patched" || stored.Status.State != rayv1.Ready {
		t.Fatalf("patch not applied: %+v", stored.Status)
	}
}
