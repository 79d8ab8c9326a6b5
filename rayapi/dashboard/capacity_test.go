package dashboard

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"
)

// The answers below are shaped as Ray writes them: /api/cluster_status
// through rest_response with to_google_style (camelCased keys, also
// "objectStoreMemory" inside usage dicts, while the (bundle, count) tuples
// keep Ray's names), the state API through do_reply without it.
const (
	rayNodesAnswer = `{"result": true, "msg": "", "data": {"result": {"total": 3, "num_after_truncation": 3, "num_filtered": 3,
	 "result": [
	  {"node_id": "bbb", "node_ip": "10.0.0.7", "is_head_node": false, "state": "ALIVE", "state_message": null, "node_name": "10.0.0.7",
	   "resources_total": {"CPU": 4.0, "memory": 8589934592.0, "object_store_memory": 2147483648.0, "node:10.0.0.7": 1.0}, "labels": {"ray.io/node-id": "bbb"}},
	  {"node_id": "aaa", "node_ip": "10.0.0.5", "is_head_node": true, "state": "ALIVE", "state_message": null, "node_name": "10.0.0.5",
	   "resources_total": {"CPU": 2.0, "memory": 4294967296.0, "node:10.0.0.5": 1.0, "node:__internal_head__": 1.0}, "labels": {}},
	  {"node_id": "ccc", "node_ip": "10.0.0.9", "is_head_node": false, "state": "DEAD", "state_message": "Expected termination: received SIGTERM", "node_name": "10.0.0.9",
	   "resources_total": {"CPU": 4.0, "GPU": 1.0, "accelerator_type:T4": 1.0}, "labels": {}}],
	 "partial_failure_warning": null, "warnings": null}}}`
	rayClusterStatusAnswer = `{"result": true, "msg": "Got cluster status.", "data": {
	 "autoscalingStatus": "======== Autoscaler status ========", "autoscalingError": null,
	 "clusterStatus": {"time": 1700000000.5, "monitorPid": 77,
	  "loadMetricsReport": {
	   "usage": {"CPU": [3.0, 6.0], "memory": [0.0, 12884901888.0], "objectStoreMemory": [0.0, 2147483648.0]},
	   "resourceDemand": [[{"GPU": 2.0}, 4], [{"CPU": 1.0}, 1]],
	   "pgDemand": [[{"strategy": "PACK", "bundles": [[{"CPU": 1.0}, 2]]}, 1]],
	   "requestDemand": [],
	   "nodeTypes": [[{"CPU": 2.0}, 1], [{"CPU": 4.0}, 1]],
	   "headIp": "10.0.0.5",
	   "usageByNode": {"aaa": {"CPU": [1.0, 2.0], "node:InternalHead": [0.0, 1.0]}, "bbb": {"CPU": [2.0, 4.0], "objectStoreMemory": [1024.0, 2147483648.0]}},
	   "nodeTypeMapping": {"aaa": "headgroup", "bbb": "small"},
	   "idleTimeMap": {"aaa": 0, "bbb": 12000}},
	  "autoscalerReport": {"activeNodes": {"headgroup": 1, "small": 1}, "idleNodes": null, "pendingNodes": [], "pendingLaunches": {}, "failedNodes": []}}}}`
	rayActorsSummaryAnswer = `{"result": true, "msg": "", "data": {"result": {"total": 5,
	 "result": {"node_id_to_summary": {"cluster": {"summary": {
	   "ServeController": {"class_name": "ServeController", "state_counts": {"ALIVE": 1}},
	   "Worker": {"class_name": "Worker", "state_counts": {"ALIVE": 3}}}, "total_actors": 4, "summary_by": "class"}}},
	 "partial_failure_warning": null, "warnings": null, "num_after_truncation": 4, "num_filtered": 4}}}`
	rayJobsAnswer = `[{"type": "SUBMISSION", "submission_id": "a", "status": "RUNNING", "entrypoint": "x"},
	 {"type": "SUBMISSION", "submission_id": "b", "status": "SUCCEEDED", "entrypoint": "x"},
	 {"type": "SUBMISSION", "submission_id": "c", "status": "RUNNING", "entrypoint": "x"}]`
)

