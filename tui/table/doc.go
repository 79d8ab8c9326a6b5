// Package table owns the TUI's generic, virtualised table: items keyed by an
// ID (a UID), their cells projected once per change and cached, only the
// rows inside the viewport drawn, a selection that follows the same ID while
// rows move, k9s sorting (name, age, status; again to reverse), filtering
// (regex, inverted regex, label selector), a namespace scope, and marks.
//
// Cost model: every item is also kept in name order (sortkeys.go). Apply
// is O(k log n) comparisons and a copy of the order for k changed items
// when few rows move, and otherwise a merge into the name order and a
// radix re-sort, O(n + k log k); a new sort key is one radix sort, O(n),
// without comparisons (with no filter and no namespace, without visiting
// the items again to filter them); a filter is one pass over the sorted
// items, and a key typed onto a plain filter one scan of the rows' texts
// laid end to end by the pass before (textindex.go); View is
// O(viewport rows × columns), independent of the number of items.
package table
