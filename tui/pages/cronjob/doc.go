// Package cronjob is the RayCronJob detail page: its schedule in words,
// whether it is suspended, its last schedule and next run (counted down
// from format.CronTicks), the History block, and the RayJobs it created,
// newest first, with why a failed one failed (JobWhy). Enter opens the
// selected RayJob (tui/pages/job). Its table of RayJobs is given by the
// registry (the jobs list's meta with the columns of tui's
// cronjob_jobs.go).
package cronjob
