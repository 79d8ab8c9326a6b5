package tui

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/kube/actions"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// Tests of the config file's guardrails in the TUI (issue 25): a protected
// context's writes want the object's name typed; a read-only context
// offers none.

func protectedWorld(t *testing.T) *world {
	t.Helper()
	return ownedWorld(t, worldOpts{policy: &actions.Policy{Path: "/cfg/config.yaml", Protected: []string{"sand*"}}})
}

func TestProtectedContextWantsTheNameTyped(t *testing.T) {
	t.Run("the dialog shows the context and Confirm is refused", func(t *testing.T) {
		w := protectedWorld(t)
		tm, _ := start(t, w.opts(), 100, 30)
		typeKeys(tm, "G", "<ctrl+d>")
		screen := waitScreen(t, tm, "Delete RayCluster ml/train-a")
		mustContain(t, screen, "PROTECTED context sandbox", "type train-a to confirm:", "Confirm (disabled)")
		// Confirm cannot take the focus; enter on Cancel closes.
		typeKeys(tm, "<tab>", "<right>")
		mustContain(t, screenNow(tm), "▶[Cancel]", "Confirm (disabled)")
		// A wrong name (a prefix, another cluster's, other case) keeps it
		// refused, and says so.
		for _, wrong := range []string{"train", "train-b", "TRAIN-A"} {
			typeKeys(tm, "<ctrl+u>", wrong, "<tab>")
			screen = screenNow(tm)
			mustContain(t, screen, `"`+wrong+`" is not train-a`, "▶[Cancel]", "Confirm (disabled)")
		}
		typeKeys(tm, "<enter>")
		waitScreen(t, tm, "cancelled: nothing was changed")
		finalScreen(t, tm)
		w.cluster(t, "ml", "train-a")
	})
	t.Run("escape cancels with the name typed", func(t *testing.T) {
		w := protectedWorld(t)
		tm, _ := start(t, w.opts(), 100, 30)
		typeKeys(tm, "G", "<ctrl+d>")
		waitScreen(t, tm, "type train-a to confirm:")
		typeKeys(tm, "train-a", "<tab>", "<esc>")
		waitScreen(t, tm, "cancelled: nothing was changed")
		finalScreen(t, tm)
		w.cluster(t, "ml", "train-a")
	})
	t.Run("the name typed enables Confirm", func(t *testing.T) {
		w := protectedWorld(t)
		tm, _ := start(t, w.opts(), 100, 30)
		typeKeys(tm, "G", "<ctrl+d>")
		waitScreen(t, tm, "type train-a to confirm:")
		// h and l are letters of the name here, not focus switches.
		typeKeys(tm, "train-al", "<backspace>")
		screen := screenNow(tm)
		if strings.Contains(screen, "Confirm (disabled)") || strings.Contains(screen, " is not train-a") {
			t.Fatalf("Confirm still refused with the name typed:\n%s", screen)
		}
		typeKeys(tm, "<tab>", "<enter>")
		waitScreen(t, tm, "deleted RayCluster ml/train-a")
		finalScreen(t, tm)
		err := w.c.Get(context.Background(), client.ObjectKey{Namespace: "ml", Name: "train-a"}, &rayv1.RayCluster{})
		if !apierrors.IsNotFound(err) {
			t.Fatalf("cluster still there: %v", err)
		}
	})
	t.Run("scale", func(t *testing.T) {
		w := protectedWorld(t)
		tm, _ := start(t, w.opts(), 100, 30)
		typeKeys(tm, trainA(2, "s", "4")...)
		screen := waitScreen(t, tm, "effect: 1 pod will be created")
		mustContain(t, screen, "PROTECTED context sandbox", "type train-a to confirm:", "Confirm (disabled)")
		typeKeys(tm, "<down>", "<down>", "<down>", "train-b", "<enter>", "<right>", "<enter>")
		waitScreen(t, tm, "cancelled: nothing was changed")
		if n := replicas(t, w, "cpu"); n != 3 {
			t.Fatalf("replicas %d after a wrong name", n)
		}
		typeKeys(tm, "s", "4", "<down>", "<down>", "<down>", "train-a", "<enter>", "<right>", "<enter>")
		waitScreen(t, tm, "scaled ml/train-a group cpu: replicas 3 → 4")
		finalScreen(t, tm)
		if n := replicas(t, w, "cpu"); n != 4 {
			t.Fatalf("replicas %d after the name was typed", n)
		}
	})
	t.Run("every write asks", func(t *testing.T) {
		for _, c := range []struct{ seq, want []string }{
			{trainA(3, "<space>", "<ctrl+d>"), []string{"Delete worker pods of RayCluster ml/train-a", "type train-a to confirm:"}},
			{[]string{":rj", "<enter>", "G", "x"}, []string{"Stop RayJob ml/nightly-eval", "type nightly-eval to confirm:"}},
			{[]string{"G", "z"}, []string{"Suspend RayCluster ml/train-a", "type train-a to confirm:"}},
		} {
			w := protectedWorld(t)
			screen, _ := dialogRun(t, w.opts(), c.want[0], c.seq...)
			mustContain(t, screen, append(c.want, "PROTECTED context sandbox", "Confirm (disabled)")...)
		}
	})
}

// TestReadOnlyContextHidesActions: a context the config file makes
// read-only offers no mutating action, refuses their keys, and the header
// says why.
func TestReadOnlyContextHidesActions(t *testing.T) {
	w := newWorld(t, worldOpts{policy: &actions.Policy{Path: "/cfg/config.yaml", ReadOnly: []string{"sandbox"}}})
	opts := w.opts()
	opts.Session = Session{Context: "sandbox", Deps: &w.deps}
	screen, _ := run(t, opts, trainA(2, "?")...)
	mustContain(t, screen, "read-only: context sandbox is read-only in /cfg/config.yaml", "describe", "logs")
	for _, hidden := range []string{"scale", "delete workers", "suspend/resume"} {
		if strings.Contains(screen, hidden) {
			t.Fatalf("a read-only context's help offers %q:\n%s", hidden, screen)
		}
	}
	for _, seq := range [][]string{trainA(2, "s"), trainA(3, "<ctrl+d>"), {"<ctrl+d>"}, {"z"}, {":rj", "<enter>", "G", "x"}} {
		screen, a := run(t, opts, seq...)
		if a.mode != modeNormal || strings.Contains(screen, "Confirm") {
			t.Fatalf("%v opened a dialog on a read-only context:\n%s", seq, screen)
		}
	}
	// Another context of the same config file is not read-only.
	other := newWorld(t, worldOpts{policy: &actions.Policy{Path: "/cfg/config.yaml", ReadOnly: []string{"prod-*"}}})
	opts = other.opts()
	opts.Session = Session{Context: "sandbox", Deps: &other.deps}
	screen, _ = run(t, opts, trainA(2, "?")...)
	mustContain(t, screen, "scale")
	if strings.Contains(screen, "read-only") {
		t.Fatalf("header says read-only:\n%s", screen)
	}
}
