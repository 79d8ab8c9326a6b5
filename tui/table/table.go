package table

import (
	"strings"
	"time"

	"charm.land/lipgloss/v2"

	"github.com/raydar/raydar/tui/keys"
	"github.com/raydar/raydar/tui/styles"
)

// Column describes one column.
type Column struct {
	Title string
	// Width is the natural width in cells.
	Width int
	// Grow columns share the spare width and shrink down to Min when the
	// terminal is narrow.
	Grow bool
	Min  int
	// Right aligns the column to the right (numbers).
	Right bool
	// Drop > 0 lets the column disappear when the terminal is too narrow;
	// the highest Drop goes first.
	Drop int
	// Namespace columns are hidden while the table is scoped to one
	// namespace.
	Namespace bool
	// Sort marks the column whose title carries the sort indicator for
	// that key (0: none).
	Sort SortKey
	// Class, if not Neutral, styles the column's non-empty cells with that
	// status class instead of the row's (a WHY cell in warning colour);
	// the selected and marked rows keep their own style.
	Class styles.Class
}

// Meta is what the table needs to know about an item besides its cells.
type Meta struct {
	Namespace string
	Name      string
	Created   time.Time
	Status    string
	Class     styles.Class
	Labels    map[string]string
	// Group keeps rows together whatever the sort: rows are ordered by
	// Group first (ascending, never reversed), then by the sort key. Tree
	// views use it to keep pods under their worker group.
	Group string
}

// Spec tells the table how to project items of type V.
type Spec[V any] struct {
	Columns []Column
	ID      func(V) string
	Meta    func(V) Meta
	// Cells projects an item into one string per column. It runs only when
	// the item is added or changed; the result is cached.
	Cells func(V) []string
	// Live, if set, rewrites the time-dependent cells (ages, durations) of
	// the visible rows at draw time; cells is a scratch copy.
	Live func(v V, now time.Time, cells []string)
	// Markable, if set, says which items may be marked; the others are
	// skipped by a range and refused by ToggleMark. nil: every item.
	Markable func(v V) bool
	// NoMarks says no row is ever marked: no action of the table's view
	// takes marks, so the view neither offers nor shows them.
	NoMarks bool
}

type entry[V any] struct {
	id    string
	v     V
	meta  Meta
	cells []string
	text  string // cells joined, in lower case, for the filter
	ascii bool   // text is ASCII (the filter's fast paths)
}

const (
	gap     = 2 // spaces between columns
	prefixW = 2 // cursor glyph + mark glyph
	// incrementalLimit is the number of moved rows up to which Apply
	// inserts and removes by binary search instead of re-sorting.
	incrementalLimit = 64
)

// Model is the table. Create it with New; it is used through a pointer.
type Model[V any] struct {
	spec Spec[V]
	st   *styles.Styles
	km   *keys.KeyMap
	now  func() time.Time

	items map[string]*entry[V]
	rows  []*entry[V] // visible rows in order
	// order is every item in sort order, so that a filter change is one
	// pass without a sort; nil when stale (rebuild sorts it again).
	order []*entry[V]
	// base is every item in name order (name, namespace, ID: compare's
	// tie-break), kept across sorts (sortkeys.go); nil when not built yet.
	base []*entry[V]

	cursor, offset int
	selID          string

	marks  map[string]struct{}
	anchor string

	sortKey SortKey
	desc    bool
	filter  Filter
	ns      string
	// rows are exactly the items that pass the namespace and the filter
	// (visible), so nothing is kept per entry to say which: a re-sort with
	// neither copies the order without visiting the items (at 100,000 rows
	// that visit, a cache miss per entry, was 40% of a re-sort).
	//
	// text is the rows' filter texts end to end while a literal filter is
	// typed (textindex.go); rowsGen counts the changes to rows and to the
	// items' texts, so that text is used only while it matches them.
	text    textIndex
	rowsGen uint64

	width, height int
	widths        []int // per column; 0 = hidden
	scratch       []string
	sb            strings.Builder
	lb            strings.Builder

	// escape codes around a row, by status class, and for the selected and
	// marked rows (Render per row costs more than the rest of a frame)
	classCodes [styles.Done + 1][2]string
	// cellCodes are each column's Class codes (nil: none has one)
	cellCodes           [][2]string
	selCodes, markCodes [2]string
}

