package why

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/raydar/raydar/rayapi/dashboard"
	"github.com/raydar/raydar/rayapi/podview"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// benchCluster is 1 head and 50 workers (40 cpu Running, 10 gpu Pending:
// no GPU node), 20 Events, 3 nodes and Ray's view with infeasible demand.
func benchCluster() ClusterInput {
	rc := readyCluster()
	rc.Spec.WorkerGroupSpecs[0].Replicas = ptr(int32(40))
	rc.Spec.WorkerGroupSpecs[0].MaxReplicas = ptr(int32(40))
	rc.Spec.WorkerGroupSpecs[1].Replicas = ptr(int32(10))
	rc.Spec.WorkerGroupSpecs[1].MaxReplicas = ptr(int32(10))
	pods := []*podview.Pod{running(pod("rc-head", true, "", rc.Spec.HeadGroupSpec.Template))}
	for i := range 40 {
		pods = append(pods, running(pod(fmt.Sprintf("rc-cpu-%d", i), false, "cpu", rc.Spec.WorkerGroupSpecs[0].Template)))
	}
	msg := "0/3 nodes are available: 3 Insufficient nvidia.com/gpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod."
	for i := range 10 {
		pods = append(pods, unschedulablePod(pod(fmt.Sprintf("rc-gpu-%d", i), false, "gpu", rc.Spec.WorkerGroupSpecs[1].Template), msg))
	}
	var events []*corev1.Event
	for i := range 10 {
		events = append(events, normal("RayCluster", "rc", rayv1.EventCreatedWorkerPod, "Created worker Pod"),
			warn("Pod", fmt.Sprintf("rc-gpu-%d", i), reasonFailedScheduling, msg))
	}
	nodes := Nodes{Known: true}
	for i := range 3 {
		nodes.List = append(nodes.List, node(fmt.Sprintf("n%d", i), rl("cpu", "32", "memory", "128Gi", "pods", "110"), map[string]string{"pool": "cpu"}))
	}
	return ClusterInput{Cluster: rc, Pods: pods, Events: events, Nodes: nodes, Reconciler: active(), Now: now,
		Capacity: &dashboard.Capacity{Infeasible: []dashboard.Demand{{Shape: dashboard.Resources{"GPU": 2}, Count: 4}}}}
}

// BenchmarkCluster is the diagnosis of one cluster; the TUI runs it when a
// cluster or its pods change (1,000 clusters: multiply by the changes per
// frame, not by the clusters).
func BenchmarkCluster(b *testing.B) {
	in := benchCluster()
	if cs := Cluster(in); len(cs) != 1 || cs[0].Code != CodeUnschedulable {
		b.Fatalf("bench cluster: %+v", cs)
	}
	b.ReportAllocs()
	for b.Loop() {
		Cluster(in)
	}
}

// BenchmarkClusterHealthy is the common case: nothing to say.
func BenchmarkClusterHealthy(b *testing.B) {
	in := benchCluster()
	for _, p := range in.Pods[41:] {
		running(p)
	}
	in.Capacity = nil
	in.Events = in.Events[:0]
	if cs := Cluster(in); cs != nil {
		b.Fatalf("healthy bench cluster: %+v", cs)
	}
	b.ReportAllocs()
	for b.Loop() {
		Cluster(in)
	}
}
