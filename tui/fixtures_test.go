package tui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/raydar/raydar/tui/internal/tuitest"
)

// The fixture world and its builders are tuitest's, shared with the tests
// of the TUI's packages; these are their names here.
var (
	fixedNow        = tuitest.FixedNow
	clock           = tuitest.Clock
	ago             = tuitest.Ago
	om              = tuitest.OM
	cond            = tuitest.Cond
	mkCluster       = tuitest.MkCluster
	group           = tuitest.Group
	mkPod           = tuitest.MkPod
	mkEvent         = tuitest.MkEvent
	mkNode          = tuitest.MkNode
	fixture         = tuitest.Fixture
	cronFixture     = tuitest.CronFixture
	testClusterSpec = tuitest.ClusterSpec
	logLines        = tuitest.LogLines
	newRecorder     = tuitest.NewRecorder
	fuzzKeys        = tuitest.FuzzKeys
)

// start runs the TUI in teatest at a fixed size with the colour profile and
// TERM pinned.
func start(t *testing.T, opts Options, w, h int) (*teatest.TestModel, *App) {
	t.Helper()
	if opts.Now == nil {
		opts.Now = clock
	}
	if opts.Store == nil {
		opts.Store = fixture()
	}
	if opts.Session.Context == "" {
		opts.Session.Context, opts.Session.Server = "sandbox", "https://127.0.0.1:6443"
		if opts.Session.Role == nil {
			opts.Session.Role = func() string { return "leader" }
		}
	}
	app, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	tm := teatest.NewTestModel(t, app,
		teatest.WithInitialTermSize(w, h),
		teatest.WithProgramOptions(
			tea.WithColorProfile(colorprofile.Ascii),
			tea.WithEnvironment([]string{"TERM=xterm-256color"}),
			tea.WithFilter(probeFilter),
		),
	)
	t.Cleanup(func() { _ = tm.Quit() })
	return tm, app
}

// keys types a sequence: single characters, or names in angle brackets
// such as <enter>, <esc>, <tab>, <space>, <down>, <ctrl+space>.
func typeKeys(tm *teatest.TestModel, seq ...string) {
	for _, s := range seq {
		if strings.HasPrefix(s, "<") && strings.HasSuffix(s, ">") && len(s) > 2 {
			tm.Send(namedKey(s[1 : len(s)-1]))
			continue
		}
		tm.Type(s)
	}
}

func namedKey(n string) tea.KeyPressMsg {
	switch n {
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "tab":
		return tea.KeyPressMsg{Code: tea.KeyTab}
	case "space":
		return tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}
	case "backspace":
		return tea.KeyPressMsg{Code: tea.KeyBackspace}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	case "up":
		return tea.KeyPressMsg{Code: tea.KeyUp}
	case "pgdown":
		return tea.KeyPressMsg{Code: tea.KeyPgDown}
	case "ctrl+space":
		return tea.KeyPressMsg{Code: tea.KeySpace, Mod: tea.ModCtrl}
	case "ctrl+c":
		return tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
	case "ctrl+r":
		return tea.KeyPressMsg{Code: 'r', Mod: tea.ModCtrl}
	case "ctrl+d":
		return tea.KeyPressMsg{Code: 'd', Mod: tea.ModCtrl}
	case "ctrl+u":
		return tea.KeyPressMsg{Code: 'u', Mod: tea.ModCtrl}
	case "shift+tab":
		return tea.KeyPressMsg{Code: tea.KeyTab, Mod: tea.ModShift}
	case "left":
		return tea.KeyPressMsg{Code: tea.KeyLeft}
	case "right":
		return tea.KeyPressMsg{Code: tea.KeyRight}
	}
	panic("unknown key " + n)
}

// finalScreen quits the program after everything sent so far and returns
// the last view without escape codes.
func finalScreen(t *testing.T, tm *teatest.TestModel) (string, *App) {
	t.Helper()
	_ = tm.Quit()
	m := tm.FinalModel(t, teatest.WithFinalTimeout(teatestTimeout)).(*App)
	return ansi.Strip(m.View().Content), m
}

// requireSize fails unless the screen is exactly h lines of at most w
// cells.
func requireSize(t *testing.T, screen string, w, h int) {
	t.Helper()
	lines := strings.Split(screen, "\n")
	if len(lines) != h {
		t.Fatalf("%d lines, want %d", len(lines), h)
	}
	for i, l := range lines {
		if n := len([]rune(l)); n > w {
			t.Fatalf("line %d is %d wide: %q", i, n, l)
		}
	}
}

func requireGolden(t *testing.T, screen string) {
	t.Helper()
	golden.RequireEqual(t, []byte(screen+"\n"))
}

// probeMsg asks the running program for its current screen. probeFilter
// answers it inside the program's event loop (so reading the model is
// race-free) and swallows it; the model never sees it.
type probeMsg struct{ reply chan string }

func probeFilter(m tea.Model, msg tea.Msg) tea.Msg {
	if p, ok := msg.(probeMsg); ok {
		p.reply <- ansi.Strip(m.(*App).View().Content)
		return nil
	}
	return msg
}

// screenNow returns the screen as of every message sent before the call.
func screenNow(tm *teatest.TestModel) string {
	reply := make(chan string, 1)
	tm.Send(probeMsg{reply})
	return <-reply
}

// waitScreen waits until the screen contains s, checking after every
// message the program handles… by probing it; it fails after
// teatestTimeout. (The byte stream cannot be searched: the renderer only
// writes the cells that changed.)
func waitScreen(t *testing.T, tm *teatest.TestModel, s string) string {
	t.Helper()
	deadline := time.Now().Add(teatestTimeout)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		screen := screenNow(tm)
		if strings.Contains(screen, s) {
			return screen
		}
		if time.Now().After(deadline) {
			t.Fatalf("screen never showed %q; last screen:\n%s", s, screen)
		}
		<-tick.C
	}
}

// teatestTimeout bounds waiting for a program to finish or show something;
// generous because the machine is shared.
const teatestTimeout = 20 * time.Second

func teatestFinal() teatest.FinalOpt { return teatest.WithFinalTimeout(teatestTimeout) }