// New returns an empty table sorted by name.
func New[V any](spec Spec[V], st *styles.Styles, km *keys.KeyMap, now func() time.Time) *Model[V] {
	if now == nil {
		now = time.Now
	}
	m := &Model[V]{
		spec:    spec,
		st:      st,
		km:      km,
		now:     now,
		sortKey: ByName,
		items:   map[string]*entry[V]{},
	}
	codes := func(s lipgloss.Style) [2]string {
		if st.Plain {
			return [2]string{}
		}
		b, a := styles.Codes(s)
		return [2]string{b, a}
	}
	for c := range m.classCodes {
		m.classCodes[c] = codes(st.Class(styles.Class(c)))
	}
	m.selCodes, m.markCodes = codes(st.Selected), codes(st.Marked)
	for i, c := range spec.Columns {
		if c.Class != styles.Neutral && !st.Plain {
			if m.cellCodes == nil {
				m.cellCodes = make([][2]string, len(spec.Columns))
			}
			m.cellCodes[i] = codes(st.Class(c.Class))
		}
	}
	return m
}

// SetSize sets the table's size; height includes the column header line.
func (m *Model[V]) SetSize(width, height int) {
	m.width, m.height = width, height
	m.layout()
	m.clampOffset()
}

// Namespace is the namespace scope ("" = all).
func (m *Model[V]) Namespace() string { return m.ns }

// Len is the number of visible rows.
func (m *Model[V]) Len() int { return len(m.rows) }

// Total is the number of items, filtered out or not.
func (m *Model[V]) Total() int { return len(m.items) }

// Selected returns the item under the cursor.
func (m *Model[V]) Selected() (V, bool) {
	if len(m.rows) == 0 {
		var zero V
		return zero, false
	}
	return m.rows[m.cursor].v, true
}

// SelectedRow is the selected row's cells as shown: its time-dependent
// cells brought up to date, the columns hidden at this width (or by the
// namespace scope) left out, nothing cut to the column's width. nil when
// no row is selected.
func (m *Model[V]) SelectedRow() []string {
	if m.cursor < 0 || m.cursor >= len(m.rows) {
		return nil
	}
	e := m.rows[m.cursor]
	cells := append([]string(nil), e.cells...)
	if m.spec.Live != nil {
		m.spec.Live(e.v, m.now(), cells)
	}
	if m.widths == nil {
		return cells
	}
	out := make([]string, 0, len(cells))
	for i, c := range cells {
		if i < len(m.widths) && m.widths[i] > 0 {
			out = append(out, c)
		}
	}
	return out
}

// SelectedID is the ID of the item under the cursor ("" if none).
func (m *Model[V]) SelectedID() string { return m.selID }

// Cursor is the index of the selected row among the visible rows.
func (m *Model[V]) Cursor() int { return m.cursor }

// Select moves the cursor to the item with the given ID if it is visible.
func (m *Model[V]) Select(id string) bool {
	e, ok := m.items[id]
	if !ok || !m.visible(e) {
		return false
	}
	m.cursor = m.search(e)
	m.clampOffset()
	m.syncSel()
	return true
}

// Get returns an item by ID, visible or not.
func (m *Model[V]) Get(id string) (V, bool) {
	e, ok := m.items[id]
	if !ok {
		var zero V
		return zero, false
	}
	return e.v, true
}

// Visible returns the visible items in order (for tests and actions).
func (m *Model[V]) Visible() []V {
	out := make([]V, len(m.rows))
	for i, e := range m.rows {
		out[i] = e.v
	}
	return out
}

// OnScreen returns the rows the viewport shows, in order: what costs that
// follow the screen (a request per row) are asked for.
func (m *Model[V]) OnScreen() []V { return values(m.onScreenRows()) }

// OnScreenIDs are the IDs of OnScreen's rows, in the same order.
func (m *Model[V]) OnScreenIDs() []string { return ids(m.onScreenRows()) }

// onScreenRows are the rows the viewport shows (a subslice of rows).
func (m *Model[V]) onScreenRows() []*entry[V] {
	from := clamp(m.offset, 0, len(m.rows))
	to := min(from+m.pageRows(), len(m.rows))
	return m.rows[from:to]
}

// values are the items of rows, in order (nil for none).
func values[V any](rows []*entry[V]) []V {
	if len(rows) == 0 {
		return nil
	}
	out := make([]V, len(rows))
	for i, e := range rows {
		out[i] = e.v
	}
	return out
}

// ids are the IDs of rows, in order (nil for none).
func ids[V any](rows []*entry[V]) []string {
	if len(rows) == 0 {
		return nil
	}
	out := make([]string, len(rows))
	for i, e := range rows {
		out[i] = e.id
	}
	return out
}
