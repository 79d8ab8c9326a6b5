package table

import "bytes"

// textIndex holds the rows' filter texts end to end, in row order, while a
// literal filter is typed. A key typed onto it (narrows) then scans
// buffers, searching for the literal across many rows at once, instead of
// visiting each row's entry and then its text: two cache misses per row,
// scattered over the heap, which were most of a typed key at 100,000 rows.
//
// It is built by the filter pass, in one segment per part of a parallel
// pass (no copy to join them), and its memory is kept for the next filter
// (at 100,000 pods about 8 MB, the rows' texts once).
type textIndex struct {
	segs  []textSeg
	gen   uint64 // the Model.rowsGen it was built for
	valid bool   // built under a literal filter (narrowable), for gen
}

// textSeg is the texts of consecutive rows.
type textSeg struct {
	buf   []byte
	end   []int  // end[i]: where the segment's row i ends in buf (it starts at end[i-1], or 0)
	ascii []bool // row i's text is ASCII (the literal's fast path applies)
}

// narrowable reports whether f is a filter that keys typed onto it narrow
// (see narrows): a plain literal, not inverted.
func narrowable(f Filter) bool { return f.lit != "" && !f.invert && f.sel == nil }

// rows is the number of rows indexed.
func (t *textIndex) rows() int {
	n := 0
	for i := range t.segs {
		n += len(t.segs[i].end)
	}
	return n
}

// seg returns the i-th segment emptied, keeping its memory.
func (t *textIndex) seg(i int) textSeg {
	if i >= len(t.segs) {
		return textSeg{}
	}
	s := t.segs[i]
	return textSeg{buf: s.buf[:0], end: s.end[:0], ascii: s.ascii[:0]}
}

func (s *textSeg) add(text string, ascii bool) {
	s.buf = append(s.buf, text...)
	s.end = append(s.end, len(s.buf))
	s.ascii = append(s.ascii, ascii)
}

// narrowRows keeps the rows (those t was built for, in the same order)
// that pass f, a filter narrowing the one t's rows passed, and compacts t
// with them, both in place. An ASCII row passes when the literal lies
// inside its text; the literal is searched for over the buffer from the
// row on, so the rows before its next occurrence are passed over without
// a look. A non-ASCII row is matched as visible matches it (the
// expression, which folds case as the literal cannot), from its text here.
func narrowRows[V any](t *textIndex, rows []*entry[V], f Filter) []*entry[V] {
	lit := []byte(f.lit)
	kept, r := 0, 0
	for si := range t.segs {
		s := &t.segs[si]
		n, w, start := 0, 0, 0
		next := -1 // the literal's first occurrence at or after some row's start; len(buf): none
		for i, stop := range s.end {
			var keep bool
			if s.ascii[i] {
				if next < start {
					next = len(s.buf)
					if j := bytes.Index(s.buf[start:], lit); j >= 0 {
						next = start + j
					}
				}
				keep = next+len(lit) <= stop
			} else {
				keep = f.match(string(s.buf[start:stop]), false, nil)
			}
			if keep {
				// Writes stay below stop: the rows still to scan are intact.
				rows[kept] = rows[r]
				kept++
				w += copy(s.buf[w:], s.buf[start:stop])
				s.end[n], s.ascii[n] = w, s.ascii[i]
				n++
			}
			start = stop
			r++
		}
		s.buf, s.end, s.ascii = s.buf[:w], s.end[:n], s.ascii[:n]
	}
	return rows[:kept]
}
