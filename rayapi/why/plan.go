package why

import (
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/duration"

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
// not know it. Idle workers are Ray's idle nodes: where Ray says for how
// long (RayNode.IdleKnown), the plan names the workers that go, longest
// idle first as Ray's autoscaler picks them, and in how long ("worker
// rc-gpu-a idle 35s of 60s: removed in 25s"); else it says they go once
// idle for idleTimeoutSeconds. A group above minReplicas whose workers Ray
// reports busy says the scale-down is held by them.
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
	idle, busy := idleWorkers(in)
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
		case len(idle[g.GroupName]) > 0 && o.pods > int(g.MinPods()):
			p.Action, p.N = PlanDown, min(len(idle[g.GroupName]), o.pods-int(g.MinPods()))
			p.Why = downWords(idle[g.GroupName], p.N, rc, g)
		case !known:
			p.Why = "Ray's demand unknown"
		case busy[g.GroupName] > 0 && o.pods > int(g.MinPods()):
			p.Why = "scale-down held: " + plural(busy[g.GroupName], "worker", "workers") + " busy (above minReplicas " + itoa(int64(g.Min())) + ")"
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

// idleWorker is an alive worker pod Ray reports idle; dur is how long at
// in.Now (Ray's idle time plus the time since the dashboard answered),
// known false when Ray does not say.
type idleWorker struct {
	pod   string
	dur   time.Duration
	known bool
}

// idleWorkers lists, per group, the alive worker pods Ray reports idle,
// longest idle first (those Ray's autoscaler removes first; unknown
// durations last), and counts those it reports busy (idle time known, 0).
func idleWorkers(in ClusterInput) (map[string][]idleWorker, map[string]int) {
	idle, busy := map[string][]idleWorker{}, map[string]int{}
	if in.Capacity == nil {
		return idle, busy
	}
	byName, byIP := map[string]string{}, map[string]string{}
	names := map[string]string{} // IP → pod
	for _, p := range in.Pods {
		if head, g := podGroup(p); !head && p.DeletionTimestamp == nil {
			byName[p.Name] = g
			if p.Status.PodIP != "" {
				byIP[p.Status.PodIP] = g
				names[p.Status.PodIP] = p.Name
			}
		}
	}
	var since time.Duration // from the dashboard's answer to in.Now
	if at := in.Capacity.FetchedAt; !at.IsZero() && !in.Now.IsZero() && in.Now.After(at) {
		since = in.Now.Sub(at)
	}
	for _, n := range in.Capacity.Nodes {
		g, ok := byName[n.Pod]
		pod := n.Pod
		if n.Pod == "" { // not mapped by the caller: by IP
			g, ok = byIP[n.IP]
			pod = names[n.IP]
		}
		if !ok || !n.Alive || n.Head {
			continue
		}
		switch {
		case n.Idle:
			w := idleWorker{pod: pod, known: n.IdleKnown}
			if n.IdleKnown {
				w.dur = n.IdleFor + since
			}
			idle[g] = append(idle[g], w)
		case n.IdleKnown:
			busy[g]++
		}
	}
	for _, ws := range idle {
		sort.SliceStable(ws, func(i, j int) bool {
			if ws[i].known != ws[j].known {
				return ws[i].known
			}
			return ws[i].dur > ws[j].dur
		})
	}
	return idle, busy
}

// downWords says which of a group's idle workers go (the first n) and
// when: "worker rc-gpu-a idle 35s of 60s: removed in 25s", "… idle 1m10s
// of 60s: due now"; without Ray's idle times, "2 idle workers, removed
// once idle 60s (idleTimeoutSeconds)". Workers kept for minReplicas are
// counted after.
func downWords(ws []idleWorker, n int, rc *rayv1.RayCluster, g *rayv1.WorkerGroupSpec) string {
	timeout := time.Duration(idleTimeout(rc, g)) * time.Second
	var parts []string
	allKnown := true
	for _, w := range ws[:n] {
		allKnown = allKnown && w.known
	}
	if !allKnown {
		return plural(len(ws), "idle worker", "idle workers") + ", removed once idle " + itoa(int64(timeout/time.Second)) +
			"s (idleTimeoutSeconds), down to minReplicas " + itoa(int64(g.Min()))
	}
	for _, w := range ws[:n] {
		line := "worker " + w.pod + " idle " + shortDur(w.dur) + " of " + shortDur(timeout)
		if left := timeout - w.dur; left > 0 {
			line += ": removed in " + shortDur(left)
		} else {
			line += ": due now"
		}
		parts = append(parts, line)
	}
	out := strings.Join(parts, "; ") + " (idleTimeoutSeconds)"
	if kept := len(ws) - n; kept > 0 {
		out += "; " + plural(kept, "idle worker", "idle workers") + " kept for minReplicas " + itoa(int64(g.Min()))
	}
	return out
}

// shortDur is a duration as kubectl writes ages: "35s", "90s", "3m10s"
// (at least 1s: a worker idle for 400ms is "idle 1s", not "idle 0s").
func shortDur(d time.Duration) string {
	return duration.HumanDuration(max(d, time.Second))
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
