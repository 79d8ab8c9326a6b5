package tui

import (
	"io"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/raydar/raydar/kube/watch"
	"github.com/raydar/raydar/rayapi/podview"
)

// pacedProgram runs the fixture's pods view in a real Program with the
// pacer, writing to a countingWriter, and waits for its first frame.
func pacedProgram(t *testing.T) (*tea.Program, *App, *framePacer, *countingWriter, io.Writer) {
	t.Helper()
	a, err := New(Options{Store: fixture(), Now: clock, Tick: time.Hour, StartView: PodsView})
	if err != nil {
		t.Fatal(err)
	}
	pc := newFramePacer(FPS)
	w := &countingWriter{wrote: make(chan struct{}, 1)}
	in, keys := io.Pipe()
	p := tea.NewProgram(a, append(programOptions(Options{}, pc), tea.WithInput(in), tea.WithOutput(w), tea.WithoutSignals(),
		tea.WithWindowSize(120, 30), tea.WithColorProfile(colorprofile.ANSI256),
		tea.WithEnvironment([]string{"TERM=xterm-256color"}))...)
	done := make(chan struct{})
	go func() { _, _ = p.Run(); close(done) }()
	t.Cleanup(func() { p.Quit(); _ = keys.Close(); <-done })
	select {
	case <-w.wrote:
	case <-time.After(teatestTimeout):
		t.Fatal("no first frame")
	}
	return p, a, pc, w, keys
}

// waitStopped waits until the pacer has stopped the ticker.
func waitStopped(t *testing.T, pc *framePacer) {
	t.Helper()
	deadline := time.Now().Add(teatestTimeout)
	for !pc.stopped() {
		if time.Now().After(deadline) {
			t.Fatal("the frame ticker still runs on a screen that does not change")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitWritten waits until the program has written more than n bytes.
func waitWritten(t *testing.T, w *countingWriter, n int, what string) {
	t.Helper()
	deadline := time.After(teatestTimeout)
	for w.count() <= n {
		select {
		case <-w.wrote:
		case <-deadline:
			t.Fatalf("%s: nothing drawn with the ticker stopped", what)
		}
	}
}

// Bubble Tea keeps its frame ticker where the pacer looks for it: were it
// renamed, the pacer would do nothing and the idle TUI would wake 120
// times a second again.
func TestPacerFindsBubbleTeasTicker(t *testing.T) {
	_, _, pc, _, _ := pacedProgram(t)
	if !pc.found() {
		t.Fatal("tea.Program has no ticker field of type *time.Ticker: the frame pacer is off")
	}
}

// Once the screen stops changing the ticker stops, and what changes after
// that is still drawn: a batch that changes a visible row (woken by the
// View's new text), a key (woken by the message); after each, the ticker
// stops again.
func TestPacerStopsTheTickerAndStillDraws(t *testing.T) {
	p, a, pc, w, keys := pacedProgram(t)
	waitStopped(t, pc)

	n := w.count()
	pod := a.e.Store.List(watch.Pod)[0].(*podview.Pod).DeepCopy()
	pod.Status.ContainerStatuses[0].RestartCount = 7
	p.Send(batchMsg{gen: a.gen, deltas: []watch.Delta{{Kind: watch.Pod, Object: pod}}})
	waitWritten(t, w, n, "a pod's restart count changed")
	waitStopped(t, pc)

	n = w.count()
	if _, err := keys.Write([]byte("j")); err != nil {
		t.Fatal(err)
	}
	waitWritten(t, w, n, "cursor down")
	waitStopped(t, pc)
}
