package registry

import (
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/kube/actions"
	"github.com/raydar/raydar/kube/watch"
	kdesc "github.com/raydar/raydar/rayapi/kinds"
	"github.com/raydar/raydar/tui/format"
	"github.com/raydar/raydar/tui/host"
	"github.com/raydar/raydar/tui/keys"
	"github.com/raydar/raydar/tui/table"
)

// Entry is one entry of the registry of kinds: everything the TUI knows
// about a resource kind. Every place that differs by kind (the list page
// and its columns, the `:` aliases, the help, the actions a view offers,
// the drill-down, suspend/resume and delete, describe) reads it; each
// kind's page package holds its entry (Entry()). What the kind is — its
// title, every name the `:` prompt and -c take, whether it is suspended —
// is its descriptor in rayapi/kinds, which the entry reads (FromDescriptor).
// An entry is constants and static functions, so building the registry
// costs nothing per App.
type Entry struct {
	// List is the kind's list view; Detail its detail view ("": none).
	List, Detail host.ViewKind
	// Title is the list's title ("RayClusters"); Help says what the first
	// alias shows, in the help's Commands (FromDescriptor: the title).
	Title, Help string
	// Aliases are the `:` commands that show the list, separated by
	// spaces (k9s' short names); the first is the one the help and the
	// unknown-command message name.
	Aliases string
	// Watch is the store's kind of the objects.
	Watch watch.Kind
	// Lifecycle is the kind suspend/resume and delete act on (nil: they do
	// not apply).
	Lifecycle actions.Kind
	// Suspend is how the kind is suspended, its descriptor's (nil: it
	// cannot be).
	Suspend *kdesc.Suspend
	// ListActions and DetailActions name the DefaultActions each view
	// offers, separated by spaces, in hint order.
	ListActions, DetailActions string
	// Typed is the kind's typed definition (DefOf).
	Typed Typed
}

// FromDescriptor is the part of an entry its descriptor says: the title
// (also the help line, which a page package may reword), the aliases
// (every name of the kind), the store kind and, for a kind that can be
// suspended, the lifecycle kind and how it is suspended. The page package
// adds its views, actions and Typed.
func FromDescriptor(d *kdesc.Kind) Entry {
	e := Entry{Title: d.Plural, Help: d.Plural, Aliases: strings.Join(d.Names, " "), Watch: watch.KindFor(d)}
	if d.Suspend != nil {
		e.Lifecycle, e.Suspend = d, d.Suspend
	}
	return e
}

// AliasList is e's aliases.
func (e *Entry) AliasList() []string { return strings.Fields(e.Aliases) }

// Def is the typed part of a kind's entry.
type Def[V client.Object] struct {
	// Columns are the list's columns, each with its cells.
	Columns func() []Column[V]
	// Meta is what the table sorts, filters and colours by.
	Meta func(V) table.Meta
	// Open is the page Enter drills down to from the list (nil: none;
	// it may return nil when there is nothing to open).
	Open func(e *host.Env, v V) host.Page
	// Describe adds the kind's fields to the describe page.
	Describe func(d *format.Describer, v V)
	// Children are the objects of another kind that belong to V by a
	// label (nil: none); the list keeps their count per object for its
	// count columns.
	Children *Children
	// Keys are the page keys the list offers on its selected row (after
	// Enter), in hint order; the view actions are ListActions.
	Keys []RowKey[V]
}

// RowKey is a page key of a kind's list: it acts on the selected row.
type RowKey[V client.Object] struct {
	// Binding picks the key from the KeyMap (rebindable in keys.yaml).
	Binding func(*keys.KeyMap) key.Binding
	// Run is the key's command for the selected object, with the Env of
	// its context (the list's, or in a fleet view the row's member's); it
	// reads memory only.
	Run func(e *host.Env, v V) tea.Cmd
}

// Typed is what the registry asks of a kind's typed definition.
type Typed interface {
	NewList(e *host.Env, k *Entry) host.Page
	Describe(d *format.Describer, obj client.Object)
	// Open is Def.Open for obj (nil: obj is not the kind's, or the kind
	// opens nothing).
	Open(e *host.Env, obj client.Object) host.Page
}

// DefOf adapts the function that returns a kind's definition to Typed.
type DefOf[V client.Object] func() Def[V]

// NewList is the list page of the kind's definition.
func (f DefOf[V]) NewList(e *host.Env, k *Entry) host.Page { return NewList(e, k, f()) }

// Describe adds the kind's own fields of obj, when obj is a V and the
// definition describes.
func (f DefOf[V]) Describe(ds *format.Describer, obj client.Object) {
	if v, ok := obj.(V); ok {
		if d := f(); d.Describe != nil {
			d.Describe(ds, v)
		}
	}
}

// Open is the page the definition opens for obj (Def.Open), when obj is a
// V and the definition opens one; nil otherwise.
func (f DefOf[V]) Open(e *host.Env, obj client.Object) host.Page {
	if v, ok := obj.(V); ok {
		if d := f(); d.Open != nil {
			return d.Open(e, v)
		}
	}
	return nil
}
