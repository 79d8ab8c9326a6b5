// Package raycronjob owns the decisions of raydar's RayCronJob reconciler:
// when a RayCronJob's schedule is due, which RayJob a tick creates, what its
// status and Events say, and when to look again. Everything here is pure
// (the clock is an argument); the reconciler observes the RayCronJob and the
// RayJobs it labelled, calls Decide, and carries out the Plan.
//
//   - schedule.go: the due tick and the missed ticks skipped, the next run
//     (NextRun);
//   - describe.go: a schedule in words (Describe);
//   - decide.go: Decide, from (RayCronJob, its RayJobs, now) to a Plan;
//   - build.go: the RayJob of a tick (TickJob, TickName) and of "trigger
//     now" (TriggerNow).
//
// The wire format is KubeRay v1.7.0's (rayapi/v1); where raydar differs
// from KubeRay's controller (at most one RayJob for the missed ticks, a
// ScheduleValid condition, Events said once) the functions say so.
package raycronjob
