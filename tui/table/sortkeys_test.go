package table

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/raydar/raydar/tui/keys"
	"github.com/raydar/raydar/tui/styles"
)

// Sorting base by one word gives compare's order exactly, for every sort
// key both ways: names sharing long prefixes, names that differ only past
// 16 bytes or by a trailing NUL, equal names in other namespaces, groups,
// equal and zero creation times, times apart by less than a millisecond.
func TestRadixSortIsCompareOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	base := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	names := []string{"", "a", "a\x00", "ab", "raycluster-kuberay-head-x", "raycluster-kuberay-head-y",
		"raycluster-kuberay-workergroup-worker-1", "raycluster-kuberay-workergroup-worker-10", "c-00001-worker-3", "c-00001-worker-30", "Z", "é"}
	m := New(spec(), styles.Plain(), keys.Default(), nil)
	var es []*entry[item]
	for range 2000 {
		name := names[r.IntN(len(names))]
		if r.IntN(3) == 0 {
			name += fmt.Sprint(r.IntN(20))
		}
		e := &entry[item]{id: fmt.Sprint(r.IntN(1500)), meta: Meta{
			Namespace: fmt.Sprint("ns", r.IntN(3)), Name: name,
			Status: []string{"Running", "Pending", "", "CrashLoopBackOff"}[r.IntN(4)],
			Group:  []string{"", "", "g1", "g2-longer-than-sixteen-bytes", "g2-longer-than-sixteen-bytes-b"}[r.IntN(5)],
		}}
		switch r.IntN(5) {
		case 0: // zero time
		case 1:
			e.meta.Created = base
		case 2:
			e.meta.Created = base.Add(time.Duration(r.IntN(3)) * 300 * time.Microsecond)
		default:
			e.meta.Created = base.Add(time.Duration(r.IntN(5000)) * time.Millisecond * 37)
		}
		es = append(es, e)
	}
	for _, k := range []SortKey{0, ByName, ByAge, ByStatus} {
		for _, desc := range []bool{false, true} {
			m.sortKey, m.desc = k, desc
			want := slices.Clone(es)
			slices.SortStableFunc(want, m.compare)
			byName := slices.Clone(es)
			r.Shuffle(len(byName), func(i, j int) { byName[i], byName[j] = byName[j], byName[i] })
			slices.SortFunc(byName, nameCompare[item])
			got := m.orderOf(byName)
			for i := range got {
				if m.compare(got[i], want[i]) != 0 {
					t.Fatalf("sort %v desc %v: row %d is %+v (id %s), compare's order has %+v (id %s)", k, desc, i, got[i].meta, got[i].id, want[i].meta, want[i].id)
				}
			}
		}
	}
}

// BenchmarkSort: every item sorted again (a new sort key) at 100,000 rows,
// names shaped like the data set's pods (c-00042-worker-3).
func BenchmarkSort(b *testing.B) {
	m := benchTable()
	keys := []SortKey{ByAge, ByStatus, ByName}
	i := 0
	cpu0 := cpuTime()
	for b.Loop() {
		m.SortBy(keys[i%3])
		i++
	}
	// CPU time as well as wall time: on a loaded machine the latter is
	// mostly waiting for a core.
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
}

// BenchmarkFilter: a filter typed one key at a time at 100,000 rows, as
// a user narrows the pods to a worker ("w", "wo", … "worker-3"), then
// cleared; per typed key.
func BenchmarkFilter(b *testing.B) {
	m := benchTable()
	const typed = "worker-3"
	i := 0
	cpu0 := cpuTime()
	for b.Loop() {
		f := typed[:i%(len(typed)+1)] // "" every len(typed)+1 keys: cleared
		if err := m.SetFilter(f); err != nil {
			b.Fatal(err)
		}
		i++
	}
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
}

// benchTable is a table of 100,000 rows shaped like the data set's pods:
// 10,000 clusters of a head and 9 workers (c-00042-worker-3) in 10
// namespaces, one cluster in 50 Pending.
func benchTable() *Model[item] {
	m := New(spec(), styles.Plain(), keys.Default(), nil)
	var items []item
	for i := range 10000 {
		for j := range 10 {
			name := fmt.Sprintf("c-%05d-head", i)
			if j > 0 {
				name = fmt.Sprintf("c-%05d-worker-%d", i, j-1)
			}
			items = append(items, item{id: fmt.Sprint(i, "/", j), ns: fmt.Sprintf("bench-%02d", i%10), name: name,
				status: []string{"Running", "Pending"}[min(i%50, 1)], age: time.Duration(i*10+j) * time.Second})
		}
	}
	m.Apply(items, nil)
	return m
}

// cpuTime is the process's user and system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
