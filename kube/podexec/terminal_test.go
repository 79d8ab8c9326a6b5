//go:build linux

package podexec

import (
	"errors"
	"io"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/term"
)

// TestTerminalGivesTheKeysBack: while a session runs, its reader gets the
// terminal's keys, in raw mode; once it is closed, the Read still in
// progress (remotecommand's stdin goroutine outlives the session) ends with
// io.EOF, the terminal is back in its mode, and the next key goes to the
// next reader of the terminal (the TUI), not to that goroutine.
func TestTerminalGivesTheKeysBack(t *testing.T) {
	ptm, tty, err := pty.Open()
	if err != nil {
		t.Skip("no pty:", err)
	}
	defer ptm.Close()
	defer tty.Close()
	if err := pty.Setsize(ptm, &pty.Winsize{Rows: 30, Cols: 100}); err != nil {
		t.Fatal(err)
	}
	before, err := term.GetState(int(tty.Fd()))
	if err != nil {
		t.Fatal(err)
	}

	tm, ok, err := MakeTerminal(tty, tty)
	if err != nil || !ok {
		t.Fatalf("MakeTerminal: %v, %v", ok, err)
	}
	if s := tm.Sizes().Next(); s == nil || s.Width != 100 || s.Height != 30 {
		t.Fatalf("size %+v, want 100x30", s)
	}
	type read struct {
		b   string
		err error
	}
	reads := make(chan read, 4)
	go func() { // as remotecommand's stdin copy
		buf := make([]byte, 16)
		for {
			n, err := tm.Input().Read(buf)
			reads <- read{string(buf[:n]), err}
			if err != nil {
				return
			}
		}
	}()
	if _, err := ptm.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	if r := <-reads; r.b != "x" || r.err != nil {
		t.Fatalf("the session read %q, %v; want x", r.b, r.err)
	}
	if err := tm.Close(); err != nil {
		t.Fatal(err)
	}
	if r := <-reads; !errors.Is(r.err, io.EOF) {
		t.Fatalf("the session's reader after Close: %q, %v; want io.EOF", r.b, r.err)
	}
	after, err := term.GetState(int(tty.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	if *after != *before {
		t.Fatal("the terminal is not back in its mode")
	}
	// The next key is the next reader's.
	if _, err := ptm.Write([]byte("j\n")); err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 1)
	go func() {
		buf := make([]byte, 16)
		n, _ := tty.Read(buf)
		got <- string(buf[:n])
	}()
	select {
	case s := <-got:
		if s != "j\n" {
			t.Fatalf("the next reader got %q, want j", s)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the next key never reached the next reader")
	}
}
