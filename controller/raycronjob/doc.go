// Package raycronjob owns raydar's reconcile loop for KubeRay v1.7's
// RayCronJob (ray.io/v1): when its schedule is due, the RayJob each tick
// creates, its status (lastScheduleTime, the ScheduleValid condition) and
// its Events, and when to look again. The RayJobs it creates are run by the
// RayJob reconciler (controller/rayjob); the manager and the one Options
// are in package controller; what the kinds share (the Reconcile prologue,
// read-your-writes, the status writer, say-once Events, the gate) in
// controller/kit.
//
// # Shape
//
// observe → decide → act, the same in every kind package:
//
//	reconciler.go  Registration (for kit.Setup: RBAC markers, watches: RayCronJobs, the RayJobs they own; Optional: no CRD, no controller) and Pass: observe, Decide, act; the gate's reading of a RayCronJob (gateManagedBy)
//	observe.go     the RayJobs labelled with its name, from the cache with this process's unseen creates laid over them (kit.Overlay), live after a failed create
//	decide.go      Decide, pure: (RayCronJob, its RayJobs, now) → Plan (the RayJob to create, the status, the Events, the requeue)
//	schedule.go    the due tick and the missed ticks skipped (from rayapi/schedule's Earliest; its NextRun and Describe are what the TUI and raydar get show)
//	act.go         create the tick's RayJob (AlreadyExists counts as done), emit the Events, write the status; in that order
//	status.go      statusChange (every change written at once) and the write through kit.StatusWriter
//
// A RayCronJob has no fields raydar does not implement (no unsupported.go):
// KubeRay's spec is schedule, timeZone, suspend and jobTemplate, and the
// jobTemplate's RayJob fields are refused, if at all, by the RayJob
// reconciler on the RayJobs created.
//
// The RayJob of a tick and of "trigger now", and the selector of a
// RayCronJob's RayJobs, are rayapi/v1's (CronJobTickJob, CronJobTriggerNow,
// CronJobRayJobSelector in raycronjob_jobs.go): the mutation choke point,
// kube/actions, builds them too.
//
// # A tick made once
//
// A tick is neither lost nor doubled, across lagging caches, restarts and
// a second operator:
//
//  1. Its RayJob's name is the tick's (rayv1.CronJobTickName, KubeRay's):
//     a second create of it, by this process, a restarted one or KubeRay's
//     operator, is AlreadyExists, which act counts as done.
//  2. The create is recorded in the kit's Expectations before it leaves and
//     laid over the cache until the informer shows the RayJob, so a pass
//     right after it does not even try again.
//  3. lastScheduleTime is written only after the tick's RayJob exists, so a
//     process stopped between the two leaves a tick whose RayJob the next
//     pass finds (and then writes the status); the status is written only
//     when it changes.
//
// # Where raydar differs from KubeRay
//
// At most one RayJob for the missed ticks (the latest) with an Event
// counting the others; the ScheduleValid condition naming the invalid field
// beside KubeRay's Warning Event; the suspended and invalid Events said
// once while the state lasts (Event.Key), not on every pass. Decide's doc
// lists each rule.
//
// # The other-operator gate
//
// A RayCronJob has no spec.managedBy, and KubeRay v1.7's RayCronJob
// controller schedules every RayCronJob: the gate treats one as unset
// (raydar schedules it unless a KubeRay operator runs), unless its
// jobTemplate opts in as the RayJobs it creates would (gateManagedBy). Two
// operators scheduling the same RayCronJob would still make each tick once
// (rule 1 above).
package raycronjob
