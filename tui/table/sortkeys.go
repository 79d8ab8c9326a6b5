package table

// Sorting 100,000 rows. compare's pointer chasing (entry → meta → the
// strings' bytes, cache misses on every comparison) made a full sort
// 38–100 ms, and packed 32-byte keys with a comparison sort still 45–55 ms
// (the names' bytes loaded once per sort, then n·log n comparisons).
//
// compare breaks every tie of group and sort key by name, namespace and ID,
// so the table keeps every item in that order (base), kept up to date as
// items come and go: by binary search for a few, by a merge for a batch.
// A sort is then a stable sort of base by one 64-bit word per item, the
// group's rank above the sort key (the status's rank, the creation time in
// ms, or for a reversed sort by name the name's rank in base): a radix
// sort that skips the bytes every word shares, without a comparison. The
// one key that may tie where compare does not (two creation times in the
// same millisecond, or beyond year ~6900) is sorted again by compare in
// the runs that need it, so the order is compare's exactly.

import (
	"cmp"
	"slices"
	"time"
)

const (
	lowBits = 48
	lowMask = 1<<lowBits - 1
	// msOffset puts year 1 (the zero time) at 0 ms; 2^48 ms later is year ~6900.
	msOffset = 62135596800000
)

// nameCompare is compare's tie-break, the order of base: name, namespace,
// ID.
func nameCompare[V any](a, b *entry[V]) int {
	if c := cmp.Compare(a.meta.Name, b.meta.Name); c != 0 {
		return c
	}
	if c := cmp.Compare(a.meta.Namespace, b.meta.Namespace); c != 0 {
		return c
	}
	return cmp.Compare(a.id, b.id)
}

// updateBase keeps base in name order after Apply removed the entries rem
// and added ins (an entry of ins replaced or deleted later in the same
// call is skipped): a few by binary search, more by one merge.
func (m *Model[V]) updateBase(rem, ins []*entry[V]) {
	if m.base == nil {
		return // built by the next sort
	}
	if len(rem)+len(ins) <= incrementalLimit {
		m.base = m.splice(m.base, rem, ins, nameCompare[V])
		return
	}
	gone := make(map[*entry[V]]struct{}, len(rem))
	for _, e := range rem {
		gone[e] = struct{}{}
	}
	add := make([]*entry[V], 0, len(ins))
	for _, e := range ins {
		if m.items[e.id] == e {
			add = append(add, e)
		}
	}
	slices.SortFunc(add, nameCompare[V])
	out := make([]*entry[V], 0, len(m.base)-len(gone)+len(add))
	j := 0
	for _, e := range m.base {
		if _, ok := gone[e]; ok {
			continue
		}
		for j < len(add) && nameCompare(add[j], e) < 0 {
			out = append(out, add[j])
			j++
		}
		out = append(out, e)
	}
	m.base = append(out, add[j:]...)
}

// sorted returns every item in compare's order, building base first if it
// is stale.
func (m *Model[V]) sorted() []*entry[V] {
	if m.base == nil {
		m.base = make([]*entry[V], 0, len(m.items))
		for _, e := range m.items {
			m.base = append(m.base, e)
		}
		slices.SortFunc(m.base, nameCompare[V])
	}
	return m.orderOf(m.base)
}

// seen numbers the distinct values of a key in the order they are met
// (rows mostly repeat the previous value, which is remembered); rank then
// maps each number to the value's rank in sorted order. orderOf reads
// every entry once (at 100,000 rows a cache miss each): a pass of its own
// to rank the groups and the statuses first cost as much again.
type seen struct {
	ids   map[string]uint64
	vals  []string
	lastK string
	lastV uint64
	last  bool
}

func newSeen() *seen { return &seen{ids: map[string]uint64{}} }

func (s *seen) id(k string) uint64 {
	if s.last && k == s.lastK {
		return s.lastV
	}
	v, ok := s.ids[k]
	if !ok {
		v = uint64(len(s.vals))
		s.ids[k] = v
		s.vals = append(s.vals, k)
	}
	s.lastK, s.lastV, s.last = k, v, true
	return v
}

