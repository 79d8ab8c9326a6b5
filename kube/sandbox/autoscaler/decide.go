package autoscaler

import (
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/raydar/raydar/rayapi/dashboard"
)

// The pure decision: Ray autoscaler v2's ResourceDemandScheduler
// (python/ray/autoscaler/v2/scheduler.py) for the cases a KubeRay cluster
// meets, without placement groups, label selectors, cluster resource
// constraints (request_resources) and in-place resizing:
//
//  1. enforce each node type's min_worker_nodes (launch the missing ones);
//  2. enforce each node type's max_worker_nodes (terminate the extra ones,
//     Ray's termination order: not running Ray first, then the longest
//     idle, then the least used);
//  3. schedule the pending resource requests, biggest first, on the
//     existing nodes (pending ones count with their type's full
//     resources), then on new nodes of the types still below their max,
//     each time on the node with the best utilization score;
//  4. terminate the workers idle for longer than their idle timeout that
//     no request was scheduled on, keeping min_worker_nodes.
//
// Then the launcher (v2 instance_manager/subscribers/instance_launcher.py)
// rate-limits each type's launch: at most
// max(1, ceil(upscaling_speed × the type's existing nodes)), so a group
// grows from zero by one node first, and at most MaxConcurrentLaunches
// over all types.

// NodeType is one worker group as the autoscaler sees it (Ray's
// NodeTypeConfig).
type NodeType struct {
	Name      string
	Resources dashboard.Resources // what one pod offers Ray
	Min, Max  int
	// IdleTimeout overrides Request.IdleTimeout for this type when set
	// (workerGroupSpecs[].idleTimeoutSeconds).
	IdleTimeout *time.Duration
}

// Node is one node of the cluster: a pod, running Ray or not yet.
type Node struct {
	// ID is the cloud instance ID: the pod's name, what workersToDelete names.
	ID   string
	Type string
	Head bool
	// RayRunning: Ray runs on it (the head reports it); else it is pending
	// (the pod exists, Ray not yet up) and offers its type's resources.
	RayRunning bool
	// Total and Available are Ray's view of a running node.
	Total, Available dashboard.Resources
	// Idle is how long Ray has seen the node idle (0: busy).
	Idle time.Duration
}

// Request is one decision's input (Ray's SchedulingRequest).
type Request struct {
	Types []NodeType
	Nodes []Node
	// Demand is the pending and infeasible resource requests, one entry per
	// request (Ray's ungrouped ResourceRequestByCount).
	Demand []dashboard.Resources
	// IdleTimeout is the cluster's idle timeout (autoscalerOptions
	// idleTimeoutSeconds, Ray's default 60 s).
	IdleTimeout time.Duration
	// UpscalingSpeed: 1 for upscalingMode Conservative, 1000 otherwise
	// (KubeRay's autoscaling config). 0 means no rate limit.
	UpscalingSpeed float64
	// MaxConcurrentLaunches bounds the launches of one decision over all
	// types (Ray's AUTOSCALER_MAX_CONCURRENT_LAUNCHES, 100). 0: no bound.
	MaxConcurrentLaunches int
}

// Cause is why a node is to be terminated (Ray's TerminationRequest.Cause).
type Cause string

const (
	// CauseIdle is the cause of a worker idle longer than its idle timeout.
	CauseIdle Cause = "IDLE"
	// CauseMaxNodesOfType is the cause of a worker over its group's maxReplicas.
	CauseMaxNodesOfType Cause = "MAX_NUM_NODE_PER_TYPE"
)

// Termination is one node to remove.
type Termination struct {
	Node   string
	Type   string
	Cause  Cause
	Detail string
}

// Decision is one decision's output (Ray's SchedulingReply).
type Decision struct {
	// Launch is the number of new nodes per type, after rate limiting.
	Launch map[string]int
	// Wanted is the launch before rate limiting (what the demand asks for).
	Wanted map[string]int
	// Terminate lists the nodes to remove.
	Terminate []Termination
	// Infeasible is the demand no node, existing or addable, can hold.
	Infeasible []dashboard.Resources
}

