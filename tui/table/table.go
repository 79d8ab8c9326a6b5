// Package table owns the TUI's generic, virtualised table: items keyed by an
// ID (a UID), their cells projected once per change and cached, only the
// rows inside the viewport drawn, a selection that follows the same ID while
// rows move, k9s sorting (name, age, status; again to reverse), filtering
// (regex, inverted regex, label selector), a namespace scope, and marks.
//
// Cost model: Apply is O(k log n) for k changed items when few rows move and
// O(n log n) (a re-sort) otherwise; View is O(viewport rows × columns),
// independent of the number of items.
package table

import (
	"cmp"
	"slices"
	"sort"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/raydar/raydar/tui/keys"
	"github.com/raydar/raydar/tui/styles"
)

// SortKey is what rows are sorted by.
type SortKey int

// Sort keys (k9s shift-N, shift-A, shift-S).
const (
	ByName SortKey = iota
	ByAge
	ByStatus
)

func (k SortKey) String() string {
	switch k {
	case ByAge:
		return "age"
	case ByStatus:
		return "status"
	}
	return "name"
}

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
	// that key.
	Sort *SortKey
}

// SortCol returns a pointer to k, for Column.Sort.
func SortCol(k SortKey) *SortKey { return &k }

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
}

type entry[V any] struct {
	id    string
	v     V
	meta  Meta
	cells []string
	text  string // cells joined, in lower case, for the filter
	vis   bool   // in rows
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

	cursor, offset int
	selID          string

	marks  map[string]struct{}
	anchor string

	sortKey SortKey
	desc    bool
	filter  Filter
	ns      string

	width, height int
	widths        []int // per column; 0 = hidden
	scratch       []string
	sb            strings.Builder
	lb            strings.Builder

	// escape codes around a row, by status class, and for the selected and
	// marked rows (Render per row costs more than the rest of a frame)
	classCodes          [styles.Done + 1][2]string
	selCodes, markCodes [2]string
}

