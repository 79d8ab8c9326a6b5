package pod

import (
	"fmt"

	"charm.land/bubbles/v2/key"

	"github.com/raydar/raydar/kube/watch"
	kdesc "github.com/raydar/raydar/rayapi/kinds"
	"github.com/raydar/raydar/rayapi/podview"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/tui/format"
	"github.com/raydar/raydar/tui/host"
	"github.com/raydar/raydar/tui/keys"
	"github.com/raydar/raydar/tui/pages/raylogs"
	"github.com/raydar/raydar/tui/registry"
	"github.com/raydar/raydar/tui/table"
)

// ListView is the Ray pods' list (:pods); they have no detail page of
// their own.
const ListView host.ViewKind = "pods"

// Entry is the Ray pods' entry in the registry of kinds: Enter opens the
// pod's RayCluster, L the Ray log files of the pod's Ray node.
func Entry() registry.Entry {
	e := registry.FromDescriptor(kdesc.Pod)
	e.List, e.Help = ListView, "Ray pods"
	e.ListActions = "describe logs port-forward shell"
	e.Typed = registry.DefOf[*podview.Pod](def)
	return e
}

func def() registry.Def[*podview.Pod] {
	return registry.Def[*podview.Pod]{
		Columns: func() []registry.Column[*podview.Pod] {
			return []registry.Column[*podview.Pod]{
				{Column: table.Column{Title: "NAME", Width: 30, Grow: true, Min: 22, Sort: table.ByName}, Cell: func(p *podview.Pod) string { return p.Name }},
				registry.NsCol[*podview.Pod](),
				{Column: table.Column{Title: "CLUSTER", Width: 14, Grow: true, Min: 8, Drop: 1}, Cell: func(p *podview.Pod) string { return format.OrNone(p.Labels[rayv1.RayClusterLabelKey]) }},
				{Column: table.Column{Title: "GROUP", Width: 10, Drop: 3}, Cell: func(p *podview.Pod) string { return format.OrNone(p.Labels[rayv1.RayNodeGroupLabelKey]) }},
				{Column: table.Column{Title: "TYPE", Width: 6, Drop: 4}, Cell: func(p *podview.Pod) string { return format.OrNone(p.Labels[rayv1.RayNodeTypeLabelKey]) }},
				{Column: table.Column{Title: "PHASE", Width: 11, Sort: table.ByStatus}, Cell: format.PodStatus},
				{Column: table.Column{Title: "READY", Width: 5, Right: true}, Cell: func(p *podview.Pod) string { r, _ := format.PodReady(p); return r }},
				{Column: table.Column{Title: "RESTARTS", Width: 8, Right: true, Drop: 2}, Cell: func(p *podview.Pod) string { _, n := format.PodReady(p); return fmt.Sprint(n) }},
				{Column: table.Column{Title: "IP", Width: 15, Drop: 6}, Cell: func(p *podview.Pod) string { return format.OrNone(p.Status.PodIP) }},
				{Column: table.Column{Title: "NODE", Width: 14, Grow: true, Min: 8, Drop: 7}, Cell: func(p *podview.Pod) string { return format.OrNone(p.Spec.NodeName) }},
				registry.AgeCol[*podview.Pod](0),
			}
		},
		Meta: registry.MetaBy(format.PodStatus),
		Open: func(e *host.Env, p *podview.Pod) host.Page {
			o, ok := e.Store.Find(watch.RayCluster, p.Namespace, p.Labels[rayv1.RayClusterLabelKey])
			if !ok {
				return nil
			}
			return e.Kinds.Open(e, o)
		},
		Describe: describeFields,
		Keys: []registry.RowKey[*podview.Pod]{
			{Binding: func(km *keys.KeyMap) key.Binding { return km.RayLogs }, Run: raylogs.PodKey},
		},
	}
}
