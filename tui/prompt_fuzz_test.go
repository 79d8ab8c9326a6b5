package tui

import (
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// FuzzPrompt types arbitrary text into the command (:) and filter (/)
// prompts of the TUI on the fixture world.
//
// Invariants: nothing panics; after every key the screen is still exactly
// the window's size; a command the TUI does not know is answered with
// "unknown command" (never silently dropped).
func FuzzPrompt(f *testing.F) {
	for _, s := range []string{
		":rc\r", ":ns ml\r", ":ns all\r", ":ctx\r", ":ctx other\r", ":help\r", ":nope\r", ":rj\t\t\r", ":\x01\x02\r",
		"/train\r", "/-l team=ml\r", "/(\r", "/!a\x7f\x7f\x7f\r", "/x\x1b", ":rc ml\x17\x15\r", ":q\r", ":RayCluster\r",
	} {
		f.Add(s)
	}
	const w, h = 100, 24
	f.Fuzz(func(t *testing.T, keys string) {
		app, err := New(Options{Now: clock, Store: fixture()})
		if err != nil {
			t.Fatal(err)
		}
		var m tea.Model = app
		m, _ = m.Update(tea.WindowSizeMsg{Width: w, Height: h})
		for i, k := range fuzzKeys(keys) {
			if k.String() == "ctrl+c" {
				continue // quits
			}
			// The command line enter runs, as the prompt shows it.
			line, runs := app.prompt.text, app.mode == modeCommand && k.String() == "enter"
			m, _ = m.Update(k)
			screen := ansi.Strip(m.View().Content)
			if n := strings.Count(screen, "\n") + 1; n != h {
				t.Fatalf("after key %d (%q) of %q the screen has %d lines, want %d:\n%s", i, k.String(), keys, n, h, screen)
			}
			if f := strings.Fields(line); runs && len(f) > 0 && !knownCommand(app, f[0]) {
				if !strings.Contains(screen, "unknown command") {
					t.Fatalf("the command line %q of %q is not answered with \"unknown command\":\n%s", line, keys, screen)
				}
			}
		}
	})
}

// knownCommand reports whether the TUI knows the command word w (its
// first word, in any case): a kind's alias or one of the commands the
// help lists, with their spellings.
func knownCommand(a *App, w string) bool {
	w = strings.ToLower(w)
	for _, c := range []string{"q", "q!", "quit", "exit", "help", "?", "forwards", "pf", "ns", "namespace", "ctx", "context"} {
		if w == c {
			return true
		}
	}
	return slices.Contains(a.reg.Aliases(), w)
}