// New returns an empty table sorted by name.
func New[V any](spec Spec[V], st *styles.Styles, km *keys.KeyMap, now func() time.Time) *Model[V] {
	if now == nil {
		now = time.Now
	}
	m := &Model[V]{
		spec:  spec,
		st:    st,
		km:    km,
		now:   now,
		items: map[string]*entry[V]{},
		marks: map[string]struct{}{},
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
	return m
}

// SetSize sets the table's size; height includes the column header line.
func (m *Model[V]) SetSize(width, height int) {
	m.width, m.height = width, height
	m.layout()
	m.clampOffset()
}

// Apply adds or replaces the items in up and removes the IDs in del.
func (m *Model[V]) Apply(up []V, del []string) {
	var rem, ins []*entry[V]
	for _, v := range up {
		ne := m.newEntry(v)
		old := m.items[ne.id]
		m.items[ne.id] = ne
		nvis := m.visible(ne)
		if old != nil && old.vis && nvis && m.samePlace(old, ne) {
			ne.vis = true
			*old = *ne // rows hold old: update in place
			m.items[ne.id] = old
			continue
		}
		if old != nil && old.vis {
			rem = append(rem, old)
		}
		if nvis {
			ins = append(ins, ne)
		}
	}
	for _, id := range del {
		old := m.items[id]
		if old == nil {
			continue
		}
		delete(m.items, id)
		delete(m.marks, id)
		if old.vis {
			rem = append(rem, old)
		}
	}
	if len(rem)+len(ins) == 0 {
		return
	}
	if len(rem)+len(ins) > incrementalLimit {
		m.rebuild()
		return
	}
	before := m.screenRow()
	for _, e := range rem {
		i := m.search(e)
		if i >= len(m.rows) || m.rows[i] != e {
			i = slices.Index(m.rows, e) // cannot happen with a total order; be safe
		}
		if i >= 0 {
			m.rows = slices.Delete(m.rows, i, i+1)
		}
		e.vis = false
	}
	for _, e := range ins {
		if m.items[e.id] != e { // replaced or deleted later in the same call
			continue
		}
		e.vis = true
		m.rows = slices.Insert(m.rows, m.search(e), e)
	}
	m.follow(before)
}

// Set replaces all items with vs.
func (m *Model[V]) Set(vs []V) {
	keep := make(map[string]struct{}, len(vs))
	for _, v := range vs {
		keep[m.spec.ID(v)] = struct{}{}
	}
	var del []string
	for id := range m.items {
		if _, ok := keep[id]; !ok {
			del = append(del, id)
		}
	}
	m.Apply(vs, del)
}

func (m *Model[V]) newEntry(v V) *entry[V] {
	e := &entry[V]{id: m.spec.ID(v), v: v, meta: m.spec.Meta(v), cells: m.spec.Cells(v)}
	e.text = strings.ToLower(strings.Join(e.cells, " "))
	return e
}

func (m *Model[V]) visible(e *entry[V]) bool {
	if m.ns != "" && e.meta.Namespace != m.ns {
		return false
	}
	return m.filter.Match(e.text, e.meta.Labels)
}

// samePlace reports whether an updated entry sorts exactly where the old
// one did (its sort-relevant fields are unchanged).
func (m *Model[V]) samePlace(a, b *entry[V]) bool {
	if a.meta.Group != b.meta.Group || a.meta.Name != b.meta.Name || a.meta.Namespace != b.meta.Namespace {
		return false
	}
	switch m.sortKey {
	case ByAge:
		return a.meta.Created.Equal(b.meta.Created)
	case ByStatus:
		return a.meta.Status == b.meta.Status
	}
	return true
}

// compare is a total order on entries: group, sort key, name, namespace, id.
func (m *Model[V]) compare(a, b *entry[V]) int {
	if c := cmp.Compare(a.meta.Group, b.meta.Group); c != 0 {
		return c
	}
	c := 0
	switch m.sortKey {
	case ByAge: // youngest first
		c = b.meta.Created.Compare(a.meta.Created)
	case ByStatus:
		c = cmp.Compare(a.meta.Status, b.meta.Status)
	case ByName:
		if c = cmp.Compare(a.meta.Name, b.meta.Name); c == 0 {
			c = cmp.Compare(a.meta.Namespace, b.meta.Namespace)
		}
	}
	if m.desc {
		c = -c
	}
	if c != 0 {
		return c
	}
	if c = cmp.Compare(a.meta.Name, b.meta.Name); c != 0 {
		return c
	}
	if c = cmp.Compare(a.meta.Namespace, b.meta.Namespace); c != 0 {
		return c
	}
	return cmp.Compare(a.id, b.id)
}

func (m *Model[V]) search(e *entry[V]) int {
	return sort.Search(len(m.rows), func(i int) bool { return m.compare(m.rows[i], e) >= 0 })
}

// rebuild re-filters and re-sorts every item.
func (m *Model[V]) rebuild() {
	before := m.screenRow()
	m.rows = m.rows[:0]
	for _, e := range m.items {
		e.vis = m.visible(e)
		if e.vis {
			m.rows = append(m.rows, e)
		}
	}
	slices.SortFunc(m.rows, m.compare)
	m.follow(before)
}

// screenRow is the selected row's position inside the viewport.
func (m *Model[V]) screenRow() int { return m.cursor - m.offset }

// follow puts the cursor back on the selected ID, at the same screen row if
// possible; if the selected item is gone or hidden the cursor stays at the
// same index.
func (m *Model[V]) follow(screenRow int) {
	if e, ok := m.items[m.selID]; ok && e.vis {
		m.cursor = m.search(e)
	}
	m.cursor = clamp(m.cursor, 0, len(m.rows)-1)
	m.offset = m.cursor - screenRow
	m.clampOffset()
	m.syncSel()
}

func (m *Model[V]) syncSel() {
	if len(m.rows) == 0 {
		m.selID = ""
		return
	}
	m.selID = m.rows[m.cursor].id
}

func (m *Model[V]) pageRows() int { return max(m.height-1, 1) }

func (m *Model[V]) clampOffset() {
	n := m.pageRows()
	if m.cursor < m.offset {
		m.offset = m.cursor
	}
	if m.cursor >= m.offset+n {
		m.offset = m.cursor - n + 1
	}
	m.offset = clamp(m.offset, 0, max(len(m.rows)-n, 0))
}

func clamp(v, lo, hi int) int {
	if hi < lo {
		return lo
	}
	return min(max(v, lo), hi)
}

// SetFilter parses and applies a filter; on error the old filter stays.
func (m *Model[V]) SetFilter(s string) error {
	f, err := ParseFilter(s)
	if err != nil {
		return err
	}
	if f.String() == m.filter.String() {
		return nil
	}
	m.filter = f
	m.rebuild()
	return nil
}

// Filter returns the active filter text.
func (m *Model[V]) Filter() string { return m.filter.String() }

// SetNamespace scopes the table to one namespace ("" = all).
func (m *Model[V]) SetNamespace(ns string) {
	if ns == m.ns {
		return
	}
	m.ns = ns
	m.layout()
	m.rebuild()
}

// Namespace is the namespace scope ("" = all).
func (m *Model[V]) Namespace() string { return m.ns }

// SortBy sorts by k; sorting again by the same key reverses the order.
func (m *Model[V]) SortBy(k SortKey) {
	if k == m.sortKey {
		m.desc = !m.desc
	} else {
		m.sortKey, m.desc = k, false
	}
	m.rebuild()
}

// Sorting returns the sort key and whether the order is reversed.
func (m *Model[V]) Sorting() (SortKey, bool) { return m.sortKey, m.desc }

// Len is the number of visible rows; Total the number of items.
func (m *Model[V]) Len() int   { return len(m.rows) }
func (m *Model[V]) Total() int { return len(m.items) }

// Selected returns the item under the cursor.
func (m *Model[V]) Selected() (V, bool) {
	if len(m.rows) == 0 {
		var zero V
		return zero, false
	}
	return m.rows[m.cursor].v, true
}

// SelectedID is the ID of the item under the cursor ("" if none).
func (m *Model[V]) SelectedID() string { return m.selID }

// Cursor is the index of the selected row among the visible rows.
func (m *Model[V]) Cursor() int { return m.cursor }

// Select moves the cursor to the item with the given ID if it is visible.
func (m *Model[V]) Select(id string) bool {
	e, ok := m.items[id]
	if !ok || !e.vis {
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

// Marked returns the marked items that are visible, in row order.
func (m *Model[V]) Marked() []V {
	if len(m.marks) == 0 {
		return nil
	}
	var out []V
	for _, e := range m.rows {
		if _, ok := m.marks[e.id]; ok {
			out = append(out, e.v)
		}
	}
	return out
}

// MarkCount is the number of marked items (visible or not).
func (m *Model[V]) MarkCount() int { return len(m.marks) }

// ClearMarks unmarks every item.
func (m *Model[V]) ClearMarks() { clear(m.marks); m.anchor = "" }

// ToggleMark marks or unmarks the selected item; it reports false (and
// does nothing) when there is none or it may not be marked (Spec.Markable).
func (m *Model[V]) ToggleMark() bool {
	if m.selID == "" {
		return false
	}
	if _, ok := m.marks[m.selID]; ok {
		delete(m.marks, m.selID)
	} else {
		if !m.markable(m.items[m.selID]) {
			return false
		}
		m.marks[m.selID] = struct{}{}
	}
	m.anchor = m.selID
	return true
}

func (m *Model[V]) markable(e *entry[V]) bool {
	return e != nil && (m.spec.Markable == nil || m.spec.Markable(e.v))
}

// MarkRange marks every visible row between the last toggled row and the
// cursor, inclusive.
func (m *Model[V]) MarkRange() {
	a, ok := m.items[m.anchor]
	if !ok || !a.vis || m.selID == "" {
		m.ToggleMark()
		return
	}
	i, j := m.search(a), m.cursor
	if i > j {
		i, j = j, i
	}
	for _, e := range m.rows[i : j+1] {
		if m.markable(e) {
			m.marks[e.id] = struct{}{}
		}
	}
	m.anchor = m.selID
}

// MoveTo puts the cursor on row i (clamped).
func (m *Model[V]) MoveTo(i int) {
	m.cursor = clamp(i, 0, len(m.rows)-1)
	m.clampOffset()
	m.syncSel()
}

// page scrolls the viewport by a page and moves the cursor with it.
func (m *Model[V]) page(dir int) {
	n := m.pageRows() * dir
	m.offset = clamp(m.offset+n, 0, max(len(m.rows)-m.pageRows(), 0))
	m.cursor = clamp(m.cursor+n, 0, len(m.rows)-1)
	m.clampOffset()
	m.syncSel()
}

// HandleKey handles navigation, sort and mark keys; it reports whether the
// key was one of them.
func (m *Model[V]) HandleKey(msg tea.KeyPressMsg) bool {
	km := m.km
	switch {
	case key.Matches(msg, km.Up):
		m.MoveTo(m.cursor - 1)
	case key.Matches(msg, km.Down):
		m.MoveTo(m.cursor + 1)
	case key.Matches(msg, km.Top):
		m.MoveTo(0)
	case key.Matches(msg, km.Bottom):
		m.MoveTo(len(m.rows) - 1)
	case key.Matches(msg, km.PageUp):
		m.page(-1)
	case key.Matches(msg, km.PageDown):
		m.page(1)
	case key.Matches(msg, km.SortName):
		m.SortBy(ByName)
	case key.Matches(msg, km.SortAge):
		m.SortBy(ByAge)
	case key.Matches(msg, km.SortStatus):
		m.SortBy(ByStatus)
	case key.Matches(msg, km.Mark):
		m.ToggleMark()
		m.MoveTo(m.cursor + 1)
	case key.Matches(msg, km.MarkRange):
		m.MarkRange()
	case key.Matches(msg, km.ClearMarks):
		m.ClearMarks()
	default:
		return false
	}
	return true
}

// layout computes column widths for the current width and scope.
func (m *Model[V]) layout() {
	cols := m.spec.Columns
	w := make([]int, len(cols))
	n := 0
	for i, c := range cols {
		if c.Namespace && m.ns != "" {
			continue
		}
		w[i] = c.Width
		n++
	}
	total := func() int {
		t, k := 0, 0
		for _, x := range w {
			if x > 0 {
				t += x
				k++
			}
		}
		return t + gap*max(k-1, 0)
	}
	avail := m.width - prefixW
	if over := total() - avail; over > 0 { // shrink growing columns
		for i, c := range cols {
			if w[i] > 0 && c.Grow {
				take := min(over, w[i]-max(c.Min, 1))
				w[i] -= take
				over -= take
			}
		}
	}
	for total() > avail { // drop columns, highest Drop first
		best := -1
		for i, c := range cols {
			if w[i] > 0 && c.Drop > 0 && (best < 0 || c.Drop > cols[best].Drop) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		w[best] = 0
	}
	if spare := avail - total(); spare > 0 { // widen growing columns
		var grow []int
		for i, c := range cols {
			if w[i] > 0 && c.Grow {
				grow = append(grow, i)
			}
		}
		for k, i := range grow {
			share := spare / (len(grow) - k)
			add := min(share, cols[i].Width*2) // at most 3× natural width
			w[i] += add
			spare -= add
		}
	}
	m.widths = w
}

// View draws the column header and the rows in the viewport: exactly
// height lines, each at most width cells wide.
func (m *Model[V]) View() string {
	if m.height <= 0 || m.width <= 0 {
		return ""
	}
	sb := &m.sb
	sb.Reset()
	m.header(sb)
	n := m.pageRows()
	now := m.now()
	g := m.st.Glyphs
	for i := m.offset; i < m.offset+n; i++ {
		sb.WriteByte('\n')
		if i >= len(m.rows) {
			continue
		}
		e := m.rows[i]
		cells := e.cells
		if m.spec.Live != nil {
			m.scratch = append(m.scratch[:0], e.cells...)
			m.spec.Live(e.v, now, m.scratch)
			cells = m.scratch
		}
		cur, mark := " ", " "
		if i == m.cursor {
			cur = g.Cursor
		}
		_, marked := m.marks[e.id]
		if marked {
			mark = g.Mark
		}
		codes := m.classCodes[clamp(int(e.meta.Class), 0, len(m.classCodes)-1)]
		switch {
		case i == m.cursor:
			codes = m.selCodes
		case marked:
			codes = m.markCodes
		}
		sb.WriteString(cur)
		sb.WriteString(mark)
		sb.WriteString(codes[0])
		m.writeLine(sb, cells)
		sb.WriteString(codes[1])
	}
	return sb.String()
}

func (m *Model[V]) header(sb *strings.Builder) {
	titles := make([]string, len(m.spec.Columns))
	for i, c := range m.spec.Columns {
		t := c.Title
		if c.Sort != nil && *c.Sort == m.sortKey {
			if m.desc {
				t += m.st.Glyphs.Desc
			} else {
				t += m.st.Glyphs.Asc
			}
		}
		titles[i] = t
	}
	var hb strings.Builder
	hb.WriteString(strings.Repeat(" ", prefixW))
	m.writeLine(&hb, titles)
	if m.st.Plain {
		sb.WriteString(hb.String())
	} else {
		sb.WriteString(m.st.TableHeader.Render(hb.String()))
	}
}

// writeLine lays out cells in the column widths, cut to the table width.
func (m *Model[V]) writeLine(out *strings.Builder, cells []string) {
	b := &m.lb
	b.Reset()
	first := true
	for i, w := range m.widths {
		if w == 0 {
			continue
		}
		if !first {
			b.WriteString("  ")
		}
		first = false
		c := ""
		if i < len(cells) {
			c = cells[i]
		}
		fit(b, c, w, m.spec.Columns[i].Right, m.st.Glyphs.Ellipsis)
	}
	s := strings.TrimRight(b.String(), " ")
	if width(s) > m.width-prefixW {
		s = ansi.Truncate(s, max(m.width-prefixW, 0), "")
	}
	out.WriteString(s)
}

// fit writes s padded or truncated to exactly w cells.
func fit(b *strings.Builder, s string, w int, right bool, tail string) {
	sw := width(s)
	if sw > w {
		s = ansi.Truncate(s, w, tail)
		sw = ansi.StringWidth(s)
	}
	pad := max(w-sw, 0)
	if !right {
		b.WriteString(s)
	}
	for range pad {
		b.WriteByte(' ')
	}
	if right {
		b.WriteString(s)
	}
}

// width is ansi.StringWidth with a fast path for ASCII.
func width(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 || s[i] < 0x20 {
			return ansi.StringWidth(s)
		}
	}
	return len(s)
}
