package table

import "bytes"

// textIndex holds the rows' filter texts end to end, in row order, while a
// literal filter is typed. A key typed onto it (narrows) then scans
// buffers, searching for the literal across many rows at once, instead of
// visiting each row's entry and then its text: two cache misses per row,
// scattered over the heap, which were most of a typed key at 100,000 rows.
//
// The filter pass builds it, one segment per part of a parallel pass, in
// blocks of textBlock bytes (a buffer grown by doubling held up to twice
// the texts, and its outgrown copies added as much garbage: 20–26 MB more
// peak RSS at 100,000 pods). It lives only while a literal filter does:
// about 7 MB at 100,000 pods.
type textIndex struct {
	segs []textSeg // nil: not built (no literal filter)
	gen  uint64    // the Model.rowsGen it was built for
}

// usable reports whether t holds the texts of the rows as they are now.
func (t *textIndex) usable(rowsGen uint64) bool { return t.segs != nil && t.gen == rowsGen }

// textSeg is the texts of consecutive rows, in blocks.
type textSeg struct {
	blks []textBlk
}

// textBlock is a block's size; a longer text has a block of its own.
const textBlock = 64 << 10

// textBlk is the texts of consecutive rows in one buffer.
type textBlk struct {
	buf   []byte
	end   []int32 // end[i]: where the block's row i ends in buf (it starts at end[i-1], or 0)
	ascii []bool  // row i's text is ASCII (the literal's fast path applies)
}

// narrowable reports whether f is a filter that keys typed onto it narrow
// (see narrows): a plain literal, not inverted.
func narrowable(f Filter) bool { return f.lit != "" && !f.invert && f.sel == nil }

func (s *textSeg) add(text string, ascii bool) {
	n := len(s.blks)
	if n == 0 || len(s.blks[n-1].buf)+len(text) > cap(s.blks[n-1].buf) {
		s.blks = append(s.blks, textBlk{buf: make([]byte, 0, max(textBlock, len(text)))})
		n++
	}
	b := &s.blks[n-1]
	b.buf = append(b.buf, text...)
	b.end = append(b.end, int32(len(b.buf)))
	b.ascii = append(b.ascii, ascii)
}

// narrowRows keeps the rows (those t was built for, in the same order)
// that pass f, a filter narrowing the one t's rows passed, and compacts t
// with them, both in place. An ASCII row passes when the literal lies
// inside its text; the literal is searched for over the block from the
// row on, so the rows before its next occurrence are passed over without
// a look. A non-ASCII row is matched as visible matches it (the
// expression, which folds case as the literal cannot), from its text here.
func narrowRows[V any](t *textIndex, rows []*entry[V], f Filter) []*entry[V] {
	lit := []byte(f.lit)
	kept, r := 0, 0
	for si := range t.segs {
		for bi := range t.segs[si].blks {
			b := &t.segs[si].blks[bi]
			n, w, start := 0, 0, 0
			next := -1 // the literal's first occurrence at or after some row's start; len(buf): none
			for i, e := range b.end {
				stop := int(e)
				var keep bool
				if b.ascii[i] {
					if next < start {
						next = len(b.buf)
						if j := bytes.Index(b.buf[start:], lit); j >= 0 {
							next = start + j
						}
					}
					keep = next+len(lit) <= stop
				} else {
					keep = f.match(string(b.buf[start:stop]), false, nil)
				}
				if keep {
					// Writes stay below stop: the rows still to scan are intact.
					rows[kept] = rows[r]
					kept++
					w += copy(b.buf[w:], b.buf[start:stop])
					b.end[n], b.ascii[n] = int32(w), b.ascii[i]
					n++
				}
				start = stop
				r++
			}
			b.buf, b.end, b.ascii = b.buf[:w], b.end[:n], b.ascii[:n]
		}
	}
	return rows[:kept]
}
