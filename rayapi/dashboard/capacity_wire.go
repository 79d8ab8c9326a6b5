package dashboard

import (
	"encoding/json"
	"fmt"
)

// The wire shapes of the dashboard endpoints Capacity reads, with the JSON
// names Ray writes. Checked against ray-project/ray at these blobs' commits
// (file@commit:line of the route or definition): reporter_head.py@01b1bbc:107
// (@routes.get("/api/cluster_status")), optional_utils.py@0520ccc
// (rest_response), utils.py@037e192 (to_google_style), state_head.py@08bb903
// (list_nodes, summarize_actors), state_api_utils.py@3f37d59 (do_reply,
// handle_summary_api), node_head.py@025eee2 (get_nodes_logical_resources:
// the v2 path reads the GCS), autoscaler/v2/monitor.py@01d36df
// (report_autoscaling_state only). In detail:
//
//   - python/ray/dashboard/optional_utils.py, rest_response: every answer is
//     {"result": bool, "msg": str, "data": {...}}; with convert_google_style
//     (the default) every dict key under "data" is camelCased recursively by
//     python/ray/dashboard/utils.py, to_google_style/to_camel_case — also
//     resource names that are dict keys ("object_store_memory" becomes
//     "objectStoreMemory"), but not dicts inside lists of lists (the
//     (bundle, count) tuples of the demands keep Ray's names).
//   - python/ray/dashboard/modules/reporter/reporter_head.py,
//     get_cluster_status (GET /api/cluster_status): data.autoscalingStatus
//     (the legacy text), data.autoscalingError, data.clusterStatus (the JSON
//     the autoscaler v1 monitor writes under the GCS key
//     "__autoscaling_status", or null: no autoscaler, or autoscaler v2,
//     whose monitor (python/ray/autoscaler/v2/monitor.py) reports to the GCS
//     instead and `ray status` reads it over gRPC).
//   - python/ray/autoscaler/_private/util.py, LoadMetricsSummary: usage
//     {resource: (used, total)}, resource_demand / request_demand
//     [(bundle, count)], pg_demand [({"strategy", "bundles": [(bundle,
//     count)]}, count)], node_types, head_ip, usage_by_node {node_id: usage},
//     node_type_mapping, idle_time_map {node_id: ms}.
//   - python/ray/dashboard/modules/state/state_head.py, list_nodes
//     (GET /api/v0/nodes) and summarize_actors (GET
//     /api/v0/actors/summarize), answered through
//     python/ray/dashboard/state_api_utils.py, do_reply
//     (convert_google_style=False: snake_case): data.result is
//     asdict(ListApiResponse) {total, num_after_truncation, num_filtered,
//     result, partial_failure_warning, warnings}, resp. asdict(
//     SummaryApiResponse) whose result is {"node_id_to_summary": {"cluster":
//     ActorSummaries}} (python/ray/dashboard/state_aggregator.py,
//     summarize_actors; python/ray/util/state/common.py, NodeState,
//     ActorSummaries, ActorSummaryPerClass).

// RestResponse is the envelope of every dashboard module's JSON answer
// (optional_utils.py rest_response).
type RestResponse[T any] struct {
	Result bool   `json:"result"`
	Msg    string `json:"msg"`
	Data   T      `json:"data"`
}

// ClusterStatusData is data of GET /api/cluster_status (reporter_head.py
// get_cluster_status, camelCased by to_google_style).
type ClusterStatusData struct {
	AutoscalingStatus *string `json:"autoscalingStatus"`
	AutoscalingError  *string `json:"autoscalingError"`
	// ClusterStatus is nil without an autoscaler v1 (see the file comment).
	ClusterStatus *AutoscalerStatus `json:"clusterStatus"`
}

// AutoscalerStatus is the JSON the autoscaler v1 monitor writes under
// "__autoscaling_status" (python/ray/autoscaler/_private/monitor.py:
// {"time", "monitor_pid", "load_metrics_report", "autoscaler_report"}),
// camelCased.
type AutoscalerStatus struct {
	Time              float64            `json:"time,omitempty"`
	MonitorPID        int                `json:"monitorPid,omitempty"`
	LoadMetricsReport *LoadMetricsReport `json:"loadMetricsReport"`
	// AutoscalerReport is the AutoscalerSummary (active/idle/pending
	// nodes by type); kept raw: Capacity does not read it.
	AutoscalerReport json.RawMessage `json:"autoscalerReport,omitempty"`
}

// LoadMetricsReport is LoadMetricsSummary (autoscaler/_private/util.py).
type LoadMetricsReport struct {
	// Usage maps a resource to [used, total] over the cluster.
	Usage          map[string][2]float64 `json:"usage"`
	ResourceDemand []DictCount           `json:"resourceDemand"`
	PGDemand       []PGDemand            `json:"pgDemand"`
	RequestDemand  []DictCount           `json:"requestDemand"`
	NodeTypes      []DictCount           `json:"nodeTypes"`
	HeadIP         string                `json:"headIp,omitempty"`
	// UsageByNode maps a node ID to its [used, total] per resource.
	UsageByNode     map[string]map[string][2]float64 `json:"usageByNode,omitempty"`
	NodeTypeMapping map[string]string                `json:"nodeTypeMapping,omitempty"`
	// IdleTimeMap maps a node ID to how long it has been idle (ms; 0: busy):
	// LoadMetricsSummary.idle_time_map: Optional[Dict[str, int]]
	// (autoscaler/_private/util.py), the v1 monitor's per-node idle time;
	// Ray's v2 formatter fills the same map from the GCS's
	// NodeState.idle_duration_ms, 0 unless the node's status is IDLE
	// (autoscaler/v2/utils.py, ClusterStatusParser._parse_nodes and
	// ClusterStatusFormatter's LoadMetricsSummary), the duration the v2
	// autoscaler compares with idleTimeoutSeconds; under v2 that map is
	// printed only in the verbose text, which the dashboard does not
	// serve (capacity_text.go), so this JSON is v1's only.
	IdleTimeMap map[string]int64 `json:"idleTimeMap,omitempty"`
}

