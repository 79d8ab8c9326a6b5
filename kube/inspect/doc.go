// Package inspect owns gathering, from the API server, what rayapi/why needs
// to diagnose one RayCluster, RayJob or RayService: the object, its
// cluster's pods (label ray.io/cluster), the Events about them, the nodes
// (Nodes.Known is false when raydar may not list them), who reconciles (the
// holder of raydar's leader Lease and whether it is fresh), for a RayJob its
// cluster and the pods of its submitter Job with the last log lines of the
// newest failed one, for a RayService its active and pending clusters and,
// with NewClusterWithIncrementalUpgrade, its Gateway, HTTPRoute and
// GatewayClass (gateway.go: read unstructured; a cluster without the
// Gateway API says so rather than fail), and
// Ray's own capacity view when a Capacity reader is given and answers, and,
// for a cluster with enableInTreeAutoscaling when a Review is given, whether
// its head pod's ServiceAccount may do what Ray's autoscaler needs (two
// SubjectAccessReviews).
//
// `raydar why` (cmd/raydar) is its user; the TUI reads the same inputs from
// its watch cache instead, and asks the autoscaler's SubjectAccessReviews
// with AskAutoscalerAccess, for the clusters on screen (tui/diagnose). The reads are thin (gather.go); what they are
// turned into is pure and table-tested (assemble.go).
package inspect
