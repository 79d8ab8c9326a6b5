package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/raydar/raydar/tui/format"
	"github.com/raydar/raydar/tui/keys"
	"github.com/raydar/raydar/tui/widgets"
)

// render draws the whole screen: exactly height lines of at most width
// cells. Its cost depends on the screen size only.
func (a *App) render() string {
	if a.width <= 0 || a.height <= 0 {
		return ""
	}
	w, bh := a.width, a.bodyHeight()
	lines := make([]string, 0, bh+5)
	lines = append(lines, a.headerLine(), a.hintsLine(), a.titleLine())
	var body string
	if a.mode == modeHelp {
		body = a.helpView(w, bh)
	} else {
		body = a.top().View()
	}
	bl := strings.Split(body, "\n")
	for len(bl) < bh {
		bl = append(bl, "")
	}
	bl = bl[:bh]
	if a.mode == modeDialog && a.dialog != nil {
		a.overlay(bl, w)
	}
	lines = append(lines, bl...)
	lines = append(lines, a.crumbsLine(), a.statusLine())
	if len(lines) > a.height {
		lines = lines[:a.height]
	}
	for i, l := range lines {
		if ansi.StringWidth(l) > w {
			lines[i] = ansi.Truncate(l, w, "")
		}
	}
	return strings.Join(lines, "\n")
}

func (a *App) headerLine() string {
	st := a.st
	sep := st.Faint.Render(" " + st.Glyphs.Sep + " ")
	field := func(k, v string) string { return st.HeaderKey.Render(k+":") + " " + st.HeaderValue.Render(v) }
	ns := a.ns
	if ns == "" {
		ns = "all"
	}
	parts := []string{st.Logo.Render("raydar")}
	// "syncing…" comes first: a header wider than the terminal is cut at
	// its end, and the lists being incomplete is what the header must not
	// lose (a 120-column terminal cut it after an observer's role).
	if a.syncing {
		what := "syncing…"
		if a.syncingWhat != "" {
			what = "syncing " + a.syncingWhat + "…"
		}
		parts = append(parts, st.FlashWarn.Render(what))
	}
	// A fleet view: every context's state on its lists (no one server),
	// the row's context on a page opened from it.
	fctx, fserver := a.headerContext()
	if fctx != "" {
		parts = append(parts, field("ctx", fctx))
	} else {
		parts = append(parts, field("ctx", format.OrNone(a.e.Sess.Context)))
	}
	if why := a.readOnlyWhy(); why != "" {
		parts = append(parts, st.FlashWarn.Render("read-only: "+why))
	}
	switch {
	case fctx == "":
		parts = append(parts, field("server", format.OrNone(a.e.Sess.Server)))
	case fserver != "":
		parts = append(parts, field("server", fserver))
	}
	parts = append(parts, field("ns", ns))
	if a.role != "" {
		parts = append(parts, field("role", a.role))
	}
	if pf := forwardsSummary(st.Glyphs, a.forwards()); pf != "" {
		parts = append(parts, field("pf", pf))
	}
	s := strings.Join(parts, sep)
	if a.busy > 0 {
		s += "  " + a.spin.View()
	}
	return s
}

// hint renders one "<key> desc" hint.
func (a *App) hint(b key.Binding) string {
	h := b.Help()
	return a.st.HintKey.Render("<"+h.Key+">") + " " + a.st.HintText.Render(h.Desc)
}

