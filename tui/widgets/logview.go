package widgets

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/raydar/raydar/tui/format"
	"github.com/raydar/raydar/tui/host"
	"github.com/raydar/raydar/tui/styles"
)

// LogView is the shared part of the pages that follow a log (a pod's
// container logs, a Ray log file): the last MaxPodLogLines lines of a
// stream read by a logStream in 100 ms batches, following new ones (f),
// wrapping (w), scrolling, and searching (/ sets the search, n and N go to
// the next and previous match).
type LogView struct {
	// ID numbers the page (Env.NextSeq), so a late batch of a closed page
	// is not taken by the next one.
	ID int64
	// Ctx ends when the page closes (Close); stream is what its reader
	// goroutine hands over.
	Ctx    context.Context
	cancel context.CancelFunc
	stream *logStream

	Lines   []string
	Dropped int
	Opened  bool
	Ended   bool
	Err     error

	follow bool
	Wrap   bool
	scroll int // lines above the end
	vw, vh int // the page's size

	query string         // the search as typed
	re    *regexp.Regexp // nil: no search
	match int            // index of the current match in lines, -1: none
}

// NewLogView is a log view following from the end, numbered id.
func NewLogView(id int64) LogView { return LogView{ID: id, follow: true, match: -1} }

// Begin starts the view's life under parent (the session's context): the
// context close ends and the stream the reader fills. A log page calls it
// from Init, then start (at once, or once it knows what to open).
func (v *LogView) Begin(parent context.Context) {
	v.Ctx, v.cancel = context.WithCancel(parent)
	v.stream = newLogStream()
}

// Start opens the stream open returns, in a command (the caller shows the
// busy indicator); a goroutine then reads it until it ends or the page
// closes.
func (v *LogView) Start(open func(context.Context) (io.ReadCloser, error)) tea.Cmd {
	return openLog(v.Ctx, v.stream, v.ID, open)
}

// Restart empties the view for another stream, numbered id (a late batch
// of the old stream is not taken) under parent: the old stream and its
// reader end, the lines go, following starts again; the size, wrap and
// the search stay. Start then opens the new stream.
func (v *LogView) Restart(parent context.Context, id int64) {
	v.Close()
	old := *v
	*v = NewLogView(id)
	v.vw, v.vh, v.Wrap, v.query, v.re = old.vw, old.vh, old.Wrap, old.query, old.re
	v.Begin(parent)
}

// Fail ends the view with err before anything was opened.
func (v *LogView) Fail(err error) { v.Opened, v.Ended, v.Err = true, true, err }

