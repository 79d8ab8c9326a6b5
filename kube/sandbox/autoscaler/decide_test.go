package autoscaler

import (
	"maps"
	"testing"
	"time"

	"github.com/raydar/raydar/rayapi/dashboard"
)

// The cases below are taken from Ray's own autoscaler v2 tests
// (python/ray/autoscaler/v2/tests/test_scheduler.py and
// test_instance_launcher.py), each named after the test it comes from.

type R = dashboard.Resources

func cpu(n float64) R { return R{"CPU": n} }

func typ(name string, res R, lo, hi int) NodeType {
	return NodeType{Name: name, Resources: res, Min: lo, Max: hi}
}

func running(id, t string, total, avail R) Node {
	return Node{ID: id, Type: t, RayRunning: true, Total: total, Available: avail}
}

func pendingNode(id, t string) Node { return Node{ID: id, Type: t} }

func times(r R, n int) []R {
	out := make([]R, n)
	for i := range out {
		out[i] = r
	}
	return out
}

func wantLaunch(t *testing.T, d Decision, want map[string]int) {
	t.Helper()
	if want == nil {
		want = map[string]int{}
	}
	if !maps.Equal(d.Launch, want) {
		t.Errorf("launch = %v, want %v", d.Launch, want)
	}
}

func terminated(d Decision) map[string]Cause {
	m := map[string]Cause{}
	for _, t := range d.Terminate {
		m[t.Node] = t.Cause
	}
	return m
}

// test_scheduler.py::test_min_worker_nodes
func TestMinWorkerNodes(t *testing.T) {
	types := []NodeType{typ("type_1", cpu(1), 1, 10), typ("type_2", cpu(1), 0, 10), typ("type_3", cpu(1), 2, 10)}
	wantLaunch(t, Decide(Request{Types: types}), map[string]int{"type_1": 1, "type_3": 2})
	d := Decide(Request{Types: types, Nodes: []Node{running("a", "type_1", cpu(1), cpu(1)), running("b", "type_1", cpu(1), cpu(1))}})
	wantLaunch(t, d, map[string]int{"type_3": 2})
	d = Decide(Request{Types: types, Nodes: []Node{pendingNode("a", "type_1"), pendingNode("b", "type_1"), pendingNode("c", "type_no_longer_exists")}})
	wantLaunch(t, d, map[string]int{"type_3": 2})
}

// test_scheduler.py::test_max_workers_per_type
func TestMaxWorkersPerType(t *testing.T) {
	nodes := []Node{pendingNode("0", "type_1"), running("1", "type_1", cpu(1), cpu(1)), running("2", "type_1", cpu(1), cpu(0.5))}
	d := Decide(Request{Types: []NodeType{typ("type_1", cpu(1), 2, 2)}, Nodes: nodes})
	if got, want := terminated(d), map[string]Cause{"0": CauseMaxNodesOfType}; !maps.Equal(got, want) {
		t.Errorf("max 2: terminate %v, want %v", got, want)
	}
	d = Decide(Request{Types: []NodeType{typ("type_1", cpu(1), 0, 1)}, Nodes: nodes})
	// "1" has the lower resource utilization.
	if got, want := terminated(d), map[string]Cause{"0": CauseMaxNodesOfType, "1": CauseMaxNodesOfType}; !maps.Equal(got, want) {
		t.Errorf("max 1: terminate %v, want %v", got, want)
	}
}

// test_scheduler.py::test_single_resources
func TestSingleResources(t *testing.T) {
	types := []NodeType{typ("type_1", cpu(1), 0, 10)}
	wantLaunch(t, Decide(Request{Types: types, Demand: []R{cpu(1)}}), map[string]int{"type_1": 1})
	wantLaunch(t, Decide(Request{Types: types, Demand: times(cpu(1), 3)}), map[string]int{"type_1": 3})
	// Existing nodes with room launch nothing.
	wantLaunch(t, Decide(Request{Types: types, Demand: []R{cpu(1)}, Nodes: []Node{running("r1", "type_1", cpu(1), cpu(1))}}), nil)
	// Existing nodes without enough room launch one.
	wantLaunch(t, Decide(Request{Types: types, Demand: []R{cpu(1)}, Nodes: []Node{running("r1", "type_1", cpu(1), cpu(0.9))}}), map[string]int{"type_1": 1})
	// A pending node takes the request: nothing new.
	wantLaunch(t, Decide(Request{Types: types, Demand: []R{cpu(1)}, Nodes: []Node{pendingNode("0", "type_1")}}), nil)
}

