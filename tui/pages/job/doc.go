// Package job is the RayJob detail page: its status, the Why and History
// blocks and the tail of its Ray job's logs (refetched while it runs).
// Enter opens its RayCluster (tui/pages/cluster), E the Ray log that
// explains it (tui/pages/raylogs).
package job
