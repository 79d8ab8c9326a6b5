package raycronjob

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/raydar/raydar/controller/kit"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// TestGate: a RayCronJob is left to a running KubeRay operator unless its
// jobTemplate opts in as its RayJobs would; with no KubeRay running raydar
// schedules every RayCronJob, whatever its jobTemplate's managedBy names.
func TestGate(t *testing.T) {
	kuberay := kit.OtherOperator{Detected: true, Pods: []string{"ray-system/kuberay-operator-0"}}
	optIn := map[string]string{rayv1.ManagedByRaydarAnnotationKey: "true"}
	for _, tt := range []struct {
		name        string
		managedBy   *string
		annotations map[string]string
		kubeRayRuns bool // raydar leaves it to KubeRay while it runs
	}{
		{name: "unset", kubeRayRuns: true},
		{name: "kuberay-operator", managedBy: ptr.To(rayv1.KubeRayController), kubeRayRuns: true},
		{name: "raydar", managedBy: ptr.To(rayv1.ManagedByRaydar)},
		{name: "multikueue opted in", managedBy: ptr.To(rayv1.MultiKueueController), annotations: optIn},
		{name: "multikueue runs the RayJobs, not the schedule", managedBy: ptr.To(rayv1.MultiKueueController), kubeRayRuns: true},
		{name: "annotation alone", annotations: optIn, kubeRayRuns: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cj := &rayv1.RayCronJob{ObjectMeta: metav1.ObjectMeta{Annotations: tt.annotations},
				Spec: rayv1.RayCronJobSpec{JobTemplate: rayv1.RayJobSpec{ManagedBy: tt.managedBy}}}
			probe := func(other kit.OtherOperator) string {
				return kit.SkipReason(&rayv1.RayCluster{ObjectMeta: cj.ObjectMeta, Spec: rayv1.RayClusterSpec{ManagedBy: gateManagedBy(cj)}}, other)
			}
			if why := probe(kit.OtherOperator{}); why != "" {
				t.Errorf("no KubeRay running: skipped (%s), want scheduled", why)
			}
			if why := probe(kuberay); (why != "") != tt.kubeRayRuns {
				t.Errorf("KubeRay running: skip reason %q, want skipped %v", why, tt.kubeRayRuns)
			}
		})
	}
}
