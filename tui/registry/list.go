package registry

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"k8s.io/apimachinery/pkg/types"
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
	var count func(V) int
	if kids != nil {
		count = func(v V) int { return kids.count(v) }
	}
	var why func(V) string
	if diag != nil {
		why = func(v V) string { return diag.Cell(watch.Key(v)) }
	}
	return spec(cols, meta, count, why, func(v V) string { return string(watch.Key(v)) })
}

// spec is Spec with each source a function: count, the children of an
// object (nil: none); why, its WHY cell (nil: none); id, its row ID.
func spec[V client.Object](cols []Column[V], meta func(V) table.Meta, count func(V) int, why func(V) string, id func(V) string) table.Spec[V] {
	tcols := make([]table.Column, len(cols))
	cells := make([]func(V) string, len(cols))
	type liveCell struct {
		i    int
		live func(V, time.Time) string
	}
	lives := make([]liveCell, 0, len(cols))
	for i, c := range cols {
		tcols[i], cells[i] = c.Column, c.Cell
		if cc := c.Count; cc != nil && count != nil {
			cells[i] = func(v V) string { return cc(v, count(v)) }
		}
		if c.Why && why != nil {
			cells[i] = why
		}
		if c.Live != nil {
			lives = append(lives, liveCell{i, c.Live})
		}
	}
	s := table.Spec[V]{
		Columns: tcols,
		ID:      id,
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

// ListPage is the list view of one kind, over the generic table. In a
// fleet view (Env.Fleet) it shows the objects of every member, each row
// keyed by its member and UID (two clusters may hold objects of the same
// namespace, name and even UID), with a CONTEXT column.
type ListPage[V client.Object] struct {
	host.Base
	k     *Entry
	t     *table.Model[V]
	drill func(*host.Env, V) host.Page
	// rowKeys are the kind's page keys (Def.Keys).
	rowKeys []RowKey[V]
	// kids counts the objects' children (nil: the kind has none).
	kids *childIndex
	// fleet are the members whose objects a fleet view's list shows, with
	// their child indexes (nil: E's store alone).
	fleet []fleetMember
	// at is the member whose objects the table projects: the table calls
	// the Spec's ID and cells inside Apply only, and every Apply of a
	// fleet list projects one member's objects (project), so its ID,
	// CONTEXT, WHY and count cells read the member here.
	at int
}

// fleetMember is one context of a fleet list.
type fleetMember struct {
	e    *host.Env
	kids *childIndex
	// prefix starts the IDs of its rows: its index, zero-padded to the
	// width of the last one so that rows equal in every sort key (the
	// table's last tie-break is the ID) keep the contexts' order past
	// nine members, and a slash (a UID has none).
	prefix string
}

// ContextColumn is the CONTEXT column of a fleet view's lists: the kube
// context a row's object lives in. A single context's lists have none.
var ContextColumn = table.Column{Title: "CONTEXT", Width: 12, Grow: true, Min: 8}

// contextCell is a fleet row's CONTEXT cell: its context, and "(stale)"
// while that context's connection is lost.
func contextCell(e *host.Env) string {
	if e.Stale {
		return e.Sess.Context + " (stale)"
	}
	return e.Sess.Context
}

// Reproject projects member e's rows again (its CONTEXT cells changed:
// stale, or no longer).
func (p *ListPage[V]) Reproject(e *host.Env) {
	for i, m := range p.fleet {
		if m.e == e {
			p.project(i, listOf[V](m.e.Store, p.k.Watch), nil)
		}
	}
}

// NewList is the list page of kind k with its definition d.
func NewList[V client.Object](e *host.Env, k *Entry, d Def[V]) *ListPage[V] {
	p := &ListPage[V]{Base: host.Base{E: e, VK: k.List}, k: k, drill: d.Open, rowKeys: d.Keys}
	if len(e.Fleet) > 1 {
		p.newFleet(d)
		return p
	}
	if d.Children != nil {
		p.kids = newChildIndex(*d.Children, e.Store)
	}
	p.t = table.New(Spec(d.Columns(), d.Meta, p.kids, e.Why), e.St, e.KM, e.Now)
	p.t.Apply(listOf[V](e.Store, k.Watch), nil)
	return p
}

// listOf is every object of kind wk in store, as V.
func listOf[V client.Object](store *watch.Store, wk watch.Kind) []V {
	objs := store.List(wk)
	vs := make([]V, 0, len(objs))
	for _, o := range objs {
		if v, ok := o.(V); ok {
			vs = append(vs, v)
		}
	}
	return vs
}

// newFleet builds a fleet view's list: the CONTEXT column first, then the
// kind's; every member's objects.
func (p *ListPage[V]) newFleet(d Def[V]) {
	width := len(strconv.Itoa(len(p.E.Fleet) - 1))
	for i, m := range p.E.Fleet {
		fm := fleetMember{e: m, prefix: fmt.Sprintf("%0*d/", width, i)}
		if d.Children != nil {
			fm.kids = newChildIndex(*d.Children, m.Store)
		}
		p.fleet = append(p.fleet, fm)
	}
	cols := append([]Column[V]{{Column: ContextColumn, Cell: func(V) string { return contextCell(p.fleet[p.at].e) }}}, d.Columns()...)
	var count func(V) int
	if d.Children != nil {
		count = func(v V) int { return p.fleet[p.at].kids.count(v) }
	}
	why := func(v V) string {
		if w := p.fleet[p.at].e.Why; w != nil {
			return w.Cell(watch.Key(v))
		}
		return ""
	}
	id := func(v V) string { return p.fleet[p.at].prefix + string(watch.Key(v)) }
	p.t = table.New(spec(cols, d.Meta, count, why, id), p.E.St, p.E.KM, p.E.Now)
	for i, m := range p.fleet {
		p.project(i, listOf[V](m.e.Store, p.k.Watch), nil)
	}
}

// project applies member i's upserted objects and deleted UIDs to the
// table (fleet lists).
func (p *ListPage[V]) project(i int, up []V, del []types.UID) {
	p.at = i
	ids := make([]string, len(del))
	for j, u := range del {
		ids[j] = p.fleet[i].prefix + string(u)
	}
	p.t.Apply(up, ids)
}

// member is the fleet member of a row ID (-1: not a fleet row).
func (p *ListPage[V]) member(id string) int {
	n, _, ok := strings.Cut(id, "/")
	if !ok || p.fleet == nil {
		return -1
	}
	i, err := strconv.Atoi(n)
	if err != nil || i < 0 || i >= len(p.fleet) {
		return -1
	}
	return i
}

// selected is the row under the cursor and the Env of its context (the
// member's in a fleet view, E otherwise).
func (p *ListPage[V]) selected() (V, *host.Env, bool) {
	v, ok := p.t.Selected()
	if !ok {
		return v, nil, false
	}
	if p.fleet == nil {
		return v, p.E, true
	}
	i := p.member(p.t.SelectedID())
	if i < 0 {
		return v, nil, false
	}
	return v, p.fleet[i].e, true
}

// Title is the kind's title.
func (p *ListPage[V]) Title() string { return p.k.Title }

// Crumb is the view's name.
func (p *ListPage[V]) Crumb() string { return p.VK.String() }

// SetSize sizes the table.
func (p *ListPage[V]) SetSize(w, h int) { p.t.SetSize(w, h) }

// SetNamespace scopes the table to ns ("": all namespaces).
func (p *ListPage[V]) SetNamespace(ns string) { p.t.SetNamespace(ns) }

// View is the table.
func (p *ListPage[V]) View() string { return p.t.View() }

// Table is the list's table.
func (p *ListPage[V]) Table() host.Tabler { return p.t }

// Visible is the list's visible objects, in row order.
func (p *ListPage[V]) Visible() []V { return p.t.Visible() }

// ClustersShown are the RayClusters among the rows on screen (none in
// the lists of other kinds): their autoscaler access is asked while the
// list is on top, so that their WHY cells can say it is refused. A fleet
// list names them per member (ClustersShownIn).
func (p *ListPage[V]) ClustersShown() []*rayv1.RayCluster {
	if p.fleet != nil {
		return nil
	}
	return p.clustersOnScreen(func(string) bool { return true })
}

// ClustersShownIn are the RayClusters of member e among the rows on
// screen (fleet lists).
func (p *ListPage[V]) ClustersShownIn(e *host.Env) []*rayv1.RayCluster {
	for _, m := range p.fleet {
		if m.e == e {
			return p.clustersOnScreen(func(id string) bool { return strings.HasPrefix(id, m.prefix) })
		}
	}
	return nil
}

func (p *ListPage[V]) clustersOnScreen(in func(id string) bool) []*rayv1.RayCluster {
	if p.k.Watch != watch.RayCluster {
		return nil
	}
	var out []*rayv1.RayCluster
	ids := p.t.OnScreenIDs()
	for j, v := range p.t.OnScreen() {
		if rc, ok := any(v).(*rayv1.RayCluster); ok && in(ids[j]) {
			out = append(out, rc)
		}
	}
	return out
}

// Update runs the kind's row key that msg matches on the selected row (a
// key with no row selected does nothing); other keys go to the table.
func (p *ListPage[V]) Update(msg tea.KeyPressMsg) (bool, tea.Cmd) {
	for _, rk := range p.rowKeys {
		if key.Matches(msg, rk.Binding(p.E.KM)) {
			v, e, ok := p.selected()
			if !ok {
				return true, nil
			}
			return true, rk.Run(e, v)
		}
	}
	return p.t.HandleKey(msg), nil
}

// Keys are Enter, when rows drill down, and the kind's row keys.
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

// Apply brings a single context's list up to date (a fleet list takes
// its members' changes through ApplyFrom).
func (p *ListPage[V]) Apply(ch *watch.Changes) {
	if p.fleet != nil {
		return
	}
	up, del := p.changed(p.E.Store, p.kids, ch)
	if up == nil && del == nil {
		return
	}
	ids := make([]string, len(del))
	for j, u := range del {
		ids[j] = string(u)
	}
	p.t.Apply(up, ids)
}

// ApplyFrom brings a fleet list up to date with member e's changes.
func (p *ListPage[V]) ApplyFrom(e *host.Env, ch *watch.Changes) {
	for i, m := range p.fleet {
		if m.e == e {
			if up, del := p.changed(m.e.Store, m.kids, ch); up != nil || del != nil {
				p.project(i, up, del)
			}
			return
		}
	}
}

// changed is what ch changes in the list of one store: the objects to
// project (new or changed, and owners whose count changed) and the UIDs
// deleted; both nil when nothing.
func (p *ListPage[V]) changed(store *watch.Store, kids *childIndex, ch *watch.Changes) ([]V, []types.UID) {
	wk := p.k.Watch
	var owners []parentRef
	if kids != nil && ch.Any(kids.Watch) {
		owners = kids.Apply(ch)
	}
	if !ch.Any(wk) && len(owners) == 0 {
		return nil, nil
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
		if o, ok := store.Find(wk, r.ns, r.name); ok {
			if v, ok := o.(V); ok {
				up = append(up, v)
			}
		}
	}
	del := make([]types.UID, 0, len(ch.Deleted[wk]))
	for _, o := range ch.Deleted[wk] {
		del = append(del, watch.Key(o))
	}
	return up, del
}

// ApplyWhy projects again the rows whose WHY cell changed.
func (p *ListPage[V]) ApplyWhy() {
	if p.fleet == nil {
		if up := whyChanged[V](p.E, p.k.Watch); len(up) > 0 {
			p.t.Apply(up, nil)
		}
		return
	}
	for i, m := range p.fleet {
		if up := whyChanged[V](m.e, p.k.Watch); len(up) > 0 {
			p.project(i, up, nil)
		}
	}
}

// whyChanged are the objects of kind wk in e's store whose WHY changed.
func whyChanged[V client.Object](e *host.Env, wk watch.Kind) []V {
	if e.Why == nil {
		return nil
	}
	uids := e.Why.Changed[wk]
	up := make([]V, 0, len(uids))
	for _, u := range uids {
		if o, ok := e.Store.Get(wk, u); ok {
			if v, ok := o.(V); ok {
				up = append(up, v)
			}
		}
	}
	return up
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

// CanOpen says whether rows drill down and there is one.
func (p *ListPage[V]) CanOpen() bool { return p.drill != nil && p.t.Len() > 0 }

// Open is the drill-down of the selected row, in its context's Env.
func (p *ListPage[V]) Open() host.Page {
	v, e, ok := p.selected()
	if !ok || p.drill == nil {
		return nil
	}
	return p.drill(e, v)
}

// Target is the selected row and the marked ones; in a fleet view its Env
// is the selected row's context's, and only that context's marked rows
// are in it (an action never reaches two clusters at once).
func (p *ListPage[V]) Target() host.Target {
	t := host.Target{View: p.VK, Namespace: p.t.Namespace()}
	v, e, ok := p.selected()
	if ok {
		t.Selected = v
	}
	if p.fleet == nil {
		for _, v := range p.t.Marked() {
			t.Marked = append(t.Marked, v)
		}
		return t
	}
	t.Env = e
	if !ok {
		return t
	}
	in := p.member(p.t.SelectedID())
	for _, id := range p.t.MarkedIDs() {
		if p.member(id) != in {
			continue
		}
		if v, ok := p.t.Get(id); ok {
			t.Marked = append(t.Marked, v)
		}
	}
	return t
}
