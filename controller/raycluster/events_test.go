package raycluster

import (
	"reflect"
	"testing"

	"github.com/raydar/raydar/controller/internal/fixture"
	"github.com/raydar/raydar/controller/kit"

	corev1 "k8s.io/api/core/v1"

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