// DefaultIdleTimeout is Ray's idle timeout when the RayCluster sets none
// (KubeRay's autoscaling config: idle_timeout_minutes 1.0).
const DefaultIdleTimeout = 60 * time.Second

// DefaultMaxConcurrentLaunches is Ray's AUTOSCALER_MAX_CONCURRENT_LAUNCHES.
const DefaultMaxConcurrentLaunches = 100

type nodeStatus int

const (
	schedulable nodeStatus = iota
	toLaunch
	toTerminate
)

// simNode is Ray's SchedulingNode.
type simNode struct {
	Node
	status    nodeStatus
	avail     dashboard.Resources
	scheduled []dashboard.Resources
	term      *Termination
}

func (n *simNode) clone() *simNode {
	c := *n
	c.avail = copyRes(n.avail)
	c.scheduled = slices.Clone(n.scheduled)
	return &c
}

// Decide computes what Ray's autoscaler v2 would do now.
func Decide(req Request) Decision {
	types := map[string]NodeType{}
	for _, t := range req.Types {
		types[t.Name] = t
	}
	var nodes []*simNode
	for _, n := range req.Nodes {
		sn := &simNode{Node: n, status: schedulable}
		t, known := types[n.Type]
		switch {
		case n.RayRunning:
			sn.avail = copyRes(n.Available)
			sn.Total = copyRes(n.Total)
		case n.Head:
			continue // a head not running Ray yet is not in the picture
		case known:
			sn.Total, sn.avail = copyRes(t.Resources), copyRes(t.Resources)
		default:
			continue // a pod of a group the spec no longer has: KubeRay disables the launch config check
		}
		nodes = append(nodes, sn)
	}

	// 1. min_worker_nodes.
	shape := countByType(nodes)
	for _, t := range req.Types {
		for i := shape[t.Name]; i < t.Min; i++ {
			nodes = append(nodes, newNode(t))
		}
	}
	// 2. max_worker_nodes.
	byType := map[string][]*simNode{}
	for _, n := range nodes {
		if !n.Head && n.status != toTerminate {
			byType[n.Type] = append(byType[n.Type], n)
		}
	}
	for name, list := range byType {
		t, ok := types[name]
		if !ok || len(list) <= t.Max {
			continue
		}
		sort.SliceStable(list, func(i, j int) bool { return terminationLess(list[i], list[j]) })
		for _, n := range list[:len(list)-t.Max] {
			n.status = toTerminate
			n.term = &Termination{Node: n.ID, Type: n.Type, Cause: CauseMaxNodesOfType, Detail: "more workers than maxReplicas"}
		}
	}
	// 3. the resource requests.
	nodes, infeasible := schedule(nodes, req.Demand, req.Types)
	// 4. idle termination.
	shape = countByType(nodes)
	terminated := map[string]int{}
	for _, n := range nodes {
		if n.status != schedulable || n.Head || !n.RayRunning {
			continue
		}
		timeout := req.IdleTimeout
		t, known := types[n.Type]
		if known && t.IdleTimeout != nil {
			timeout = *t.IdleTimeout
		}
		if n.Idle <= timeout || len(n.scheduled) > 0 {
			continue
		}
		if shape[n.Type]-terminated[n.Type] <= t.Min {
			continue
		}
		terminated[n.Type]++
		n.status = toTerminate
		n.term = &Termination{Node: n.ID, Type: n.Type, Cause: CauseIdle,
			Detail: "idle for " + n.Idle.Truncate(time.Second).String() + " > timeout " + timeout.String()}
	}

	d := Decision{Launch: map[string]int{}, Wanted: map[string]int{}, Infeasible: infeasible}
	allocated := map[string]int{} // the type's pods, running Ray or not
	for _, n := range nodes {
		switch {
		case n.status == toLaunch:
			d.Wanted[n.Type]++
			continue
		case n.term != nil:
			d.Terminate = append(d.Terminate, *n.term)
		}
		if !n.Head {
			allocated[n.Type]++
		}
	}
	sort.Slice(d.Terminate, func(i, j int) bool { return d.Terminate[i].Node < d.Terminate[j].Node })
	d.Launch = limitLaunch(d.Wanted, allocated, req.UpscalingSpeed, req.MaxConcurrentLaunches, req.Types)
	return d
}

