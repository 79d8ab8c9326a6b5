package tui

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	corev1 "k8s.io/api/core/v1"

	"github.com/raydar/raydar/tui/format"
	"github.com/raydar/raydar/tui/host"
)

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
	// podLogsMsg is a batch of lines read since the last batch.
	podLogsMsg struct {
		id      int64
		lines   []string
		dropped int
		done    bool
		err     error
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
		m := podLogsMsg{id: id, lines: s.buf, dropped: s.dropped, done: s.done, err: s.err}
		s.buf, s.dropped = nil, 0
		return m
	}
}

// podLogsPage follows one container's logs: the last MaxPodLogLines lines,
// following new ones (f toggles), wrapping long ones (w toggles), searching
// (/, n, N): a logView. Esc closes the page and the stream.
type podLogsPage struct {
	host.Base
	logView
	// id numbers the page (env.nextSeq), so a late batch of a closed page
	// is not taken by the next one.
	id        int64
	pod       *corev1.Pod
	container string
	src       PodLogs

	ctx    context.Context
	cancel context.CancelFunc
	stream *logStream
}

func newPodLogsPage(e *host.Env, p *corev1.Pod, src PodLogs) *podLogsPage {
	ctr := ""
	if len(p.Spec.Containers) > 0 {
		ctr = p.Spec.Containers[0].Name // the Ray container comes first
	}
	return &podLogsPage{Base: host.Base{E: e, VK: LogsView}, logView: logView{follow: true, match: -1},
		id: e.NextSeq(), pod: p, container: ctr, src: src}
}

func (p *podLogsPage) Title() string {
	return fmt.Sprintf("Logs %s/%s (%s)", p.pod.Namespace, p.pod.Name, format.OrNone(p.container))
}
func (p *podLogsPage) Crumb() string { return "logs " + p.pod.Name }
func (p *podLogsPage) SetSize(w, h int) {
	p.W, p.H = w, h
	p.vw, p.vh = w, h
	p.clamp()
}
func (p *podLogsPage) Keys() []key.Binding { return p.viewKeys(p.E) }
func (p *podLogsPage) Target() Target {
	return Target{View: LogsView, Namespace: p.pod.Namespace, Selected: p.pod, Owner: p.pod}
}
func (p *podLogsPage) Searcher() host.Filterer { return logSearch{&p.logView} }

// init opens the stream in a command (with the busy indicator); the reader
// goroutine then runs until the stream ends or the page closes.
func (p *podLogsPage) Init() tea.Cmd {
	p.ctx, p.cancel = context.WithCancel(p.E.Ctx)
	p.stream = newLogStream()
	src := p.src
	ns, name, ctr := p.pod.Namespace, p.pod.Name, p.container
	return openLog(p.ctx, p.stream, p.id, func(ctx context.Context) (io.ReadCloser, error) {
		return src.PodLogs(ctx, ns, name, ctr, true)
	})
}

func (p *podLogsPage) Close() {
	if p.cancel != nil {
		p.cancel()
	}
}

func (p *podLogsPage) Receive(msg tea.Msg) (tea.Cmd, bool) {
	return p.logView.Receive(msg, p.id, p.ctx, p.stream)
}

func (p *podLogsPage) Update(msg tea.KeyPressMsg) (bool, tea.Cmd) {
	return p.key(p.E, msg), nil
}

// renderTail renders the rows that end with lines[end-1], at most h rows.
func renderTail(lines []string, end, w, h int, wrap bool) []string {
	var rev [][]string
	n := 0
	for i := end - 1; i >= 0 && n < h; i-- {
		rows := renderRows(lines, i, w, 1, false)
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

func (p *podLogsPage) View() string { return p.render(p.E.St, "Logs") }
