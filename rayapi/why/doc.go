// Package why owns diagnosis: given what raydar's cache already holds about a
// RayCluster, RayJob or RayService (the object, its pods and their Events,
// the nodes, who reconciles, and Ray's own view of capacity when the
// dashboard answers) it names why the object is not progressing, as a
// ranked list of causes, each with its evidence and what to do.
//
// Every function is pure and cheap: the TUI (WHY column, the Why block of
// each detail page) computes it when an object or its pods change, not per
// frame, and `raydar why KIND NAME` (cmd/raydar, inputs gathered by
// kube/inspect) prints the same causes. A healthy object has no causes.
//
// Causes are ranked so that the one whose fix unblocks the others comes
// first: the spec, suspend, who reconciles (object.go, cluster.go) and
// whether it has acted on the spec yet (queue.go: the operator's view
// inferred from the API objects, also how far a cluster's worker pods
// are); writes
// raydar failed or was refused (writes.go); the head's pods, then the
// workers' (pods.go reads the pods, podcauses.go words them, nodes.go
// makes scheduling specific); workers waiting for the GCS; the in-tree
// autoscaler (autoscaler.go: its sidecar down, its ServiceAccount refused,
// pending demand it does not act on, idle workers it does not remove);
// Ray's demand (ray.go); then what a
// RayJob (job.go; jobdemand.go: its entrypoint's resources no pod gives;
// contradiction.go: its status contradicting itself, rayapi/status's check)
// or RayService (service.go; servedemand.go: its Serve replicas' resources,
// decided as a job's entrypoint; gateway.go: the Gateway API side of a
// NewClusterWithIncrementalUpgrade, from no Gateway API or GatewayClass to
// a Gateway or HTTPRoute its implementation has not accepted) says of
// itself. A job's or service's
// cluster's causes are its own, stated once (nested.go). Codes (codes.go)
// are stable words for scripts. GroupPlans (plan.go) says per worker group
// what the autoscaler would do next, for the cluster page; SecurityOf
// (security.go) is a cluster spec's security line.
package why
