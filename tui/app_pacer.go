package tui

import (
	"reflect"
	"sync"
	"time"
	"unsafe"

	tea "charm.land/bubbletea/v2"
)

// framePacer runs Bubble Tea's frame ticker only while a frame may be
// waiting to be drawn.
//
// Bubble Tea v2 (v2.1.1, tea.go startRenderer) draws on a time.Ticker at
// the program's FPS for its whole life: every tick the renderer compares
// the last View with what it drew and writes nothing when they are equal.
// The drawing is skipped but the wakeups are not: at 120 fps they were
// three quarters of the idle TUI's CPU (make bench-e2e's cpu-idle profile:
// runtime.findRunnable/netpoll woken by the timer; the TUI's own 1 s tick
// and frame cost 0.2 ms). Upstream proposals do the same inside Bubble Tea
// (charmbracelet/bubbletea#1776, #1796, open); until one is released the
// pacer stops and restarts the program's ticker from outside:
//
//   - a message that may change what is on screen (a key, a resize, any of
//     Bubble Tea's own) or a View whose text differs from the last one
//     wakes the ticker, first at a short period (lead) so that the frame
//     goes out at once instead of one whole frame later, then at the
//     program's frame rate;
//   - once nothing woke it for idleFrames frames (at least one tick after
//     the last View: that tick drew it), the ticker stops.
//
// The App's own periodic messages (its 1 s tick, the sync poll, a batch)
// wake it only through View: an age that ticked changes the text, an
// unchanged screen does not. Bubble Tea writes terminal queries and
// settings (clipboard, title, modes) only while handling one of its own
// messages, which wake the ticker.
//
// When the Program has no ticker field of type *time.Ticker (a Bubble Tea
// that changed), the pacer does nothing and the ticker runs as before;
// TestPacerFindsBubbleTeasTicker says so.
type framePacer struct {
	frame, lead time.Duration
	idle        time.Duration

	mu     sync.Mutex
	prog   *tea.Program
	ticker *time.Ticker
	looked bool
	state  pacerState
	last   time.Time // the last wake
	// leadFrom is when the ticker last left stopped: it runs at lead until
	// 2 leads after the last wake (the View of the message that woke it
	// is drawn at once even when its Update takes a while), one frame at
	// most.
	leadFrom time.Time
	check    *time.Timer
	// lastView is the text of the last View (App.View compares).
	lastView string
}

type pacerState uint8

const (
	// pacerRunning: the ticker runs at the frame rate (how Bubble Tea
	// starts it).
	pacerRunning pacerState = iota
	// pacerLeading: woken from stopped, the ticker runs at lead.
	pacerLeading
	pacerStopped
)

// idleFrames is how many frames without a wake stop the ticker.
const idleFrames = 4

func newFramePacer(fps int) *framePacer {
	frame := time.Second / time.Duration(fps)
	return &framePacer{frame: frame, lead: time.Millisecond, idle: idleFrames * frame}
}

// option hands the pacer the Program (tea.ProgramOption is func(*Program)).
func (f *framePacer) option() tea.ProgramOption {
	return func(p *tea.Program) { f.prog = p }
}

// filter is the program's message filter: it attaches the pacer to the
// App and wakes the ticker for every message but the App's own periodic
// ones. It runs in the event loop, before Update.
func (f *framePacer) filter(m tea.Model, msg tea.Msg) tea.Msg {
	if a, ok := m.(*App); ok && a.pacer == nil {
		a.pacer = f
	}
	switch msg.(type) {
	case tickMsg, syncPollMsg, batchMsg:
	default:
		f.wake()
	}
	return msg
}

// viewed is called by App.View with the frame's text: a changed frame
// wakes the ticker.
func (f *framePacer) viewed(s string) {
	if f == nil || s == f.lastView {
		return
	}
	f.lastView = s
	f.wake()
}

// programTicker is the Program's frame ticker (its field ticker, set when
// Run starts the renderer), or nil when it has none of that type.
func programTicker(p *tea.Program) *time.Ticker {
	if p == nil {
		return nil
	}
	v := reflect.ValueOf(p).Elem().FieldByName("ticker")
	if !v.IsValid() || v.Type() != reflect.TypeFor[*time.Ticker]() {
		return nil
	}
	return *(**time.Ticker)(unsafe.Pointer(v.UnsafeAddr()))
}

// wake makes sure the ticker runs for at least idleFrames more frames.
func (f *framePacer) wake() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.looked {
		// Run sets the field before its event loop, which calls the
		// filter: the first wake finds it.
		f.ticker, f.looked = programTicker(f.prog), true
	}
	if f.ticker == nil {
		return
	}
	f.last = time.Now()
	switch {
	case f.check == nil: // first contact: the ticker runs since Run
		f.check = time.AfterFunc(f.idle, f.tick)
	case f.state == pacerStopped:
		f.ticker.Reset(f.lead)
		f.state, f.leadFrom = pacerLeading, f.last
		f.check.Reset(2 * f.lead)
	}
}

// tick is the pacer's own timer: back from lead to the frame rate, or
// stop the ticker after idleFrames frames without a wake.
func (f *framePacer) tick() {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch f.state {
	case pacerLeading:
		now := time.Now()
		until := f.last.Add(2 * f.lead)
		if end := f.leadFrom.Add(f.frame); end.Before(until) {
			until = end
		}
		if now.Before(until) {
			f.check.Reset(until.Sub(now))
			return
		}
		f.ticker.Reset(f.frame)
		f.state = pacerRunning
		f.check.Reset(f.idle)
	case pacerRunning:
		if since := time.Since(f.last); since < f.idle {
			f.check.Reset(f.idle - since)
			return
		}
		f.ticker.Stop()
		f.state = pacerStopped
	}
}

// found reports whether the pacer has the Program's ticker (tests).
func (f *framePacer) found() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ticker != nil
}

// stopped reports whether the ticker is stopped (tests).
func (f *framePacer) stopped() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.state == pacerStopped
}
