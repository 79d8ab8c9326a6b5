package table

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/raydar/raydar/tui/keys"
	"github.com/raydar/raydar/tui/styles"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

type item struct {
	id, ns, name, status string
	age                  time.Duration
	labels               map[string]string
}

func spec() Spec[item] {
	return Spec[item]{
		Columns: []Column{
			{Title: "NAME", Width: 10, Grow: true, Min: 6, Sort: ByName},
			{Title: "NAMESPACE", Width: 9, Namespace: true},
			{Title: "STATUS", Width: 8, Sort: ByStatus},
			{Title: "NOTE", Width: 10, Drop: 1},
			{Title: "AGE", Width: 4, Right: true, Sort: ByAge},
		},
		ID: func(i item) string { return i.id },
		Meta: func(i item) Meta {
			return Meta{Namespace: i.ns, Name: i.name, Status: i.status, Created: t0.Add(-i.age), Labels: i.labels}
		},
		Cells: func(i item) []string { return []string{i.name, i.ns, i.status, "note-" + i.name, ""} },
		Live: func(i item, now time.Time, c []string) {
			c[4] = fmt.Sprintf("%dm", int(now.Sub(t0.Add(-i.age)).Minutes()))
		},
	}
}

func newTable(w, h int, items ...item) *Model[item] {
	m := New(spec(), styles.Plain(), keys.Default(), func() time.Time { return t0 })
	m.SetSize(w, h)
	m.Apply(items, nil)
	return m
}

func names(m *Model[item]) []string {
	var out []string
	for _, v := range m.Visible() {
		out = append(out, v.name)
	}
	return out
}

func press(s string) tea.KeyPressMsg {
	switch s {
	case "space":
		return tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}
	case "ctrl+space":
		return tea.KeyPressMsg{Code: tea.KeySpace, Mod: tea.ModCtrl}
	case "ctrl+\\":
		return tea.KeyPressMsg{Code: '\\', Mod: tea.ModCtrl}
	case "pgdown":
		return tea.KeyPressMsg{Code: tea.KeyPgDown}
	}
	r := []rune(s)
	return tea.KeyPressMsg{Code: r[0], Text: s}
}

func sample() []item {
	return []item{
		{id: "1", ns: "a", name: "delta", status: "ready", age: 3 * time.Minute},
		{id: "2", ns: "b", name: "alpha", status: "pending", age: 1 * time.Minute},
		{id: "3", ns: "a", name: "charlie", status: "failed", age: 9 * time.Minute},
		{id: "4", ns: "b", name: "bravo", status: "ready", age: 5 * time.Minute},
	}
}

func TestSortKeysAndReverse(t *testing.T) {
	m := newTable(80, 10, sample()...)
	if got := names(m); !slices.Equal(got, []string{"alpha", "bravo", "charlie", "delta"}) {
		t.Fatalf("by name: %v", got)
	}
	steps := []struct {
		key  string
		want []string
	}{
		{"N", []string{"delta", "charlie", "bravo", "alpha"}},
		{"A", []string{"alpha", "delta", "bravo", "charlie"}},
		{"A", []string{"charlie", "bravo", "delta", "alpha"}},
		{"S", []string{"charlie", "alpha", "bravo", "delta"}},
		{"S", []string{"bravo", "delta", "alpha", "charlie"}},
	}
	for _, s := range steps {
		if !m.HandleKey(press(s.key)) {
			t.Fatalf("%s not handled", s.key)
		}
		if got := names(m); !slices.Equal(got, s.want) {
			k, d := m.Sorting()
			t.Fatalf("after %s (%v desc=%v): %v, want %v", s.key, k, d, got, s.want)
		}
	}
	if hdr := strings.SplitN(m.View(), "\n", 2)[0]; !strings.Contains(hdr, "STATUSv") {
		t.Fatalf("header has no descending indicator: %q", hdr)
	}
}

func TestSelectionFollowsIDWhileRowsMove(t *testing.T) {
	m := newTable(80, 10, sample()...)
	m.Select("3") // charlie, index 2
	if m.Cursor() != 2 {
		t.Fatalf("cursor %d", m.Cursor())
	}
	// Two rows appear before it.
	m.Apply([]item{{id: "5", name: "aaa"}, {id: "6", name: "abb"}}, nil)
	if m.SelectedID() != "3" || m.Cursor() != 4 {
		t.Fatalf("selected %s at %d", m.SelectedID(), m.Cursor())
	}
	// Under a status sort, the selected row itself moves when its status changes.
	m.SortBy(ByStatus)
	m.Apply([]item{{id: "3", ns: "a", name: "charlie", status: "zzz"}}, nil)
	if m.SelectedID() != "3" || m.Cursor() != m.Len()-1 {
		t.Fatalf("selected %s at %d of %d", m.SelectedID(), m.Cursor(), m.Len())
	}
	// Deleting the selected row leaves the cursor at the same index (clamped).
	m.Apply(nil, []string{"3"})
	if m.SelectedID() == "3" || m.SelectedID() == "" || m.Cursor() != m.Len()-1 {
		t.Fatalf("after delete: selected %q at %d", m.SelectedID(), m.Cursor())
	}
}

