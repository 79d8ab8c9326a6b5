package autoscaler

import (
	"encoding/json"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/raydar/raydar/kube/sandbox/rayhead"
	"github.com/raydar/raydar/rayapi/dashboard"
	"github.com/raydar/raydar/rayapi/podview"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

func i32(v int32) *int32 { return &v }

func testCluster(groups ...rayv1.WorkerGroupSpec) *rayv1.RayCluster {
	return &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "rc"}, Spec: rayv1.RayClusterSpec{
		EnableInTreeAutoscaling: func() *bool { b := true; return &b }(),
		HeadGroupSpec:           rayv1.HeadGroupSpec{RayStartParams: map[string]string{"num-cpus": "0"}},
		WorkerGroupSpecs:        groups,
	}}
}

func group(name string, replicas, maxReplicas int32) rayv1.WorkerGroupSpec {
	return rayv1.WorkerGroupSpec{GroupName: name, Replicas: i32(replicas), MinReplicas: i32(0), MaxReplicas: i32(maxReplicas),
		RayStartParams: map[string]string{"num-cpus": "1"}}
}

func pod(name, group string, head bool) *corev1.Pod {
	kind := rayv1.WorkerNode
	if head {
		kind, group = rayv1.HeadNode, rayv1.RayNodeHeadGroupLabelValue
	}
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(name + "-uid"), Labels: map[string]string{
		rayv1.RayClusterLabelKey: "rc", rayv1.RayNodeTypeLabelKey: string(kind), rayv1.RayNodeGroupLabelKey: group}}}
}

// asStored is the cluster as the API server returns it, optionally without
// the groups' scaleStrategy (a manifest that never had one).
func asStored(t *testing.T, rc *rayv1.RayCluster, withScaleStrategy bool) *unstructured.Unstructured {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(rc)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: m}
	if !withScaleStrategy {
		gs, _, _ := unstructured.NestedSlice(m, "spec", "workerGroupSpecs")
		for _, g := range gs {
			delete(g.(map[string]any), "scaleStrategy")
		}
		_ = unstructured.SetNestedSlice(m, gs, "spec", "workerGroupSpecs")
	}
	return u
}

func opsJSON(t *testing.T, ops []jsonPatchOp) string {
	t.Helper()
	b, err := json.Marshal(ops)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Idle workers: one patch lowering replicas and naming them, Ray's
// KubeRay provider's shape (replace; add where the member is missing).
func TestPatchIdleWorkers(t *testing.T) {
	g := group("cpu", 3, 3)
	g.IdleTimeoutSeconds = i32(5)
	rc := testCluster(g)
	pods := []*corev1.Pod{pod("head", "", true), pod("w1", "cpu", false), pod("w2", "cpu", false), pod("w3", "cpu", false)}
	one := map[string]float64{"CPU": 1}
	hs := rayhead.AutoscalerState{Known: true, Nodes: []rayhead.AutoscalerNode{
		{Name: "head-uid", Head: true, Group: "headgroup"},
		{Name: "w1-uid", Group: "cpu", Total: one, Available: map[string]float64{"CPU": 0}},
		{Name: "w2-uid", Group: "cpu", Total: one, Available: one, Idle: 10 * time.Second},
		{Name: "w3-uid", Group: "cpu", Total: one, Available: one, Idle: 6 * time.Second},
	}}
	req, inFlight, skipped := buildRequest(rc, podview.All(pods), hs)
	d := Decide(req)
	for _, stored := range []bool{true, false} {
		got := opsJSON(t, patchOps(rc, asStored(t, rc, stored), inFlight, d, nil, skipped))
		op := "replace"
		if !stored {
			op = "add"
		}
		want := `[{"op":"replace","path":"/spec/workerGroupSpecs/0/replicas","value":1},` +
			`{"op":"` + op + `","path":"/spec/workerGroupSpecs/0/scaleStrategy","value":{"workersToDelete":["w2","w3"]}}]`
		if got != want {
			t.Errorf("scaleStrategy stored %v:\n got %s\nwant %s", stored, got, want)
		}
	}
}

// Launches in flight (replicas above the pods) count as pending nodes: a
// demand of 3 one-CPU requests with replicas 1 and no worker pod yet asks
// for 2 more, replicas 3.
func TestPatchLaunchCountsInFlight(t *testing.T) {
	rc := testCluster(group("cpu", 1, 10))
	pods := []*corev1.Pod{pod("head", "", true)}
	hs := rayhead.AutoscalerState{Known: true, Nodes: []rayhead.AutoscalerNode{{Name: "head-uid", Head: true, Group: "headgroup"}},
		Demand: []dashboard.Demand{{Shape: dashboard.Resources{"CPU": 1}, Count: 3}}}
	req, inFlight, skipped := buildRequest(rc, podview.All(pods), hs)
	got := opsJSON(t, patchOps(rc, asStored(t, rc, true), inFlight, Decide(req), nil, skipped))
	if want := `[{"op":"replace","path":"/spec/workerGroupSpecs/0/replicas","value":3}]`; got != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
}

// A multi-host group is left alone, and says so; the other groups scale.
func TestMultiHostGroupLeftAlone(t *testing.T) {
	tpu := group("tpu", 1, 4)
	tpu.NumOfHosts = 2
	rc := testCluster(tpu, group("cpu", 0, 4))
	pods := []*corev1.Pod{pod("head", "", true), pod("t1", "tpu", false), pod("t2", "tpu", false)}
	one := map[string]float64{"CPU": 1}
	hs := rayhead.AutoscalerState{Known: true, Nodes: []rayhead.AutoscalerNode{{Name: "head-uid", Head: true, Group: "headgroup"},
		{Name: "t1-uid", Group: "tpu", Total: one, Available: one, Idle: time.Hour}, {Name: "t2-uid", Group: "tpu", Total: one, Available: one, Idle: time.Hour}},
		Demand: []dashboard.Demand{{Shape: dashboard.Resources{"CPU": 1}, Count: 1}}}
	req, inFlight, skipped := buildRequest(rc, podview.All(pods), hs)
	d := Decide(req)
	if len(d.Terminate) != 0 {
		t.Errorf("terminate %v: the multi-host group's idle pods must be left alone", d.Terminate)
	}
	got := opsJSON(t, patchOps(rc, asStored(t, rc, true), inFlight, d, nil, skipped))
	if want := `[{"op":"replace","path":"/spec/workerGroupSpecs/1/replicas","value":1}]`; got != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
	if len(skipped) != 1 || skipped[0] != "tpu" {
		t.Errorf("skipped %v, want [tpu]", skipped)
	}
}
