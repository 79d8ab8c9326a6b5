package controller

import (
	"strings"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/raydar/raydar/controller/batchscheduler/volcano"
	"github.com/raydar/raydar/controller/features"
)

// The KubernetesWAS gate selects its own scheduler and refuses another
// beside it, before anything connects (KubeRay v1.7.0
// config_utils.go:16-22).
func TestKubernetesWASExcludesBatchScheduler(t *testing.T) {
	gates, err := features.Parse("KubernetesWAS=true")
	if err != nil {
		t.Fatal(err)
	}
	_, err = New(&rest.Config{Host: "https://127.0.0.1:1"}, Options{FeatureGates: gates, BatchScheduler: volcano.Scheduler{}})
	if err == nil || !strings.Contains(err.Error(), "the KubernetesWAS feature gate cannot be combined with --batch-scheduler or --enable-batch-scheduler (--batch-scheduler volcano)") {
		t.Fatalf("New: %v", err)
	}
}