func TestSelectionKeepsScreenRow(t *testing.T) {
	var items []item
	for i := range 50 {
		items = append(items, item{id: fmt.Sprint(i), name: fmt.Sprintf("n%03d", i*2)})
	}
	m := newTable(80, 11, items...) // 10 rows on screen
	m.Select("25")                  // n050
	row := m.Cursor() - m.offset
	m.Apply([]item{{id: "x", name: "n001"}}, nil) // lands above the viewport
	if m.SelectedID() != "25" || m.Cursor()-m.offset != row {
		t.Fatalf("selected %s, screen row %d, want %d", m.SelectedID(), m.Cursor()-m.offset, row)
	}
	lines := strings.Split(m.View(), "\n")
	if !strings.HasPrefix(lines[row+1], "> ") || !strings.Contains(lines[row+1], "n050") {
		t.Fatalf("cursor line %q", lines[row+1])
	}
}

func TestFilter(t *testing.T) {
	m := newTable(80, 10, sample()...)
	m.Apply([]item{{id: "9", ns: "c", name: "echo", status: "Ready", labels: map[string]string{"team": "x", "tier": "gpu"}}}, nil)
	cases := []struct {
		f    string
		want []string
	}{
		{"READY", []string{"bravo", "delta", "echo"}},
		{"^(al|br)", []string{"alpha", "bravo"}},
		{"!ready", []string{"alpha", "charlie"}},
		{"-l team=x", []string{"echo"}},
		{"-l tier in (gpu,cpu),team", []string{"echo"}},
		{"-l team!=x", []string{"alpha", "bravo", "charlie", "delta"}},
		{"", []string{"alpha", "bravo", "charlie", "delta", "echo"}},
	}
	for _, c := range cases {
		if err := m.SetFilter(c.f); err != nil {
			t.Fatalf("%q: %v", c.f, err)
		}
		if got := names(m); !slices.Equal(got, c.want) {
			t.Fatalf("filter %q: %v, want %v", c.f, got, c.want)
		}
	}
	_ = m.SetFilter("alp")
	for _, bad := range []string{"al(", "-l", "-l =x", "!"} {
		if err := m.SetFilter(bad); err == nil {
			t.Fatalf("%q: no error", bad)
		}
		if m.Filter() != "alp" || m.Len() != 1 {
			t.Fatalf("%q replaced the filter: %q %d", bad, m.Filter(), m.Len())
		}
	}
	// An update that makes a row match brings it in; one that stops matching drops it.
	m.Apply([]item{{id: "4", ns: "b", name: "alpine", status: "ready"}, {id: "2", name: "zulu"}}, nil)
	if got := names(m); !slices.Equal(got, []string{"alpine"}) {
		t.Fatalf("after updates: %v", got)
	}
}

func TestNamespaceScopeHidesNamespaceColumn(t *testing.T) {
	m := newTable(80, 10, sample()...)
	if !strings.Contains(m.View(), "NAMESPACE") {
		t.Fatal("all-namespaces view lacks NAMESPACE")
	}
	m.SetNamespace("a")
	if got := names(m); !slices.Equal(got, []string{"charlie", "delta"}) {
		t.Fatalf("ns a: %v", got)
	}
	if strings.Contains(m.View(), "NAMESPACE") {
		t.Fatal("scoped view shows NAMESPACE")
	}
}

