package history

import (
	"sync"
	"time"
)

// memStore is the Store when the file cannot be had: the same bounds,
// lost when the process ends.
type memStore struct {
	opts StoreOptions
	mu   sync.Mutex
	seq  uint64
	objs map[string][]memEntry
	// order is every entry's object in append order (stale ones, dropped
	// by the per-object bound, are skipped and compacted away).
	order []memRef
	n     int
	bytes int64
}

type memEntry struct {
	seq  uint64
	size int64
	e    Entry
}

type memRef struct {
	key string
	seq uint64
}

func newMemStore(o StoreOptions) *memStore {
	return &memStore{opts: o, objs: map[string][]memEntry{}}
}

// sizeOf estimates an entry's encoding (its strings and the JSON around them).
func sizeOf(e *Entry) int64 {
	n := len(e.Kind) + len(e.Namespace) + len(e.Name) + len(e.UID) + len(e.What) + len(e.Subject) +
		len(e.From) + len(e.To) + len(e.Reason) + len(e.Message) + 120
	if e.Author != nil {
		n += len(e.Author.Manager) + len(e.Author.User) + 80
	}
	return int64(n)
}

func (m *memStore) append(entries []Entry) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, e := range entries {
		m.seq++
		k := e.key()
		me := memEntry{seq: m.seq, size: sizeOf(&e), e: e}
		l := append(m.objs[k], me)
		m.n++
		m.bytes += me.size
		for len(l) > m.opts.MaxPerObject {
			m.n--
			m.bytes -= l[0].size
			l = l[1:]
		}
		m.objs[k] = l
		m.order = append(m.order, memRef{k, me.seq})
	}
	for m.n > m.opts.MaxEntries || m.bytes > m.opts.MaxBytes {
		if len(m.order) == 0 {
			break
		}
		r := m.order[0]
		m.order = m.order[1:]
		l := m.objs[r.key]
		if len(l) == 0 || l[0].seq != r.seq {
			continue // dropped by the per-object bound already
		}
		m.n--
		m.bytes -= l[0].size
		if len(l) == 1 {
			delete(m.objs, r.key)
		} else {
			m.objs[r.key] = l[1:]
		}
	}
	if len(m.order) > 2*m.n+64 {
		live := m.order[:0:0]
		for _, r := range m.order {
			if l := m.objs[r.key]; len(l) > 0 && r.seq >= l[0].seq {
				live = append(live, r)
			}
		}
		m.order = live
	}
}

func (m *memStore) query(key string, since time.Time) []Entry {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Entry
	for _, me := range m.objs[key] {
		if since.IsZero() || !me.e.Time.Before(since) {
			out = append(out, me.e)
		}
	}
	return out
}

func (m *memStore) stats() Stats {
	m.mu.Lock()
	defer m.mu.Unlock()
	return Stats{Entries: m.n, Bytes: m.bytes}
}
