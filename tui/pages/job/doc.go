// Package job is the RayJob detail page: its status, the Why and History
// blocks and the tail of its Ray job's logs (refetched while it runs).
// Enter opens its RayCluster's page through the registry of kinds
// (host.Kinds.Open), E the Ray log that explains it (tui/pages/raylogs).
// Beside it, the RayJobs' entry in the registry of kinds (Entry: views,
// actions, list columns, describe fields); how a table of RayJobs colours a
// row is format.JobMeta, shared with a RayCronJob's RayJobs.
package job
