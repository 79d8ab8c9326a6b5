package table

// Sorting every item (a new sort key, a large batch) on packed keys: at
// 100,000 rows, compare's pointer chasing (entry → meta → the strings'
// bytes, cache misses on every comparison) made a sort 38–100 ms. Each item
// gets a 32-byte record, built once per sort, of three words that decide
// most comparisons without leaving the record: the group's rank and the
// sort key (the status's rank, the creation time in ms, or the name's first
// 6 bytes) in the first, the name's next bytes in the others. The packing
// is monotone (if two records' words differ, compare orders the items the
// same way), and only records with equal words call compare itself, so the
// order is compare's exactly.

import (
	"cmp"
	"encoding/binary"
	"slices"
	"time"
)

// sortRec is one item's packed sort key and its index in the slice sorted.
type sortRec struct {
	k [3]uint64
	i uint32
}

const (
	lowBits = 48
	lowMask = 1<<lowBits - 1
	// msOffset puts year 1 (the zero time) at 0 ms; 2^48 ms later is year ~6900.
	msOffset = 62135596800000
)

// ranks maps each distinct value of key over es to its rank in sorted order.
type ranks struct {
	m     map[string]uint64
	lastK string // the last value looked up (rows mostly repeat the previous one)
	lastV uint64
	last  bool
}

func newRanks[V any](es []*entry[V], key func(*entry[V]) string) *ranks {
	r := &ranks{m: map[string]uint64{}}
	for _, e := range es {
		if k := key(e); !r.last || k != r.lastK {
			r.m[k], r.lastK, r.last = 0, k, true
		}
	}
	vals := make([]string, 0, len(r.m))
	for v := range r.m {
		vals = append(vals, v)
	}
	slices.Sort(vals)
	for i, v := range vals {
		r.m[v] = uint64(i)
	}
	r.last = false
	return r
}

func (r *ranks) of(k string) uint64 {
	if !r.last || k != r.lastK {
		r.lastK, r.lastV, r.last = k, r.m[k], true
	}
	return r.lastV
}

// word packs s[from:from+n] big-endian, zero-padded (n ≤ 8): for strings
// a and b with equal bytes before from, word(a) < word(b) implies a < b.
func word(s string, from, n int) uint64 {
	var b [8]byte
	if from < len(s) {
		copy(b[8-n:], s[from:min(len(s), from+n)])
	}
	return binary.BigEndian.Uint64(b[:])
}

// ageKey is the creation time in ms since year 1, clamped to 48 bits
// (monotone: equal keys fall back to compare).
func ageKey(t time.Time) uint64 {
	ms := t.UnixMilli() + msOffset
	return uint64(min(max(ms, 0), lowMask))
}

// sortEntries sorts es by m.compare.
func (m *Model[V]) sortEntries(es []*entry[V]) {
	if len(es) < 2 {
		return
	}
	groups := newRanks(es, func(e *entry[V]) string { return e.meta.Group })
	if len(groups.m) > 1<<(64-lowBits) {
		slices.SortFunc(es, m.compare) // no room for the groups' ranks
		return
	}
	var statuses *ranks
	if m.sortKey == ByStatus {
		statuses = newRanks(es, func(e *entry[V]) string { return e.meta.Status })
	}
	recs := make([]sortRec, len(es))
	for i, e := range es {
		r := &recs[i]
		r.i = uint32(i)
		name := e.meta.Name
		var key uint64
		switch m.sortKey {
		case ByAge: // youngest first
			key = lowMask - ageKey(e.meta.Created)
		case ByStatus:
			key = statuses.of(e.meta.Status)
		case ByName:
			key = word(name, 0, 6)
		}
		if m.desc {
			key = lowMask - key
		}
		r.k[0] = groups.of(e.meta.Group)<<lowBits | key
		if m.sortKey == ByName {
			// the rest of the sort key (reversed with it)
			r.k[1], r.k[2] = word(name, 6, 8), word(name, 14, 8)
			if m.desc {
				r.k[1], r.k[2] = ^r.k[1], ^r.k[2]
			}
		} else {
			// the tie-break: the name, never reversed
			r.k[1], r.k[2] = word(name, 0, 8), word(name, 8, 8)
		}
	}
	slices.SortFunc(recs, func(x, y sortRec) int {
		for j := range x.k {
			if x.k[j] != y.k[j] {
				return cmp.Compare(x.k[j], y.k[j])
			}
		}
		return m.compare(es[x.i], es[y.i])
	})
	sorted := make([]*entry[V], len(es))
	for i := range recs {
		sorted[i] = es[recs[i].i]
	}
	copy(es, sorted)
}
