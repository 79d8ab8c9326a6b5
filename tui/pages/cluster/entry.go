package cluster

import (
	kdesc "github.com/raydar/raydar/rayapi/kinds"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/tui/format"
	"github.com/raydar/raydar/tui/host"
	"github.com/raydar/raydar/tui/registry"
	"github.com/raydar/raydar/tui/table"
)

// The RayClusters' views: the list (its value is the kind's resource) and
// the detail page.
const (
	ListView   host.ViewKind = rayv1.ResourceRayClusters
	DetailView host.ViewKind = "raycluster"
)

// Entry is the RayClusters' entry in the registry of kinds.
func Entry() registry.Entry {
	e := registry.FromDescriptor(kdesc.RayCluster)
	e.List, e.Detail = ListView, DetailView
	e.ListActions = "describe suspend delete port-forward edit"
	e.DetailActions = "scale delete-workers describe logs suspend port-forward shell edit"
	e.Typed = registry.DefOf[*rayv1.RayCluster](def)
	return e
}

func def() registry.Def[*rayv1.RayCluster] {
	return registry.Def[*rayv1.RayCluster]{
		Columns: func() []registry.Column[*rayv1.RayCluster] {
			return []registry.Column[*rayv1.RayCluster]{
				registry.NameCol[*rayv1.RayCluster](), registry.NsCol[*rayv1.RayCluster](),
				{Column: table.Column{Title: "WORKERS", Width: 7, Right: true}, Cell: func(rc *rayv1.RayCluster) string {
					return format.ClusterWorkers(rc)
				}},
				{Column: table.Column{Title: "CPUS", Width: 5, Right: true, Drop: 2}, Cell: func(rc *rayv1.RayCluster) string { return format.Qty(rc.Status.DesiredCPU) }},
				{Column: table.Column{Title: "MEMORY", Width: 7, Right: true, Drop: 4}, Cell: func(rc *rayv1.RayCluster) string { return format.Qty(rc.Status.DesiredMemory) }},
				{Column: table.Column{Title: "GPUS", Width: 4, Right: true, Drop: 3}, Cell: func(rc *rayv1.RayCluster) string { return format.Qty(rc.Status.DesiredGPU) }},
				{Column: table.Column{Title: "STATUS", Width: 12, Sort: table.ByStatus}, Cell: format.ClusterStatus},
				registry.AgeCol[*rayv1.RayCluster](0),
				registry.WhyCol[*rayv1.RayCluster](18, 14),
			}
		},
		Meta:     registry.MetaBy(format.ClusterStatus),
		Open:     func(e *host.Env, rc *rayv1.RayCluster) host.Page { return newDetail(e, rc) },
		Describe: describeFields,
	}
}