// rank returns, by number, the value's rank among the values seen, and
// whether it is the identity (the values were met in sorted order).
func (s *seen) rank() ([]uint64, bool) {
	byVal := make([]uint64, len(s.vals))
	for i := range byVal {
		byVal[i] = uint64(i)
	}
	slices.SortFunc(byVal, func(a, b uint64) int { return cmp.Compare(s.vals[a], s.vals[b]) })
	r := make([]uint64, len(s.vals))
	identity := true
	for rank, id := range byVal {
		r[id] = uint64(rank)
		identity = identity && id == uint64(rank)
	}
	return r, identity
}

// ageKey is the creation time in ms since year 1, clamped to 48 bits
// (monotone: equal keys are sorted again by compare).
func ageKey(t time.Time) uint64 {
	ms := t.UnixMilli() + msOffset
	return uint64(min(max(ms, 0), lowMask))
}

// radixRec is one item's sort word and its index in base.
type radixRec struct {
	k uint64
	i uint32
}

// orderOf returns base (every item, in name order) in compare's order.
func (m *Model[V]) orderOf(base []*entry[V]) []*entry[V] {
	out := make([]*entry[V], len(base))
	if len(base) < 2 {
		copy(out, base)
		return out
	}
	if len(base) > 1<<32-1 {
		copy(out, base) // no room for the index
		slices.SortFunc(out, m.compare)
		return out
	}
	// One pass over the entries: each word holds the number of the group
	// (and for ByStatus of the status) in the order met, replaced by its
	// rank in a pass over the words alone.
	groups, statuses := newSeen(), newSeen()
	recs := make([]radixRec, len(base))
	var nameRank uint64
	for i, e := range base {
		var key uint64
		switch m.sortKey {
		case ByAge: // youngest first
			key = lowMask - ageKey(e.meta.Created)
		case ByStatus:
			key = statuses.id(e.meta.Status) // reversed below, once ranked
		case ByName:
			// ascending: base's own order; reversed: by the rank of the
			// name and namespace (equal ones keep their IDs ascending)
			if m.desc && i > 0 && (e.meta.Name != base[i-1].meta.Name || e.meta.Namespace != base[i-1].meta.Namespace) {
				nameRank++
			}
			key = nameRank
		}
		if m.desc && m.sortKey != ByStatus {
			key = lowMask - key
		}
		g := groups.id(e.meta.Group)
		if g >= 1<<(64-lowBits) {
			copy(out, base) // no room for the groups' ranks
			slices.SortFunc(out, m.compare)
			return out
		}
		recs[i] = radixRec{k: g<<lowBits | key, i: uint32(i)}
	}
	groupRank, groupsInOrder := groups.rank()
	if m.sortKey == ByStatus || !groupsInOrder {
		statusRank, _ := statuses.rank()
		for i := range recs {
			k := recs[i].k
			key := k & lowMask
			if m.sortKey == ByStatus {
				key = statusRank[key]
				if m.desc {
					key = lowMask - key
				}
			}
			recs[i].k = groupRank[k>>lowBits]<<lowBits | key
		}
	}
	recs = radixSort(recs)
	for j, r := range recs {
		out[j] = base[r.i]
	}
	if m.sortKey == ByAge {
		// equal words whose creation times differ below the millisecond
		// (or were clamped): compare decides within those runs
		for lo := 0; lo < len(recs); {
			hi := lo + 1
			for hi < len(recs) && recs[hi].k == recs[lo].k {
				hi++
			}
			if hi-lo > 1 {
				run := out[lo:hi]
				for j := 1; j < len(run); j++ {
					if !run[j].meta.Created.Equal(run[0].meta.Created) {
						slices.SortFunc(run, m.compare)
						break
					}
				}
			}
			lo = hi
		}
	}
	return out
}

// radixSort sorts recs by k, stably (least significant byte first),
// skipping the bytes every word shares; it may return the scratch slice.
func radixSort(recs []radixRec) []radixRec {
	var counts [8][256]int
	for _, r := range recs {
		k := r.k
		for b := range 8 {
			counts[b][byte(k>>(8*b))]++
		}
	}
	tmp := make([]radixRec, len(recs))
	for b := range 8 {
		c := &counts[b]
		if c[byte(recs[0].k>>(8*b))] == len(recs) {
			continue // every word has this byte
		}
		pos := 0
		for v := range c {
			n := c[v]
			c[v] = pos
			pos += n
		}
		shift := 8 * b
		for _, r := range recs {
			v := byte(r.k >> shift)
			tmp[c[v]] = r
			c[v]++
		}
		recs, tmp = tmp, recs
	}
	return recs
}