// limitLaunch is the instance launcher's rate limit
// (_compute_num_to_launch_for_type), types in their spec order.
func limitLaunch(wanted, allocated map[string]int, speed float64, maxConcurrent int, types []NodeType) map[string]int {
	out := map[string]int{}
	total := 0
	for _, t := range types {
		n := wanted[t.Name]
		if n == 0 {
			continue
		}
		if speed > 0 {
			n = min(n, max(1, int(math.Ceil(speed*float64(allocated[t.Name])))))
		}
		if maxConcurrent > 0 {
			n = min(n, maxConcurrent-total)
		}
		if n > 0 {
			out[t.Name] = n
			total += n
		}
	}
	return out
}

func newNode(t NodeType) *simNode {
	return &simNode{Node: Node{Type: t.Name, Total: copyRes(t.Resources)}, status: toLaunch, avail: copyRes(t.Resources)}
}

func copyRes(r dashboard.Resources) dashboard.Resources {
	out := dashboard.Resources{}
	out.Add(r, 1)
	return out
}

func countByType(nodes []*simNode) map[string]int {
	m := map[string]int{}
	for _, n := range nodes {
		if n.status != toTerminate && !n.Head {
			m[n.Type]++
		}
	}
	return m
}

// terminationLess is Ray's _sort_nodes_for_termination: nodes not running
// Ray first, then the longest idle, then the lowest average utilization.
func terminationLess(a, b *simNode) bool {
	if a.RayRunning != b.RayRunning {
		return !a.RayRunning
	}
	if a.Idle != b.Idle {
		return a.Idle > b.Idle
	}
	return avgUtil(a) < avgUtil(b)
}

func avgUtil(n *simNode) float64 {
	sum, k := 0.0, 0
	for r, total := range n.Total {
		if total <= 0 {
			continue
		}
		sum += (total - n.avail[r]) / total
		k++
	}
	if k == 0 {
		return 0
	}
	return sum / float64(k)
}

// schedule is Ray's _try_schedule: the requests sorted biggest first, on
// the existing nodes by best score, then on new nodes of the types still
// below their max.
func schedule(nodes []*simNode, demand []dashboard.Resources, types []NodeType) ([]*simNode, []dashboard.Resources) {
	reqs := make([]dashboard.Resources, 0, len(demand))
	for _, r := range demand {
		if len(r) > 0 {
			reqs = append(reqs, r)
		}
	}
	sort.SliceStable(reqs, func(i, j int) bool { return requestGreater(reqs[i], reqs[j]) })

	available := map[string]int{}
	existing := countAll(nodes)
	for _, t := range types {
		available[t.Name] = t.Max - existing[t.Name]
	}
	var target, candidates []*simNode
	for _, n := range nodes {
		if n.status == toTerminate {
			target = append(target, n)
		} else {
			candidates = append(candidates, n)
		}
	}
	var chosen []*simNode
	chosen, reqs, candidates = schedAll(reqs, candidates, nil)
	target = append(append(target, chosen...), candidates...)

	var pools []*simNode
	byName := map[string]NodeType{}
	for _, t := range types {
		byName[t.Name] = t
		if available[t.Name] > 0 {
			pools = append(pools, newNode(t))
		}
	}
	chosen, reqs, _ = schedAll(reqs, pools, func(best *simNode) *simNode {
		available[best.Type]--
		if available[best.Type] > 0 {
			return newNode(byName[best.Type]) // the next node of that type
		}
		return nil
	})
	return append(target, chosen...), reqs
}

