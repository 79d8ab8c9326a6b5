package tui

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/raydar/raydar/tui/keys"
)

// TestShellKey: a on the cluster page hands the terminal to a shell in the
// cluster's head (here the test's input is no terminal, which the shell
// says); read-only hides it and its key does nothing, and nothing is
// audited.
func TestShellKey(t *testing.T) {
	w := newWorld(t, worldOpts{})
	tm, _ := start(t, w.opts(), 100, 30)
	typeKeys(tm, trainA(0, "a")...)
	waitScreen(t, tm, "shell in the head of ml/train-a: the TUI's input is not a terminal")
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

// TestShellKeyRebinds: keys.yaml's actions: shell rebinds it in both views;
// k9s' s is refused, naming the clash with scale on the cluster page.
func TestShellKeyRebinds(t *testing.T) {
	w := newWorld(t, worldOpts{})
	km, err := keys.Parse([]byte("actions:\n  shell: [ctrl+s]\n"))
	if err != nil {
		t.Fatal(err)
	}
	opts := w.opts()
	opts.Keys = km
	a, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []ViewKind{PodsView, ClusterDetailView} {
		found := false
		for _, act := range a.actions[v] {
			if act.Name == ActionShell {
				found = slices.Equal(act.Key.Keys(), []string{"ctrl+s"})
			}
		}
		if !found {
			t.Errorf("%s: shell not rebound to ctrl+s", v)
		}
	}
	km, err = keys.Parse([]byte("actions:\n  shell: [s]\n"))
	if err != nil {
		t.Fatal(err)
	}
	opts.Keys = km
	if _, err := New(opts); err == nil || !strings.Contains(err.Error(), `key "s" is bound to both action scale and action shell`) {
		t.Fatalf("shell on s: %v; want the clash with scale refused", err)
	}
}

// TestShellOnAProtectedContext: the shell wants the cluster's name typed
// first, then hands the terminal over (here: no terminal, which it says).
func TestShellOnAProtectedContext(t *testing.T) {
	w := protectedWorld(t)
	tm, _ := start(t, w.opts(), 100, 30)
	typeKeys(tm, trainA(0, "a")...)
	screen := waitScreen(t, tm, "Open a shell in the head of ml/train-a")
	mustContain(t, screen, "PROTECTED context sandbox", "type train-a to confirm:", "Confirm (disabled)")
	typeKeys(tm, "train-a", "<tab>", "<enter>")
	waitScreen(t, tm, "shell in the head of ml/train-a: the TUI's input is not a terminal")
	finalScreen(t, tm)
}
