package rayhead

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/raydar/raydar/rayapi/dashboard"
)

// The simulated cluster's resources: the nodes the head is told about
// (SetNodes: one per Ready pod of the cluster), and the placement of what
// asks for resources on them — each non-terminal job's entrypoint
// reservation and each Serve replica's ray_actor_options. Placement is
// first fit in a stable order (running jobs, then Serve applications by
// deploy time, then pending jobs by submission), recomputed under h.mu on
// every change. A job whose reservation does not fit stays PENDING; a
// Serve application whose replicas do not all fit stays DEPLOYING; what
// does not fit is the autoscaler's resource demand in /api/cluster_status.
// Until SetNodes is called the head knows no resources and places
// everything (the standalone head of the tests).

// maxDeadNodes bounds the dead nodes reported, as Ray's
// MAX_DEAD_NODES_TO_CACHE does.
const maxDeadNodes = 100

// Node is one Ray node of the simulated cluster.
type Node struct {
	// Name identifies the node across SetNodes calls (the pod's UID); the
	// Ray node ID is derived from it (the head's is the head's own).
	Name  string
	IP    string
	Head  bool
	Group string // the worker group, or "headgroup"
	Total dashboard.Resources
}

// simNode is a node with its placement. Guarded by Head.mu.
type simNode struct {
	Node
	id        string
	alive     bool
	used      dashboard.Resources
	idleSince time.Time // zero while something uses it
}

// capacityState is the head's resource view. Guarded by Head.mu.
type capacityState struct {
	known  bool
	nodes  []*simNode // alive first (in SetNodes order), then dead, newest first
	demand []dashboard.Demand
}

// SetNodes replaces the cluster's alive nodes; nodes no longer listed
// become DEAD. Placement is recomputed: pending jobs may start, Serve
// applications may turn RUNNING (or back to DEPLOYING).
func (h *Head) SetNodes(nodes []Node) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c := &h.cap
	c.known = true
	now := time.Now()
	old := map[string]*simNode{}
	for _, n := range c.nodes {
		old[n.Name] = n
	}
	var alive, dead []*simNode
	seen := map[string]bool{}
	for _, n := range nodes {
		seen[n.Name] = true
		sn := old[n.Name]
		if sn == nil || !sn.alive {
			sn = &simNode{idleSince: now}
			sn.id = nodeIDFor(n.Name)
		}
		sn.Node = n
		sn.Total = dashboard.CleanResources(n.Total)
		sn.alive = true
		if n.Head {
			sn.id = h.node
		}
		alive = append(alive, sn)
	}
	for _, n := range c.nodes {
		if seen[n.Name] {
			continue
		}
		if n.alive {
			n.alive, n.used = false, nil
		}
		if len(dead) < maxDeadNodes {
			dead = append(dead, n)
		}
	}
	c.nodes = append(alive, dead...)
	h.placeLocked()
}

// nodeIDFor is a stable 56-hex-digit Ray node ID for a node name.
func nodeIDFor(name string) string {
	sum := sha256.Sum256([]byte(name))
	return hex.EncodeToString(sum[:28])
}

// jobShape is what a job's entrypoint reserves.
func jobShape(r dashboard.EntrypointReservation) dashboard.Resources {
	s := dashboard.Resources{}
	for k, v := range r.EntrypointResources {
		s[k] = v
	}
	if r.EntrypointNumCPUs > 0 {
		s["CPU"] = r.EntrypointNumCPUs
	}
	if r.EntrypointNumGPUs > 0 {
		s["GPU"] = r.EntrypointNumGPUs
	}
	if r.EntrypointMemory > 0 {
		s["memory"] = float64(r.EntrypointMemory)
	}
	return dashboard.CleanResources(s)
}

