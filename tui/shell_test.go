package tui

import (
	"os"
	"strings"
	"testing"
)

// TestShellKey: a on the cluster page hands the terminal to a shell in the
// cluster's head (here the test's input is no terminal, which the shell
// says); read-only hides it and its key does nothing, and nothing is
// audited.
func TestShellKey(t *testing.T) {
	w := newWorld(t, worldOpts{})
	tm, _ := start(t, w.opts(), 100, 30)
	typeKeys(tm, trainA(0, "a")...)
	waitScreen(t, tm, "shell in the head of train-a: the TUI's input is not a terminal")
	finalScreen(t, tm)

	ro := newWorld(t, worldOpts{readOnly: true})
	opts := ro.opts()
	opts.ReadOnly = true
	screen, a := run(t, opts, trainA(0, "?")...)
	if strings.Contains(screen, "shell") {
		t.Fatalf("read-only help offers the shell:\n%s", screen)
	}
	screen, a = run(t, opts, trainA(1, "a")...)
	if a.mode != modeNormal || strings.Contains(screen, "shell") {
		t.Fatalf("a opened something in read-only mode:\n%s", screen)
	}
	if _, err := os.Stat(ro.audit); err == nil {
		t.Fatal("read-only mode wrote the audit log")
	}
}
