package registry

import (
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/kube/actions"
	"github.com/raydar/raydar/kube/watch"
	"github.com/raydar/raydar/tui/format"
	"github.com/raydar/raydar/tui/host"
)

// Kinds is the registry: the entries, in the order of the help's Commands.
// Lookups scan it: there are a handful. It implements host.Kinds.
type Kinds struct{ Entries []Entry }

// ByView returns the kind whose list or detail view v is.
func (r *Kinds) ByView(v host.ViewKind) (*Entry, bool) {
	for i := range r.Entries {
		if k := &r.Entries[i]; k.List == v || (k.Detail != "" && k.Detail == v) {
			return k, true
		}
	}
	return nil, false
}

// ByAlias returns the kind a `:` command shows.
func (r *Kinds) ByAlias(alias string) (*Entry, bool) {
	for i := range r.Entries {
		for _, a := range r.Entries[i].AliasList() {
			if a == alias {
				return &r.Entries[i], true
			}
		}
	}
	return nil, false
}

// Aliases is every kind's aliases.
func (r *Kinds) Aliases() []string {
	var out []string
	for i := range r.Entries {
		out = append(out, r.Entries[i].AliasList()...)
	}
	return out
}

// Of returns the entry of a typed object (nil: none).
func (r *Kinds) Of(obj client.Object) *Entry {
	if obj == nil {
		return nil
	}
	wk, ok := watch.KindOf(obj)
	if !ok {
		return nil
	}
	for i := range r.Entries {
		if r.Entries[i].Watch == wk {
			return &r.Entries[i]
		}
	}
	return nil
}

// LifecycleKinds names the kinds suspend/resume and delete apply to, for
// messages: "RayCluster, RayJob, RayService or RayCronJob".
func (r *Kinds) LifecycleKinds() string {
	var ns []string
	for _, k := range r.Entries {
		if k.Lifecycle != nil {
			ns = append(ns, k.Lifecycle.Kind)
		}
	}
	if len(ns) < 2 {
		return strings.Join(ns, "")
	}
	return strings.Join(ns[:len(ns)-1], ", ") + " or " + ns[len(ns)-1]
}

// IsDetail reports whether v is a kind's detail view.
func (r *Kinds) IsDetail(v host.ViewKind) bool {
	k, ok := r.ByView(v)
	return ok && k.Detail == v
}

// Lifecycle implements host.Kinds.
func (r *Kinds) Lifecycle(obj client.Object) (kind actions.Kind, suspended, ok bool) {
	k := r.Of(obj)
	if k == nil || k.Lifecycle == nil {
		return nil, false, false
	}
	return k.Lifecycle, k.Suspend != nil && k.Suspend.Suspended(obj), true
}

// Describe implements host.Kinds.
func (r *Kinds) Describe(d *format.Describer, obj client.Object) {
	if k := r.Of(obj); k != nil {
		k.Typed.Describe(d, obj)
	}
}

// Open implements host.Kinds.
func (r *Kinds) Open(e *host.Env, obj client.Object) host.Page {
	if k := r.Of(obj); k != nil {
		return k.Typed.Open(e, obj)
	}
	return nil
}

var _ host.Kinds = (*Kinds)(nil)
