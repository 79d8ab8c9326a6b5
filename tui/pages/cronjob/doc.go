// Package cronjob is the RayCronJob detail page: its schedule in words,
// whether it is suspended, its last schedule and next run (counted down
// from format.CronTicks), the History block, and the RayJobs it created,
// newest first, with why a failed one failed (JobWhy). Enter opens the
// selected RayJob's page through the registry of kinds (host.Kinds.Open).
// Its table of RayJobs has the jobs list's meta (format.JobMeta) with
// columns of its own (jobColumns). Beside it, the RayCronJobs' entry in the registry of kinds (Entry: views, actions,
// list columns with the count of each one's RayJobs, describe fields).
package cronjob
