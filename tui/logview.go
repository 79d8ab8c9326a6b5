package tui

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/raydar/raydar/tui/format"
	"github.com/raydar/raydar/tui/host"
	"github.com/raydar/raydar/tui/styles"
)

// logView is the shared part of the pages that follow a log (a pod's
// container logs, a Ray log file): the last MaxPodLogLines lines of a
// stream read by a logStream in 100 ms batches, following new ones (f),
// wrapping (w), scrolling, and searching (/ sets the search, n and N go to
// the next and previous match).
type logView struct {
	lines   []string
	dropped int
	opened  bool
	ended   bool
	err     error

	follow bool
	wrap   bool
	scroll int // lines above the end
	vw, vh int // the page's size

	query string         // the search as typed
	re    *regexp.Regexp // nil: no search
	match int            // index of the current match in lines, -1: none
}

// openLog opens a stream in a command (the caller shows the busy
// indicator); a goroutine then reads it into s until it ends or ctx ends.
// The answer is a podLogsOpenedMsg with id.
func openLog(ctx context.Context, s *logStream, id int64, open func(context.Context) (io.ReadCloser, error)) tea.Cmd {
	return func() tea.Msg {
		rc, err := open(ctx)
		if err != nil {
			return podLogsOpenedMsg{id: id, err: err}
		}
		stop := context.AfterFunc(ctx, func() { _ = rc.Close() }) // unblocks the read
		go func() {
			defer func() {
				if stop() {
					_ = rc.Close()
				}
			}()
			s.read(ctx, rc)
		}()
		return podLogsOpenedMsg{id: id}
	}
}

// receive takes the stream's messages for page id; it reports whether msg
// was one, and returns the command reading the next batch.
func (v *logView) Receive(msg tea.Msg, id int64, ctx context.Context, s *logStream) (tea.Cmd, bool) {
	switch m := msg.(type) {
	case podLogsOpenedMsg:
		if m.id != id {
			return nil, false
		}
		v.opened = true
		if m.err != nil {
			v.ended, v.err = true, m.err
			return nil, true
		}
		return s.next(ctx, id), true
	case podLogsMsg:
		if m.id != id {
			return nil, false
		}
		v.add(m.lines, m.dropped)
		if m.done {
			v.ended, v.err = true, m.err
			return nil, true
		}
		return s.next(ctx, id), true
	}
	return nil, false
}

// add appends a batch, keeping the last MaxPodLogLines lines; when not
// following, the view stays on the lines it shows.
func (v *logView) add(lines []string, dropped int) {
	v.lines = append(v.lines, lines...)
	over := len(v.lines) - MaxPodLogLines
	if over > 0 {
		// Copy rather than reslice: the dropped lines' strings are freed
		// and the array does not keep growing.
		kept := make([]string, MaxPodLogLines, MaxPodLogLines+MaxPodLogLines/4)
		copy(kept, v.lines[over:])
		v.lines = kept
		dropped += over
		if v.match >= 0 {
			v.match -= over
			if v.match < 0 {
				v.match = -1
			}
		}
	}
	v.dropped += dropped
	if !v.follow {
		v.scroll += len(lines)
	}
	v.clamp()
}

func (v *logView) bodyHeight() int { return max(v.vh-1, 1) }

func (v *logView) clamp() {
	if v.follow {
		v.scroll = 0
	}
	v.scroll = format.ClampInt(v.scroll, 0, max(len(v.lines)-v.bodyHeight(), 0))
}

// key handles follow, wrap, search steps and scrolling.
func (v *logView) key(e *host.Env, msg tea.KeyPressMsg) bool {
	km := e.KM
	switch {
	case key.Matches(msg, km.Follow):
		v.follow = !v.follow
	case key.Matches(msg, km.Wrap):
		v.wrap = !v.wrap
	case v.re != nil && key.Matches(msg, km.SearchNext):
		v.step(+1)
	case v.re != nil && key.Matches(msg, km.SearchPrev):
		v.step(-1)
	default:
		if key.Matches(msg, km.Up, km.PageUp, km.Top) { // looking back stops following
			v.follow = false
		}
		if !scrollKey(km, msg, &v.scroll, fromEnd, max(v.bodyHeight()-1, 1), len(v.lines)) {
			return false
		}
	}
	v.clamp()
	return true
}

