package why

import (
	"testing"
	"time"

	"github.com/raydar/raydar/rayapi/dashboard"
)

func TestGroupPlans(t *testing.T) {
	pending := func(in *ClusterInput, shape dashboard.Resources, n int) {
		in.Capacity = &dashboard.Capacity{DemandKnown: true, Pending: []dashboard.Demand{{Shape: shape, Count: n}}}
	}
	tests := []struct {
		name     string
		in       func(in *ClusterInput)
		cpu, gpu string
	}{
		{name: "GPU demand fits group gpu, 4 a pod", in: func(in *ClusterInput) {
			pending(in, dashboard.Resources{"GPU": 1}, 6)
		}, cpu: "nothing: no demand; at maxReplicas 2", gpu: "up 2: 6 tasks want {GPU: 1}, 4 fit a pod"},
		{name: "more than maxReplicas allows", in: func(in *ClusterInput) {
			pending(in, dashboard.Resources{"GPU": 1}, 20)
		}, cpu: "nothing: no demand; at maxReplicas 2", gpu: "up 3: 20 tasks want {GPU: 1}, 4 fit a pod (capped by maxReplicas 4)"},
		{name: "the only fitting group is at max", in: func(in *ClusterInput) {
			pending(in, dashboard.Resources{"GPU": 1}, 3)
			in.Cluster.Spec.WorkerGroupSpecs[1].MaxReplicas = ptr(int32(1))
		}, cpu: "nothing: no demand; at maxReplicas 2", gpu: "nothing: at maxReplicas 1; 3 tasks want {GPU: 1} waiting"},
		{name: "CPU demand prefers the group without GPUs", in: func(in *ClusterInput) {
			pending(in, dashboard.Resources{"CPU": 1}, 3)
			in.Cluster.Spec.WorkerGroupSpecs[0].MaxReplicas = ptr(int32(4))
		}, cpu: "up 2: 3 tasks want {CPU: 1}, 2 fit a pod", gpu: "nothing: no demand for it"},
		{name: "CPU demand goes to the GPU group when the CPU group is at max", in: func(in *ClusterInput) {
			pending(in, dashboard.Resources{"CPU": 1}, 3)
		}, cpu: "nothing: no demand; at maxReplicas 2", gpu: "up 1: 3 tasks want {CPU: 1}, 4 fit a pod"},
		{name: "workersToDelete names a pod that still exists", in: func(in *ClusterInput) {
			pending(in, dashboard.Resources{"GPU": 1}, 6)
			in.Cluster.Spec.WorkerGroupSpecs[1].ScaleStrategy.WorkersToDelete = []string{"rc-gpu-a", "rc-gpu-gone"}
		}, cpu: "nothing: no demand; at maxReplicas 2", gpu: "down 1: workersToDelete names rc-gpu-a"},
		{name: "replicas raised, pods on their way", in: func(in *ClusterInput) {
			pending(in, dashboard.Resources{"GPU": 1}, 6)
			in.Cluster.Spec.WorkerGroupSpecs[1].Replicas = ptr(int32(3))
		}, cpu: "nothing: no demand; at maxReplicas 2", gpu: "up 2: replicas 3 asked, 1 pod so far"},
		{name: "an idle worker above minReplicas", in: func(in *ClusterInput) {
			in.Capacity = &dashboard.Capacity{DemandKnown: true, Nodes: []dashboard.RayNode{
				{ID: "h", Alive: true, Head: true, Idle: true, Pod: "rc-head"},
				{ID: "g", Alive: true, Idle: true, Pod: "rc-gpu-a"},
				{ID: "c", Alive: true, Pod: "rc-cpu-a"}}}
			in.Cluster.Spec.WorkerGroupSpecs[1].IdleTimeoutSeconds = ptr(int32(300))
		}, cpu: "nothing: no demand; at maxReplicas 2", gpu: "down 1: 1 idle worker, removed once idle 300s (idleTimeoutSeconds), down to minReplicas 0"},
		{name: "Ray says for how long: the worker goes in the time left", in: func(in *ClusterInput) {
			in.Capacity = &dashboard.Capacity{DemandKnown: true, FetchedAt: now.Add(-5 * time.Second), Nodes: []dashboard.RayNode{
				{ID: "g", Alive: true, Idle: true, IdleFor: 30 * time.Second, IdleKnown: true, Pod: "rc-gpu-a"}}}
		}, cpu: "nothing: no demand; at maxReplicas 2", gpu: "down 1: worker rc-gpu-a idle 35s of 60s: removed in 25s (idleTimeoutSeconds)"},
		{name: "idle past idleTimeoutSeconds", in: func(in *ClusterInput) {
			in.Capacity = &dashboard.Capacity{DemandKnown: true, Nodes: []dashboard.RayNode{
				{ID: "g", Alive: true, Idle: true, IdleFor: 190 * time.Second, IdleKnown: true, Pod: "rc-gpu-a"}}}
		}, cpu: "nothing: no demand; at maxReplicas 2", gpu: "down 1: worker rc-gpu-a idle 3m10s of 60s: due now (idleTimeoutSeconds)"},
		{name: "the longest idle goes, one kept for minReplicas", in: func(in *ClusterInput) {
			in.Capacity = &dashboard.Capacity{DemandKnown: true, Nodes: []dashboard.RayNode{
				{ID: "a", Alive: true, Idle: true, IdleFor: 10 * time.Second, IdleKnown: true, Pod: "rc-cpu-a"},
				{ID: "b", Alive: true, Idle: true, IdleFor: 40 * time.Second, IdleKnown: true, Pod: "rc-cpu-b"}}}
			in.Cluster.Spec.WorkerGroupSpecs[0].MinReplicas = ptr(int32(1))
		}, cpu: "down 1: worker rc-cpu-b idle 40s of 60s: removed in 20s (idleTimeoutSeconds); 1 idle worker kept for minReplicas 1",
			gpu: "nothing: no demand for it"},
		{name: "busy workers hold the scale-down", in: func(in *ClusterInput) {
			in.Capacity = &dashboard.Capacity{DemandKnown: true, Nodes: []dashboard.RayNode{
				{ID: "a", Alive: true, IdleKnown: true, Pod: "rc-cpu-a"},
				{ID: "b", Alive: true, IdleKnown: true, Pod: "rc-cpu-b"},
				{ID: "g", Alive: true, IdleKnown: true, Pod: "rc-gpu-a"}}}
			in.Cluster.Spec.WorkerGroupSpecs[1].MinReplicas = ptr(int32(1))
		}, cpu: "nothing: scale-down held: 2 workers busy (above minReplicas 0)", gpu: "nothing: no demand for it"},
		{name: "an idle worker matched by its IP", in: func(in *ClusterInput) {
			in.Pods[3].Status.PodIP = "10.0.0.14"
			in.Capacity = &dashboard.Capacity{DemandKnown: true, Nodes: []dashboard.RayNode{{ID: "g", IP: "10.0.0.14", Alive: true, Idle: true}}}
		}, cpu: "nothing: no demand; at maxReplicas 2", gpu: "down 1: 1 idle worker, removed once idle 60s (idleTimeoutSeconds), down to minReplicas 0"},
		{name: "CPU demand whose pod size raydar cannot see", in: func(in *ClusterInput) {
			pending(in, dashboard.Resources{"CPU": 1}, 2)
			in.Cluster.Spec.WorkerGroupSpecs[0].MaxReplicas = ptr(int32(4))
			in.Cluster.Spec.WorkerGroupSpecs[0].Template = podTemplate(nil)
		}, cpu: "up 2: 2 tasks want {CPU: 1} (how many fit a pod is not known)", gpu: "nothing: no demand for it"},
		{name: "an idle worker at minReplicas stays", in: func(in *ClusterInput) {
			in.Capacity = &dashboard.Capacity{DemandKnown: true, Nodes: []dashboard.RayNode{{ID: "g", Alive: true, Idle: true, Pod: "rc-gpu-a"}}}
			in.Cluster.Spec.WorkerGroupSpecs[1].MinReplicas = ptr(int32(1))
		}, cpu: "nothing: no demand; at maxReplicas 2", gpu: "nothing: no demand for it"},
		{name: "Ray's view not read", in: func(in *ClusterInput) {},
			cpu: "nothing: Ray's demand unknown", gpu: "nothing: Ray's demand unknown"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := ClusterInput{Cluster: readyCluster(), Pods: healthyPods(), Reconciler: active(), Now: now}
			autoscaled(&in)
			tt.in(&in)
			got := GroupPlans(in)
			if len(got) != 2 || got[0].String() != tt.cpu || got[1].String() != tt.gpu {
				t.Errorf("plans %q, want cpu %q, gpu %q", got, tt.cpu, tt.gpu)
			}
		})
	}
	t.Run("autoscaling off", func(t *testing.T) {
		in := ClusterInput{Cluster: readyCluster(), Pods: healthyPods(), Now: now}
		in.Capacity = &dashboard.Capacity{DemandKnown: true, Pending: []dashboard.Demand{{Shape: dashboard.Resources{"GPU": 1}, Count: 6}}}
		got := GroupPlans(in)
		if got[1].String() != "nothing: autoscaling off" {
			t.Errorf("gpu plan %q", got[1])
		}
	})
}
