package dashboard

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// NodeListLimit is the limit Capacity asks the state API's node list for:
// Ray's RAY_MAX_LIMIT_FROM_API_SERVER default (python/ray/util/state/common.py);
// the default limit, 100, would cut bigger clusters short.
const NodeListLimit = 10000

// Capacity reads Ray's view of the cluster's capacity, what `ray status`
// prints, from four bounded calls made concurrently:
//
//   - GET /api/v0/nodes?limit=NodeListLimit: the nodes, alive and dead, with
//     their total resources;
//   - GET /api/cluster_status: per-node usage, idle times and the demand the
//     autoscaler sees (structured with autoscaler v1; with v2, whose status
//     is null there, a fifth call reads the demand from the text `ray
//     status` prints, ?format=1: see capacity_text.go);
//   - GET /api/v0/actors/summarize filtered to ALIVE: the actor count,
//     summarised by Ray (never the actor list);
//   - GET /api/jobs/: the running jobs.
//
// Unplaced demand is all put in Pending: Ray does not say what could never
// fit. [Capacity.SplitInfeasible] moves what no node type can hold to
// Infeasible, given the cluster's node types (KubeRay worker groups).
func (c *Client) Capacity(ctx context.Context) (*Capacity, error) {
	var (
		wg     sync.WaitGroup
		nodes  RestResponse[StateData[ListAPIResponse[NodeState]]]
		status RestResponse[ClusterStatusData]
		actors RestResponse[StateData[SummaryAPIResponse[ActorSummaries]]]
		jobs   []JobInfo
		errs   [4]error
	)
	run := func(i int, f func() error) {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = f() }()
	}
	run(0, func() error {
		q := url.Values{"limit": {strconv.Itoa(NodeListLimit)}, "detail": {"1"}}
		return c.callJSON(ctx, http.MethodGet, StateNodesPath, q, nil, &nodes)
	})
	run(1, func() error {
		return c.callJSON(ctx, http.MethodGet, ClusterStatusPath, nil, nil, &status)
	})
	run(2, func() error {
		q := url.Values{"filter_keys": {"state"}, "filter_predicates": {"="}, "filter_values": {ActorAlive}}
		return c.callJSON(ctx, http.MethodGet, ActorsSummaryPath, q, nil, &actors)
	})
	run(3, func() (err error) { jobs, err = c.ListJobs(ctx); return err })
	wg.Wait()
	if err := errors.Join(errs[:]...); err != nil {
		return nil, err
	}
	for _, r := range []struct {
		ok   bool
		msg  string
		path string
	}{{nodes.Result, nodes.Msg, StateNodesPath}, {status.Result, status.Msg, ClusterStatusPath}, {actors.Result, actors.Msg, ActorsSummaryPath}} {
		if !r.ok {
			return nil, fmt.Errorf("dashboard: GET %s: Ray answered result=false: %s", r.path, summarizeBody(c.answerText(r.msg)))
		}
	}
	var rows []NodeState
	if nodes.Data.Result != nil {
		rows = nodes.Data.Result.Result
	}
	var lm *LoadMetricsReport
	if cs := status.Data.ClusterStatus; cs != nil {
		lm = cs.LoadMetricsReport
	}
	out := BuildCapacity(rows, lm)
	if lm == nil {
		// No autoscaler v1 status: autoscaler v2 (or none). The text
		// `ray status` prints still carries v2's demand.
		d, known, err := c.textCapacityDemand(ctx)
		if err != nil {
			return nil, err
		}
		out.Pending, out.DemandKnown = d, known
	}
	out.FetchedAt = time.Now()
	if actors.Data.Result != nil {
		out.Actors = aliveActors(actors.Data.Result.Result)
	}
	for _, j := range jobs {
		if j.Status == JobRunning {
			out.RunningJobs++
		}
	}
	return out, nil
}

// aliveActors counts the ALIVE actors of the summary (Capacity asks for
// ALIVE only; counting the state keeps it right if a filter were ignored).
func aliveActors(s StateSummary[ActorSummaries]) int {
	n := 0
	for _, sum := range s.NodeIDToSummary {
		for _, cls := range sum.Summary {
			n += cls.StateCounts[ActorAlive]
		}
	}
	return n
}

