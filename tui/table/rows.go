package table

// The rows cache: items keyed by ID with their cells projected once, the
// visible rows kept in order, and the cursor following the selected ID.

import (
	"runtime"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// Apply adds or replaces the items in up and removes the IDs in del.
func (m *Model[V]) Apply(up []V, del []string) {
	if len(up)+len(del) > 0 {
		m.rowsGen++ // a row's text may change in place
	}
	var rem, ins []*entry[V]
	// oRem and oIns keep m.order (every item, sorted) in step.
	var oRem, oIns []*entry[V]
	for _, v := range up {
		ne := m.newEntry(v)
		old := m.items[ne.id]
		m.items[ne.id] = ne
		nvis := m.visible(ne)
		ovis := old != nil && m.visible(old) // old is a row
		if ovis && nvis && m.samePlace(old, ne) {
			*old = *ne // rows and order hold old: update in place
			m.items[ne.id] = old
			continue
		}
		if old != nil {
			oRem = append(oRem, old)
			if ovis {
				rem = append(rem, old)
			}
		}
		oIns = append(oIns, ne)
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
		oRem = append(oRem, old)
		if m.visible(old) {
			rem = append(rem, old)
		}
	}
	m.updateBase(oRem, oIns)
	if len(oRem)+len(oIns) > incrementalLimit {
		m.order = nil // re-sorted from base by rebuild
	} else if m.order != nil {
		m.order = m.splice(m.order, oRem, oIns, m.compare)
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
		if i := m.find(m.rows, e); i >= 0 {
			m.rows = slices.Delete(m.rows, i, i+1)
		}
	}
	for _, e := range ins {
		if m.items[e.id] != e { // replaced or deleted later in the same call
			continue
		}
		m.rows = slices.Insert(m.rows, m.search(e), e)
	}
	m.follow(before)
}

// find is e's index in s (sorted by compare), -1 if it is not there.
func (m *Model[V]) find(s []*entry[V], e *entry[V]) int { return findBy(s, e, m.compare) }

// findBy is e's index in s (sorted by order), -1 if it is not there.
func findBy[V any](s []*entry[V], e *entry[V], order func(a, b *entry[V]) int) int {
	i, _ := slices.BinarySearchFunc(s, e, order)
	if i >= len(s) || s[i] != e {
		i = slices.Index(s, e) // cannot happen with a total order; be safe
	}
	return i
}

// splice removes rem from s and inserts the entries of ins that are still
// the items' (not replaced or deleted later in the same Apply), each by
// binary search in order: for a few changes (incrementalLimit).
func (m *Model[V]) splice(s, rem, ins []*entry[V], order func(a, b *entry[V]) int) []*entry[V] {
	for _, e := range rem {
		if i := findBy(s, e, order); i >= 0 {
			s = slices.Delete(s, i, i+1)
		}
	}
	for _, e := range ins {
		if m.items[e.id] == e {
			i, _ := slices.BinarySearchFunc(s, e, order)
			s = slices.Insert(s, i, e)
		}
	}
	return s
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
	e.text = lowerJoin(e.cells)
	e.ascii = isASCII(e.text)
	return e
}

// rebuild re-filters every item; it sorts them only when the order is
// stale (a new sort key, a large batch): a filter or namespace change is
// one pass over the sorted items (100,000 rows: no sort per typed key).
func (m *Model[V]) rebuild() {
	before := m.screenRow()
	if m.order == nil {
		m.order = m.sorted()
	}
	if m.filter.Empty() && m.ns == "" {
		m.rowsGen++
		m.rows = append(m.rows[:0], m.order...) // every item is a row
		m.text = textIndex{}
	} else {
		m.rows = m.filterInto(m.rows[:0], m.order)
	}
	m.follow(before)
}

// parallelFilterMin is the number of items from which a filter pass is
// split over the cores: at 100,000 rows the pass waits on memory (an entry
// and its text per row, scattered over the heap), and two cores keep twice
// as many loads in flight.
const parallelFilterMin = 16384

// filterInto appends the entries of es that are visible to dst, in order.
// A large pass with something to match runs on up to 4 goroutines, each
// over a contiguous part of es (distinct entries; the filter is
// read-only). Under a literal filter it also lays the rows' texts end to
// end (m.text), for the keys typed onto it (narrow).
func (m *Model[V]) filterInto(dst, es []*entry[V]) []*entry[V] {
	m.rowsGen++
	index := narrowable(m.filter)
	workers := max(min(runtime.GOMAXPROCS(0), 4, len(es)/parallelFilterMin), 1)
	type part struct {
		rows []*entry[V]
		text textSeg
	}
	parts := make([]part, workers)
	parts[0].rows = dst // the first part appends where dst ends
	pass := func(w int, es []*entry[V]) {
		p := &parts[w]
		for _, e := range es {
			if m.visible(e) {
				p.rows = append(p.rows, e)
				if index {
					p.text.add(e.text, e.ascii)
				}
			}
		}
	}
	if workers == 1 {
		pass(0, es)
	} else {
		var wg sync.WaitGroup
		for w := range workers {
			lo, hi := w*len(es)/workers, (w+1)*len(es)/workers
			wg.Go(func() { pass(w, es[lo:hi]) })
		}
		wg.Wait()
	}
	dst = parts[0].rows
	for _, p := range parts[1:] {
		dst = append(dst, p.rows...)
	}
	m.text = textIndex{gen: m.rowsGen}
	if index {
		m.text.segs = make([]textSeg, 0, len(parts))
		for _, p := range parts {
			m.text.segs = append(m.text.segs, p.text)
		}
	}
	return dst
}

// screenRow is the selected row's position inside the viewport.
func (m *Model[V]) screenRow() int { return m.cursor - m.offset }

// follow puts the cursor back on the selected ID, at the same screen row if
// possible; if the selected item is gone or hidden the cursor stays at the
// same index.
func (m *Model[V]) follow(screenRow int) {
	if e, ok := m.items[m.selID]; ok && m.visible(e) {
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

// lowerJoin is strings.ToLower(strings.Join(cells, " ")), the filter's
// text of a row, in one allocation when the cells are ASCII.
func lowerJoin(cells []string) string {
	n := max(len(cells)-1, 0)
	for _, c := range cells {
		n += len(c)
		for i := 0; i < len(c); i++ {
			if c[i] >= utf8.RuneSelf {
				return strings.ToLower(strings.Join(cells, " "))
			}
		}
	}
	var b strings.Builder
	b.Grow(n)
	for i, c := range cells {
		if i > 0 {
			b.WriteByte(' ')
		}
		for j := 0; j < len(c); j++ {
			ch := c[j]
			if 'A' <= ch && ch <= 'Z' {
				ch += 'a' - 'A'
			}
			b.WriteByte(ch)
		}
	}
	return b.String()
}
