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