// test_scheduler.py::test_max_worker_num_enforce_with_resource_requests,
// with the bound on the type (maxReplicas, the bound a RayCluster has)
// instead of the cluster-wide max_num_nodes that KubeRay sets to the sum
// of the groups' maxReplicas.
func TestMaxReplicasBoundsLaunch(t *testing.T) {
	d := Decide(Request{Types: []NodeType{typ("type_1", cpu(1), 0, 2)}, Demand: times(cpu(1), 3),
		Nodes: []Node{running("r1", "type_1", cpu(1), cpu(1))}})
	wantLaunch(t, d, map[string]int{"type_1": 1})
	if len(d.Infeasible) != 1 {
		t.Errorf("infeasible = %v, want the one request past maxReplicas", d.Infeasible)
	}
}

// test_scheduler.py::test_multi_requests_fittable
func TestMultiRequestsFittable(t *testing.T) {
	types := []NodeType{typ("type_1", R{"CPU": 1, "GPU": 1}, 0, 1), typ("type_2", cpu(3), 0, 1)}
	for _, demand := range [][]R{
		{cpu(1), cpu(1), cpu(1), {"CPU": 1, "GPU": 1}},
		{{"CPU": 1, "GPU": 1}, cpu(1), cpu(1), cpu(1)},
		{cpu(2), cpu(1), {"CPU": 0.5, "GPU": 0.5}, {"CPU": 0.5, "GPU": 0.5}},
	} {
		d := Decide(Request{Types: types, Demand: demand})
		wantLaunch(t, d, map[string]int{"type_1": 1, "type_2": 1})
		if len(d.Infeasible) != 0 {
			t.Errorf("%v: infeasible %v", demand, d.Infeasible)
		}
	}
	// Fragmentation on an existing node: one request stays infeasible.
	d := Decide(Request{Types: types, Demand: []R{cpu(1), cpu(1), {"CPU": 1, "GPU": 1}},
		Nodes: []Node{running("r1", "type_1", R{"CPU": 1, "GPU": 1}, R{"CPU": 0, "GPU": 1})}})
	wantLaunch(t, d, map[string]int{"type_2": 1})
	if len(d.Infeasible) != 1 {
		t.Errorf("infeasible = %v, want 1", d.Infeasible)
	}
}

// test_scheduler.py::test_multi_node_types_score
func TestMultiNodeTypesScore(t *testing.T) {
	types := []NodeType{typ("type_large", cpu(10), 0, 1), typ("type_small", cpu(5), 0, 1), typ("type_gpu", R{"CPU": 2, "GPU": 2}, 0, 1)}
	wantLaunch(t, Decide(Request{Types: types, Demand: []R{cpu(1)}}), map[string]int{"type_small": 1})
	wantLaunch(t, Decide(Request{Types: types, Demand: []R{cpu(2)}}), map[string]int{"type_small": 1})
}

// test_scheduler.py::test_multi_node_types_score_with_gpu (with
// AUTOSCALER_CONSERVE_GPU_NODES on, Ray's default).
func TestMultiNodeTypesScoreWithGPU(t *testing.T) {
	types := []NodeType{typ("type_gpu", R{"CPU": 1, "GPU": 2}, 0, 1), typ("type_multi", R{"CPU": 2, "XXX": 2}, 0, 1)}
	wantLaunch(t, Decide(Request{Types: types, Demand: []R{cpu(1)}}), map[string]int{"type_multi": 1})
}

