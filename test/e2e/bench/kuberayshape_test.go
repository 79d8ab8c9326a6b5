package main

import (
	"encoding/json"
	"strings"
	"testing"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// The stamped objects are KubeRay's captured ones under the stamped
// cluster's names: nothing of the capture's names is left, the labels,
// env and owner point at the new cluster, and the worker count is the
// one asked for.
func TestKubeRayShapeStampsNames(t *testing.T) {
	s, err := loadKubeRayShape()
	if err != nil {
		t.Fatal(err)
	}
	rc := s.RayCluster("bench-07", "c-00007", 1)
	rc.UID = "uid-7"
	if got := *rc.Spec.WorkerGroupSpecs[0].Replicas; got != 1 {
		t.Errorf("replicas %d, want 1", got)
	}
	for j, want := range map[int]string{0: "c-00007-head-", 1: "c-00007-small-group-worker-"} {
		p, err := s.Pod(rc, j)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(p)
		for _, old := range []string{captureCluster, captureNS} {
			if strings.Contains(string(b), old) {
				t.Errorf("pod %d still names %q: %s", j, old, b)
			}
		}
		if !strings.HasPrefix(p.Name, want) || p.Namespace != "bench-07" {
			t.Errorf("pod %d is %s/%s, want bench-07/%s…", j, p.Namespace, p.Name, want)
		}
		if p.Labels[rayv1.RayClusterLabelKey] != "c-00007" || p.Labels["app.kubernetes.io/created-by"] != "kuberay-operator" {
			t.Errorf("pod %d labels %v", j, p.Labels)
		}
		if len(p.OwnerReferences) != 1 || p.OwnerReferences[0].UID != "uid-7" || p.OwnerReferences[0].Name != "c-00007" {
			t.Errorf("pod %d owner %v", j, p.OwnerReferences)
		}
		if j == 1 && !strings.Contains(string(b), "c-00007-head-svc.bench-07.svc") {
			t.Errorf("the worker's RAY_ADDRESS does not name the stamped head service: %s", b)
		}
		if d := (dataSet{kuberay: s}); !strings.HasPrefix(d.podName(7, j), want) || d.podName(7, j) != strings.Replace(p.Name, "c-00007", d.clusterName(7), 1) {
			t.Errorf("dataSet.podName(7, %d) = %s, the stamped pod is %s", j, d.podName(7, j), p.Name)
		}
	}
}
