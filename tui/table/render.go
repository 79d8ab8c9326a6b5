package table

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// layout computes column widths for the current width and scope.
func (m *Model[V]) layout() {
	cols := m.spec.Columns
	w := make([]int, len(cols))
	n := 0
	for i, c := range cols {
		if c.Namespace && m.ns != "" {
			continue
		}
		w[i] = c.Width
		n++
	}
	total := func() int {
		t, k := 0, 0
		for _, x := range w {
			if x > 0 {
				t += x
				k++
			}
		}
		return t + gap*max(k-1, 0)
	}
	avail := m.width - prefixW
	if over := total() - avail; over > 0 { // shrink growing columns
		for i, c := range cols {
			if w[i] > 0 && c.Grow {
				take := min(over, w[i]-max(c.Min, 1))
				w[i] -= take
				over -= take
			}
		}
	}
	for total() > avail { // drop columns, highest Drop first
		best := -1
		for i, c := range cols {
			if w[i] > 0 && c.Drop > 0 && (best < 0 || c.Drop > cols[best].Drop) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		w[best] = 0
	}
	if spare := avail - total(); spare > 0 { // widen growing columns
		var grow []int
		for i, c := range cols {
			if w[i] > 0 && c.Grow {
				grow = append(grow, i)
			}
		}
		for k, i := range grow {
			share := spare / (len(grow) - k)
			add := min(share, cols[i].Width*2) // at most 3× natural width
			w[i] += add
			spare -= add
		}
	}
	m.widths = w
}

// View draws the column header and the rows in the viewport: exactly
// height lines, each at most width cells wide.
func (m *Model[V]) View() string {
	if m.height <= 0 || m.width <= 0 {
		return ""
	}
	sb := &m.sb
	sb.Reset()
	m.header(sb)
	n := m.pageRows()
	now := m.now()
	g := m.st.Glyphs
	for i := m.offset; i < m.offset+n; i++ {
		sb.WriteByte('\n')
		if i >= len(m.rows) {
			continue
		}
		e := m.rows[i]
		cells := e.cells
		if m.spec.Live != nil {
			m.scratch = append(m.scratch[:0], e.cells...)
			m.spec.Live(e.v, now, m.scratch)
			cells = m.scratch
		}
		cur, mark := " ", " "
		if i == m.cursor {
			cur = g.Cursor
		}
		_, marked := m.marks[e.id]
		if marked {
			mark = g.Mark
		}
		codes := m.classCodes[clamp(int(e.meta.Class), 0, len(m.classCodes)-1)]
		cellCodes := m.cellCodes
		switch {
		case i == m.cursor:
			codes, cellCodes = m.selCodes, nil
		case marked:
			codes, cellCodes = m.markCodes, nil
		}
		sb.WriteString(cur)
		sb.WriteString(mark)
		sb.WriteString(codes[0])
		m.writeLine(sb, cells, cellCodes, codes[0])
		sb.WriteString(codes[1])
	}
	return sb.String()
}

func (m *Model[V]) header(sb *strings.Builder) {
	titles := make([]string, len(m.spec.Columns))
	for i, c := range m.spec.Columns {
		t := c.Title
		if c.Sort != 0 && c.Sort == m.sortKey {
			if m.desc {
				t += m.st.Glyphs.Desc
			} else {
				t += m.st.Glyphs.Asc
			}
		}
		titles[i] = t
	}
	var hb strings.Builder
	hb.WriteString(strings.Repeat(" ", prefixW))
	m.writeLine(&hb, titles, nil, "")
	if m.st.Plain {
		sb.WriteString(hb.String())
	} else {
		sb.WriteString(m.st.TableHeader.Render(hb.String()))
	}
}

// writeLine lays out cells in the column widths, cut to the table width;
// a non-empty cell of a column with cellCodes is wrapped in them, then the
// row's style (rowOn) resumes.
func (m *Model[V]) writeLine(out *strings.Builder, cells []string, cellCodes [][2]string, rowOn string) {
	b := &m.lb
	b.Reset()
	first := true
	for i, w := range m.widths {
		if w == 0 {
			continue
		}
		if !first {
			b.WriteString("  ")
		}
		first = false
		c := ""
		if i < len(cells) {
			c = cells[i]
		}
		if cellCodes != nil && cellCodes[i][0] != "" && c != "" {
			b.WriteString(cellCodes[i][0])
			fit(b, c, w, m.spec.Columns[i].Right, m.st.Glyphs.Ellipsis)
			b.WriteString(cellCodes[i][1])
			b.WriteString(rowOn)
			continue
		}
		fit(b, c, w, m.spec.Columns[i].Right, m.st.Glyphs.Ellipsis)
	}
	s := strings.TrimRight(b.String(), " ")
	if width(s) > m.width-prefixW {
		s = ansi.Truncate(s, max(m.width-prefixW, 0), "")
	}
	out.WriteString(s)
}

// fit writes s padded or truncated to exactly w cells.
func fit(b *strings.Builder, s string, w int, right bool, tail string) {
	sw := width(s)
	if sw > w {
		s = ansi.Truncate(s, w, tail)
		sw = ansi.StringWidth(s)
	}
	pad := max(w-sw, 0)
	if !right {
		b.WriteString(s)
	}
	for range pad {
		b.WriteByte(' ')
	}
	if right {
		b.WriteString(s)
	}
}

// width is ansi.StringWidth with a fast path for ASCII.
func width(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 || s[i] < 0x20 {
			return ansi.StringWidth(s)
		}
	}
	return len(s)
}