// placeLocked recomputes the placement. h.mu must be held.
func (h *Head) placeLocked() {
	c := &h.cap
	free := map[*simNode]dashboard.Resources{}
	for _, n := range c.nodes {
		if n.alive {
			n.used = dashboard.Resources{}
			f := dashboard.Resources{}
			f.Add(n.Total, 1)
			free[n] = f
		}
	}
	var unplaced demandList
	place := func(shape dashboard.Resources) bool {
		if len(shape) == 0 {
			return true
		}
		if !c.known {
			return true
		}
		for _, n := range c.nodes {
			if n.alive && shape.Fits(free[n]) {
				free[n].Add(shape, -1)
				n.used.Add(shape, 1)
				return true
			}
		}
		unplaced.add(shape, 1)
		return false
	}
	ids := make([]string, 0, len(h.jobs))
	for id := range h.jobs {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(a, b int) bool {
		ja, jb := h.jobs[ids[a]], h.jobs[ids[b]]
		if ja.info.StartTime != jb.info.StartTime {
			return ja.info.StartTime < jb.info.StartTime
		}
		return ids[a] < ids[b]
	})
	var pending []*job
	var waiting []*task // tasks not placed yet, in submission order
	for _, id := range ids {
		j := h.jobs[id]
		if j.info.Status.IsTerminal() {
			continue
		}
		if j.isPlaced() {
			place(jobShape(j.info.EntrypointReservation)) // keeps its reservation
		} else {
			pending = append(pending, j)
		}
		for _, t := range j.tasks {
			switch {
			case t.done:
			case t.placed:
				place(t.shape) // a running task keeps its resources
			default:
				waiting = append(waiting, t)
			}
		}
	}
	apps := make([]*serveApp, 0, len(h.serve.apps))
	for _, a := range h.serve.apps {
		apps = append(apps, a)
	}
	sort.Slice(apps, func(i, j int) bool {
		if !apps[i].deployedAt.Equal(apps[j].deployedAt) {
			return apps[i].deployedAt.Before(apps[j].deployedAt)
		}
		return apps[i].name < apps[j].name
	})
	for _, a := range apps {
		if a.status == dashboard.AppDeployFailed || a.status == dashboard.AppDeleting {
			continue
		}
		all := true
		for _, d := range a.deployments {
			for range d.replicas {
				if !place(d.shape) {
					all = false
				}
			}
		}
		a.placed = all
		switch {
		case all && a.status == dashboard.AppDeploying && a.timer == nil:
			a.status, a.message = dashboard.AppRunning, "" // the deploy delay is over; replicas placed now
		case !all && a.status == dashboard.AppRunning:
			a.status, a.message = dashboard.AppDeploying, msgReplicasUnplaced
		case !all && a.status == dashboard.AppDeploying && a.timer == nil:
			a.message = msgReplicasUnplaced
		}
	}
	for _, j := range pending {
		if place(jobShape(j.info.EntrypointReservation)) {
			close(j.placed)
			logLine(j.envLog, "INFO", "runtime_env", "Successfully created runtime env for job %s; starting its driver", j.info.SubmissionID)
			logLine(h.raylet, "I", "raylet", "job_manager.cc:1] Starting the driver of job %s", j.info.SubmissionID)
		} else if !j.envWaitLogged {
			j.envWaitLogged = true
			logLine(j.envLog, "INFO", "runtime_env", "Waiting for resources before starting the driver of job %s: no alive node has %v free", j.info.SubmissionID, jobShape(j.info.EntrypointReservation))
		}
	}
	for _, t := range waiting {
		if place(t.shape) {
			h.taskPlacedLocked(t)
		}
	}
	now := time.Now()
	for _, n := range c.nodes {
		switch {
		case !n.alive:
		case len(dashboard.CleanResources(n.used)) > 0:
			n.idleSince = time.Time{}
		case n.idleSince.IsZero():
			n.idleSince = now
		}
	}
	c.demand = unplaced.list
}

// msgReplicasUnplaced is the message of an application whose replicas wait
// for resources (Serve's deployment message).
const msgReplicasUnplaced = "Deployment(s) have replicas that cannot be scheduled: the cluster has no node with the resources a replica's ray_actor_options ask for. Waiting for resources (the autoscaler may add nodes)."

type demandList struct{ list []dashboard.Demand }

