package raycluster

import (
	"strings"
	"testing"

	"github.com/raydar/raydar/controller/internal/fixture"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// The refusal goes through the validation path of each reconciler: the
// KubeRay reason on the Event, the field in the status, nothing created.
func TestUnsupportedRefusedByDecide(t *testing.T) {
	rc := fixture.Cluster("c", fixture.Group("g", 1))
	rc.Spec.NetworkPolicy = &rayv1.NetworkPolicyConfig{}
	p := decide(obsOf(rc, nil))
	if len(p.CreatePods) != 0 || len(p.CreateServices) != 0 || p.CreateAuthSecret != nil {
		t.Fatalf("a refused cluster creates %d pods, %d Services", len(p.CreatePods), len(p.CreateServices))
	}
	cond := meta.FindStatusCondition(p.Status.Conditions, string(rayv1.RayClusterReplicaFailure))
	if cond == nil || cond.Reason != string(rayv1.ValidationFailed) || !strings.Contains(cond.Message, "spec.networkPolicy") ||
		!strings.Contains(cond.Message, "would not be isolated") {
		t.Fatalf("ReplicaFailure %+v", cond)
	}
	if len(p.Events) != 1 || p.Events[0].Type != corev1.EventTypeWarning || p.Events[0].Reason != "InvalidRayClusterSpec" ||
		!strings.Contains(p.Events[0].Message, "spec.networkPolicy") {
		t.Fatalf("events %+v", p.Events)
	}
}