// schedAll is _try_schedule's loop over a pool: while requests remain, the
// best node of the pool (schedBest) takes what it can and leaves the pool;
// refill, when set, may give the pool a node in its stead. It returns the
// chosen nodes in order, the requests left and the pool left.
func schedAll(reqs []dashboard.Resources, pool []*simNode, refill func(best *simNode) *simNode) (chosen []*simNode, _ []dashboard.Resources, _ []*simNode) {
	for len(reqs) > 0 && len(pool) > 0 {
		var best *simNode
		best, reqs, pool = schedBest(reqs, pool)
		if best == nil {
			break
		}
		chosen = append(chosen, best)
		if refill != nil {
			if n := refill(best); n != nil {
				pool = append(pool, n)
			}
		}
	}
	return chosen, reqs, pool
}

// countAll counts every node, terminating ones included, by type (Ray's
// _compute_available_node_types counts all the context's nodes).
func countAll(nodes []*simNode) map[string]int {
	m := map[string]int{}
	for _, n := range nodes {
		if !n.Head {
			m[n.Type]++
		}
	}
	return m
}

// requestGreater orders requests as Ray's _sort_resource_request, reversed:
// more resource kinds first, then the larger sum, then by the sorted items.
func requestGreater(a, b dashboard.Resources) bool {
	if len(a) != len(b) {
		return len(a) > len(b)
	}
	sa, sb := sum(a), sum(b)
	if sa != sb {
		return sa > sb
	}
	return itemsKey(a) > itemsKey(b)
}

func sum(r dashboard.Resources) float64 {
	s := 0.0
	for _, v := range r {
		s += v
	}
	return s
}

func itemsKey(r dashboard.Resources) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(r)) {
		b.WriteString(k)
		b.WriteByte('\x00')
	}
	return b.String()
}

// schedBest is Ray's _sched_best_node: try every node (a copy), keep the
// one with the best score among those that took at least one request.
func schedBest(reqs []dashboard.Resources, nodes []*simNode) (*simNode, []dashboard.Resources, []*simNode) {
	bestIdx := -1
	var best *simNode
	var bestRest []dashboard.Resources
	var bestScore score
	for i, n := range nodes {
		c := n.clone()
		var rest []dashboard.Resources
		for _, r := range reqs {
			if r.Fits(c.avail) {
				c.avail.Add(r, -1)
				c.scheduled = append(c.scheduled, r)
			} else {
				rest = append(rest, r)
			}
		}
		if len(rest) == len(reqs) {
			continue
		}
		s := scoreOf(c)
		if bestIdx < 0 || bestScore.less(s) {
			bestIdx, best, bestRest, bestScore = i, c, rest, s
		}
	}
	if bestIdx < 0 {
		return nil, reqs, nodes
	}
	rest := append(slices.Clone(nodes[:bestIdx]), nodes[bestIdx+1:]...)
	return best, bestRest, rest
}

// score is Ray's UtilizationScore without the label term: (gpu ok, number
// of the scheduled resource kinds the node has, min utilization, mean
// utilization), utilization of each resource weighted as v × util³.
type score struct {
	gpuOK    bool
	matching int
	minUtil  float64
	meanUtil float64
}

func (s score) less(o score) bool {
	if s.gpuOK != o.gpuOK {
		return !s.gpuOK
	}
	if s.matching != o.matching {
		return s.matching < o.matching
	}
	if s.minUtil != o.minUtil {
		return s.minUtil < o.minUtil
	}
	return s.meanUtil < o.meanUtil
}

func scoreOf(n *simNode) score {
	kinds := map[string]bool{}
	anyGPU := false
	for _, r := range n.scheduled {
		for k, v := range r {
			if v > 0 {
				kinds[k] = true
			}
		}
		if _, ok := r["GPU"]; ok {
			anyGPU = true
		}
	}
	s := score{gpuOK: !(n.Total["GPU"] > 0 && !anyGPU)}
	for k := range kinds {
		if _, ok := n.Total[k]; ok {
			s.matching++
		}
	}
	var utils []float64
	for k, v := range n.Total {
		if v == 0 {
			continue
		}
		if a, ok := n.avail[k]; ok {
			u := (v - a) / v
			utils = append(utils, v*u*u*u)
		}
	}
	if len(utils) > 0 {
		s.minUtil = slices.Min(utils)
		total := 0.0
		for _, u := range utils {
			total += u
		}
		s.meanUtil = total / float64(len(utils))
	}
	return s
}