// hintsLine shows the most useful keys of the current view, as many as fit.
func (a *App) hintsLine() string {
	km, p := a.km, a.top()
	var bs []key.Binding
	if p.CanOpen() {
		bs = append(bs, km.Open)
	}
	if len(a.stack) > 1 {
		bs = append(bs, km.Back)
	}
	var late []key.Binding
	for _, act := range a.viewActions(p.Kind()) {
		if act.HintLast {
			late = append(late, act.Key)
			continue
		}
		bs = append(bs, act.Key)
	}
	for _, b := range p.Keys() {
		if b.Help().Key != km.Open.Help().Key {
			bs = append(bs, b)
		}
	}
	bs = append(bs, late...)
	bs = append(bs, km.Help, km.Command, km.Filter)
	if p.Table() != nil {
		bs = append(bs, key.NewBinding(key.WithKeys("N"), key.WithHelp(
			km.SortName.Help().Key+"/"+km.SortAge.Help().Key+"/"+km.SortStatus.Help().Key, "sort")))
		if p.Table().Marks() {
			bs = append(bs, km.Mark)
		}
	}
	if len(a.stack) == 1 {
		bs = append(bs, km.AllNamespaces)
	}
	// The help hint always shows: when the hints do not all fit, room is
	// kept for it.
	var help string
	helpW := 0
	if km.Help.Enabled() {
		help = a.hint(km.Help)
		helpW = ansi.StringWidth(help) + 2
	}
	var b strings.Builder
	w, helpShown := 0, help == ""
	add := func(h string, hw int) {
		if w > 0 {
			b.WriteString("  ")
		}
		b.WriteString(h)
		w += hw
	}
	for _, k := range bs {
		if !k.Enabled() {
			continue
		}
		h := a.hint(k)
		hw := ansi.StringWidth(h)
		if w > 0 {
			hw += 2
		}
		isHelp := h == help
		reserve := 0
		if !helpShown && !isHelp {
			reserve = helpW
		}
		if w+hw+reserve > a.width {
			break
		}
		add(h, hw)
		helpShown = helpShown || isHelp
	}
	if !helpShown {
		hw := ansi.StringWidth(help)
		if w > 0 {
			hw += 2
		}
		if w+hw <= a.width {
			add(help, hw)
		}
	}
	return b.String()
}

func (a *App) titleLine() string {
	st := a.st
	p := a.top()
	var t string
	if a.mode == modeHelp {
		t = st.Title.Render("Help") + st.Faint.Render(" "+p.Crumb())
	} else if tb := p.Table(); tb != nil && len(a.stack) == 1 {
		ns := a.ns
		if ns == "" {
			ns = "all"
		}
		t = st.Title.Render(p.Title()) + st.TitleFilter.Render("("+ns+")") +
			st.TitleCounter.Render(fmt.Sprintf("[%d]", tb.Len()))
		if f := tb.Filter(); f != "" {
			t += " " + st.TitleFilter.Render("</"+f+">")
		}
		if n := tb.MarkCount(); n > 0 {
			t += " " + st.TitleCounter.Render(fmt.Sprintf("%d marked", n))
		}
	} else {
		t = st.Title.Render(p.Title())
		if tb := p.Table(); tb != nil {
			if f := tb.Filter(); f != "" {
				t += " " + st.TitleFilter.Render("</"+f+">")
			}
			if n := tb.MarkCount(); n > 0 {
				t += " " + st.TitleCounter.Render(fmt.Sprintf("%d marked", n))
			}
		}
	}
	t = " " + t + " "
	tw := ansi.StringWidth(t)
	left := max((a.width-tw)/2, 1)
	right := max(a.width-tw-left, 0)
	return st.Rule.Render(strings.Repeat(st.Glyphs.Rule, left)) + t + st.Rule.Render(strings.Repeat(st.Glyphs.Rule, right))
}

func (a *App) crumbsLine() string {
	var out []string
	for i, p := range a.stack {
		c := "<" + p.Crumb() + ">"
		if i == len(a.stack)-1 {
			out = append(out, a.st.CrumbActive.Render(c))
		} else {
			out = append(out, a.st.Crumb.Render(c))
		}
	}
	return strings.Join(out, " ")
}

func (a *App) statusLine() string {
	st := a.st
	switch a.mode {
	case modeCommand, modeFilter:
		lead := ":"
		if a.mode == modeFilter {
			lead = "/"
		}
		s := st.Prompt.Render(lead) + a.prompt.text + st.Prompt.Render(widgets.Caret(st.Plain))
		if a.prompt.note != "" {
			s += "  " + st.Faint.Render(a.prompt.note)
		}
		return s
	}
	if a.flash.text == "" {
		return ""
	}
	switch a.flash.level {
	case flashErr:
		return st.FlashErr.Render("error: " + a.flash.text)
	case flashWarn:
		return st.FlashWarn.Render(a.flash.text)
	}
	return st.FlashInfo.Render(a.flash.text)
}