func TestMarks(t *testing.T) {
	m := newTable(80, 10, sample()...)
	m.HandleKey(press("space")) // alpha, cursor → bravo
	if m.SelectedID() != "4" {
		t.Fatalf("space did not move down: %s", m.SelectedID())
	}
	m.HandleKey(press("j"))          // charlie
	m.HandleKey(press("j"))          // delta
	m.HandleKey(press("ctrl+space")) // range alpha..delta
	if got := len(m.Marked()); got != 4 {
		t.Fatalf("range marked %d", got)
	}
	m.HandleKey(press("space")) // unmark delta
	var got []string
	for _, v := range m.Marked() {
		got = append(got, v.name)
	}
	if !slices.Equal(got, []string{"alpha", "bravo", "charlie"}) {
		t.Fatalf("marked %v", got)
	}
	v := m.View()
	if !strings.Contains(v, " *alpha") {
		t.Fatalf("no mark glyph:\n%s", v)
	}
	_ = m.SetFilter("!charlie")
	if len(m.Marked()) != 2 || m.MarkCount() != 3 {
		t.Fatalf("hidden marked rows: %d visible, %d total", len(m.Marked()), m.MarkCount())
	}
	m.Apply(nil, []string{"2"})
	if m.MarkCount() != 2 {
		t.Fatalf("deleted row still marked")
	}
	m.HandleKey(press("ctrl+\\"))
	if m.MarkCount() != 0 {
		t.Fatal("clear marks")
	}
}

// TestMarkable: rows Spec.Markable refuses are neither toggled nor taken
// into a range.
func TestMarkable(t *testing.T) {
	sp := spec()
	sp.Markable = func(i item) bool { return i.status != "failed" } // not charlie
	m := New(sp, styles.Plain(), keys.Default(), func() time.Time { return t0 })
	m.SetSize(80, 10)
	m.Apply(sample(), nil)
	m.MoveTo(2) // charlie
	if m.ToggleMark() || m.MarkCount() != 0 {
		t.Fatal("an unmarkable row was marked")
	}
	m.MoveTo(0)
	if !m.ToggleMark() {
		t.Fatal("alpha refused")
	}
	m.MoveTo(3)
	m.MarkRange() // alpha..delta without charlie
	var got []string
	for _, v := range m.Marked() {
		got = append(got, v.name)
	}
	if !slices.Equal(got, []string{"alpha", "bravo", "delta"}) {
		t.Fatalf("marked %v", got)
	}
	m.MoveTo(1)
	if !m.ToggleMark() || m.MarkCount() != 2 {
		t.Fatal("unmarking bravo")
	}
}

// TestNoMarks: a table whose view takes no marks marks nothing, by key or
// range, and says so (the hints leave the mark key out).
func TestNoMarks(t *testing.T) {
	sp := spec()
	sp.NoMarks = true
	m := New(sp, styles.Plain(), keys.Default(), func() time.Time { return t0 })
	m.SetSize(80, 10)
	m.Apply(sample(), nil)
	if m.Marks() {
		t.Error("Marks() = true for a NoMarks table")
	}
	if m.ToggleMark() {
		t.Error("ToggleMark marked a row")
	}
	m.MoveTo(3)
	m.MarkRange()
	if n := m.MarkCount(); n != 0 {
		t.Errorf("%d rows marked", n)
	}
	if !New(spec(), styles.Plain(), keys.Default(), func() time.Time { return t0 }).Marks() {
		t.Error("Marks() = false for a default table")
	}
}

func TestViewDrawsOnlyTheViewport(t *testing.T) {
	var items []item
	for i := range 1000 {
		items = append(items, item{id: fmt.Sprint(i), name: fmt.Sprintf("pod-%04d", i), age: time.Duration(i) * time.Minute})
	}
	m := newTable(40, 6, items...)
	m.HandleKey(press("pgdown"))
	v := m.View()
	lines := strings.Split(v, "\n")
	if len(lines) != 6 {
		t.Fatalf("%d lines", len(lines))
	}
	for _, l := range lines {
		if ansi.StringWidth(l) > 40 {
			t.Fatalf("line too wide (%d): %q", ansi.StringWidth(l), l)
		}
	}
	if !strings.HasPrefix(lines[1], "> pod-0005") || !strings.Contains(lines[5], "pod-0009") {
		t.Fatalf("page 2:\n%s", v)
	}
	if !strings.Contains(lines[1], "5m") {
		t.Fatalf("live age cell missing: %q", lines[1])
	}
	m.HandleKey(press("G"))
	if !strings.Contains(m.View(), "> pod-0999") {
		t.Fatal("G")
	}
}

func TestNarrowLayoutDropsAndShrinks(t *testing.T) {
	m := newTable(80, 3, sample()...)
	if !strings.Contains(m.View(), "NOTE") {
		t.Fatal("wide view lacks NOTE")
	}
	m.SetSize(36, 3)
	v := m.View()
	if strings.Contains(v, "NOTE") || !strings.Contains(v, "AGE") {
		t.Fatalf("narrow view:\n%s", v)
	}
	m.SetSize(20, 3)
	for _, l := range strings.Split(m.View(), "\n") {
		if ansi.StringWidth(l) > 20 {
			t.Fatalf("too wide: %q", l)
		}
	}
}

