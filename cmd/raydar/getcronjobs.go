package main

import (
	"strconv"
	"time"

	"github.com/raydar/raydar/rayapi/schedule"
	"github.com/raydar/raydar/rayapi/status"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// cronJobCells are the cells of a RayCronJob's row of `raydar get
// cronjobs`: NAME, SCHEDULE (the expression and, when valid, its meaning in
// words), SUSPEND, LAST SCHEDULE (how long ago the latest tick was), NEXT RUN
// (in how long; "due" when a tick is due and its RayJob not created yet),
// STATUS (rayapi/status) and AGE. A schedule without spec.timeZone runs in
// the operator's time zone; NEXT RUN takes this machine's, which is the
// embedded reconciler's.
func cronJobCells(now time.Time, cj *rayv1.RayCronJob) []string {
	sched := cj.Spec.Schedule
	if _, errs := rayv1.ParseCronSchedule(&cj.Spec, time.Local); len(errs) == 0 {
		sched += " (" + schedule.Describe(&cj.Spec) + ")"
	}
	return []string{cj.Name, sched, strconv.FormatBool(cj.Spec.IsSuspended()),
		status.Since(now, cj.Status.LastScheduleTime), nextRun(now, cj), status.CronJob(cj),
		status.Age(now, cj.CreationTimestamp.Time)}
}

// nextRun says when the next RayJob is due: "in 42s", "due" (overdue), or
// None while suspended, invalid, or never again.
func nextRun(now time.Time, cj *rayv1.RayCronJob) string {
	t, ok := schedule.NextRun(cj, now, time.Local)
	return status.NextRun(now, t, ok)
}
