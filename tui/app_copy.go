package tui

import (
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/raydar/raydar/tui/host"
)

// Copy (c, C): the selected object's name, the selected row as shown (tab
// separated) or a describe page's YAML, to the terminal's clipboard with
// OSC 52 (ESC ] 52 ; c ; base64 BEL), which works over SSH: the terminal
// on the person's side sets its clipboard. Inside tmux (TMUX set in the
// environment the Program reports, tea.EnvMsg) the sequence is wrapped in
// tmux's passthrough (ESC P tmux; … ESC \, every ESC doubled), which
// tmux hands to the outer terminal with `allow-passthrough on`.
//
// Bubble Tea v2's tea.SetClipboard writes the same OSC 52, but bare: it
// does not wrap it for tmux, so the sequence is built here (x/ansi's
// SetSystemClipboard and TmuxPassthrough) and written with tea.Raw.
// Whether the terminal took it cannot be known (OSC 52 has no answer); the
// flash says what was sent. Where nothing can be sent (Options.NoClipboard:
// the output is not a terminal) the flash says so and shows the text, so
// that it can be selected by hand.

// clipboardSeq is the bytes that set the clipboard to text: OSC 52, in
// tmux's passthrough when tmux is true.
func clipboardSeq(text string, tmux bool) string {
	seq := ansi.SetSystemClipboard(text)
	if tmux {
		seq = ansi.TmuxPassthrough(seq)
	}
	return seq
}

// copyName copies the selected object's name: the row's object, else the
// page's own (a detail page on a group row, a describe page).
func (a *App) copyName(p host.Page) tea.Cmd {
	tg := p.Target()
	obj := tg.Selected
	if obj == nil {
		obj = tg.Owner
	}
	if obj == nil {
		a.setFlash(flashWarn, "copy: nothing selected")
		return nil
	}
	return a.copyText(obj.GetName(), obj.GetName())
}

// copyRow copies the selected row as shown, its cells separated by tabs,
// or a page's own text (host.Copier: the describe page's YAML).
func (a *App) copyRow(p host.Page) tea.Cmd {
	if c, ok := p.(host.Copier); ok {
		what, text := c.CopyText()
		if text == "" {
			a.setFlash(flashWarn, "copy: nothing to copy on this page")
			return nil
		}
		return a.copyText(what, text)
	}
	t := p.Table()
	if t == nil {
		a.setFlash(flashWarn, "copy: no row on this page")
		return nil
	}
	cells := t.SelectedRow()
	if len(cells) == 0 {
		a.setFlash(flashWarn, "copy: no row selected")
		return nil
	}
	what := "the row of " + strings.TrimSpace(cells[0])
	if tg := p.Target(); tg.Selected != nil {
		what = "the row of " + tg.Selected.GetName()
	}
	return a.copyText(what, strings.Join(cells, "\t"))
}

// copyText sends text to the clipboard and flashes "copied WHAT", or says
// why it cannot.
func (a *App) copyText(what, text string) tea.Cmd {
	if why := a.opts.NoClipboard; why != "" {
		a.setFlash(flashWarn, "cannot copy "+what+" ("+why+"): "+oneLine(text))
		return nil
	}
	a.setFlash(flashInfo, "copied "+what)
	return tea.Raw(clipboardSeq(text, a.tmux))
}

// oneLine shortens a text for the flash line.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 200 {
		s = string(r[:200]) + "…"
	}
	return s
}
