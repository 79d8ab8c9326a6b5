package job

import (
	"time"

	kdesc "github.com/raydar/raydar/rayapi/kinds"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/tui/format"
	"github.com/raydar/raydar/tui/host"
	"github.com/raydar/raydar/tui/registry"
	"github.com/raydar/raydar/tui/table"
)

// The RayJobs' views: the list (its value is the kind's resource) and the
// detail page.
const (
	ListView   host.ViewKind = rayv1.ResourceRayJobs
	DetailView host.ViewKind = "rayjob"
)

// Entry is the RayJobs' entry in the registry of kinds.
func Entry() registry.Entry {
	e := registry.FromDescriptor(kdesc.RayJob)
	e.List, e.Detail = ListView, DetailView
	e.ListActions = "describe stop-job suspend delete edit"
	e.DetailActions = "describe stop-job suspend delete edit"
	e.Typed = registry.DefOf[*rayv1.RayJob](def)
	return e
}

func def() registry.Def[*rayv1.RayJob] {
	return registry.Def[*rayv1.RayJob]{
		Columns: func() []registry.Column[*rayv1.RayJob] {
			return []registry.Column[*rayv1.RayJob]{
				registry.NameCol[*rayv1.RayJob](), registry.NsCol[*rayv1.RayJob](),
				{Column: table.Column{Title: "STATUS", Width: 10, Sort: table.ByStatus}, Live: format.JobStatus},
				{Column: table.Column{Title: "DEPLOYMENT", Width: 10}, Cell: format.JobDeployment},
				{Column: table.Column{Title: "CLUSTER", Width: 18, Grow: true, Min: 10, Drop: 1}, Cell: func(j *rayv1.RayJob) string { return format.OrNone(j.Status.RayClusterName) }},
				{Column: table.Column{Title: "START", Width: 5, Right: true, Drop: 4}, Live: func(j *rayv1.RayJob, now time.Time) string { return format.MetaAge(now, j.Status.StartTime) }},
				{Column: table.Column{Title: "END", Width: 5, Right: true, Drop: 3}, Live: func(j *rayv1.RayJob, now time.Time) string { return format.MetaAge(now, j.Status.EndTime) }},
				{Column: table.Column{Title: "DURATION", Width: 8, Right: true}, Live: func(j *rayv1.RayJob, now time.Time) string { return format.JobDuration(now, j) }},
				registry.AgeCol[*rayv1.RayJob](2),
				registry.WhyCol[*rayv1.RayJob](15, 12),
			}
		},
		Meta:     format.JobMeta,
		Open:     func(e *host.Env, j *rayv1.RayJob) host.Page { return newDetail(e, j) },
		Describe: describeFields,
	}
}
