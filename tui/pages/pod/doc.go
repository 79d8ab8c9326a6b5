// Package pod is the Ray pods' entry in the registry of kinds (Entry): the
// :pods list's columns (cluster, group, node type, phase, readiness,
// restarts, IP, node), its describe fields, Enter to the pod's RayCluster
// (its page, through the registry of kinds: host.Kinds.Open) and L to the Ray log files of the pod's node
// (tui/pages/raylogs). The pods have no detail page of their own.
package pod