// TestIncrementalMatchesRebuild applies random batches, small (incremental
// path) and large (re-sort path), and checks the order against a fresh sort.
func TestIncrementalMatchesRebuild(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	statuses := []string{"ready", "pending", "failed"}
	m := newTable(80, 10)
	live := map[string]bool{}
	for round := range 200 {
		n := 1 + r.IntN(8)
		if round%20 == 0 {
			n = 300
		}
		var up []item
		var del []string
		touched := map[string]bool{}
		for range n {
			id := fmt.Sprint(r.IntN(500))
			if touched[id] { // the store hands over one delta per object
				continue
			}
			touched[id] = true
			if live[id] && r.IntN(4) == 0 {
				del = append(del, id)
				delete(live, id)
				continue
			}
			live[id] = true
			up = append(up, item{id: id, ns: fmt.Sprint("ns", r.IntN(3)), name: fmt.Sprint("n", r.IntN(100)),
				status: statuses[r.IntN(3)], age: time.Duration(r.IntN(50)) * time.Minute})
		}
		if round%50 == 0 {
			m.SortBy(SortKey(r.IntN(3)))
		}
		sel := m.SelectedID()
		m.Apply(up, del)
		got := m.Visible()
		ref := New(spec(), styles.Plain(), keys.Default(), nil)
		ref.sortKey, ref.desc = m.Sorting()
		ref.Apply(got, nil)
		ref.rebuild()
		if !slices.EqualFunc(got, ref.Visible(), func(a, b item) bool { return a.id == b.id }) {
			t.Fatalf("round %d: order differs from a full sort", round)
		}
		if len(got) != len(live) {
			t.Fatalf("round %d: %d rows, %d live", round, len(got), len(live))
		}
		if live[sel] && m.SelectedID() != sel {
			t.Fatalf("round %d: selection moved from %s to %s", round, sel, m.SelectedID())
		}
	}
}

func TestDuplicateIDsInOneApply(t *testing.T) {
	m := newTable(80, 10)
	m.Apply([]item{{id: "1", name: "a"}, {id: "1", name: "b"}}, nil)
	m.Apply([]item{{id: "2", name: "c"}}, []string{"2"})
	if got := names(m); !slices.Equal(got, []string{"b"}) {
		t.Fatalf("%v", got)
	}
}

func TestLowerJoin(t *testing.T) {
	for _, cells := range [][]string{
		nil, {""}, {"", ""}, {"Running", "ml", "10.0.0.1"}, {"ABC xyz", "-", "Ünïcode", "CrashLoopBackOff"}, {"İstanbul"},
	} {
		want := strings.ToLower(strings.Join(cells, " "))
		if got := lowerJoin(cells); got != want {
			t.Errorf("lowerJoin(%q) = %q, want %q", cells, got, want)
		}
	}
}

// TestCellClass: a column with a Class draws its non-empty cells in that
// class's style, and the row's own style resumes after it; empty cells,
// the selected row and plain mode carry no extra codes.
func TestCellClass(t *testing.T) {
	sp := spec()
	sp.Columns[3].Class = styles.Warn
	sp.Cells = func(i item) []string {
		note := ""
		if i.name == "b" {
			note = "why-b"
		}
		return []string{i.name, i.ns, i.status, note, ""}
	}
	st := styles.Default()
	m := New(sp, st, keys.Default(), func() time.Time { return t0 })
	m.SetSize(80, 5)
	m.Apply([]item{{id: "1", name: "a", status: "ready"}, {id: "2", name: "b", status: "failed"}}, nil)
	lines := strings.Split(m.View(), "\n")
	on, off := styles.Codes(st.Class(styles.Warn))
	rowOn, _ := styles.Codes(st.Class(styles.ClassOf("")))
	if strings.Contains(lines[1], on) {
		t.Errorf("selected row a has the cell style: %q", lines[1])
	}
	if !strings.Contains(lines[2], on+"why-b") || !strings.Contains(lines[2], off+rowOn) {
		t.Errorf("row b's WHY cell not styled, or the row style not resumed: %q", lines[2])
	}
	if got := ansi.Strip(lines[2]); !strings.Contains(got, "b ") || !strings.Contains(got, "why-b") {
		t.Errorf("text of row b: %q", got)
	}
	if w := ansi.StringWidth(lines[2]); w > 80 {
		t.Errorf("row b is %d wide", w)
	}
	plain := New(sp, styles.Plain(), keys.Default(), func() time.Time { return t0 })
	plain.SetSize(80, 5)
	plain.Apply([]item{{id: "2", name: "b"}}, nil)
	if strings.Contains(plain.View(), "\x1b") {
		t.Error("escape codes in plain mode")
	}
}