func (d *demandList) add(shape dashboard.Resources, n int) {
	for i := range d.list {
		if d.list[i].Shape.Equal(shape) {
			d.list[i].Count += n
			return
		}
	}
	d.list = append(d.list, dashboard.Demand{Shape: shape, Count: n})
}

// googleKey is Ray's to_camel_case, which to_google_style applies to dict
// keys of /api/cluster_status, resource names included.
func googleKey(k string) string {
	parts := strings.Split(k, "_")
	for i := 1; i < len(parts); i++ {
		if parts[i] != "" {
			parts[i] = strings.ToUpper(parts[i][:1]) + strings.ToLower(parts[i][1:])
		}
	}
	return strings.Join(parts, "")
}

func usageOf(used, total dashboard.Resources) map[string][2]float64 {
	u := map[string][2]float64{}
	for k, v := range total {
		u[googleKey(k)] = [2]float64{used[k], v}
	}
	return u
}

func (h *Head) handleClusterStatus(w http.ResponseWriter, r *http.Request) {
	if r.URL.Query().Get("format") == "1" {
		h.handleStatusText(w) // status_text.go
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	c := &h.cap
	lm := &dashboard.LoadMetricsReport{Usage: map[string][2]float64{}, ResourceDemand: []dashboard.DictCount{},
		PGDemand: []dashboard.PGDemand{}, RequestDemand: []dashboard.DictCount{}, NodeTypes: []dashboard.DictCount{},
		HeadIP: h.opts.NodeIP, UsageByNode: map[string]map[string][2]float64{}, NodeTypeMapping: map[string]string{}, IdleTimeMap: map[string]int64{}}
	used, total := dashboard.Resources{}, dashboard.Resources{}
	now := time.Now()
	for _, n := range c.nodes {
		if !n.alive {
			continue
		}
		used.Add(n.used, 1)
		total.Add(n.Total, 1)
		lm.UsageByNode[n.id] = usageOf(n.used, n.Total)
		lm.NodeTypeMapping[n.id] = n.Group
		if !n.idleSince.IsZero() {
			lm.IdleTimeMap[n.id] = max(1, now.Sub(n.idleSince).Milliseconds())
		} else {
			lm.IdleTimeMap[n.id] = 0
		}
		lm.NodeTypes = appendDictCount(lm.NodeTypes, n.Total)
	}
	lm.Usage = usageOf(used, total)
	for _, d := range c.demand {
		lm.ResourceDemand = append(lm.ResourceDemand, dashboard.DictCount{Bundle: d.Shape, Count: float64(d.Count)})
	}
	legacy := "Autoscaler status (simulated by the raydar sandbox)"
	writeJSON(w, http.StatusOK, dashboard.RestResponse[dashboard.ClusterStatusData]{Result: true, Msg: "Got cluster status.",
		Data: dashboard.ClusterStatusData{AutoscalingStatus: &legacy, ClusterStatus: &dashboard.AutoscalerStatus{
			Time: float64(now.UnixMilli()) / 1000, LoadMetricsReport: lm}}})
}

func appendDictCount(list []dashboard.DictCount, shape dashboard.Resources) []dashboard.DictCount {
	for i := range list {
		if dashboard.Resources(list[i].Bundle).Equal(shape) {
			list[i].Count++
			return list
		}
	}
	return append(list, dashboard.DictCount{Bundle: shape, Count: 1})
}

func (h *Head) handleStateNodes(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	defer h.mu.Unlock()
	var rows []dashboard.NodeState
	add := func(id, ip string, head, alive bool, total dashboard.Resources) {
		res := map[string]float64{"node:" + ip: 1}
		if head {
			res["node:__internal_head__"] = 1
		}
		for k, v := range total {
			res[k] = v
		}
		st := dashboard.NodeAlive
		if !alive {
			st = dashboard.NodeDead
		}
		rows = append(rows, dashboard.NodeState{NodeID: id, NodeIP: ip, IsHeadNode: head, State: st, NodeName: ip,
			ResourcesTotal: res, Labels: map[string]string{"ray.io/node-id": id}})
	}
	if !h.cap.known {
		add(h.node, h.opts.NodeIP, true, true, nil)
	}
	for _, n := range h.cap.nodes {
		add(n.id, n.IP, n.Head, n.alive, n.Total)
	}
	writeJSON(w, http.StatusOK, dashboard.RestResponse[dashboard.StateData[dashboard.ListAPIResponse[dashboard.NodeState]]]{
		Result: true, Data: dashboard.StateData[dashboard.ListAPIResponse[dashboard.NodeState]]{Result: &dashboard.ListAPIResponse[dashboard.NodeState]{
			Total: len(rows), NumAfterTruncation: len(rows), NumFiltered: len(rows), Result: rows}}})
}

// handleActorsSummary counts the actors a Ray cluster in this state would
// have: the Serve controller and proxy, one per placed replica, and one
// JobSupervisor per running job.
func (h *Head) handleActorsSummary(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	defer h.mu.Unlock()
	sum := dashboard.ActorSummaries{Summary: map[string]dashboard.ActorSummaryPerClass{}, SummaryBy: "class"}
	add := func(class string, n int) {
		if n <= 0 {
			return
		}
		s := sum.Summary[class]
		s.ClassName = class
		if s.StateCounts == nil {
			s.StateCounts = map[string]int{}
		}
		s.StateCounts[dashboard.ActorAlive] += n
		sum.Summary[class] = s
		sum.TotalActors += n
	}
	if h.serve.started {
		add("ServeController", 1)
		if h.serve.proxyUp {
			add("ProxyActor", 1)
		}
		for _, a := range h.serve.apps {
			if !a.placed && h.cap.known {
				continue
			}
			for _, d := range a.deployments {
				add("ServeReplica:"+a.name+":"+d.name, d.replicas)
			}
		}
	}
	for _, j := range h.jobs {
		if j.info.Status == dashboard.JobRunning {
			add("JobSupervisor", 1)
		}
	}
	type resp = dashboard.SummaryAPIResponse[dashboard.ActorSummaries]
	writeJSON(w, http.StatusOK, dashboard.RestResponse[dashboard.StateData[resp]]{Result: true, Data: dashboard.StateData[resp]{Result: &resp{
		Total: sum.TotalActors, NumAfterTruncation: sum.TotalActors, NumFiltered: sum.TotalActors,
		Result: dashboard.StateSummary[dashboard.ActorSummaries]{NodeIDToSummary: map[string]dashboard.ActorSummaries{"cluster": sum}}}}})
}

// AutoscalerState is what Ray's GCS tells the autoscaler
// (GetClusterResourceState): the alive nodes with their resources and idle
// times, and the resource requests nothing placed.
type AutoscalerState struct {
	// Known is false until SetNodes: the head knows no resources yet.
	Known  bool
	Nodes  []AutoscalerNode
	Demand []dashboard.Demand
}

// AutoscalerNode is one alive node in AutoscalerState.
type AutoscalerNode struct {
	Name             string // Node.Name: the pod's UID
	Group            string
	Head             bool
	Total, Available dashboard.Resources
	Idle             time.Duration // 0 while something uses the node
}

// AutoscalerState returns the cluster's resource state now.
func (h *Head) AutoscalerState() AutoscalerState {
	h.mu.Lock()
	defer h.mu.Unlock()
	c := &h.cap
	st := AutoscalerState{Known: c.known}
	now := time.Now()
	for _, n := range c.nodes {
		if !n.alive {
			continue
		}
		avail := dashboard.Resources{}
		avail.Add(n.Total, 1)
		avail.Add(n.used, -1)
		an := AutoscalerNode{Name: n.Name, Group: n.Group, Head: n.Head, Total: dashboard.CleanResources(n.Total), Available: avail}
		if !n.idleSince.IsZero() {
			an.Idle = now.Sub(n.idleSince)
		}
		st.Nodes = append(st.Nodes, an)
	}
	for _, d := range c.demand {
		st.Demand = append(st.Demand, dashboard.Demand{Shape: dashboard.CleanResources(d.Shape), Count: d.Count})
	}
	return st
}
