package controller

import (
	"testing"

	"github.com/raydar/raydar/controller/features"
	"github.com/raydar/raydar/controller/kit"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// --concurrency (KubeRay's --reconcile-concurrency) sets every kind's
// workers, as KubeRay's flag sets each of its controllers' (main.go:277-297):
// RayJobs and RayServices had 4 whatever the flag said.
func TestConcurrencyAppliesToEveryKind(t *testing.T) {
	gates, err := features.Parse("RayCronJob=true")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, r := range kinds(Options{Concurrency: 7, FeatureGates: gates}) {
		switch k := r.(type) {
		case *kit.Kind[*rayv1.RayCluster]:
			got["RayCluster"] = k.Concurrency
		case *kit.Kind[*rayv1.RayJob]:
			got["RayJob"] = k.Concurrency
		case *kit.Kind[*rayv1.RayService]:
			got["RayService"] = k.Concurrency
		case *kit.Kind[*rayv1.RayCronJob]:
			got["RayCronJob"] = k.Concurrency
		default:
			t.Errorf("a registration of type %T", r)
		}
	}
	for _, kind := range []string{"RayCluster", "RayJob", "RayService", "RayCronJob"} {
		if got[kind] != 7 {
			t.Errorf("%s reconciles %d at once with --concurrency=7, want 7", kind, got[kind])
		}
	}
}
