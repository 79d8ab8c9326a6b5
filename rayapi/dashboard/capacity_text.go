package dashboard

import (
	"bufio"
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

// With autoscaler v2 the dashboard's /api/cluster_status has no structured
// status (clusterStatus is null: the v2 monitor reports to the GCS only),
// but ?format=1 answers the text `ray status` prints, built from the GCS's
// cluster status (reporter_head.py get_cluster_status → debug_status). Its
// demand lines are Python dict reprs with a count, as
// python/ray/autoscaler/v2/utils.py writes them:
//
//	 {'CPU': 1.0, 'GPU': 2.0}: 4+ pending tasks/actors (2+ using placement groups)
//
// textDemands reads those lines; placement-group and request_resources()
// lines are not read. known reports whether the text had a demand section
// at all ("Demands:", "Pending Demands:", "Total Demands:").
//
// Per-node idle times and activity are not in that text, so with
// autoscaler v2 RayNode.IdleKnown stays false. Checked in ray-project/ray:
// reporter_head.py get_cluster_status answers ?format=1 with
// debug_status(formatted_status_string, error, address=...), no verbose;
// autoscaler/_private/commands.py debug_status(status, error, verbose=False,
// address=None) formats v2's get_cluster_status with
// ClusterStatusFormatter.format(cluster_status, verbose=verbose); and
// autoscaler/_private/util.py format_info_string adds the per-node
// breakdown (get_per_node_breakdown: " Idle: N ms", " Activity:" lines from
// NodeUsage.idle_time_ms and node_activity, which v2/utils.py@05deacc
// ClusterStatusFormatter._parse_lm_summary / _parse_autoscaler_summary
// fill) only when verbose. The non-verbose text's "Idle:" section counts
// idle nodes per node type (_count_by(data.idle_nodes,
// "ray_node_type_name")), naming no node and no duration. The GCS has
// them per node (src/ray/gcs/gcs_node_manager.cc UpdateAliveNode:
// state_snapshot IDLE with idle_duration_ms, else ACTIVE with
// node_activity), reached over gRPC (GetClusterStatus, GetAllNodeInfo),
// not over the dashboard's HTTP: /api/v0/nodes filters the GcsNodeInfo to
// util/state/common.py NodeState's fields, which hold no snapshot.

var (
	demandLine = regexp.MustCompile(`^\s*\{([^}]*)\}:\s*(\d+)\+?\s+pending\s+(?:tasks/actors|tasks|actors)\b`)
	dictEntry  = regexp.MustCompile(`'([^']+)':\s*([-+0-9.eE]+)`)
)

func textDemands(text string) (d []Demand, known bool) {
	var list demands
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasSuffix(strings.TrimSpace(line), "Demands:") {
			known = true
			continue
		}
		m := demandLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		n, err := strconv.Atoi(m[2])
		if err != nil {
			continue
		}
		shape := map[string]float64{}
		for _, e := range dictEntry.FindAllStringSubmatch(m[1], -1) {
			if v, err := strconv.ParseFloat(e[2], 64); err == nil {
				shape[e[1]] = v
			}
		}
		list.add(shape, float64(n))
	}
	return list.list, known
}

// FormattedStatus is data of GET /api/cluster_status?format=1: the text
// `ray status` prints.
type FormattedStatus struct {
	ClusterStatus string `json:"clusterStatus"`
}

// StatusText is the text `ray status` prints, as the dashboard formats it
// (GET /api/cluster_status?format=1).
func (c *Client) StatusText(ctx context.Context) (string, error) {
	var r RestResponse[FormattedStatus]
	if err := c.callJSON(ctx, http.MethodGet, ClusterStatusPath, url.Values{"format": {"1"}}, nil, &r); err != nil {
		return "", err
	}
	return r.Data.ClusterStatus, nil
}

// textCapacityDemand asks for the formatted status and reads its demand.
func (c *Client) textCapacityDemand(ctx context.Context) ([]Demand, bool, error) {
	var r RestResponse[FormattedStatus]
	if err := c.callJSON(ctx, http.MethodGet, ClusterStatusPath, url.Values{"format": {"1"}}, nil, &r); err != nil {
		return nil, false, err
	}
	d, known := textDemands(r.Data.ClusterStatus)
	return d, known, nil
}
