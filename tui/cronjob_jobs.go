package tui

import (
	"time"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/tui/format"
	"github.com/raydar/raydar/tui/host"
	"github.com/raydar/raydar/tui/pages/cronjob"
	"github.com/raydar/raydar/tui/table"
)

// cronJobColumns are the columns of a RayCronJob's RayJobs: the jobs
// list's states and times, and WHY a failed one failed.
func cronJobColumns() []column[*rayv1.RayJob] {
	return []column[*rayv1.RayJob]{
		{Column: table.Column{Title: "NAME", Width: 30, Grow: true, Min: 24, Sort: table.ByName}, cell: func(j *rayv1.RayJob) string { return j.Name }},
		{Column: table.Column{Title: "STATUS", Width: 9, Sort: table.ByStatus}, cell: format.JobStatus},
		{Column: table.Column{Title: "DEPLOYMENT", Width: 10}, cell: format.JobDeployment},
		{Column: table.Column{Title: "START", Width: 5, Right: true, Drop: 2}, live: func(j *rayv1.RayJob, now time.Time) string { return format.MetaAge(now, j.Status.StartTime) }},
		{Column: table.Column{Title: "DURATION", Width: 8, Right: true}, live: func(j *rayv1.RayJob, now time.Time) string { return format.JobDuration(now, j) }},
		{Column: table.Column{Title: "AGE", Width: 5, Right: true, Sort: table.ByAge}, live: func(j *rayv1.RayJob, now time.Time) string { return format.Age(now, j.CreationTimestamp.Time) }},
		{Column: table.Column{Title: "WHY", Width: 30, Grow: true, Min: 12, Drop: 1}, cell: func(j *rayv1.RayJob) string { return format.OrNone(cronjob.JobWhy(j)) }},
	}
}

// newCronJobDetail is the page of cj (the RayCronJobs' drill-down).
func newCronJobDetail(e *host.Env, cj *rayv1.RayCronJob) host.Page {
	return cronjob.NewDetail(e, cj, spec(cronJobColumns(), jobDef().meta, nil, nil))
}
