package why

import (
	"math"
	"strconv"
	"strings"

	"github.com/raydar/raydar/rayapi/dashboard"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// Actions of a GroupPlan.
const (
	PlanUp      = "up"
	PlanDown    = "down"
	PlanNothing = "nothing"
)

// GroupPlan is what Ray's autoscaler would do next with one worker group,
// as far as the spec, the pods and Ray's view (Capacity) tell: grow it for
// pending demand its pods would hold, remove the workers workersToDelete
// names or that Ray reports idle, or nothing (at maxReplicas, autoscaling
// off, no demand).
type GroupPlan struct {
	Group  string
	Action string // PlanUp, PlanDown, PlanNothing
	// N is how many pods (up, down); 0 for nothing.
	N int
	// Why says it in words: "3 tasks want {GPU: 1}, 4 fit a pod".
	Why string
}

// String is the plan in words: "up 1: 3 tasks want {GPU: 1}, 4 fit a
// pod", "nothing: at maxReplicas 2".
func (p GroupPlan) String() string {
	if p.Action == PlanNothing {
		return p.Action + ": " + p.Why
	}
	return p.Action + " " + strconv.Itoa(p.N) + ": " + p.Why
}

// GroupPlans is, per worker group in spec order, what the autoscaler
// would do next. Ray's pending demand goes, shape by shape, to the first
// group whose pods hold it and that may grow (Ray's scheduler also
// weighs utilisation; with one fitting group, as most clusters have, it is
// the same choice); Ray's demand says nothing when Capacity is nil or does
// not know it. Idle workers are counted from Ray's nodes: how long they
// have been idle is not in Ray's summary, so the plan says they go once
// idle for idleTimeoutSeconds.
func GroupPlans(in ClusterInput) []GroupPlan {
	rc := in.Cluster
	if rc == nil || len(rc.Spec.WorkerGroupSpecs) == 0 {
		return nil
	}
	offers := groupOffers(rc, in.Pods)[1:] // worker groups, in spec order
	auto := rc.Spec.IsAutoscalingEnabled()
	cp := in.Capacity
	known := cp != nil && cp.DemandKnown
	// Ray's pending demand, per group that takes it.
	type want struct {
		pods   int
		demand []string
	}
	wants := make([]want, len(offers))
	blocked := make([][]string, len(offers)) // demand a group at max would hold
	if known && auto {
		for _, d := range cp.Pending {
			var atMax []int
			taken := false
			for _, i := range preferred(offers, d.Shape) {
				o := &offers[i]
				if !o.fits(d.Shape) {
					continue
				}
				if o.stuck != "" {
					atMax = append(atMax, i)
					continue
				}
				if per, ok := perPod(o, d.Shape); ok {
					wants[i].pods += (d.Count + per - 1) / per
					wants[i].demand = append(wants[i].demand, demandWords(d)+", "+plural(per, "fits", "fit")+" a pod")
				} else { // at most one pod per task
					wants[i].pods += d.Count
					wants[i].demand = append(wants[i].demand, demandWords(d)+" (how many fit a pod is not known)")
				}
				taken = true
				break
			}
			if !taken {
				for _, i := range atMax {
					blocked[i] = append(blocked[i], demandWords(d))
				}
			}
		}
	}
	idle := idleWorkers(in)
	out := make([]GroupPlan, 0, len(offers))
	for i := range rc.Spec.WorkerGroupSpecs {
		g := &rc.Spec.WorkerGroupSpecs[i]
		o := &offers[i]
		p := GroupPlan{Group: g.GroupName, Action: PlanNothing}
		gone := deleting(g, in)
		switch {
		case g.IsSuspended():
			p.Why = "the group is suspended"
		case len(gone) > 0:
			p.Action, p.N = PlanDown, len(gone)
			p.Why = "workersToDelete names " + strings.Join(gone, ", ")
		case int(g.DesiredPods()) > o.pods:
			p.Action, p.N = PlanUp, int(g.DesiredPods())-o.pods
			p.Why = "replicas " + itoa(int64(g.DesiredReplicas())) + " asked, " + plural(o.pods, "pod", "pods") + " so far"
		case !auto:
			p.Why = "autoscaling off"
		case wants[i].pods > 0:
			room := int(o.maxPods) - o.pods
			p.Action, p.N = PlanUp, min(wants[i].pods, room)
			p.Why = strings.Join(wants[i].demand, "; ")
			if wants[i].pods > room {
				p.Why += " (capped by maxReplicas " + itoa(int64(g.Max())) + ")"
			}
		case len(blocked[i]) > 0:
			p.Why = "at maxReplicas " + itoa(int64(g.Max())) + "; " + strings.Join(blocked[i], "; ") + " waiting"
		case idle[g.GroupName] > 0 && o.pods > int(g.MinPods()):
			p.Action, p.N = PlanDown, min(idle[g.GroupName], o.pods-int(g.MinPods()))
			p.Why = plural(idle[g.GroupName], "idle worker", "idle workers") + ", removed once idle " +
				itoa(int64(idleTimeout(rc, g))) + "s (idleTimeoutSeconds), down to minReplicas " + itoa(int64(g.Min()))
		case !known:
			p.Why = "Ray's demand unknown"
		case o.pods >= int(o.maxPods):
			p.Why = "no demand; at maxReplicas " + itoa(int64(g.Max()))
		default:
			p.Why = "no demand for it"
		}
		out = append(out, p)
	}
	return out
}

// preferred orders the groups for a shape as Ray's scheduler scores them
// where it matters most: a shape that asks no GPU goes to groups without
// GPUs first (python/ray/autoscaler/v2/scheduler.py, gpu_ok), then spec
// order.
func preferred(offers []offer, shape dashboard.Resources) []int {
	var first, last []int
	for i := range offers {
		if shape[rayGPU] <= 0 && offers[i].res[rayGPU] > 0 {
			last = append(last, i)
		} else {
			first = append(first, i)
		}
	}
	return append(first, last...)
}

// perPod: how many of a shape one pod of the group holds (at least 1);
// ok false when none of the shape's resources is known per pod (CPUs
// and memory from the machine, which raydar cannot see).
func perPod(o *offer, shape dashboard.Resources) (int, bool) {
	n := math.MaxInt32
	for k, need := range shape {
		if need <= 0 {
			continue
		}
		if v, known := o.has(k); known {
			n = min(n, int(v/need))
		}
	}
	if n == math.MaxInt32 {
		return 0, false
	}
	return max(n, 1), true
}

// deleting: the pods of the group's workersToDelete that still exist.
func deleting(g *rayv1.WorkerGroupSpec, in ClusterInput) []string {
	var out []string
	for _, w := range g.ScaleStrategy.WorkersToDelete {
		for _, p := range in.Pods {
			if p.Name == w && p.DeletionTimestamp == nil {
				out = append(out, w)
				break
			}
		}
	}
	return out
}

// idleWorkers counts, per group, the alive worker pods Ray reports idle.
func idleWorkers(in ClusterInput) map[string]int {
	out := map[string]int{}
	if in.Capacity == nil {
		return out
	}
	byName, byIP := map[string]string{}, map[string]string{}
	for _, p := range in.Pods {
		if head, g := podGroup(p); !head && p.DeletionTimestamp == nil {
			byName[p.Name] = g
			if p.Status.PodIP != "" {
				byIP[p.Status.PodIP] = g
			}
		}
	}
	for _, n := range in.Capacity.Nodes {
		g, ok := byName[n.Pod]
		if n.Pod == "" { // not mapped by the caller: by IP
			g, ok = byIP[n.IP]
		}
		if ok && n.Alive && n.Idle && !n.Head {
			out[g]++
		}
	}
	return out
}

// idleTimeout is the group's idleTimeoutSeconds, else autoscalerOptions',
// else Ray's 60.
func idleTimeout(rc *rayv1.RayCluster, g *rayv1.WorkerGroupSpec) int32 {
	if g.IdleTimeoutSeconds != nil {
		return *g.IdleTimeoutSeconds
	}
	if o := rc.Spec.AutoscalerOptions; o != nil && o.IdleTimeoutSeconds != nil {
		return *o.IdleTimeoutSeconds
	}
	return rayv1.DefaultAutoscalerIdleTimeoutSeconds
}