// BuildCapacity is the pure part of Client.Capacity: the nodes of the state
// API joined with the autoscaler's load metrics (lm nil: no autoscaler v1
// status; demand unknown, usage unknown). RunningJobs, Actors and FetchedAt
// are left to the caller.
func BuildCapacity(rows []NodeState, lm *LoadMetricsReport) *Capacity {
	out := &Capacity{Total: Resources{}, Used: Resources{}, DemandKnown: lm != nil}
	for _, r := range rows {
		n := RayNode{ID: r.NodeID, IP: r.NodeIP, Alive: r.State == NodeAlive, Head: r.IsHeadNode, Total: CleanResources(r.ResourcesTotal)}
		if lm != nil {
			if u, ok := lm.UsageByNode[r.NodeID]; ok {
				n.Used = usedOf(u)
			}
			if ms, ok := lm.IdleTimeMap[r.NodeID]; ok && n.Alive {
				n.IdleFor, n.IdleKnown = time.Duration(max(ms, 0))*time.Millisecond, true
				n.Idle = n.IdleFor > 0
			}
		}
		if n.Alive {
			out.Total.Add(n.Total, 1)
			out.Used.Add(n.Used, 1)
		}
		out.Nodes = append(out.Nodes, n)
	}
	sort.SliceStable(out.Nodes, func(i, j int) bool {
		a, b := out.Nodes[i], out.Nodes[j]
		if a.Head != b.Head {
			return a.Head
		}
		if a.IP != b.IP {
			return a.IP < b.IP
		}
		return a.ID < b.ID
	})
	if lm == nil {
		return out
	}
	if len(lm.UsageByNode) == 0 && len(lm.Usage) > 0 {
		out.Used = usedOf(lm.Usage) // an older Ray: only the cluster's sum
	}
	var d demands
	for _, dc := range lm.ResourceDemand {
		d.add(dc.Bundle, dc.Count)
	}
	for _, dc := range lm.RequestDemand {
		d.add(dc.Bundle, dc.Count)
	}
	for _, pg := range lm.PGDemand {
		for _, b := range pg.PG.Bundles {
			d.add(b.Bundle, b.Count*pg.Count)
		}
	}
	out.Pending = d.list
	return out
}

func usedOf(u map[string][2]float64) Resources {
	m := make(map[string]float64, len(u))
	for k, v := range u {
		m[k] = v[0]
	}
	return CleanResources(m)
}

// demands merges requests of equal shape.
type demands struct{ list []Demand }

func (d *demands) add(bundle map[string]float64, count float64) {
	shape := CleanResources(bundle)
	if len(shape) == 0 || count <= 0 {
		return
	}
	for i := range d.list {
		if d.list[i].Shape.Equal(shape) {
			d.list[i].Count += int(count)
			return
		}
	}
	d.list = append(d.list, Demand{Shape: shape, Count: int(count)})
}

// camelNames undoes to_google_style's camelCasing of Ray's built-in
// resource names where they are dict keys (see capacity_wire.go).
var camelNames = map[string]string{"objectStoreMemory": "object_store_memory"}

// CleanResources returns Ray's resources without the node-specific ones
// ("node:<ip>", "node:__internal_head__", "accelerator_type:<type>") and
// with zero amounts dropped, the built-in names as Ray spells them.
func CleanResources(in map[string]float64) Resources {
	out := Resources{}
	for k, v := range in {
		if strings.HasPrefix(k, "node:") || strings.HasPrefix(k, "accelerator_type:") || strings.HasPrefix(k, "acceleratorType:") {
			continue
		}
		if n, ok := camelNames[k]; ok {
			k = n
		}
		if v != 0 {
			out[k] += v
		}
	}
	return out
}

// Add adds n times other to r.
func (r Resources) Add(other Resources, n float64) {
	for k, v := range other {
		r[k] += v * n
	}
}

// Equal reports whether r and other have the same amounts (absent = 0).
func (r Resources) Equal(other Resources) bool {
	for k, v := range r {
		if other[k] != v {
			return false
		}
	}
	for k, v := range other {
		if r[k] != v {
			return false
		}
	}
	return true
}

// Fits reports whether one request of shape fits into avail: every resource
// the shape asks for is there in that amount.
func (r Resources) Fits(avail Resources) bool {
	for k, v := range r {
		if v > 0 && avail[k] < v-1e-9 {
			return false
		}
	}
	return true
}

// SplitInfeasible moves the Pending demands that fit no node type's
// resources (one pod of a worker group, or the head) into Infeasible, as
// the autoscaler would call them: no node it can add would ever hold them.
// nodeTypes are the per-pod resources of the cluster's groups; alive nodes'
// totals count as node types too. Calling it again with other node types
// starts from all demand.
func (c *Capacity) SplitInfeasible(nodeTypes []Resources) {
	all := append(c.Pending, c.Infeasible...)
	c.Pending, c.Infeasible = nil, nil
	for _, d := range all {
		if d.Shape.fitsAny(nodeTypes) || d.Shape.fitsAnyNode(c.Nodes) {
			c.Pending = append(c.Pending, d)
		} else {
			c.Infeasible = append(c.Infeasible, d)
		}
	}
}

func (r Resources) fitsAny(types []Resources) bool {
	for _, t := range types {
		if r.Fits(t) {
			return true
		}
	}
	return false
}

func (r Resources) fitsAnyNode(nodes []RayNode) bool {
	for _, n := range nodes {
		if n.Alive && r.Fits(n.Total) {
			return true
		}
	}
	return false
}

// String is the shape as `ray status` prints it, sorted: {CPU: 1, GPU: 2}.
func (r Resources) String() string {
	keys := make([]string, 0, len(r))
	for k := range r {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(k + ": " + strconv.FormatFloat(r[k], 'g', -1, 64))
	}
	b.WriteByte('}')
	return b.String()
}
