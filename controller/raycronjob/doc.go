// Package raycronjob owns the decisions of raydar's RayCronJob reconciler:
// when a RayCronJob's schedule is due, which RayJob a tick creates, what its
// status and Events say, and when to look again. Everything here is pure
// (the clock is an argument); the reconciler observes the RayCronJob and the
// RayJobs it labelled, calls Decide, and carries out the Plan.
//
//   - schedule.go: the due tick and the missed ticks skipped, the next run
//     (NextRun);
//   - describe.go: a schedule in words (Describe);
//   - decide.go: Decide, from (RayCronJob, its RayJobs, now) to a Plan.
//
// The RayJob of a tick and of "trigger now", and the selector of a
// RayCronJob's RayJobs, are rayapi/v1's (CronJobTickJob, CronJobTriggerNow,
// CronJobRayJobSelector in raycronjob_jobs.go): the mutation choke point,
// kube/actions, builds them too.
//
// The wire format is KubeRay v1.7.0's (rayapi/v1); where raydar differs
// from KubeRay's controller (at most one RayJob for the missed ticks, a
// ScheduleValid condition, Events said once) the functions say so.
package raycronjob
