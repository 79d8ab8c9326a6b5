package tui

import (
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/kube/actions"
	"github.com/raydar/raydar/kube/watch"
	"github.com/raydar/raydar/tui/format"
	"github.com/raydar/raydar/tui/host"
	"github.com/raydar/raydar/tui/keys"
	"github.com/raydar/raydar/tui/table"
)

// kind is one entry of the registry of kinds (k9s' registrar): everything
// the TUI knows about a resource kind. Every place that differs by kind
// (the list page and its columns, the `:` aliases, the help, the actions a
// view offers, the drill-down, suspend/resume and delete, describe) reads
// it here; kinds.go holds the entries. An entry is constants and static
// functions, so building the registry costs nothing per App.
type kind struct {
	// list is the kind's list view; detail its detail view ("": none).
	list, detail ViewKind
	// title is the list's title ("RayClusters"); help says what the first
	// alias shows, in the help's Commands.
	title, help string
	// aliases are the `:` commands that show the list, separated by
	// spaces (k9s' short names); the first is the one the help and the
	// unknown-command message name.
	aliases string
	// watch is the store's kind of the objects.
	watch watch.Kind
	// lifecycle is the kind suspend/resume and delete act on ("": they do
	// not apply).
	lifecycle actions.Kind
	// listActions and detailActions name the DefaultActions each view
	// offers, separated by spaces, in hint order.
	listActions, detailActions string
	// typed is the kind's typed definition (defOf).
	typed typedKind
}

// aliasList is k's aliases.
func (k *kind) aliasList() []string { return strings.Fields(k.aliases) }

// def is the typed part of a kind's definition.
type def[V client.Object] struct {
	// columns are the list's columns, each with its cells.
	columns func() []column[V]
	// meta is what the table sorts, filters and colours by.
	meta func(V) table.Meta
	// open is the page Enter drills down to from the list (nil: none;
	// it may return nil when there is nothing to open).
	open func(e *host.Env, v V) host.Page
	// suspended says whether v is suspended (lifecycle kinds).
	suspended func(V) bool
	// describe adds the kind's fields to the describe page.
	describe func(d *format.Describer, v V)
	// children are the objects of another kind that belong to V by a
	// label (nil: none); the list keeps their count per object for its
	// count columns.
	children *children
	// keys are the page keys the list offers on its selected row (after
	// Enter), in hint order; the view actions are listActions.
	keys []rowKey[V]
}

// rowKey is a page key of a kind's list: it acts on the selected row.
type rowKey[V client.Object] struct {
	// binding picks the key from the KeyMap (rebindable in keys.yaml).
	binding func(*keys.KeyMap) key.Binding
	// run is the key's command for the selected object; it reads memory
	// only.
	run func(v V) tea.Cmd
}

// typedKind is what the registry asks of a kind's typed definition.
type typedKind interface {
	newList(e *host.Env, k *kind) host.Page
	suspended(obj client.Object) bool
	describe(d *format.Describer, obj client.Object)
}

// defOf adapts the function that returns a kind's definition to
// typedKind.
type defOf[V client.Object] func() def[V]

func (f defOf[V]) newList(e *host.Env, k *kind) host.Page { return newListPage(e, k, f()) }

func (f defOf[V]) suspended(obj client.Object) bool {
	v, ok := obj.(V)
	d := f()
	return ok && d.suspended != nil && d.suspended(v)
}

func (f defOf[V]) describe(ds *format.Describer, obj client.Object) {
	if v, ok := obj.(V); ok {
		if d := f(); d.describe != nil {
			d.describe(ds, v)
		}
	}
}

// registry is the kinds, in the order of the help's Commands. Lookups scan
// it: there are a handful.
type registry struct{ kinds []kind }

// byView returns the kind whose list or detail view v is.
func (r *registry) byView(v ViewKind) (*kind, bool) {
	for i := range r.kinds {
		if k := &r.kinds[i]; k.list == v || (k.detail != "" && k.detail == v) {
			return k, true
		}
	}
	return nil, false
}

// byAlias returns the kind a `:` command shows.
func (r *registry) byAlias(alias string) (*kind, bool) {
	for i := range r.kinds {
		for _, a := range r.kinds[i].aliasList() {
			if a == alias {
				return &r.kinds[i], true
			}
		}
	}
	return nil, false
}

// aliases is every kind's aliases.
func (r *registry) aliases() []string {
	var out []string
	for i := range r.kinds {
		out = append(out, r.kinds[i].aliasList()...)
	}
	return out
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
	for i := range r.kinds {
		if r.kinds[i].watch == wk {
			return &r.kinds[i]
		}
	}
	return nil
}

// lifecycleKinds names the kinds suspend/resume and delete apply to, for
// messages: "RayCluster, RayJob, RayService or RayCronJob".
func (r *registry) LifecycleKinds() string {
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
func (r *registry) IsDetail(v ViewKind) bool {
	k, ok := r.byView(v)
	return ok && k.detail == v
}

// Lifecycle implements Kinds.
func (r *registry) Lifecycle(obj client.Object) (kind actions.Kind, suspended, ok bool) {
	k := r.of(obj)
	if k == nil || k.lifecycle == "" {
		return "", false, false
	}
	return k.lifecycle, k.typed.suspended(obj), true
}

// Describe implements Kinds.
func (r *registry) Describe(d *format.Describer, obj client.Object) {
	if k := r.of(obj); k != nil {
		k.typed.describe(d, obj)
	}
}
