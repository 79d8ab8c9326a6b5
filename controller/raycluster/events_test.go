package raycluster

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/raydar/raydar/controller/internal/fixture"
	"github.com/raydar/raydar/controller/kit"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

func TestSummarizeEvents(t *testing.T) {
	rc := fixture.Cluster("c", fixture.Group("small", 3))
	p := decide(obsOf(rc, nil))
	out := &outcome{createdServices: p.CreateServices, createdPods: p.CreatePods}
	// KubeRay's reasons (v1.7.0 utils/constant.go) and, for one object,
	// its messages (raycluster_controller.go createService, createHeadPod,
	// createWorkerPod); several worker pods of a group share one Event.
	want := []kit.Event{
		{Type: corev1.EventTypeNormal, Reason: "CreatedService", Action: "Create", Message: "Created service ns/c-head-svc"},
		{Type: corev1.EventTypeNormal, Reason: "CreatedHeadPod", Action: "Create", Message: "Created head Pod ns/c-head-s0000"},
		{Type: corev1.EventTypeNormal, Reason: "CreatedWorkerPod", Action: "Create",
			Message: "Created 3 worker Pods in group small: c-small-worker-s0001, c-small-worker-s0002, c-small-worker-s0003"},
	}
	if evs := summarizeEvents(p, out); !reflect.DeepEqual(evs, want) {
		t.Errorf("bring-up Events\n got %+v\nwant %+v", evs, want)
	}
	out = &outcome{createdPods: workerPods(rc, "small", pending, 1)}
	if evs := summarizeEvents(&plan{}, out); len(evs) != 1 || evs[0].Message != "Created worker Pod ns/"+out.createdPods[0].Name {
		t.Errorf("one worker: %+v", evs)
	}

	// Deletions grouped by why; failures as Warnings with KubeRay's reasons.
	ws := workerPods(rc, "small", ready, 3)
	out = &outcome{
		deleted: []podDeletion{{Pod: ws[0], Reason: "listed in workersToDelete"}, {Pod: ws[1], Reason: "listed in workersToDelete"},
			{Pod: ws[2], Reason: "pod failed"}},
		failures: []failure{
			{Condition: rayv1.FailedCreateWorkerPod, Event: rayv1.EventFailedToCreateWorkerPod, Message: "Failed to create worker Pod for the cluster ns/c, quota"},
			{Condition: rayv1.FailedCreateWorkerPod, Event: rayv1.EventFailedToCreateWorkerPod, Message: "Failed to create worker Pod for the cluster ns/c, quota"},
			{Event: rayv1.EventFailedToCreateService, Message: "Failed creating service ns/c-head-svc, forbidden"},
		},
	}
	want = []kit.Event{
		{Type: corev1.EventTypeNormal, Reason: "DeletedWorkerPod", Action: "Delete",
			Message: "Deleted 2 worker Pods (c-small-worker-w0, c-small-worker-w1): listed in workersToDelete"},
		{Type: corev1.EventTypeNormal, Reason: "DeletedWorkerPod", Action: "Delete", Message: "Deleted worker Pod ns/c-small-worker-w2: pod failed"},
		{Type: corev1.EventTypeWarning, Reason: "FailedToCreateService", Action: "Create", Message: "Failed creating service ns/c-head-svc, forbidden"},
		{Type: corev1.EventTypeWarning, Reason: "FailedToCreateWorkerPod", Action: "Create", Message: "Failed to create worker Pod for the cluster ns/c, quota"},
	}
	if evs := summarizeEvents(&plan{}, out); !reflect.DeepEqual(evs, want) {
		t.Errorf("deletion and failure Events\n got %+v\nwant %+v", evs, want)
	}

	// One deletecollection (suspend): KubeRay's DeletedPod.
	out = &outcome{deleted: []podDeletion{{Pod: ws[0], Reason: "the cluster is suspended"}, {Pod: ws[1], Reason: "the cluster is suspended"}}}
	if evs := summarizeEvents(&plan{DeleteAll: true}, out); len(evs) != 1 || evs[0].Reason != "DeletedPod" ||
		evs[0].Message != "Deleted 2 Pods (c-small-worker-w0, c-small-worker-w1): the cluster is suspended" {
		t.Errorf("suspend Events %+v", evs)
	}
}

