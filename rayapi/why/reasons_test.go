package why_test

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/raydar/raydar/controller/kit"
	"github.com/raydar/raydar/controller/rayjob"
	"github.com/raydar/raydar/kube/history"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/rayapi/why"
)

// rayapi/why copies the reasons of the controller's Events (rayapi does
// not import the controller); this test, outside the package, keeps the
// copies in step: an Event with the controller's own reason is read.
func TestControllerReasonsAreRead(t *testing.T) {
	rc := &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Name: "rc", Namespace: "ns", Generation: 1}}
	for _, reason := range []string{kit.ReasonManagedElsewhere, kit.ReasonOtherOperator} {
		ev := &corev1.Event{InvolvedObject: corev1.ObjectReference{Kind: "RayCluster", Namespace: "ns", Name: "rc"},
			Type: corev1.EventTypeWarning, Reason: reason, Message: "left alone"}
		cs := why.Cluster(why.ClusterInput{Cluster: rc, Events: []*corev1.Event{ev}})
		if len(cs) != 1 || cs[0].Code != why.CodeOtherOperator {
			t.Errorf("Event %s: causes %+v, want OtherOperator", reason, cs)
		}
	}
	rj := &rayv1.RayJob{ObjectMeta: metav1.ObjectMeta{Name: "job", Namespace: "ns", Generation: 1},
		Status: rayv1.RayJobStatus{ObservedGeneration: 1, JobDeploymentStatus: rayv1.JobDeploymentStatusRunning}}
	ev := &corev1.Event{InvolvedObject: corev1.ObjectReference{Kind: "RayJob", Namespace: "ns", Name: "job"},
		Type: corev1.EventTypeWarning, Reason: rayjob.ReasonDashboardUnreachable, Message: "connection refused"}
	if cs := why.Job(why.JobInput{Job: rj, Events: []*corev1.Event{ev}}); len(cs) != 1 || cs[0].Code != why.CodeDashboardUnreachable {
		t.Errorf("Event %s: causes %+v, want DashboardUnreachable", rayjob.ReasonDashboardUnreachable, cs)
	}
}

// rayapi/why copies the field manager of raydar's reconcile loop
// (kube/history.ReconcilerManager): a status it wrote, lagging the
// generation, is raydar's to act on, so WaitingForOperator is said even
// by a raydar that did not look for other operators.
func TestReconcilerManagerIsRead(t *testing.T) {
	now := time.Date(2026, 12, 6, 14, 0, 0, 0, time.UTC)
	at := func(ago time.Duration) *metav1.Time { return &metav1.Time{Time: now.Add(-ago)} }
	rc := &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Name: "rc", Namespace: "ns", Generation: 2,
		ManagedFields: []metav1.ManagedFieldsEntry{
			{Manager: "kubectl-edit", Operation: metav1.ManagedFieldsOperationUpdate, Time: at(time.Minute)},
			{Manager: history.ReconcilerManager, Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status", Time: at(time.Hour)}}},
		Status: rayv1.RayClusterStatus{ObservedGeneration: 1, State: rayv1.Ready}}
	r := why.Reconciler{Known: true, Active: true, OnlyRaydar: true, Who: "raydar op-1 (lease holder)"}
	cs := why.Cluster(why.ClusterInput{Cluster: rc, Reconciler: r, Now: now})
	if len(cs) != 1 || cs[0].Code != why.CodeWaitingForOperator {
		t.Errorf("causes %+v, want WaitingForOperator", cs)
	}
}
