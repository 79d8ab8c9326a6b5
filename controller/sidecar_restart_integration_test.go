package controller

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"

	"github.com/raydar/raydar/controller/features"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// A SidecarMode RayJob with the SidecarSubmitterRestart gate on: the
// submitter container in the head carries its own restartPolicy OnFailure
// (accepted by the sandbox's API server, 1.35+), runs KubeRay v1.7.0's
// check-then-submit script (the sandbox's head runs it), and the job
// completes.
func TestIntegrationRayJobSidecarSubmitterRestart(t *testing.T) {
	h := newRJHarness(t, func(o *Options) {
		o.RayJob.TransitionGracePeriod = time.Hour
		o.FeatureGates = features.MustParse("SidecarSubmitterRestart=true")
	})
	h.rayJob("side", `echo from the restartable sidecar`, func(j *rayv1.RayJob) { j.Spec.SubmissionMode = rayv1.SidecarMode })
	j := h.wait("side", "Complete", deploymentIs(rayv1.JobDeploymentStatusComplete))
	if j.Status.JobStatus != rayv1.JobStatusSucceeded || j.Status.Reason != "" {
		t.Fatal(describeRJ(j))
	}
	heads, _ := clusterPods(t, h.ns, j.Status.RayClusterName)
	if len(heads) != 1 {
		t.Fatalf("head pods %v", allPodNames(heads))
	}
	var sub *corev1.Container
	for i, c := range heads[0].Spec.Containers {
		if c.Name == rayv1.RayJobSubmitterContainerName {
			sub = &heads[0].Spec.Containers[i]
		}
	}
	if sub == nil || sub.RestartPolicy == nil || *sub.RestartPolicy != corev1.ContainerRestartPolicyOnFailure ||
		heads[0].Spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Fatalf("submitter %+v, pod restartPolicy %s", sub, heads[0].Spec.RestartPolicy)
	}
	if !strings.Contains(sub.Args[0], "if ! ray job status") || !strings.Contains(sub.Args[0], "--follow") {
		t.Fatalf("script %q", sub.Args[0])
	}
	if log := h.sim.SubmitterLog(h.ns, heads[0].Name); !strings.Contains(log, "from the restartable sidecar") {
		t.Fatalf("sidecar log %q", log)
	}
}

// With the gate on the operator does not start against an API server older
// than 1.35, as KubeRay v1.7.0 (main.go:200-222).
func TestSidecarSubmitterRestartNeedsKubernetes135(t *testing.T) {
	for v, ok := range map[string]bool{"v1.34.3": false, "v1.35.0": true, "v1.37.2": true} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"major":"1","minor":"x","gitVersion":"` + v + `"}`))
		}))
		err := checkSidecarRestartServer(&rest.Config{Host: srv.URL})
		srv.Close()
		if ok != (err == nil) {
			t.Errorf("API server %s: %v", v, err)
		}
		if err != nil && !strings.Contains(err.Error(), "SidecarSubmitterRestart feature gate requires Kubernetes 1.35+: the API server is "+v) {
			t.Errorf("API server %s: %v", v, err)
		}
	}
}
