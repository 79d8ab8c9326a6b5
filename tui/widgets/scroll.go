package widgets

import (
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/raydar/raydar/tui/format"
	"github.com/raydar/raydar/tui/keys"
)

// Scrolling: every page that scrolls text (describe, the service detail,
// the job's and a pod's logs) moves its position with ScrollKey.

// Where a scroll position counts from.
const (
	// FromTop: the position is the first line shown (Up decrements it).
	FromTop = -1
	// FromEnd: the position is how many lines the view is above the end
	// (Up increments it; 0 follows the end).
	FromEnd = 1
)

// ScrollKey moves *pos by the navigation keys: Up/Down one line,
// PageUp/PageDown page lines, Top/Bottom to either end of n lines. It
// reports whether msg was one of them; the caller clamps.
func ScrollKey(km *keys.KeyMap, msg tea.KeyPressMsg, pos *int, from, page, n int) bool {
	up := from
	switch {
	case key.Matches(msg, km.Up):
		*pos += up
	case key.Matches(msg, km.Down):
		*pos -= up
	case key.Matches(msg, km.PageUp):
		*pos += up * page
	case key.Matches(msg, km.PageDown):
		*pos -= up * page
	case key.Matches(msg, km.Top):
		*pos = 0
		if from == FromEnd {
			*pos = n
		}
	case key.Matches(msg, km.Bottom):
		*pos = n
		if from == FromEnd {
			*pos = 0
		}
	default:
		return false
	}
	return true
}

// TextView scrolls a block of lines. Without wrap, long lines are cut at
// the width; with wrap they continue on the next rows. The top is a line
// index, so toggling wrap keeps the same line at the top.
type TextView struct {
	Lines []string
	Top   int
	Wrap  bool
	W, H  int
}

// SetLines replaces the lines, keeping the top in range.
func (v *TextView) SetLines(ls []string) {
	v.Lines = ls
	v.Clamp()
}

// Clamp keeps the top in range.
func (v *TextView) Clamp() { v.Top = format.ClampInt(v.Top, 0, max(len(v.Lines)-v.H, 0)) }

// HandleKey scrolls or toggles wrap; it reports whether it used the key.
func (v *TextView) HandleKey(km *keys.KeyMap, msg tea.KeyPressMsg) bool {
	switch {
	case key.Matches(msg, km.Wrap):
		v.Wrap = !v.Wrap
	case !ScrollKey(km, msg, &v.Top, FromTop, max(v.H-1, 1), len(v.Lines)):
		return false
	}
	v.Clamp()
	return true
}

// RenderRows renders lines[from:] into at most h rows of at most w cells.
func RenderRows(lines []string, from, w, h int, wrap bool) []string {
	out := make([]string, 0, h)
	for i := from; i < len(lines) && len(out) < h; i++ {
		l := lines[i]
		if !wrap {
			if ansi.StringWidth(l) > w {
				l = ansi.Truncate(l, w, "")
			}
			out = append(out, l)
			continue
		}
		for _, r := range strings.Split(ansi.Wrap(l, max(w, 1), ""), "\n") {
			if len(out) == h {
				break
			}
			out = append(out, r)
		}
	}
	return out
}

// View is the rows shown from the top.
func (v *TextView) View() string {
	return strings.Join(RenderRows(v.Lines, v.Top, v.W, v.H, v.Wrap), "\n")
}
