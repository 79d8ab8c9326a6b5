package registry

import (
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/kube/watch"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/tui/diagnose"
	"github.com/raydar/raydar/tui/format"
	"github.com/raydar/raydar/tui/host"
	"github.com/raydar/raydar/tui/styles"
	"github.com/raydar/raydar/tui/table"
)

// Column is one column of a list: its header, width and sort key
// (table.Column) and its cell. Cell runs when the object changes (the
// table caches it); Live, for time-dependent cells (ages, durations),
// runs for the visible rows at draw time instead; Count, for a kind
// with children (Def.Children), gets the object's number of children and
// runs, like Cell, when the object or that number changes.
type Column[V any] struct {
	table.Column
	Cell  func(V) string
	Live  func(v V, now time.Time) string
	Count func(v V, n int) string
	// Why marks the WHY column: its cell is the object's cached
	// diagnosis (diagnose.Diagnoses.Cell), projected again when that changes.
	Why bool
}

// Spec is the table's projection of a kind's columns. It keeps only the
// cell functions (not cols), so a list holds no more than its table. kids
// counts the children of count cells (nil: the kind has none).
func Spec[V client.Object](cols []Column[V], meta func(V) table.Meta, kids *childIndex, diag *diagnose.Diagnoses) table.Spec[V] {
	tcols := make([]table.Column, len(cols))
	cells := make([]func(V) string, len(cols))
	type liveCell struct {
		i    int
		live func(V, time.Time) string
	}
	lives := make([]liveCell, 0, len(cols))
	for i, c := range cols {
		tcols[i], cells[i] = c.Column, c.Cell
		if count := c.Count; count != nil && kids != nil {
			cells[i] = func(v V) string { return count(v, kids.count(v)) }
		}
		if c.Why && diag != nil {
			cells[i] = func(v V) string { return diag.Cell(watch.Key(v)) }
		}
		if c.Live != nil {
			lives = append(lives, liveCell{i, c.Live})
		}
	}
	s := table.Spec[V]{
		Columns: tcols,
		ID:      func(v V) string { return string(watch.Key(v)) },
		Meta:    meta,
		Cells: func(v V) []string {
			out := make([]string, len(cells))
			for i, cell := range cells {
				if cell != nil {
					out[i] = cell(v)
				}
			}
			return out
		},
	}
	if len(lives) > 0 {
		s.Live = func(v V, now time.Time, c []string) {
			for _, l := range lives {
				c[l.i] = l.live(v, now)
			}
		}
	}
	return s
}

// NameCol is the NAME column.
func NameCol[V client.Object]() Column[V] {
	return Column[V]{Column: table.Column{Title: "NAME", Width: 24, Grow: true, Min: 14, Sort: table.ByName},
		Cell: func(v V) string { return v.GetName() }}
}

// NsCol is the NAMESPACE column (hidden in one namespace).
func NsCol[V client.Object]() Column[V] {
	return Column[V]{Column: table.Column{Title: "NAMESPACE", Width: 12, Namespace: true},
		Cell: func(v V) string { return v.GetNamespace() }}
}

// AgeCol is the AGE column, from the creation time; drop is its table.Column
// Drop (0: it stays at any width).
func AgeCol[V client.Object](drop int) Column[V] {
	c := format.AgeColumn()
	c.Drop = drop
	return Column[V]{Column: c, Live: func(v V, now time.Time) string { return format.Age(now, v.GetCreationTimestamp().Time) }}
}

// MetaBy is the Def.Meta of a kind whose table sorts, filters and colours by
// its STATUS word (status, the STATUS column's cell).
func MetaBy[V client.Object](status func(V) string) func(V) table.Meta {
	return func(v V) table.Meta { return format.ObjMeta(v, status(v)) }
}

// ListPage is the list view of one kind, over the generic table.
type ListPage[V client.Object] struct {
	host.Base
	k     *Entry
	t     *table.Model[V]
	drill func(*host.Env, V) host.Page
	// rowKeys are the kind's page keys (Def.Keys).
	rowKeys []RowKey[V]
	// kids counts the objects' children (nil: the kind has none).
	kids *childIndex
}

// NewList is the list page of kind k with its definition d.
func NewList[V client.Object](e *host.Env, k *Entry, d Def[V]) *ListPage[V] {
	p := &ListPage[V]{Base: host.Base{E: e, VK: k.List}, k: k, drill: d.Open, rowKeys: d.Keys}
	if d.Children != nil {
		p.kids = newChildIndex(*d.Children, e.Store)
	}
	p.t = table.New(Spec(d.Columns(), d.Meta, p.kids, e.Why), e.St, e.KM, e.Now)
	objs := e.Store.List(k.Watch)
	vs := make([]V, 0, len(objs))
	for _, o := range objs {
		if v, ok := o.(V); ok {
			vs = append(vs, v)
		}
	}
	p.t.Apply(vs, nil)
	return p
}