// DictCount is Ray's DictCount, a (bundle, count) tuple: a JSON array of
// two elements.
type DictCount struct {
	Bundle map[string]float64
	Count  float64
}

// MarshalJSON writes [bundle, count].
func (d DictCount) MarshalJSON() ([]byte, error) {
	b := d.Bundle
	if b == nil {
		b = map[string]float64{}
	}
	return json.Marshal([2]any{b, d.Count})
}

// UnmarshalJSON reads [bundle, count].
func (d *DictCount) UnmarshalJSON(data []byte) error {
	var pair []json.RawMessage
	if err := json.Unmarshal(data, &pair); err != nil || len(pair) != 2 {
		return fmt.Errorf("dashboard: a (bundle, count) pair must be a 2-element array, got %s", clip(data))
	}
	if err := json.Unmarshal(pair[0], &d.Bundle); err != nil {
		return fmt.Errorf("dashboard: bundle: %w", err)
	}
	return json.Unmarshal(pair[1], &d.Count)
}

// PlacementGroupShape is the first element of a pg_demand entry.
type PlacementGroupShape struct {
	Strategy string      `json:"strategy"`
	Bundles  []DictCount `json:"bundles"`
}

// PGDemand is one pg_demand entry, a (placement group, count) tuple.
type PGDemand struct {
	PG    PlacementGroupShape
	Count float64
}

// MarshalJSON writes [pg, count].
func (d PGDemand) MarshalJSON() ([]byte, error) { return json.Marshal([2]any{d.PG, d.Count}) }

// UnmarshalJSON reads [pg, count].
func (d *PGDemand) UnmarshalJSON(data []byte) error {
	var pair []json.RawMessage
	if err := json.Unmarshal(data, &pair); err != nil || len(pair) != 2 {
		return fmt.Errorf("dashboard: a (placement group, count) pair must be a 2-element array, got %s", clip(data))
	}
	if err := json.Unmarshal(pair[0], &d.PG); err != nil {
		return fmt.Errorf("dashboard: placement group: %w", err)
	}
	return json.Unmarshal(pair[1], &d.Count)
}

func clip(b []byte) string {
	if len(b) > 80 {
		return string(b[:80]) + "…"
	}
	return string(b)
}

// StateData is data of a state API answer (state_api_utils.py do_reply).
type StateData[T any] struct {
	Result *T `json:"result"`
}

// ListAPIResponse is asdict(ListApiResponse) (util/state/common.py).
type ListAPIResponse[T any] struct {
	Total                 int      `json:"total"`
	NumAfterTruncation    int      `json:"num_after_truncation"`
	NumFiltered           int      `json:"num_filtered"`
	Result                []T      `json:"result"`
	PartialFailureWarning *string  `json:"partial_failure_warning"`
	Warnings              []string `json:"warnings"`
}

// NodeState is one row of GET /api/v0/nodes (util/state/common.py NodeState).
type NodeState struct {
	NodeID         string             `json:"node_id"`
	NodeIP         string             `json:"node_ip"`
	IsHeadNode     bool               `json:"is_head_node"`
	State          string             `json:"state"` // ALIVE or DEAD
	StateMessage   *string            `json:"state_message,omitempty"`
	NodeName       string             `json:"node_name"`
	ResourcesTotal map[string]float64 `json:"resources_total"`
	Labels         map[string]string  `json:"labels,omitempty"`
	StartTimeMS    *int64             `json:"start_time_ms,omitempty"`
	EndTimeMS      *int64             `json:"end_time_ms,omitempty"`
}

// Node states in NodeState.State.
const (
	NodeAlive = "ALIVE"
	NodeDead  = "DEAD"
)

// SummaryAPIResponse is asdict(SummaryApiResponse) (util/state/common.py).
type SummaryAPIResponse[T any] struct {
	Total                 int             `json:"total"`
	Result                StateSummary[T] `json:"result"`
	PartialFailureWarning *string         `json:"partial_failure_warning"`
	Warnings              []string        `json:"warnings"`
	NumAfterTruncation    int             `json:"num_after_truncation"`
	NumFiltered           int             `json:"num_filtered"`
}

// StateSummary is asdict(StateSummary): the summaries by node, of which Ray
// fills only "cluster" (state_aggregator.py).
type StateSummary[T any] struct {
	NodeIDToSummary map[string]T `json:"node_id_to_summary"`
}

// ActorSummaries is util/state/common.py ActorSummaries.
type ActorSummaries struct {
	Summary     map[string]ActorSummaryPerClass `json:"summary"`
	TotalActors int                             `json:"total_actors"`
	SummaryBy   string                          `json:"summary_by"`
}

// ActorSummaryPerClass is util/state/common.py ActorSummaryPerClass.
type ActorSummaryPerClass struct {
	ClassName   string         `json:"class_name"`
	StateCounts map[string]int `json:"state_counts"`
}

// ActorAlive is the state of a live actor (gcs.proto ActorTableData.ActorState).
const ActorAlive = "ALIVE"
