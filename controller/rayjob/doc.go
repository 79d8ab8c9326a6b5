// Package rayjob owns raydar's RayJob reconciler: the RayJob's RayCluster
// (or the one it selects), its submitter Job or the dashboard submission,
// the job's status from the Ray dashboard, the exactly-once stop of the Ray
// job, deletion and clean-up rules, with KubeRay v1.7.0's status and Event
// reasons.
//
// One pass is observe → Decide → act (reconciler.go Reconcile):
//
//	observe.go         reads the cache, the dashboard and this process's memory; writes nothing
//	decide.go          Decide: the pure decision, Observed → Plan
//	decide_attempt.go  New, Initializing, Waiting, deadlines, retry/suspend, the end of an attempt
//	decide_running.go  Running: submitter, dashboard answer, head Service
//	decide_cleanup.go  deletion rules after the job finished
//	decide_stop.go     the exactly-once stop (see below)
//	stoprecord.go      the stop record on the RayJob
//	build.go           the RayCluster, submitter Job and head Service built (pure)
//	act.go             carries out the Plan; no decisions
//	status.go          the conditions computed (pure) and the status write
//	memory.go          what this process remembers between passes
//	unsupported.go     the fields raydar refuses
package rayjob