// viewKeys are the bindings a log page shows.
func (v *logView) viewKeys(e *host.Env) []key.Binding {
	bs := []key.Binding{e.KM.Follow, e.KM.Wrap}
	if v.re != nil {
		bs = append(bs, e.KM.SearchNext, e.KM.SearchPrev)
	}
	return bs
}

// logSearch is the / prompt's target on a log page: the search.
type logSearch struct{ v *logView }

// SetFilter sets the search: a case-insensitive regular expression ("" ends
// it). The view stops following and shows the last match.
func (s logSearch) SetFilter(q string) error {
	v := s.v
	if q == "" {
		v.query, v.re, v.match = "", nil, -1
		return nil
	}
	re, err := regexp.Compile("(?i)" + q)
	if err != nil {
		return fmt.Errorf("search: %w", err)
	}
	v.query, v.re, v.match = q, re, len(v.lines)
	v.step(-1)
	return nil
}

// Filter is the search as typed.
func (s logSearch) Filter() string { return s.v.query }

// step moves to the next match after (dir +1) or before (-1) the current
// one, and scrolls to it; without one the position stays.
func (v *logView) step(dir int) {
	if v.re == nil {
		return
	}
	from := v.match
	if from < 0 || from > len(v.lines) {
		from = len(v.lines)
		if dir > 0 {
			from = -1
		}
	}
	for i := from + dir; i >= 0 && i < len(v.lines); i += dir {
		if v.re.MatchString(v.lines[i]) {
			v.match = i
			v.follow = false
			// The match is the middle row when it can be.
			v.scroll = len(v.lines) - 1 - i - v.bodyHeight()/2
			v.clamp()
			return
		}
	}
}

// matches counts the lines matching the search and says which of them
// the current match is (1-based; 0: none).
func (v *logView) matches() (n, cur int) {
	for i, l := range v.lines {
		if v.re.MatchString(l) {
			n++
			if i == v.match {
				cur = n
			}
		}
	}
	return n, cur
}

// state is the stream's state in words.
func (v *logView) state(st *styles.Styles) string {
	switch {
	case !v.opened:
		return st.Faint.Render("connecting…")
	case v.err != nil:
		return st.FlashErr.Render("error: " + v.err.Error())
	case v.ended:
		return st.Faint.Render("stream ended")
	case v.follow:
		return "following"
	default:
		return "paused (f follows)"
	}
}

// render is the heading line (the name, the lines shown, the state, wrap,
// the search) and the body.
func (v *logView) render(st *styles.Styles, name string) string {
	end := len(v.lines) - v.scroll
	begin := max(end-v.bodyHeight(), 0)
	head := fmt.Sprintf("%s (lines %d-%d of %d", name, min(begin+1, end), end, len(v.lines))
	if v.dropped > 0 {
		head += fmt.Sprintf(", %d older dropped", v.dropped)
	}
	head += ")"
	wrap := "wrap off"
	if v.wrap {
		wrap = "wrap on"
	}
	line := st.Section.Render(head) + "  " + v.state(st) + "  " + st.Faint.Render(wrap)
	if v.re != nil {
		n, cur := v.matches()
		what := "no match"
		if n > 0 {
			what = fmt.Sprintf("match %d of %d", cur, n)
		}
		line += "  " + st.TitleFilter.Render("/"+v.query+": "+what)
	}
	rows := v.lines
	if v.re != nil && v.match >= 0 && v.match < len(v.lines) && v.match < end {
		// Mark the current match (a copy: lines stay as read).
		rows = append([]string(nil), v.lines[:end]...)
		rows[v.match] = st.Selected.Render(rows[v.match])
	}
	out := []string{line}
	out = append(out, renderTail(rows, end, v.vw, v.bodyHeight(), v.wrap)...)
	return strings.Join(out, "\n")
}
