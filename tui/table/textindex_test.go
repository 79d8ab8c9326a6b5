package table

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// want is what the rows must be: every item that passes, in compare's
// order, decided entry by entry (not through the text index).
func want(m *Model[item]) []string {
	var es []*entry[item]
	for _, e := range m.items {
		if m.visible(e) {
			es = append(es, e)
		}
	}
	slices.SortFunc(es, m.compare)
	var ids []string
	for _, e := range es {
		ids = append(ids, e.id)
	}
	return ids
}

func rowIDs(m *Model[item]) []string {
	var ids []string
	for _, v := range m.Visible() {
		ids = append(ids, v.id)
	}
	return ids
}

// A filter typed one key at a time narrows the rows through the text index
// (the rows' texts end to end), and gives the rows matching each item
// gives: across the parts of a parallel pass, for non-ASCII rows (which
// the expression folds: "ſ" is an "s" to it, not to the literal), and
// after an update that changes a row's text in place.
func TestTypedFilterNarrowsAsEachItemMatches(t *testing.T) {
	var items []item
	for i := range 2*parallelFilterMin + 5 {
		name := fmt.Sprintf("c-%05d-worker-%d", i/10, i%10)
		switch i % 1000 {
		case 7:
			name = fmt.Sprintf("c-%05d-ſtate-%d", i/10, i%10) // long s: non-ASCII, (?i)s matches it
		case 8:
			name = fmt.Sprintf("c-%05d-wörker-%d", i/10, i%10)
		}
		items = append(items, item{id: fmt.Sprint(i), ns: fmt.Sprint("ns", i%3), name: name,
			status: []string{"Running", "Pending"}[min(i%50, 1)], age: time.Duration(i) * time.Second})
	}
	// A text longer than a block has a block of its own.
	items = append(items, item{id: "big", ns: "ns0", name: "c-big-" + strings.Repeat("x", textBlock+10), status: "Running"})
	m := newTable(80, 10, items...)
	used := 0
	check := func(f string) {
		t.Helper()
		if err := m.SetFilter(f); err != nil {
			t.Fatal(err)
		}
		if m.text.usable(m.rowsGen) {
			used++
		}
		if got, w := rowIDs(m), want(m); !slices.Equal(got, w) {
			t.Fatalf("filter %q: %d rows, want %d (or in another order)", f, len(got), len(w))
		}
	}
	// "-0 c" lies across two rows' texts end to end ("…worker-0 " then
	// "c-…"), never inside one.
	for _, typed := range []string{"worker-3", "c-0001", "st", "-w", "ör", "-0 c", "c-big-xx"} {
		rs := []rune(typed)
		for i := 1; i <= len(rs); i++ {
			check(string(rs[:i]))
		}
		check("")
	}
	if used == 0 {
		t.Fatal("no typed key narrowed through the text index")
	}

	// An update that keeps its row in place (sorted by name, a new
	// status: "pending" to "paused", both under "p") changes its text: the
	// index built before it is not used for the next key.
	check("p")
	m.Apply([]item{{id: "21", ns: "ns0", name: "c-00002-worker-1", status: "Paused", age: 21 * time.Second}}, nil)
	check("pa")
	if !slices.Contains(rowIDs(m), "21") {
		t.Fatal(`after the update: item 21 (now "paused") is not a row under "pa"`)
	}
}
