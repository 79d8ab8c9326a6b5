package widgets

import (
	"context"
	"strings"
	"testing"

	"github.com/raydar/raydar/tui/internal/tuitest"
)

// TestLogStreamBounds: a burst larger than the buffer reaches the UI as one
// batch of the last MaxPodLogLines lines and a count of the dropped ones.
func TestLogStreamBounds(t *testing.T) {
	s := newLogStream()
	s.read(context.Background(), strings.NewReader(tuitest.LogLines(1, 2*MaxPodLogLines)+"\x1b[31mred\x1b[0m\tend\r\n"+"no newline"))
	m := s.next(context.Background(), 7)().(LinesMsg)
	if m.ID != 7 || len(m.Lines) != MaxPodLogLines || m.Dropped != MaxPodLogLines+2 || !m.Done || m.Err != nil {
		t.Fatalf("batch: id %d, %d lines, %d dropped, done %v, err %v", m.ID, len(m.Lines), m.Dropped, m.Done, m.Err)
	}
	if n := len(m.Lines); m.Lines[n-2] != "red    end" || m.Lines[n-1] != "no newline" {
		t.Fatalf("last lines %q", m.Lines[n-2:])
	}
	s = newLogStream()
	s.read(context.Background(), strings.NewReader(strings.Repeat("x", 3*maxLogLineBytes)+"\nnext\n"))
	m = s.next(context.Background(), 1)().(LinesMsg)
	if len(m.Lines) != 2 || len(m.Lines[0]) != maxLogLineBytes || m.Lines[1] != "next" {
		t.Fatalf("long line: %d lines", len(m.Lines))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if msg := newLogStream().next(ctx, 1)(); msg != nil {
		t.Fatalf("next after cancel returned %v", msg)
	}
}
