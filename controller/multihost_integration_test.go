package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// replicasOf groups a cluster's live worker pods by
// ray.io/worker-group-replica-name.
func replicasOf(t *testing.T, ns, cluster string) map[string][]corev1.Pod {
	t.Helper()
	_, workers := clusterPods(t, ns, cluster)
	out := map[string][]corev1.Pod{}
	for _, w := range workers {
		if w.DeletionTimestamp != nil {
			continue
		}
		out[w.Labels[rayv1.RayWorkerReplicaNameKey]] = append(out[w.Labels[rayv1.RayWorkerReplicaNameKey]], w)
	}
	return out
}

// replicaShape is one line per replica: its index and its pods' host indexes.
func replicaShape(rs map[string][]corev1.Pod) []string {
	var out []string
	for name, pods := range rs {
		var hosts []string
		for _, p := range pods {
			hosts = append(hosts, p.Labels[rayv1.RayHostIndexKey])
		}
		sort.Strings(hosts)
		out = append(out, fmt.Sprintf("%s index=%s hosts=%v", name, pods[0].Labels[rayv1.RayWorkerReplicaIndexKey], hosts))
	}
	sort.Strings(out)
	return out
}

// TestIntegrationMultiHost: a numOfHosts 2 group of 2 replicas comes up as
// KubeRay v1.7.0 makes it (every host "<cluster>-<group>-worker-<5>", the
// replica "<group>-<5>" in its labels); a lost host has its replica
// replaced whole, at its index; and the stored status has KubeRay's zero
// quantities ("0", never absent).
func TestIntegrationMultiHost(t *testing.T) {
	needSandbox(t)
	ns := newNamespace(t)
	startOperator(t, ns, nil)
	rc := testCluster(ns, "mh", 2)
	rc.Spec.WorkerGroupSpecs[0].NumOfHosts = 2
	createRC(t, rc)
	waitReady(t, ns, "mh", 4)

	rs := replicasOf(t, ns, "mh")
	shape := replicaShape(rs)
	if len(rs) != 2 || len(shape) != 2 || !strings.HasSuffix(shape[0], "hosts=[0 1]") || !strings.HasSuffix(shape[1], "hosts=[0 1]") {
		t.Fatalf("replicas %v", shape)
	}
	indexes := map[string]string{}
	for name, pods := range rs {
		if !strings.HasPrefix(name, "small-") || len(name) != len("small-")+5 {
			t.Errorf("replica name %q, want small-<5 random>", name)
		}
		for _, p := range pods {
			if !strings.HasPrefix(p.Name, "mh-small-worker-") || len(p.Name) != len("mh-small-worker-")+5 {
				t.Errorf("pod %s of replica %s, want mh-small-worker-<5 random>", p.Name, name)
			}
		}
		indexes[pods[0].Labels[rayv1.RayWorkerReplicaIndexKey]] = name
	}
	if len(indexes) != 2 || indexes["0"] == "" || indexes["1"] == "" {
		t.Errorf("replica indexes %v, want 0 and 1", indexes)
	}

	// The stored status, as JSON: KubeRay's zero quantities are "0".
	raw, err := kc.CoreV1().RESTClient().Get().AbsPath("/apis/ray.io/v1/namespaces/" + ns + "/rayclusters/mh").DoRaw(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var stored struct {
		Status map[string]any `json:"status"`
	}
	if err := json.Unmarshal(raw, &stored); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"desiredGPU", "desiredTPU"} {
		if v, ok := stored.Status[k]; !ok || v != "0" {
			t.Errorf("stored status.%s = %v (present %v), want \"0\"", k, v, ok)
		}
	}

	// Host 1 of replica 1 goes: the replica is replaced whole, at index 1;
	// replica 0 is untouched.
	victims := rs[indexes["1"]]
	var victim corev1.Pod
	for _, p := range victims {
		if p.Labels[rayv1.RayHostIndexKey] == "1" {
			victim = p
		}
	}
	if err := kc.CoreV1().Pods(ns).Delete(context.Background(), victim.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	keep := allPodNames(rs[indexes["0"]])
	eventually(t, 60*time.Second, "replica 1 replaced whole", func() (bool, string) {
		now := replicasOf(t, ns, "mh")
		if _, ok := now[indexes["1"]]; ok || len(now) != 2 {
			return false, fmt.Sprint(replicaShape(now))
		}
		for name, pods := range now {
			if name == indexes["0"] {
				if got := allPodNames(pods); !sameSet(got, keep) {
					return false, fmt.Sprintf("replica 0 changed: %v, was %v", got, keep)
				}
				continue
			}
			if len(pods) != 2 || pods[0].Labels[rayv1.RayWorkerReplicaIndexKey] != "1" {
				return false, fmt.Sprint(replicaShape(now))
			}
		}
		return true, ""
	})
	waitReady(t, ns, "mh", 4)
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