func capacityFake(t *testing.T) *fakeDashboard {
	f := newFake(t)
	f.on("GET", StateNodesPath, 200, rayNodesAnswer)
	f.on("GET", ClusterStatusPath, 200, rayClusterStatusAnswer)
	f.on("GET", ActorsSummaryPath, 200, rayActorsSummaryAnswer)
	f.on("GET", JobsPath, 200, rayJobsAnswer)
	return f
}

func TestCapacityReadsWhatRayStatusPrints(t *testing.T) {
	f := capacityFake(t)
	c, err := New(f.srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Capacity(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Nodes) != 3 || got.Nodes[0].ID != "aaa" || !got.Nodes[0].Head || got.Nodes[1].IP != "10.0.0.7" || got.Nodes[2].Alive {
		t.Fatalf("nodes: want head aaa first, then by IP, ccc dead; got %+v", got.Nodes)
	}
	if w := (Resources{"CPU": 4, "memory": 8589934592, "object_store_memory": 2147483648}); !got.Nodes[1].Total.Equal(w) {
		t.Errorf("node bbb total = %v, want %v (node: resources dropped)", got.Nodes[1].Total, w)
	}
	if w := (Resources{"CPU": 2, "object_store_memory": 1024}); !got.Nodes[1].Used.Equal(w) {
		t.Errorf("node bbb used = %v, want %v (camelCased name restored)", got.Nodes[1].Used, w)
	}
	if w := (Resources{"CPU": 4, "GPU": 1}); !got.Nodes[2].Total.Equal(w) {
		t.Errorf("dead node total = %v, want %v (accelerator_type dropped)", got.Nodes[2].Total, w)
	}
	if !got.Nodes[1].Idle || got.Nodes[0].Idle {
		t.Errorf("idle: want bbb idle (12 s), aaa busy; got %+v", got.Nodes)
	}
	if n := got.Nodes[1]; n.IdleFor != 12*time.Second || !n.IdleKnown {
		t.Errorf("bbb idle for %v (known %v), want 12s known (idleTimeMap 12000 ms)", n.IdleFor, n.IdleKnown)
	}
	if n := got.Nodes[0]; n.IdleFor != 0 || !n.IdleKnown {
		t.Errorf("aaa idle for %v (known %v), want 0 known: busy", n.IdleFor, n.IdleKnown)
	}
	if n := got.Nodes[2]; n.IdleKnown || n.Idle {
		t.Errorf("dead ccc: idle %v known %v, want neither (not in idleTimeMap)", n.Idle, n.IdleKnown)
	}
	if w := (Resources{"CPU": 6, "memory": 12884901888, "object_store_memory": 2147483648}); !got.Total.Equal(w) {
		t.Errorf("total = %v, want the alive nodes' sum %v", got.Total, w)
	}
	if w := (Resources{"CPU": 3, "object_store_memory": 1024}); !got.Used.Equal(w) {
		t.Errorf("used = %v, want %v", got.Used, w)
	}
	if !got.DemandKnown || len(got.Pending) != 2 || got.Pending[0].Count != 4 || !got.Pending[0].Shape.Equal(Resources{"GPU": 2}) ||
		got.Pending[1].Count != 3 || !got.Pending[1].Shape.Equal(Resources{"CPU": 1}) {
		t.Errorf("pending = %+v, want 4×{GPU: 2} and 3×{CPU: 1} (a task plus a 2-bundle placement group)", got.Pending)
	}
	if got.Actors != 4 || got.RunningJobs != 2 {
		t.Errorf("actors, running jobs = %d, %d; want 4, 2", got.Actors, got.RunningJobs)
	}
	if got.FetchedAt.IsZero() {
		t.Error("FetchedAt not set")
	}
	for _, r := range f.requests() {
		switch r.Path {
		case StateNodesPath:
			if q, _ := url.ParseQuery(r.Query); q.Get("limit") != "10000" {
				t.Errorf("nodes asked with %q; want limit=10000", r.Query)
			}
		case ActorsSummaryPath:
			if q, _ := url.ParseQuery(r.Query); q.Get("filter_keys") != "state" || q.Get("filter_values") != "ALIVE" || q.Get("filter_predicates") != "=" {
				t.Errorf("actor summary asked with %q; want the ALIVE filter", r.Query)
			}
		case "/api/v0/actors", "/api/v0/tasks":
			t.Errorf("Capacity listed %s: it must only summarise", r.Path)
		}
	}

	got.SplitInfeasible([]Resources{{"CPU": 2}, {"CPU": 4}})
	if len(got.Infeasible) != 1 || !got.Infeasible[0].Shape.Equal(Resources{"GPU": 2}) || len(got.Pending) != 1 {
		t.Errorf("split with CPU-only groups: pending %+v, infeasible %+v; want {GPU: 2} infeasible", got.Pending, got.Infeasible)
	}
	got.SplitInfeasible([]Resources{{"CPU": 8, "GPU": 2}})
	if len(got.Infeasible) != 0 || len(got.Pending) != 2 {
		t.Errorf("split with a 2-GPU group: pending %+v, infeasible %+v; want all pending", got.Pending, got.Infeasible)
	}
}

func TestCapacityWithoutAutoscalerStatus(t *testing.T) {
	f := capacityFake(t)
	f.on("GET", ClusterStatusPath, 200, `{"result": true, "msg": "Got cluster status.", "data": {"autoscalingStatus": null, "autoscalingError": null, "clusterStatus": null}}`)
	c, _ := New(f.srv.URL)
	got, err := c.Capacity(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got.DemandKnown || len(got.Pending) != 0 || len(got.Nodes) != 3 || got.Total["CPU"] != 6 {
		t.Errorf("no autoscaler: want nodes and totals, DemandKnown false; got %+v", got)
	}
}

func TestCapacityErrors(t *testing.T) {
	f := capacityFake(t)
	f.on("GET", ActorsSummaryPath, 200, `{"result": false, "msg": "Max number of in-progress requests=100 reached.", "data": {"result": null}}`)
	c, _ := New(f.srv.URL)
	if _, err := c.Capacity(context.Background()); err == nil {
		t.Error("result=false: want an error")
	}
	f.on("GET", ClusterStatusPath, http.StatusNotFound, "404: Not Found")
	if _, err := c.Capacity(context.Background()); !errors.Is(err, ErrNotFound) {
		t.Errorf("404 on cluster_status: got %v, want ErrNotFound", err)
	}
}

func TestDictCountRoundTrip(t *testing.T) {
	in := LoadMetricsReport{ResourceDemand: []DictCount{{Bundle: map[string]float64{"GPU": 2}, Count: 4}},
		PGDemand: []PGDemand{{PG: PlacementGroupShape{Strategy: "PACK", Bundles: []DictCount{{Bundle: map[string]float64{"CPU": 1}, Count: 2}}}, Count: 1}}}
	data, err := jsonMarshal(in)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"usage":null,"resourceDemand":[[{"GPU":2},4]],"pgDemand":[[{"strategy":"PACK","bundles":[[{"CPU":1},2]]},1]],"requestDemand":null,"nodeTypes":null}`
	if string(data) != want {
		t.Errorf("marshalled\n%s\nwant\n%s", data, want)
	}
}

func (f *fakeDashboard) requests() []recorded {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]recorded(nil), f.reqs...)
}

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }

// With autoscaler v2, /api/cluster_status has clusterStatus null and
// ?format=1 the text `ray status` prints (v2's ClusterStatusFormatter).
const rayV2StatusText = `======== Autoscaler status: 2026-12-01 10:00:00.000000 ========
Node status
---------------------------------------------------------------
Active:
 1 headgroup
Idle:
 1 small
Pending:
 (no pending nodes)
Recent failures:
 (no failures)

Resources
---------------------------------------------------------------
Total Usage:
 3.0/6.0 CPU
 0B/12.00GiB memory

Total Constraints:
 (no request_resources() constraints)
Total Demands:
 {'GPU': 2.0}: 4+ pending tasks/actors
 {'CPU': 1.0, 'memory': 1000000000.0}: 2+ pending tasks/actors (2+ using placement groups)
 {'CPU': 1.0}: 1+ pending placement groups`

func TestCapacityAutoscalerV2ReadsTheFormattedStatus(t *testing.T) {
	f := capacityFake(t)
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+ClusterStatusPath, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("format") == "1" {
			b, _ := json.Marshal(RestResponse[FormattedStatus]{Result: true, Msg: "Got formatted cluster status.", Data: FormattedStatus{ClusterStatus: rayV2StatusText}})
			w.Write(b)
			return
		}
		w.Write([]byte(`{"result": true, "msg": "Got cluster status.", "data": {"autoscalingStatus": null, "autoscalingError": null, "clusterStatus": null}}`))
	})
	mux.Handle("/", f.srv.Config.Handler)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	c, _ := New(srv.URL)
	got, err := c.Capacity(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !got.DemandKnown || len(got.Pending) != 2 || !got.Pending[0].Shape.Equal(Resources{"GPU": 2}) || got.Pending[0].Count != 4 ||
		!got.Pending[1].Shape.Equal(Resources{"CPU": 1, "memory": 1e9}) || got.Pending[1].Count != 2 {
		t.Errorf("v2 demand from the text: got known=%v %+v; want 4×{GPU: 2}, 2×{CPU: 1, memory: 1e9}", got.DemandKnown, got.Pending)
	}
	if len(got.Nodes) != 3 || got.Total["CPU"] != 6 {
		t.Errorf("nodes from the state API: %+v", got.Nodes)
	}
}

// TestIdleTimesAsRayV2Formats reads the idle times Ray's autoscaler v2
// status formatter writes: python/ray/autoscaler/v2/utils.py,
// ClusterStatusParser._parse_nodes sets NodeUsage.idle_time_ms to the GCS
// NodeState.idle_duration_ms for a node whose status is IDLE and to 0
// otherwise, and the formatter copies it into
// LoadMetricsSummary.idle_time_map (to_google_style: "idleTimeMap"). A
// node the map does not name has no known idle time.
func TestIdleTimesAsRayV2Formats(t *testing.T) {
	var lm LoadMetricsReport
	wire := `{"usage": {"CPU": [1.0, 9.0]}, "resourceDemand": [], "pgDemand": [], "requestDemand": [], "nodeTypes": null,
	 "usageByNode": {"h1": {"CPU": [0.0, 1.0]}, "w1": {"CPU": [0.0, 4.0]}, "w2": {"CPU": [1.0, 4.0]}},
	 "nodeTypeMapping": {"h1": "headgroup", "w1": "cpu", "w2": "cpu"},
	 "idleTimeMap": {"h1": 0, "w1": 35250, "w2": 0}}`
	if err := json.Unmarshal([]byte(wire), &lm); err != nil {
		t.Fatal(err)
	}
	rows := []NodeState{
		{NodeID: "h1", NodeIP: "10.0.0.1", IsHeadNode: true, State: NodeAlive},
		{NodeID: "w1", NodeIP: "10.0.0.2", State: NodeAlive},
		{NodeID: "w2", NodeIP: "10.0.0.3", State: NodeAlive},
		{NodeID: "w3", NodeIP: "10.0.0.4", State: NodeAlive}, // joined after the status was written
	}
	c := BuildCapacity(rows, &lm)
	want := []struct {
		idle  time.Duration
		known bool
	}{{0, true}, {35250 * time.Millisecond, true}, {0, true}, {0, false}}
	for i, w := range want {
		n := c.Nodes[i]
		if n.IdleFor != w.idle || n.IdleKnown != w.known || n.Idle != (w.idle > 0) {
			t.Errorf("node %s: idle %v for %v known %v, want for %v known %v", n.ID, n.Idle, n.IdleFor, n.IdleKnown, w.idle, w.known)
		}
	}
	if c := BuildCapacity(rows, nil); c.Nodes[1].IdleKnown || c.Nodes[1].Idle {
		t.Errorf("without a status (autoscaler v2's null clusterStatus) idle must be unknown, got %+v", c.Nodes[1])
	}
}