// Close ends the stream and its reader when the page leaves the stack.
func (v *LogView) Close() {
	if v.cancel != nil {
		v.cancel()
	}
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

// Receive takes the stream's messages for the view's page; it reports
// whether msg was one, and returns the command reading the next batch.
func (v *LogView) Receive(msg tea.Msg) (tea.Cmd, bool) {
	id, ctx, s := v.ID, v.Ctx, v.stream
	switch m := msg.(type) {
	case podLogsOpenedMsg:
		if m.id != id {
			return nil, false
		}
		v.Opened = true
		if m.err != nil {
			v.Ended, v.Err = true, m.err
			return nil, true
		}
		return s.next(ctx, id), true
	case LinesMsg:
		if m.ID != id {
			return nil, false
		}
		v.Add(m.Lines, m.Dropped)
		if m.Done {
			v.Ended, v.Err = true, m.Err
			return nil, true
		}
		return s.next(ctx, id), true
	}
	return nil, false
}

// Add appends a batch, keeping the last MaxPodLogLines lines; when not
// following, the view stays on the lines it shows.
func (v *LogView) Add(lines []string, dropped int) {
	v.Lines = append(v.Lines, lines...)
	over := len(v.Lines) - MaxPodLogLines
	if over > 0 {
		// Copy rather than reslice: the dropped lines' strings are freed
		// and the array does not keep growing.
		kept := make([]string, MaxPodLogLines, MaxPodLogLines+MaxPodLogLines/4)
		copy(kept, v.Lines[over:])
		v.Lines = kept
		dropped += over
		if v.match >= 0 {
			v.match -= over
			if v.match < 0 {
				v.match = -1
			}
		}
	}
	v.Dropped += dropped
	if !v.follow {
		v.scroll += len(lines)
	}
	v.Clamp()
}

// Resize sets the page's size.
func (v *LogView) Resize(w, h int) {
	v.vw, v.vh = w, h
	v.Clamp()
}

func (v *LogView) bodyHeight() int { return max(v.vh-1, 1) }

// Clamp keeps the scroll in range, at the end while following.
func (v *LogView) Clamp() {
	if v.follow {
		v.scroll = 0
	}
	v.scroll = format.ClampInt(v.scroll, 0, max(len(v.Lines)-v.bodyHeight(), 0))
}

// HandleKey handles follow, wrap, search steps and scrolling; it reports
// whether it used the key.
func (v *LogView) HandleKey(e *host.Env, msg tea.KeyPressMsg) bool {
	km := e.KM
	switch {
	case key.Matches(msg, km.Follow):
		v.follow = !v.follow
	case key.Matches(msg, km.Wrap):
		v.Wrap = !v.Wrap
	case v.re != nil && key.Matches(msg, km.SearchNext):
		v.step(+1)
	case v.re != nil && key.Matches(msg, km.SearchPrev):
		v.step(-1)
	default:
		if key.Matches(msg, km.Up, km.PageUp, km.Top) { // looking back stops following
			v.follow = false
		}
		if !ScrollKey(km, msg, &v.scroll, FromEnd, max(v.bodyHeight()-1, 1), len(v.Lines)) {
			return false
		}
	}
	v.Clamp()
	return true
}

// ViewKeys are the bindings a log page shows.
func (v *LogView) ViewKeys(e *host.Env) []key.Binding {
	bs := []key.Binding{e.KM.Follow, e.KM.Wrap}
	if v.re != nil {
		bs = append(bs, e.KM.SearchNext, e.KM.SearchPrev)
	}
	return bs
}

// LogSearch is the / prompt's target on a log page: the search.
type LogSearch struct{ v *LogView }

// SetFilter sets the search: a case-insensitive regular expression ("" ends
// it). The view stops following and shows the last match.
func (s LogSearch) SetFilter(q string) error {
	v := s.v
	if q == "" {
		v.query, v.re, v.match = "", nil, -1
		return nil
	}
	re, err := regexp.Compile("(?i)" + q)
	if err != nil {
		return fmt.Errorf("search: %w", err)
	}
	v.query, v.re, v.match = q, re, len(v.Lines)
	v.step(-1)
	return nil
}

// Filter is the search as typed.
func (s LogSearch) Filter() string { return s.v.query }

// step moves to the next match after (dir +1) or before (-1) the current
// one, and scrolls to it; without one the position stays.
func (v *LogView) step(dir int) {
	if v.re == nil {
		return
	}
	from := v.match
	if from < 0 || from > len(v.Lines) {
		from = len(v.Lines)
		if dir > 0 {
			from = -1
		}
	}
	for i := from + dir; i >= 0 && i < len(v.Lines); i += dir {
		if v.re.MatchString(v.Lines[i]) {
			v.match = i
			v.follow = false
			// The match is the middle row when it can be.
			v.scroll = len(v.Lines) - 1 - i - v.bodyHeight()/2
			v.Clamp()
			return
		}
	}
}

// matches counts the lines matching the search and says which of them
// the current match is (1-based; 0: none).
func (v *LogView) matches() (n, cur int) {
	for i, l := range v.Lines {
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
func (v *LogView) state(st *styles.Styles) string {
	switch {
	case !v.Opened:
		return st.Faint.Render("connecting…")
	case v.Err != nil:
		return st.FlashErr.Render("error: " + v.Err.Error())
	case v.Ended:
		return st.Faint.Render("stream ended")
	case v.follow:
		return "following"
	default:
		return "paused (f follows)"
	}
}

// Render is the heading line (the name, the lines shown, the state, wrap,
// the search) and the body.
func (v *LogView) Render(st *styles.Styles, name string) string {
	end := len(v.Lines) - v.scroll
	begin := max(end-v.bodyHeight(), 0)
	head := fmt.Sprintf("%s (lines %d-%d of %d", name, min(begin+1, end), end, len(v.Lines))
	if v.Dropped > 0 {
		head += fmt.Sprintf(", %d older dropped", v.Dropped)
	}
	head += ")"
	wrap := "wrap off"
	if v.Wrap {
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
	rows := v.Lines
	if v.re != nil && v.match >= 0 && v.match < len(v.Lines) && v.match < end {
		// Mark the current match (a copy: lines stay as read).
		rows = append([]string(nil), v.Lines[:end]...)
		rows[v.match] = st.Selected.Render(rows[v.match])
	}
	out := []string{line}
	out = append(out, renderTail(rows, end, v.vw, v.bodyHeight(), v.Wrap)...)
	return strings.Join(out, "\n")
}

const (
	// MaxPodLogLines is how many lines a pod log page keeps; older lines
	// are dropped (k9s' unbounded log buffer grew to gigabytes).
	MaxPodLogLines = 5000
	// maxLogLineBytes cuts longer lines (the rest of the line is dropped).
	maxLogLineBytes = 16 << 10
	// logBatch is the shortest time between two deliveries of log lines to
	// the UI: a chatty pod costs at most ~10 updates a second, whatever its
	// line rate.
	logBatch = 100 * time.Millisecond
)

type (
	// podLogsOpenedMsg: the stream is open (or failed to open).
	podLogsOpenedMsg struct {
		id  int64
		err error
	}
	// LinesMsg is a batch of lines read since the last batch.
	LinesMsg struct {
		ID      int64
		Lines   []string
		Dropped int
		Done    bool
		Err     error
	}
)

// logStream is the hand-off between the goroutine reading a log stream and
// the UI: the reader appends lines to a bounded buffer and wakes the one
// pending next command, which takes the whole buffer. The reader never
// waits for the UI, and the UI never waits for the reader.
type logStream struct {
	wake chan struct{}

	mu      sync.Mutex
	buf     []string
	dropped int
	done    bool
	err     error
	last    time.Time
}

// newLogStream is an empty stream.
func newLogStream() *logStream { return &logStream{wake: make(chan struct{}, 1)} }

func (s *logStream) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *logStream) push(line string) {
	s.mu.Lock()
	if len(s.buf) >= MaxPodLogLines {
		s.buf = s.buf[1:]
		s.dropped++
	}
	s.buf = append(s.buf, line)
	s.mu.Unlock()
	s.signal()
}

func (s *logStream) finish(err error) {
	s.mu.Lock()
	s.done, s.err = true, err
	s.mu.Unlock()
	s.signal()
}

// cleanLogLine removes escape sequences and carriage returns and expands
// tabs, so a line's width is what it shows.
func cleanLogLine(b []byte) string {
	plain := true // printable ASCII only: nothing to clean (most log lines)
	for _, c := range b {
		if c < 0x20 || c > 0x7e {
			plain = false
			break
		}
	}
	if plain {
		return string(b)
	}
	return strings.ReplaceAll(strings.TrimRight(ansi.Strip(string(b)), "\r"), "\t", "    ")
}

// read reads r line by line until it ends or fails; ctx ending is not an
// error.
func (s *logStream) read(ctx context.Context, r io.Reader) {
	br := bufio.NewReaderSize(r, 64<<10)
	var line []byte
	for {
		chunk, more, err := br.ReadLine()
		if room := maxLogLineBytes - len(line); room > 0 {
			line = append(line, chunk[:min(len(chunk), room)]...)
		}
		if err != nil {
			if len(line) > 0 {
				s.push(cleanLogLine(line))
			}
			if errors.Is(err, io.EOF) || ctx.Err() != nil {
				err = nil
			}
			s.finish(err)
			return
		}
		if !more {
			s.push(cleanLogLine(line))
			line = line[:0]
		}
	}
}

// next waits for lines (or the end) and returns them as one batch; nil
// when ctx ends first.
func (s *logStream) next(ctx context.Context, id int64) tea.Cmd {
	return func() tea.Msg {
		select {
		case <-s.wake:
		case <-ctx.Done():
			return nil
		}
		s.mu.Lock()
		wait := logBatch - time.Since(s.last)
		s.mu.Unlock()
		if wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return nil
			}
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		s.last = time.Now()
		m := LinesMsg{ID: id, Lines: s.buf, Dropped: s.dropped, Done: s.done, Err: s.err}
		s.buf, s.dropped = nil, 0
		return m
	}
}

// renderTail renders the rows that end with lines[end-1], at most h rows.
func renderTail(lines []string, end, w, h int, wrap bool) []string {
	var rev [][]string
	n := 0
	for i := end - 1; i >= 0 && n < h; i-- {
		rows := RenderRows(lines, i, w, 1, false)
		if wrap {
			rows = strings.Split(ansi.Wrap(lines[i], max(w, 1), ""), "\n")
		}
		rev = append(rev, rows)
		n += len(rows)
	}
	out := make([]string, 0, n)
	for i := len(rev) - 1; i >= 0; i-- {
		out = append(out, rev[i]...)
	}
	if len(out) > h {
		out = out[len(out)-h:]
	}
	return out
}

// Searcher makes a log page's / prompt its search (host.Searcher).
func (v *LogView) Searcher() host.Filterer { return LogSearch{v} }
