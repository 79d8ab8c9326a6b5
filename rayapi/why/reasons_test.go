package why_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/raydar/raydar/controller/kit"
	"github.com/raydar/raydar/controller/rayjob"
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
