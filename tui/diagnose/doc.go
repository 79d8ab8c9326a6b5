// Package diagnose caches the causes (rayapi/why) of every RayCluster,
// RayJob and RayService of a session's store, by UID, recomputed when the
// object, its pods, their Events, the nodes, who reconciles or the open
// cluster's Ray capacity change, never per frame. The lists' WHY cells
// and the detail pages' Why blocks read it (Get, Cell, Changed).
package diagnose
