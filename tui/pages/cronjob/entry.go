package cronjob

import (
	"fmt"
	"time"

	"github.com/raydar/raydar/kube/watch"
	kdesc "github.com/raydar/raydar/rayapi/kinds"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/tui/format"
	"github.com/raydar/raydar/tui/host"
	"github.com/raydar/raydar/tui/registry"
	"github.com/raydar/raydar/tui/table"
)

// The RayCronJobs' views: the list (its value is the kind's resource) and
// the detail page.
const (
	ListView   host.ViewKind = rayv1.ResourceRayCronJobs
	DetailView host.ViewKind = "raycronjob"
)

// Entry is the RayCronJobs' entry in the registry of kinds; Enter opens
// one with the RayJobs it created.
func Entry() registry.Entry {
	e := registry.FromDescriptor(kdesc.RayCronJob)
	e.List, e.Detail = ListView, DetailView
	e.ListActions = "describe trigger suspend delete edit"
	e.DetailActions = "describe trigger suspend delete edit"
	e.Typed = registry.DefOf[*rayv1.RayCronJob](def)
	return e
}

func def() registry.Def[*rayv1.RayCronJob] {
	return registry.Def[*rayv1.RayCronJob]{
		Columns: func() []registry.Column[*rayv1.RayCronJob] {
			ticks := format.CronTicks{}
			return []registry.Column[*rayv1.RayCronJob]{
				registry.NameCol[*rayv1.RayCronJob](), registry.NsCol[*rayv1.RayCronJob](),
				{Column: table.Column{Title: "SCHEDULE", Width: 12}, Cell: func(c *rayv1.RayCronJob) string { return c.Spec.Schedule }},
				{Column: table.Column{Title: "IN WORDS", Width: 48, Grow: true, Min: 16, Drop: 1}, Cell: format.CronWords},
				{Column: table.Column{Title: "SUSPEND", Width: 7, Drop: 2}, Cell: func(c *rayv1.RayCronJob) string { return fmt.Sprint(c.Spec.IsSuspended()) }},
				{Column: table.Column{Title: "LAST SCHEDULE", Width: 13, Right: true, Drop: 4}, Live: func(c *rayv1.RayCronJob, now time.Time) string {
					return format.MetaAge(now, c.Status.LastScheduleTime)
				}},
				{Column: table.Column{Title: "NEXT RUN", Width: 9, Right: true}, Live: ticks.Countdown},
				{Column: table.Column{Title: "JOBS", Width: 4, Right: true}, Count: func(_ *rayv1.RayCronJob, n int) string { return fmt.Sprint(n) }},
				{Column: table.Column{Title: "STATUS", Width: 17, Sort: table.ByStatus}, Cell: format.CronStatus},
				registry.AgeCol[*rayv1.RayCronJob](3),
			}
		},
		Meta:     registry.MetaBy(format.CronStatus),
		Open:     func(e *host.Env, c *rayv1.RayCronJob) host.Page { return newDetail(e, c) },
		Describe: describeFields,
		Children: &registry.Children{Watch: watch.RayJob, Label: rayv1.RayCronJobNameLabelKey},
	}
}

// jobColumns are the columns of a RayCronJob's RayJobs: the jobs list's
// states and times, and WHY a failed one failed.
func jobColumns() []registry.Column[*rayv1.RayJob] {
	return []registry.Column[*rayv1.RayJob]{
		{Column: table.Column{Title: "NAME", Width: 30, Grow: true, Min: 24, Sort: table.ByName}, Cell: func(j *rayv1.RayJob) string { return j.Name }},
		{Column: table.Column{Title: "STATUS", Width: 10, Sort: table.ByStatus}, Live: format.JobStatus},
		{Column: table.Column{Title: "DEPLOYMENT", Width: 10}, Cell: format.JobDeployment},
		{Column: table.Column{Title: "START", Width: 5, Right: true, Drop: 2}, Live: func(j *rayv1.RayJob, now time.Time) string { return format.MetaAge(now, j.Status.StartTime) }},
		{Column: table.Column{Title: "DURATION", Width: 8, Right: true}, Live: func(j *rayv1.RayJob, now time.Time) string { return format.JobDuration(now, j) }},
		registry.AgeCol[*rayv1.RayJob](0),
		{Column: table.Column{Title: "WHY", Width: 30, Grow: true, Min: 12, Drop: 1}, Cell: func(j *rayv1.RayJob) string { return format.OrNone(JobWhy(j)) }},
	}
}
