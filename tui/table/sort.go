package table

import (
	"cmp"
	"slices"
)

// SortKey is what rows are sorted by.
type SortKey int

// Sort keys (k9s shift-N, shift-A, shift-S). The zero SortKey is none: a
// Column without Sort carries no sort indicator.
const (
	ByName SortKey = iota + 1
	ByAge
	ByStatus
)

// String is the key's name: "name", "age" or "status".
func (k SortKey) String() string {
	switch k {
	case ByAge:
		return "age"
	case ByStatus:
		return "status"
	}
	return "name"
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

// search is where e belongs in the rows.
func (m *Model[V]) search(e *entry[V]) int {
	i, _ := slices.BinarySearchFunc(m.rows, e, m.compare)
	return i
}

// SortBy sorts by k; sorting again by the same key reverses the order.
func (m *Model[V]) SortBy(k SortKey) {
	if k == m.sortKey {
		m.desc = !m.desc
	} else {
		m.sortKey, m.desc = k, false
	}
	m.order = nil
	m.rebuild()
}

// Sorting returns the sort key and whether the order is reversed.
func (m *Model[V]) Sorting() (SortKey, bool) { return m.sortKey, m.desc }
