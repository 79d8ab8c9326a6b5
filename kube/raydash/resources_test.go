package raydash

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/raydar/raydar/rayapi/dashboard"
	"github.com/raydar/raydar/rayapi/podview"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

func TestGroupResources(t *testing.T) {
	spec := func(limits, requests corev1.ResourceList) *corev1.PodSpec {
		return &corev1.PodSpec{Containers: []corev1.Container{{Name: "ray", Resources: corev1.ResourceRequirements{Limits: limits, Requests: requests}}}}
	}
	q := resource.MustParse
	for _, tc := range []struct {
		name   string
		params map[string]string
		group  map[string]string
		spec   *corev1.PodSpec
		want   dashboard.Resources
	}{
		{name: "container limits", spec: spec(corev1.ResourceList{"cpu": q("4"), "memory": q("10Gi"), "nvidia.com/gpu": q("2")}, nil),
			want: dashboard.Resources{"CPU": 4, "GPU": 2, "memory": 10 << 30, "object_store_memory": 3221225472}},
		{name: "requests when no limit, CPU rounded up", spec: spec(nil, corev1.ResourceList{"cpu": q("500m"), "memory": q("1Gi")}),
			want: dashboard.Resources{"CPU": 1, "memory": 1 << 30, "object_store_memory": 322122547}},
		{name: "rayStartParams win", params: map[string]string{"num-cpus": "0", "num-gpus": "1", "memory": "1000", "object-store-memory": "10", "resources": `'{"TPU": 4}'`},
			spec: spec(corev1.ResourceList{"cpu": q("8"), "nvidia.com/gpu": q("4")}, nil),
			want: dashboard.Resources{"GPU": 1, "memory": 1000, "object_store_memory": 10, "TPU": 4}},
		{name: "group resources field wins", params: map[string]string{"num-cpus": "2"}, group: map[string]string{"CPU": "3", "accelerator": "1"},
			spec: spec(nil, nil), want: dashboard.Resources{"CPU": 3, "accelerator": 1}},
		{name: "no container", want: dashboard.Resources{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := GroupResources(tc.params, tc.group, tc.spec); !got.Equal(tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestNodeTypesSkipGroupsThatCannotScale(t *testing.T) {
	rc := cpuCluster("ns", "a")
	zero := int32(0)
	rc.Spec.WorkerGroupSpecs = append(rc.Spec.WorkerGroupSpecs, rayv1.WorkerGroupSpec{GroupName: "off", MaxReplicas: &zero,
		RayStartParams: map[string]string{"num-gpus": "8"}})
	got := NodeTypes(rc)
	if len(got) != 1 || !got[0].Equal(dashboard.Resources{"CPU": 4}) {
		t.Errorf("node types %v, want only the cpu group's {CPU: 4}", got)
	}
}

// TestComplete: what both readers of a cluster's capacity (the poller,
// raydar why) add to the dashboard's answer: demand no group can hold is
// Infeasible, and nodes are mapped to pods by IP (pods without one skipped).
func TestComplete(t *testing.T) {
	rc := cpuCluster("ns", "a") // one worker group offering {CPU: 4}
	c := &dashboard.Capacity{
		Nodes:   []dashboard.RayNode{{ID: "n1", IP: "10.0.0.1", Alive: true}},
		Pending: []dashboard.Demand{{Shape: dashboard.Resources{"CPU": 2}, Count: 1}, {Shape: dashboard.Resources{"GPU": 2}, Count: 4}},
	}
	var a, b podview.Pod
	a.Name, a.Status.PodIP = "a", "10.0.0.1"
	b.Name = "b"
	Complete(c, rc, []*podview.Pod{&a, &b})
	if len(c.Pending) != 1 || c.Pending[0].Shape["CPU"] != 2 || len(c.Infeasible) != 1 || c.Infeasible[0].Shape["GPU"] != 2 {
		t.Errorf("pending %v, infeasible %v: want {CPU: 2} pending and {GPU: 2} infeasible", c.Pending, c.Infeasible)
	}
	if c.Nodes[0].Pod != "a" {
		t.Errorf("node 10.0.0.1 mapped to %q, want pod a", c.Nodes[0].Pod)
	}
}
