package table

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// A filter change re-filters the kept sort order instead of sorting: after
// any mix of batches, filters (keys typed onto one among them), namespaces
// and sort keys the rows are the items that pass, sorted by compare alone,
// and the kept name order holds every item in order.
func TestFilterOverKeptOrderMatchesCompareOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	statuses := []string{"ready", "pending", "failed"}
	filters := []string{"", "n", "n1", "1", "pend", "!ready", "n2.*ns1"}
	m := newTable(80, 10)
	all := map[string]item{}
	for round := range 300 {
		n := 1 + r.IntN(6)
		if round%40 == 0 {
			n = 200
		}
		var up []item
		var del []string
		touched := map[string]bool{}
		for range n {
			id := fmt.Sprint(r.IntN(400))
			if touched[id] {
				continue
			}
			touched[id] = true
			if _, ok := all[id]; ok && r.IntN(4) == 0 {
				del = append(del, id)
				delete(all, id)
				continue
			}
			it := item{id: id, ns: fmt.Sprint("ns", r.IntN(3)), name: fmt.Sprint("n", r.IntN(60)),
				status: statuses[r.IntN(3)], age: time.Duration(r.IntN(50)) * time.Minute}
			up = append(up, it)
			all[id] = it
		}
		m.Apply(up, del)
		switch r.IntN(4) {
		case 0:
			if err := m.SetFilter(filters[r.IntN(len(filters))]); err != nil {
				t.Fatal(err)
			}
		case 1:
			m.SortBy(SortKey(1 + r.IntN(3)))
		case 2:
			m.SetNamespace([]string{"", "ns1"}[r.IntN(2)])
		}
		// The reference: every item, filtered and sorted by compare alone
		// (not by the kept name order and the radix sort under test).
		var want []*entry[item]
		for _, it := range all {
			if e := m.newEntry(it); m.visible(e) {
				want = append(want, e)
			}
		}
		slices.SortFunc(want, m.compare)
		if !slices.EqualFunc(m.Visible(), want, func(a item, b *entry[item]) bool { return a.id == b.id }) {
			t.Fatalf("round %d (sort %v desc %v, filter %q, ns %q): rows differ from the items sorted by compare", round, m.sortKey, m.desc, m.Filter(), m.ns)
		}
		if !slices.IsSortedFunc(m.base, nameCompare[item]) || (m.base != nil && len(m.base) != len(all)) {
			t.Fatalf("round %d: the kept name order has %d of %d items, or is out of order", round, len(m.base), len(all))
		}
	}
}

// A filter over more items than parallelFilterMin runs on several cores:
// the rows, their order and every item's vis are what matching each item
// of the sort order in turn gives.
func TestParallelFilterKeepsRowsInOrder(t *testing.T) {
	n := 4*parallelFilterMin + 7
	var items []item
	for i := range n {
		items = append(items, item{id: fmt.Sprint(i), ns: fmt.Sprint("ns", i%3), name: fmt.Sprintf("c-%05d-worker-%d", i/10, i%10),
			status: []string{"Running", "Pending"}[i%7/6], age: time.Duration(i) * time.Second})
	}
	m := newTable(80, 10, items...)
	m.SortBy(ByAge)
	for _, f := range []string{"c-", "c-0", "worker-3", "worker-33", "!pend", "c-0.*-worker-[12]$", ""} {
		if err := m.SetFilter(f); err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, e := range m.order {
			if m.filter.Match(e.text, e.meta.Labels) {
				want = append(want, e.id)
			}
		}
		var got []string
		for _, v := range m.Visible() {
			got = append(got, v.id)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("filter %q: %d rows, want %d (or in another order)", f, len(got), len(want))
		}
	}
}