func (p *ListPage[V]) Title() string          { return p.k.Title }
func (p *ListPage[V]) Crumb() string          { return p.VK.String() }
func (p *ListPage[V]) SetSize(w, h int)       { p.t.SetSize(w, h) }
func (p *ListPage[V]) SetNamespace(ns string) { p.t.SetNamespace(ns) }
func (p *ListPage[V]) View() string           { return p.t.View() }
func (p *ListPage[V]) Table() host.Tabler     { return p.t }

// Visible is the list's visible objects, in row order.
func (p *ListPage[V]) Visible() []V { return p.t.Visible() }

// ClustersShown are the RayClusters among the rows on screen (none in
// the lists of other kinds): their autoscaler access is asked while the
// list is on top, so that their WHY cells can say it is refused.
func (p *ListPage[V]) ClustersShown() []*rayv1.RayCluster {
	if p.k.Watch != watch.RayCluster {
		return nil
	}
	var out []*rayv1.RayCluster
	for _, v := range p.t.OnScreen() {
		if rc, ok := any(v).(*rayv1.RayCluster); ok {
			out = append(out, rc)
		}
	}
	return out
}

// update runs the kind's row key that msg matches on the selected row (a
// key with no row selected does nothing); other keys go to the table.
func (p *ListPage[V]) Update(msg tea.KeyPressMsg) (bool, tea.Cmd) {
	for _, rk := range p.rowKeys {
		if key.Matches(msg, rk.Binding(p.E.KM)) {
			v, ok := p.t.Selected()
			if !ok {
				return true, nil
			}
			return true, rk.Run(v)
		}
	}
	return p.t.HandleKey(msg), nil
}

func (p *ListPage[V]) Keys() []key.Binding {
	var bs []key.Binding
	if p.drill != nil {
		bs = append(bs, p.E.KM.Open)
	}
	for _, rk := range p.rowKeys {
		bs = append(bs, rk.Binding(p.E.KM))
	}
	return bs
}

func (p *ListPage[V]) Apply(ch *watch.Changes) {
	wk := p.k.Watch
	var owners []parentRef
	if p.kids != nil && ch.Any(p.kids.Watch) {
		owners = p.kids.Apply(ch)
	}
	if !ch.Any(wk) && len(owners) == 0 {
		return
	}
	up := make([]V, 0, len(ch.Upserted[wk])+len(owners))
	seen := make(map[parentRef]bool, len(ch.Upserted[wk]))
	for _, o := range ch.Upserted[wk] {
		if v, ok := o.(V); ok {
			up = append(up, v)
			seen[parentRef{v.GetNamespace(), v.GetName()}] = true
		}
	}
	// Owners whose count changed are projected again (their count cells).
	for _, r := range owners {
		if seen[r] {
			continue
		}
		seen[r] = true
		if o, ok := p.E.Store.Find(wk, r.ns, r.name); ok {
			if v, ok := o.(V); ok {
				up = append(up, v)
			}
		}
	}
	del := make([]string, 0, len(ch.Deleted[wk]))
	for _, o := range ch.Deleted[wk] {
		del = append(del, string(watch.Key(o)))
	}
	p.t.Apply(up, del)
}

// ApplyWhy projects again the rows whose WHY cell changed.
func (p *ListPage[V]) ApplyWhy() {
	if p.E.Why == nil {
		return
	}
	uids := p.E.Why.Changed[p.k.Watch]
	if len(uids) == 0 {
		return
	}
	up := make([]V, 0, len(uids))
	for _, u := range uids {
		if o, ok := p.E.Store.Get(p.k.Watch, u); ok {
			if v, ok := o.(V); ok {
				up = append(up, v)
			}
		}
	}
	p.t.Apply(up, nil)
}

// WhyCol is the WHY column: the most decisive cause's summary, "(+N)" for
// more, in warning colour; empty when all is well. Its natural width is
// what the list has left at 80 columns once the other droppable columns
// are gone; it grows into spare width (up to 3× that), shrinks to min, and
// is the last column to drop (Drop 1, after any other Drop 1 column), so
// the key columns stay readable.
func WhyCol[V client.Object](width, min int) Column[V] {
	return Column[V]{Column: table.Column{Title: "WHY", Width: width, Grow: true, Min: min, Drop: 1, Class: styles.Warn}, Why: true}
}

func (p *ListPage[V]) CanOpen() bool { return p.drill != nil && p.t.Len() > 0 }

func (p *ListPage[V]) Open() host.Page {
	v, ok := p.t.Selected()
	if !ok || p.drill == nil {
		return nil
	}
	return p.drill(p.E, v)
}

func (p *ListPage[V]) Target() host.Target {
	t := host.Target{View: p.VK, Namespace: p.t.Namespace()}
	if v, ok := p.t.Selected(); ok {
		t.Selected = v
	}
	for _, v := range p.t.Marked() {
		t.Marked = append(t.Marked, v)
	}
	return t
}
