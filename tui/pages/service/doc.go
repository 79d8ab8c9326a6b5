// Package service is the RayService detail page: status, conditions, the
// upgrade's progress, the active and pending clusters with their Serve
// applications and deployments, the Why and History blocks. Enter opens
// the active (or pending) RayCluster (its page, through the registry of
// kinds: host.Kinds.Open), E the Serve controller's log.
// Beside it, the RayServices' entry in the registry of kinds (Entry: views,
// actions, list columns, describe fields).
package service
