package tui

import (
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/kube/actions"
	"github.com/raydar/raydar/kube/watch"
	"github.com/raydar/raydar/tui/table"
)

// kind is one entry of the registry of kinds (k9s' registrar): everything
// the TUI knows about a resource kind. Every place that differs by kind
// (the list page and its columns, the `:` aliases, the help, the actions a
// view offers, the drill-down, suspend/resume and delete, describe) reads
// it here; kinds.go holds the entries.
type kind struct {
	// list is the kind's list view; detail its detail view ("": none).
	list, detail ViewKind
	// title is the list's title ("RayClusters"); help says what the first
	// alias shows, in the help's Commands.
	title, help string
	// aliases are the `:` commands that show the list; the first is the one
	// the help and the unknown-command message name.
	aliases []string
	// watch is the store's kind of the objects.
	watch watch.Kind
	// lifecycle is the kind suspend/resume and delete act on ("": they do
	// not apply).
	lifecycle actions.Kind
	// listActions and detailActions name the DefaultActions each view
	// offers, in hint order.
	listActions, detailActions []string

	// Set by typed from the kind's typed definition.
	newList   func(e *env, k *kind) page
	suspended func(obj client.Object) bool
	describe  func(d *describer, obj client.Object)
}

// def is the typed part of a kind's definition.
type def[V client.Object] struct {
	// columns are the list's columns, each with its cells.
	columns []column[V]
	// meta is what the table sorts, filters and colours by.
	meta func(V) table.Meta
	// open is the page Enter drills down to from the list (nil: none;
	// it may return nil when there is nothing to open).
	open func(e *env, v V) page
	// suspended says whether v is suspended (lifecycle kinds).
	suspended func(V) bool
	// describe adds the kind's fields to the describe page.
	describe func(d *describer, v V)
}

// typed completes k with its typed definition.
func typed[V client.Object](k kind, d def[V]) *kind {
	k.newList = func(e *env, k *kind) page { return newListPage(e, k, d) }
	k.suspended = func(obj client.Object) bool {
		v, ok := obj.(V)
		return ok && d.suspended != nil && d.suspended(v)
	}
	k.describe = func(ds *describer, obj client.Object) {
		if v, ok := obj.(V); ok && d.describe != nil {
			d.describe(ds, v)
		}
	}
	return &k
}

// registry indexes the kinds by view, alias and store kind.
type registry struct {
	kinds   []*kind
	byView  map[ViewKind]*kind
	byAlias map[string]*kind
	byWatch map[watch.Kind]*kind
}

func newRegistry(ks ...*kind) *registry {
	r := &registry{kinds: ks, byView: map[ViewKind]*kind{}, byAlias: map[string]*kind{}, byWatch: map[watch.Kind]*kind{}}
	for _, k := range ks {
		r.byView[k.list] = k
		if k.detail != "" {
			r.byView[k.detail] = k
		}
		for _, a := range k.aliases {
			r.byAlias[a] = k
		}
		r.byWatch[k.watch] = k
	}
	return r
}

// of returns the kind of a typed object (nil: none).
func (r *registry) of(obj client.Object) *kind {
	if obj == nil {
		return nil
	}
	wk, ok := watch.KindOf(obj)
	if !ok {
		return nil
	}
	return r.byWatch[wk]
}

// lifecycleKinds names the kinds suspend/resume and delete apply to, for
// messages: "RayCluster, RayJob or RayService".
func (r *registry) lifecycleKinds() string {
	var ns []string
	for _, k := range r.kinds {
		if k.lifecycle != "" {
			ns = append(ns, string(k.lifecycle))
		}
	}
	if len(ns) < 2 {
		return strings.Join(ns, "")
	}
	return strings.Join(ns[:len(ns)-1], ", ") + " or " + ns[len(ns)-1]
}

// isDetail reports whether v is a kind's detail view.
func (r *registry) isDetail(v ViewKind) bool {
	k, ok := r.byView[v]
	return ok && k.detail == v
}
