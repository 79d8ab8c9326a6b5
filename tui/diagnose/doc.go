// Package diagnose caches the causes (rayapi/why) of every RayCluster,
// RayJob and RayService of a session's store, by UID, recomputed when the
// object, its pods, their Events, the nodes, who reconciles, the open
// cluster's Ray capacity or the answer about its autoscaler's RBAC change,
// never per frame. That answer (access.go) is asked, as `raydar why` asks
// it, in a command, for the clusters on screen only (PollAccess); the
// Gateway API objects of the RayServices that upgrade incrementally
// (gateway.go), which the watch does not cache, are read likewise, every
// GatewayEvery (PollGateways). The lists' WHY cells
// and the detail pages' Why blocks read it (Get, Cell, Changed).
package diagnose
