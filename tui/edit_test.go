package tui

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/raydar/raydar/kube/actions"
)

// e in the TUI: the editor is a real process (a shell script as
// $KUBE_EDITOR) that the Program hands the terminal to, and the edit
// applies through kube/actions on the world's fake API server. kube/edit's
// tests cover the file's rules (errors, conflicts, empty files).

// scriptEditor installs script as KUBE_EDITOR ($1 is the file).
func scriptEditor(t *testing.T, script string) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "editor.sh")
	if err := os.WriteFile(p, []byte("#!/bin/sh\nset -e\n"+script+"\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBE_EDITOR", "sh "+p)
	t.Setenv("TMPDIR", t.TempDir())
}

func TestEditScalesThroughTheEditor(t *testing.T) {
	scriptEditor(t, `sed -i 's/^\( *\)replicas: 3$/\1replicas: 4/' "$1"`)
	w := newWorld(t, worldOpts{})
	tm, _ := start(t, w.opts(), 120, 30)
	typeKeys(tm, "G", "e")
	screen := waitScreen(t, tm, "Edit RayCluster ml/train-a")
	mustContain(t, screen, "spec.workerGroupSpecs[0].replicas (applied)", "(kept if you cancel)")
	typeKeys(tm, "<tab>", "<enter>")
	waitScreen(t, tm, "edited raycluster ml/train-a (1 fields changed)")
	finalScreen(t, tm)
	if got := replicas(t, w, "cpu"); got != 4 {
		t.Errorf("replicas %d after the edit, want 4", got)
	}
}

func TestEditSaysWhatWillNotTakeEffect(t *testing.T) {
	scriptEditor(t, `sed -i 's/^\( *\)rayVersion: .*$/\1rayVersion: 2.53.0/' "$1"`)
	w := newWorld(t, worldOpts{})
	tm, _ := start(t, w.opts(), 160, 40)
	typeKeys(tm, "G", "e")
	screen := waitScreen(t, tm, "Edit RayCluster ml/train-a")
	mustContain(t, screen, "spec.rayVersion (not-on-running)", "warning: these changes will not take effect on running pods:")
	typeKeys(tm, "<esc>")
	waitScreen(t, tm, "cancelled: nothing was changed")
	finalScreen(t, tm)
	if v := w.cluster(t, "ml", "train-a").Spec.RayVersion; v == "2.53.0" {
		t.Error("cancelled, yet changed")
	}
}

func TestEditUntouchedIsCancelled(t *testing.T) {
	scriptEditor(t, "true")
	w := newWorld(t, worldOpts{})
	tm, _ := start(t, w.opts(), 120, 30)
	typeKeys(tm, "G", "e")
	waitScreen(t, tm, "Edit cancelled, no changes made.")
	finalScreen(t, tm)
}

// TestEditReadOnlySendsNoRequest: in read-only mode (the context's, so the
// key is not hidden) e refuses at once, with no request at all.
func TestEditReadOnlySendsNoRequest(t *testing.T) {
	scriptEditor(t, `echo ran > "$1.ran"`)
	w := newWorld(t, worldOpts{readOnly: true})
	var calls atomic.Int32
	c := interceptor.NewClient(w.c, interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, k client.ObjectKey, o client.Object, opts ...client.GetOption) error {
			calls.Add(1)
			return c.Get(ctx, k, o, opts...)
		},
		Patch: func(ctx context.Context, c client.WithWatch, o client.Object, p client.Patch, opts ...client.PatchOption) error {
			calls.Add(1)
			return c.Patch(ctx, o, p, opts...)
		},
	})
	a, err := actions.New(c, actions.Options{ReadOnly: true, Actor: "alice", Context: "sandbox", AuditLogPath: w.audit})
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Store: w.store, Actions: DefaultActions(ActionDeps{Actions: a})}
	tm, _ := start(t, opts, 120, 30)
	typeKeys(tm, "G", "e")
	waitScreen(t, tm, "read-only mode: edit raycluster ml/train-a refused")
	finalScreen(t, tm)
	if n := calls.Load(); n != 0 {
		t.Errorf("%d requests in read-only mode, want 0", n)
	}

	// And with --readonly the key is not offered at all.
	opts.ReadOnly = true
	screen, _ := run(t, opts, "G", "?")
	if strings.Contains(screen, "edit") {
		t.Errorf("read-only help offers edit:\n%s", screen)
	}
}

// TestEditErrorsReopenTheEditor: an invalid edit gives the terminal to the
// editor again (the errors on top of the file); saved again as it is, the
// edit ends with the file kept, and nothing is written.
func TestEditErrorsReopenTheEditor(t *testing.T) {
	runs := filepath.Join(t.TempDir(), "runs")
	scriptEditor(t, `echo run >> `+runs+`
grep -q 'minReplicas: 9' "$1" || sed -i '0,/minReplicas: 1$/s//minReplicas: 9/' "$1"`)
	w := newWorld(t, worldOpts{})
	before := w.cluster(t, "ml", "train-a").ResourceVersion
	tm, _ := start(t, w.opts(), 160, 30)
	typeKeys(tm, "G", "e")
	waitScreen(t, tm, "Edit cancelled, no valid changes were saved; your edit is kept in ")
	finalScreen(t, tm)
	b, err := os.ReadFile(runs)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "run"); n != 2 {
		t.Errorf("the editor ran %d times, want 2 (the edit, then the file reopened with its errors)", n)
	}
	if w.cluster(t, "ml", "train-a").ResourceVersion != before {
		t.Error("an invalid edit was written")
	}
}
