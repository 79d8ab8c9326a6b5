package service

import (
	"fmt"

	kdesc "github.com/raydar/raydar/rayapi/kinds"
	"github.com/raydar/raydar/rayapi/status"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/tui/format"
	"github.com/raydar/raydar/tui/host"
	"github.com/raydar/raydar/tui/registry"
	"github.com/raydar/raydar/tui/table"
)

// The RayServices' views: the list (its value is the kind's resource) and
// the detail page.
const (
	ListView   host.ViewKind = rayv1.ResourceRayServices
	DetailView host.ViewKind = "rayservice"
)

// Entry is the RayServices' entry in the registry of kinds.
func Entry() registry.Entry {
	e := registry.FromDescriptor(kdesc.RayService)
	e.List, e.Detail = ListView, DetailView
	e.ListActions = "describe suspend delete edit"
	e.DetailActions = "describe suspend delete edit"
	e.Typed = registry.DefOf[*rayv1.RayService](def)
	return e
}

func def() registry.Def[*rayv1.RayService] {
	return registry.Def[*rayv1.RayService]{
		Columns: func() []registry.Column[*rayv1.RayService] {
			return []registry.Column[*rayv1.RayService]{
				registry.NameCol[*rayv1.RayService](), registry.NsCol[*rayv1.RayService](),
				{Column: table.Column{Title: "STATUS", Width: 11, Sort: table.ByStatus}, Cell: format.ServiceStatus},
				{Column: table.Column{Title: "ACTIVE", Width: 18, Grow: true, Min: 10}, Cell: func(s *rayv1.RayService) string { return format.OrNone(s.Status.ActiveServiceStatus.RayClusterName) }},
				{Column: table.Column{Title: "PENDING", Width: 18, Grow: true, Min: 8, Drop: 2}, Cell: func(s *rayv1.RayService) string { return format.OrNone(s.Status.PendingServiceStatus.RayClusterName) }},
				// The split of an incremental upgrade in progress ("30%->70%").
				{Column: table.Column{Title: "TRAFFIC", Width: 9, Drop: 3}, Cell: status.Traffic},
				{Column: table.Column{Title: "APPS", Width: 4, Right: true}, Cell: func(s *rayv1.RayService) string {
					r, t := format.AppsReady(s.Status.ActiveServiceStatus)
					return fmt.Sprintf("%d/%d", r, t)
				}},
				{Column: table.Column{Title: "ENDPOINTS", Width: 9, Right: true, Drop: 1}, Cell: func(s *rayv1.RayService) string { return fmt.Sprint(s.Status.NumServeEndpoints) }},
				registry.AgeCol[*rayv1.RayService](0),
				registry.WhyCol[*rayv1.RayService](12, 10),
			}
		},
		Meta:     registry.MetaBy(format.ServiceStatus),
		Open:     func(e *host.Env, s *rayv1.RayService) host.Page { return newDetail(e, s) },
		Describe: describeFields,
	}
}
