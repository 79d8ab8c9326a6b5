package table

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// Marked returns the marked items that are visible, in row order.
func (m *Model[V]) Marked() []V { return values(m.markedRows()) }

// MarkedIDs are the marked items' IDs, in row order (Marked's rows).
func (m *Model[V]) MarkedIDs() []string { return ids(m.markedRows()) }

// markedRows are the visible rows that are marked, in order.
func (m *Model[V]) markedRows() []*entry[V] {
	if len(m.marks) == 0 {
		return nil
	}
	var out []*entry[V]
	for _, e := range m.rows {
		if _, ok := m.marks[e.id]; ok {
			out = append(out, e)
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
		m.mark(m.selID)
	}
	m.anchor = m.selID
	return true
}

// mark marks id (the map is made on the first mark).
func (m *Model[V]) mark(id string) {
	if m.marks == nil {
		m.marks = map[string]struct{}{}
	}
	m.marks[id] = struct{}{}
}

func (m *Model[V]) markable(e *entry[V]) bool {
	return e != nil && !m.spec.NoMarks && (m.spec.Markable == nil || m.spec.Markable(e.v))
}

// Marks reports whether rows of this table can be marked at all.
func (m *Model[V]) Marks() bool { return !m.spec.NoMarks }

// MarkRange marks every visible row between the last toggled row and the
// cursor, inclusive.
func (m *Model[V]) MarkRange() {
	a, ok := m.items[m.anchor]
	if !ok || !m.visible(a) || m.selID == "" {
		m.ToggleMark()
		return
	}
	i, j := m.search(a), m.cursor
	if i > j {
		i, j = j, i
	}
	for _, e := range m.rows[i : j+1] {
		if m.markable(e) {
			m.mark(e.id)
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
