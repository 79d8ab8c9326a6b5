package tui

import (
	"context"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/kube/watch"
	"github.com/raydar/raydar/tui/keys"
	"github.com/raydar/raydar/tui/styles"
	"github.com/raydar/raydar/tui/table"
)

// env is what every page shares (soft-serve's Common): styles, keys, the
// clock, the store of the current session and the session's context.
type env struct {
	st    *styles.Styles
	km    *keys.KeyMap
	now   func() time.Time
	store *watch.Store
	sess  Session
	ctx   context.Context
}

// page is one view in the stack. Pages are components: a model with a key
// map (help) and a size.
type page interface {
	kind() ViewKind
	// title is the title bar's resource name; crumb the breadcrumb.
	title() string
	crumb() string
	setSize(w, h int)
	setNamespace(ns string)
	// apply brings the page up to date with a store change.
	apply(ch *watch.Changes)
	// update handles a key the app did not; it reports whether it did.
	update(msg tea.KeyPressMsg) (bool, tea.Cmd)
	view() string
	// open returns the page Enter drills down to (nil: none); canOpen says
	// cheaply whether there may be one (for hints and help).
	open() page
	canOpen() bool
	target() Target
	// keys lists the page's own bindings for help and hints.
	keys() []key.Binding
	// tbl is the page's table for filter, sort and marks (nil: none).
	tbl() tabler
}

// tabler is the part of table.Model the app drives without knowing V.
type tabler interface {
	SetFilter(string) error
	Filter() string
	Len() int
	Total() int
	MarkCount() int
	Sorting() (table.SortKey, bool)
	HandleKey(tea.KeyPressMsg) bool
}

// listPage is the list view of one kind, over the generic table.
type listPage[V client.Object] struct {
	e     *env
	vk    ViewKind
	wk    watch.Kind
	name  string
	t     *table.Model[V]
	drill func(V) page
}

func newListPage[V client.Object](e *env, vk ViewKind, wk watch.Kind, name string, spec table.Spec[V], drill func(V) page) *listPage[V] {
	spec.ID = func(v V) string { return string(watch.Key(v)) }
	p := &listPage[V]{e: e, vk: vk, wk: wk, name: name, t: table.New(spec, e.st, e.km, e.now), drill: drill}
	objs := e.store.List(wk)
	vs := make([]V, 0, len(objs))
	for _, o := range objs {
		if v, ok := o.(V); ok {
			vs = append(vs, v)
		}
	}
	p.t.Apply(vs, nil)
	return p
}

func (p *listPage[V]) kind() ViewKind                             { return p.vk }
func (p *listPage[V]) title() string                              { return p.name }
func (p *listPage[V]) crumb() string                              { return p.vk.String() }
func (p *listPage[V]) setSize(w, h int)                           { p.t.SetSize(w, h) }
func (p *listPage[V]) setNamespace(ns string)                     { p.t.SetNamespace(ns) }
func (p *listPage[V]) view() string                               { return p.t.View() }
func (p *listPage[V]) tbl() tabler                                { return p.t }
func (p *listPage[V]) update(msg tea.KeyPressMsg) (bool, tea.Cmd) { return p.t.HandleKey(msg), nil }

func (p *listPage[V]) keys() []key.Binding {
	if p.drill == nil {
		return nil
	}
	return []key.Binding{p.e.km.Open}
}

func (p *listPage[V]) apply(ch *watch.Changes) {
	if !ch.Any(p.wk) {
		return
	}
	up := make([]V, 0, len(ch.Upserted[p.wk]))
	for _, o := range ch.Upserted[p.wk] {
		if v, ok := o.(V); ok {
			up = append(up, v)
		}
	}
	del := make([]string, 0, len(ch.Deleted[p.wk]))
	for _, o := range ch.Deleted[p.wk] {
		del = append(del, string(watch.Key(o)))
	}
	p.t.Apply(up, del)
}

func (p *listPage[V]) canOpen() bool { return p.drill != nil && p.t.Len() > 0 }

func (p *listPage[V]) open() page {
	v, ok := p.t.Selected()
	if !ok || p.drill == nil {
		return nil
	}
	return p.drill(v)
}

func (p *listPage[V]) target() Target {
	t := Target{View: p.vk, Namespace: p.t.Namespace()}
	if v, ok := p.t.Selected(); ok {
		t.Selected = v
	}
	for _, v := range p.t.Marked() {
		t.Marked = append(t.Marked, v)
	}
	return t
}

// uidSet is a set of object UIDs a detail page depends on.
type uidSet = map[types.UID]bool
