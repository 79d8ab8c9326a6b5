// Package rayjob owns raydar's RayJob reconciler: the RayJob's RayCluster
// (or the one it selects), its submitter Job or the dashboard submission,
// the job's status from the Ray dashboard, the exactly-once stop of the Ray
// job, deletion and clean-up rules, with KubeRay v1.7.0's status and Event
// reasons.
//
// One pass is kit.Loop's prologue (get, forget the gone, read-your-writes,
// the other-operator gate, 409s), then observe → Decide → act:
//
//	reconciler.go      Registration (for kit.Setup: watches, the side cache of submitter Jobs and head Services, the index by cluster, Options) and Pass
//	observe.go         reads the cache, the dashboard and this process's memory; writes nothing
//	decide.go          Decide: the pure decision, Observed → Plan
//	decide_attempt.go  New, Initializing, Waiting, deadlines, retry/suspend, the end of an attempt
//	decide_running.go  Running: submitter, dashboard answer, head Service
//	decide_cleanup.go  deletion rules after the job finished
//	decide_stop.go     the exactly-once stop (below)
//	stoprecord.go      the stop record on the RayJob (annotation raydar.io/stop-record)
//	build.go           the RayCluster, submitter Job and head Service built (pure)
//	sidecar_restart.go the restartable SidecarMode submitter (KubeRay's SidecarSubmitterRestart gate)
//	gang.go            the RayJob's batch-scheduler gang object (a Volcano PodGroup) before its cluster, the metadata of its cluster and submitter, its clean-up once finished (--batch-scheduler)
//	act.go             carries out the Plan in the Plan's order, one step each (acting: the RayJob's writes, children, submission, stop, self-deletion); every write idempotent, no decisions
//	status.go          the conditions computed (pure), the status written (kit.StatusWriter)
//	memory.go          what this process remembers between passes besides the kit's
//	unsupported.go     the fields raydar refuses
//
// The exactly-once stop (a stop request, once per annotation value; the
// deletion of a RayJob whose Ray job may run) is decided in decide_stop.go:
// stopAnswered is the rule (no stop while a confirmed record answers it),
// planStop the one place a StopCall enters a Plan, StopCall.Outcome what
// each answer of the dashboard leads to (the record, the Event, the
// finalizer). act.sendStop only carries it out. Table tests:
// TestStopExactlyOnce and TestStopOutcome in decide_stop_test.go.
package rayjob