// overlay draws the dialog box over the middle of the body lines.
func (a *App) overlay(bl []string, w int) {
	box := a.st.Dialog.Render(a.dialog.View(min(w-4, 60)))
	lines := strings.Split(box, "\n")
	top := max((len(bl)-len(lines))/2, 0)
	for i, l := range lines {
		if top+i >= len(bl) {
			break
		}
		pad := max((w-ansi.StringWidth(l))/2, 0)
		bl[top+i] = strings.Repeat(" ", pad) + l
	}
}

// helpGroup is one titled block of the help screen.
type helpGroup struct {
	title string
	rows  [][2]string
}

func bindingRows(bs ...key.Binding) [][2]string {
	var rows [][2]string
	for _, b := range bs {
		if !b.Enabled() {
			continue
		}
		h := b.Help()
		rows = append(rows, [2]string{h.Key, h.Desc})
	}
	return rows
}

// helpGroups lists every key of the current view.
func (a *App) helpGroups() []helpGroup {
	km, p := a.km, a.top()
	general := []key.Binding{km.Command, km.Filter, km.Help, km.Back}
	if p.CanOpen() {
		general = append(general, km.Open)
	}
	general = append(general, km.CopyName, km.CopyRow, km.AllNamespaces, km.Quit)
	gs := []helpGroup{{keys.GroupGeneral, bindingRows(general...)}}
	var view []key.Binding
	for _, b := range p.Keys() {
		if b.Help().Key != km.Open.Help().Key {
			view = append(view, b)
		}
	}
	for _, act := range a.viewActions(p.Kind()) {
		view = append(view, act.Key)
	}
	if len(view) > 0 {
		gs = append(gs, helpGroup{"View", bindingRows(view...)})
	}
	gs = append(gs, helpGroup{keys.GroupNavigation, bindingRows(km.Up, km.Down, km.Top, km.Bottom, km.PageUp, km.PageDown)})
	if t := p.Table(); t != nil {
		gs = append(gs, helpGroup{keys.GroupSort, bindingRows(km.SortName, km.SortAge, km.SortStatus)})
		if t.Marks() {
			gs = append(gs, helpGroup{keys.GroupMarks, bindingRows(km.Mark, km.MarkRange, km.ClearMarks)})
		}
		gs = append(gs, helpGroup{"Filter", [][2]string{{"/text", "regex"}, {"/!text", "not matching"}, {"/-l k=v", "label selector"}, {"esc", "clear"}}})
	}
	var cmds [][2]string
	for _, k := range a.reg.Entries {
		cmds = append(cmds, [2]string{":" + k.AliasList()[0], k.Help})
	}
	gs = append(gs, helpGroup{"Commands", append(cmds, [][2]string{
		{":ns NAME", "namespace"}, {":ns", "all namespaces"}, {":ctx NAME", "context"}, {":q", "quit"}, {"tab", "complete"},
	}...)})
	return gs
}

// helpView lays the help groups out in columns that fit the body.
func (a *App) helpView(w, h int) string {
	st := a.st
	type col struct {
		lines []string
		width int
	}
	var cols []col
	cur := col{}
	for _, g := range a.helpGroups() {
		kw := 0
		for _, r := range g.rows {
			kw = max(kw, ansi.StringWidth(r[0]))
		}
		block := []string{st.HelpGroup.Render(g.title)}
		bw := ansi.StringWidth(g.title)
		for _, r := range g.rows {
			k := r[0] + strings.Repeat(" ", kw-ansi.StringWidth(r[0]))
			block = append(block, st.HelpKey.Render(k)+"  "+st.HelpDesc.Render(r[1]))
			bw = max(bw, kw+2+ansi.StringWidth(r[1]))
		}
		if len(cur.lines) > 0 && len(cur.lines)+1+len(block) > h {
			cols = append(cols, cur)
			cur = col{}
		}
		if len(cur.lines) > 0 {
			cur.lines = append(cur.lines, "")
		}
		cur.lines = append(cur.lines, block...)
		cur.width = max(cur.width, bw)
	}
	if len(cur.lines) > 0 {
		cols = append(cols, cur)
	}
	var blocks []string
	for _, c := range cols {
		blocks = append(blocks, lipgloss.NewStyle().Width(c.width+2).Render(strings.Join(c.lines, "\n")))
	}
	return lipgloss.JoinHorizontal(lipgloss.Top, blocks...)
}