// test_scheduler.py::test_idle_termination (without cluster resource
// constraints, which the sandbox does not have).
func TestIdleTermination(t *testing.T) {
	for _, timeout := range []time.Duration{1 * time.Second, 2 * time.Second, 10 * time.Second} {
		nodes := []Node{
			running("i-1", "type_cpu", cpu(1), cpu(0)),
			{ID: "i-2", Type: "type_cpu", RayRunning: true, Total: cpu(1), Available: cpu(1), Idle: 5 * time.Second},
			{ID: "i-3", Type: "headgroup", Head: true, RayRunning: true, Total: cpu(0), Available: cpu(0), Idle: 999 * time.Second},
		}
		d := Decide(Request{Types: []NodeType{typ("type_cpu", cpu(1), 0, 5)}, Nodes: nodes, IdleTimeout: timeout})
		want := map[string]Cause{}
		if timeout <= 5*time.Second {
			want["i-2"] = CauseIdle
		}
		if got := terminated(d); !maps.Equal(got, want) {
			t.Errorf("timeout %v: terminate %v, want %v", timeout, got, want)
		}
	}
}

// The idle timeout of a group (NodeTypeConfig.idle_timeout_s, read by
// _enforce_idle_termination) overrides the cluster's; min_worker_nodes is
// kept (the "required by min_worker_nodes" branch).
func TestIdleTimeoutPerTypeAndMin(t *testing.T) {
	long := 30 * time.Second
	idle := func(id string) Node {
		return Node{ID: id, Type: "w", RayRunning: true, Total: cpu(1), Available: cpu(1), Idle: 10 * time.Second}
	}
	ty := typ("w", cpu(1), 1, 5)
	d := Decide(Request{Types: []NodeType{ty}, Nodes: []Node{idle("a"), idle("b"), idle("c")}, IdleTimeout: time.Second})
	if got := len(d.Terminate); got != 2 {
		t.Errorf("terminate %v, want 2 of 3 (min 1 kept)", d.Terminate)
	}
	ty.IdleTimeout = &long
	d = Decide(Request{Types: []NodeType{ty}, Nodes: []Node{idle("a"), idle("b")}, IdleTimeout: time.Second})
	if len(d.Terminate) != 0 {
		t.Errorf("terminate %v, want none: the group's 30 s timeout is not reached", d.Terminate)
	}
	// A node a pending request is scheduled on stays, idle or not.
	d = Decide(Request{Types: []NodeType{typ("w", cpu(1), 0, 5)}, Nodes: []Node{idle("a")}, Demand: []R{cpu(1)}, IdleTimeout: time.Second})
	if len(d.Terminate) != 0 {
		t.Errorf("terminate %v, want none: a request fits the idle node", d.Terminate)
	}
}

// test_instance_launcher.py (_compute_num_to_launch_for_type): the
// launcher allows max(1, ceil(speed × (requested+allocated))) per type, so
// a group grows from zero by one node whatever the mode; with 2 pods,
// Conservative (speed 1) launches 2 more and Default (1000) all it wants;
// max_concurrent_launches caps the total (test_max_concurrent_launches).
func TestUpscalingSpeed(t *testing.T) {
	types := []NodeType{typ("w", cpu(1), 0, 100)}
	for _, speed := range []float64{1, 1000} {
		d := Decide(Request{Types: types, Demand: times(cpu(1), 8), UpscalingSpeed: speed})
		wantLaunch(t, d, map[string]int{"w": 1})
		if !maps.Equal(d.Wanted, map[string]int{"w": 8}) {
			t.Errorf("speed %v: wanted = %v, want w:8", speed, d.Wanted)
		}
	}
	two := []Node{pendingNode("a", "w"), pendingNode("b", "w")}
	wantLaunch(t, Decide(Request{Types: types, Demand: times(cpu(1), 8), UpscalingSpeed: 1, Nodes: two}), map[string]int{"w": 2})
	wantLaunch(t, Decide(Request{Types: types, Demand: times(cpu(1), 8), UpscalingSpeed: 1000, Nodes: two}), map[string]int{"w": 6})
	wantLaunch(t, Decide(Request{Types: types, Demand: times(cpu(1), 8), UpscalingSpeed: 1000, Nodes: two, MaxConcurrentLaunches: 5}), map[string]int{"w": 5})
}
