package dashboard

import "time"

// Capacity is Ray's own view of a cluster's capacity, what `ray status`
// prints: its nodes with their resources, the demand the autoscaler cannot
// place yet, and how many jobs and actors run. It is derived from the
// dashboard's cluster-status and node endpoints (see [Client.Capacity]),
// never by listing every task or actor.
//
// Resource names are Ray's: "CPU", "GPU", "memory" and "object_store_memory"
// (bytes), "TPU", and custom resources; node-specific ones ("node:10.0.0.1",
// "accelerator_type:…") are dropped.
type Capacity struct {
	// FetchedAt is when the dashboard answered.
	FetchedAt time.Time `json:"fetchedAt"`
	// Nodes are Ray's nodes, alive and dead, head first, then by IP.
	Nodes []RayNode `json:"nodes"`
	// Total and Used sum the alive nodes' resources.
	Total Resources `json:"total"`
	Used  Resources `json:"used"`
	// Pending is demand the autoscaler may still satisfy by adding nodes;
	// Infeasible is demand no node type of the cluster can ever satisfy.
	Pending    []Demand `json:"pending,omitempty"`
	Infeasible []Demand `json:"infeasible,omitempty"`
	// DemandKnown is false when the dashboard reports no autoscaler status
	// (no in-tree autoscaler): then Pending and Infeasible are empty for
	// want of data, not because nothing waits. With autoscaler v2 the
	// demand is known (read from the formatted status) but per-node Used
	// is not.
	DemandKnown bool `json:"demandKnown"`
	// RunningJobs and Actors count running Ray jobs and alive actors.
	RunningJobs int `json:"runningJobs"`
	Actors      int `json:"actors"`
}

// Resources maps a Ray resource name to an amount (bytes for memory).
type Resources map[string]float64

// RayNode is one Ray node as the dashboard reports it.
type RayNode struct {
	ID    string `json:"id"`
	IP    string `json:"ip"`
	Alive bool   `json:"alive"`
	Head  bool   `json:"head,omitempty"`
	// Idle is true when nothing runs on the node (Ray's idle duration > 0).
	Idle bool `json:"idle,omitempty"`
	// IdleFor is how long the node had been idle when the dashboard
	// answered (Capacity.FetchedAt); 0 while something runs on it.
	// IdleKnown is false when Ray did not say (autoscaler v2, whose
	// per-node idle times the dashboard's text status does not print, or
	// no autoscaler): then Idle is false for want of data.
	IdleFor   time.Duration `json:"idleFor,omitempty"`
	IdleKnown bool          `json:"idleKnown,omitempty"`
	// Pod is the Kubernetes pod the node runs in, matched by IP by the
	// caller (see [Capacity.MapPods]); "" when no pod has that IP.
	Pod   string    `json:"pod,omitempty"`
	Total Resources `json:"total"`
	Used  Resources `json:"used,omitempty"`
}

// Demand is Count requests of one resource shape (one task, actor or
// placement-group bundle each).
type Demand struct {
	Shape Resources `json:"shape"`
	Count int       `json:"count"`
}

// MapPods fills each node's Pod from the pods' IPs (podIP → pod name).
func (c *Capacity) MapPods(podByIP map[string]string) {
	for i := range c.Nodes {
		c.Nodes[i].Pod = podByIP[c.Nodes[i].IP]
	}
}
