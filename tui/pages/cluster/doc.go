// Package cluster is the RayCluster detail page: a summary, the Why and
// Ray capacity blocks, the head and worker groups with their pods (marks
// on worker pods for delete-workers; with in-tree autoscaling, what the
// autoscaler would do next per group, rayapi/why GroupPlans), recent Events and the History
// block. L opens the Ray log browser of the selected pod's node
// (tui/pages/raylogs). Beside it, the RayClusters' entry in the registry
// of kinds (Entry: views, actions, list columns, describe fields).
package cluster