func TestExpectationsOverlay(t *testing.T) {
	rc := fixture.Cluster("c", fixture.Group("small", 2))
	e := newExpectations()
	now := fixture.T0
	e.now = func() time.Time { return now }
	uid := rc.UID

	created := mkPod(rc, false, "small", "c-small-worker-new", pending)
	e.expectCreate(uid, created)
	cached := workerPods(rc, "small", ready, 1)
	e.expectDelete(uid, cached[0])

	got := e.overlayPods(uid, cached)
	if len(got) != 2 || got[0].DeletionTimestamp == nil || got[1].Name != created.Name {
		t.Fatalf("overlay %v", podNames(got))
	}
	if cached[0].DeletionTimestamp != nil {
		t.Fatal("overlay mutated the cached pod")
	}
	// The informer sees both writes: the overlay adds nothing.
	e.observedCreate(uid, created)
	e.observedDelete(uid, cached[0].UID)
	if got := e.overlayPods(uid, cached); len(got) != 1 || got[0].DeletionTimestamp != nil {
		t.Fatalf("after observation %v", podNames(got))
	}
	// A create never seen expires after the TTL.
	e.expectCreate(uid, created)
	now = now.Add(expectationTTL + time.Second)
	if got := e.overlayPods(uid, nil); len(got) != 0 {
		t.Fatalf("expired overlay %v", podNames(got))
	}
	if e.pending(uid) {
		t.Error("expired expectation still pending")
	}
	// Uncertainty is taken once.
	e.markUncertain(uid)
	if !e.takeUncertain(uid) || e.takeUncertain(uid) {
		t.Error("takeUncertain")
	}
	// A re-created cluster of the same name has a new UID: no leftovers.
	if got := e.overlayPods(types.UID("other"), nil); len(got) != 0 {
		t.Error("leak across UIDs")
	}
}

func TestSkipReason(t *testing.T) {
	rc := fixture.Cluster("c")
	none := kit.OtherOperator{}
	kuberay := kit.OtherOperator{Detected: true, Pods: []string{"ray-system/kuberay-operator-abc"}}
	tests := []struct {
		managedBy *string
		other     kit.OtherOperator
		skip      bool
		optIn     bool
	}{
		// The annotation opt-in (KubeRay's CRDs allow no raydar.io value):
		// with managedBy multikueue KubeRay leaves the object alone, so
		// raydar takes it; with managedBy unset a running KubeRay would
		// act on it too, so raydar refuses.
		{fixture.Ptr(rayv1.MultiKueueController), kuberay, false, true},
		{fixture.Ptr(rayv1.MultiKueueController), none, false, true},
		{nil, kuberay, true, true},
		{fixture.Ptr(rayv1.KubeRayController), kuberay, true, true},
		{nil, none, false, true},
		{nil, none, false, false},
		{fixture.Ptr(rayv1.KubeRayController), none, false, false},
		{fixture.Ptr(rayv1.ManagedByRaydar), none, false, false},
		{fixture.Ptr(rayv1.MultiKueueController), none, true, false},
		{nil, kuberay, true, false},
		{fixture.Ptr(rayv1.KubeRayController), kuberay, true, false},
		{fixture.Ptr(rayv1.ManagedByRaydar), kuberay, false, false},
		{nil, kit.OtherOperator{Detected: true, Ignored: true, Pods: kuberay.Pods}, false, false},
	}
	for _, tc := range tests {
		rc.Spec.ManagedBy = tc.managedBy
		rc.Annotations = nil
		if tc.optIn {
			rc.Annotations = map[string]string{rayv1.ManagedByRaydarAnnotationKey: "true"}
		}
		why := kit.SkipReason(rc, tc.other)
		if (why != "") != tc.skip {
			t.Errorf("managedBy=%v optIn=%v other=%+v: skip reason %q, want skip=%v", tc.managedBy, tc.optIn, tc.other, why, tc.skip)
		}
		if tc.optIn && tc.skip && tc.other.Detected && !strings.Contains(why, rayv1.MultiKueueController) {
			t.Errorf("the refusal of an annotated object says how to opt in: %q", why)
		}
	}
	if msg := kuberay.Message(); !strings.Contains(msg, "ray-system/kuberay-operator-abc") || !strings.Contains(msg, rayv1.ManagedByRaydar) {
		t.Errorf("message %q", msg)
	}
}
