package history

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

func TestClassify(t *testing.T) {
	for _, c := range []struct {
		manager string
		who     Who
		user    string
		words   string
	}{
		{"python-requests", WhoAutoscaler, "", "Ray autoscaler (python-requests)"},
		{"raydar", WhoRaydarUser, "", "a person via raydar"},
		{"raydar:alice", WhoRaydarUser, "alice", "alice via raydar"},
		{"raydar-operator", WhoReconciler, "", "raydar's reconciler"},
		{"kubectl-patch", WhoKubectl, "", "kubectl (kubectl-patch)"},
		{"kubectl-edit", WhoKubectl, "", "kubectl (kubectl-edit)"},
		{"kubectl-client-side-apply", WhoKubectl, "", "kubectl (kubectl-client-side-apply)"},
		{"kubectl-scale", WhoKubectl, "", "kubectl (kubectl-scale)"},
		{"kubectl", WhoKubectl, "", "kubectl (kubectl)"},
		{"helm", WhoOther, "", "helm"},
		{"raydarish", WhoOther, "", "raydarish"},
	} {
		who, user := Classify(c.manager)
		a := &Author{Who: who, Manager: c.manager, User: user}
		if who != c.who || user != c.user || a.String() != c.words {
			t.Errorf("Classify(%q) = %s, %q, %q; want %s, %q, %q", c.manager, who, user, a.String(), c.who, c.user, c.words)
		}
	}
}

func TestFieldManagerFor(t *testing.T) {
	for actor, want := range map[string]string{"": "raydar", "unknown": "raydar", "alice": "raydar:alice"} {
		if got := FieldManagerFor(actor); got != want {
			t.Errorf("FieldManagerFor(%q) = %q, want %q", actor, got, want)
		}
	}
	long := string(make([]byte, 300))
	if got := FieldManagerFor(long); len(got) != maxManager {
		t.Errorf("FieldManagerFor(300 bytes) is %d bytes, want %d", len(got), maxManager)
	}
}

func mf(manager, op, sub string, at time.Time, fields string) metav1.ManagedFieldsEntry {
	return metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationType(op), Subresource: sub,
		Time: &metav1.Time{Time: at}, FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(fields)}}
}

// The writer of a replica change is the owner of workerGroupSpecs (an
// atomic list: one owner), not the newest writer of some other spec field
// nor the status writer.
func TestKeepReadsTheWorkerGroupsOwner(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	rc := &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{UID: "u1", ResourceVersion: "7", ManagedFields: []metav1.ManagedFieldsEntry{
		mf("kubectl-client-side-apply", "Update", "", t0, `{"f:spec":{".":{},"f:headGroupSpec":{}}}`),
		mf("kubectl-patch", "Update", "", t0.Add(time.Minute), `{"f:spec":{"f:workerGroupSpecs":{}}}`),
		mf("helm", "Update", "", t0.Add(2*time.Minute), `{"f:spec":{"f:suspend":{}}}`),
		mf("raydar-operator", "Update", "status", t0.Add(3*time.Minute), `{"f:status":{"f:spec":{}}}`),
	}}}
	a := NewAuthors()
	var stripped bool
	out, err := a.Keep(func(o any) (any, error) {
		stripped = true
		o.(*rayv1.RayCluster).ManagedFields = nil
		return o, nil
	})(rc)
	if err != nil || !stripped || out.(*rayv1.RayCluster).ManagedFields != nil {
		t.Fatalf("Keep did not call the next transform: %v %v", err, stripped)
	}
	w, ok := a.At("u1", "7")
	if !ok || w.Scale == nil || w.Scale.Manager != "kubectl-patch" || w.Scale.Who != WhoKubectl || !w.Scale.Time.Equal(t0.Add(time.Minute)) {
		t.Fatalf("scale author = %+v (ok %v), want kubectl-patch at %s", w.Scale, ok, t0.Add(time.Minute))
	}
	if w.Spec == nil || w.Spec.Manager != "helm" {
		t.Errorf("spec author = %+v, want helm (the newest spec writer, not the status writer)", w.Spec)
	}
	// kubectl scale writes through the scale subresource.
	rc.ResourceVersion = "8"
	rc.ManagedFields = append(rc.ManagedFields, mf("kubectl-scale", "Update", "scale", t0.Add(4*time.Minute), `{"f:spec":{"f:workerGroupSpecs":{}}}`))
	if _, err := a.Keep(nil)(rc); err != nil {
		t.Fatal(err)
	}
	if w, _ := a.At("u1", "8"); w.Scale == nil || w.Scale.Manager != "kubectl-scale" {
		t.Errorf("scale author through the scale subresource = %+v, want kubectl-scale", w.Scale)
	}
	if _, ok := a.At("u1", "9"); ok {
		t.Error("At a version never noted answered: an author must not be guessed")
	}
	a.Forget("u1")
	if _, ok := a.At("u1", "7"); ok {
		t.Error("Forget kept the object")
	}
}

func TestAuthorsKeepsTheLastVersions(t *testing.T) {
	a := NewAuthors()
	for i := range 10 {
		a.note(types.UID("u"), Written{ResourceVersion: string(rune('a' + i))})
	}
	if _, ok := a.At("u", "a"); ok {
		t.Error("the oldest version is still kept")
	}
	if _, ok := a.At("u", "j"); !ok {
		t.Error("the newest version is not kept")
	}
	if n := len(a.byID["u"]); n != keptVersions {
		t.Errorf("%d versions kept, want %d", n, keptVersions)
	}
}
