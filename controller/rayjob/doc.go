// Package rayjob owns raydar's RayJob reconciler: the RayJob's RayCluster
// (or the one it selects), its submitter Job or the dashboard submission,
// the job's status from the Ray dashboard, the exactly-once stop of the Ray
// job (rayjob_decide.go: decideStopRequest, decideDeletion, the stop
// record; rayjob_reconciler.go: stop, recordStop), deletion and clean-up
// rules, with KubeRay v1.7.0's status and Event reasons.
// observe and act are in rayjob_reconciler.go, the pure decision in
// rayjob_decide.go, the objects built in rayjob_build.go and
// rayjob_children.go.
package rayjob
