package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/kube/actions"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// raydar edit: the editor is a shell script ($KUBE_EDITOR) that rewrites
// the file; the writes go to the sandbox's API server.

func TestEditBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"edit", "rc"}, "edit needs KIND and NAME (got 1 arguments)"},
		{[]string{"edit", "pod", "x"}, `unknown kind "pod": use raycluster (rc), rayjob (rj), rayservice (rs) or raycronjob (rcj)`},
		{[]string{"edit", "rc", "x", "-o", "xml"}, `unknown output format "xml"`},
	} {
		r := raydar(t, "", tc.args...)
		wantErrorContaining(t, r, tc.want)
	}
}

// editorScript installs script as KUBE_EDITOR ($1 is the file).
func editorScript(t *testing.T, script string) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "editor.sh")
	if err := os.WriteFile(p, []byte("#!/bin/sh\nset -e\n"+script+"\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBE_EDITOR", "sh "+p)
	t.Setenv("TMPDIR", t.TempDir())
}

// setReplicas1to3 sets the worker group's replicas 1 to 3.
const setReplicas1to3 = `sed -i 's/^\( *\)replicas: 1$/\1replicas: 3/' "$1"`

func TestEdit(t *testing.T) {
	ctx := needSandbox(t)
	auditLog(t)
	ns := newNamespace(t, ctx)
	rc := testCluster(ns, "c")
	rc.Spec.WorkerGroupSpecs = rc.Spec.WorkerGroupSpecs[:1] // one "replicas: 1" line for the editor
	rc.Spec.WorkerGroupSpecs[0].Replicas, rc.Spec.WorkerGroupSpecs[0].MinReplicas, rc.Spec.WorkerGroupSpecs[0].MaxReplicas = ptr.To[int32](1), ptr.To[int32](0), ptr.To[int32](4)
	create(t, ctx, rc)

	t.Run("scale a worker group", func(t *testing.T) {
		editorScript(t, setReplicas1to3)
		r := raydar(t, "", "-n", ns, "edit", "rc", "c", "--yes")
		if r.err != nil {
			t.Fatalf("edit: %v\n%s", r.err, r.stderr)
		}
		if !strings.Contains(r.stderr, "spec.workerGroupSpecs[0].replicas (applied)") || !strings.Contains(r.stdout, "edit raycluster "+ns+"/c: applied") {
			t.Errorf("stdout %q stderr %q", r.stdout, r.stderr)
		}
		if got := replicasOf(t, ctx, ns, "c", rc.Spec.WorkerGroupSpecs[0].GroupName); got != 3 {
			t.Errorf("replicas %d, want 3", got)
		}
	})

	t.Run("invalid: refused, nothing changed, the file kept", func(t *testing.T) {
		before := getCluster(t, ctx, ns, "c").ResourceVersion
		editorScript(t, `sed -i 's/^\( *\)minReplicas: 0$/\1minReplicas: 9/' "$1"`)
		r := raydar(t, "", "-n", ns, "edit", "rc", "c", "--yes")
		wantErrorContaining(t, r, "Edit cancelled, no valid changes were saved; your edit is kept in ")
		if !strings.Contains(r.stderr, "spec.workerGroupSpecs[0].minReplicas: Invalid value: 9: must be <= maxReplicas (4)") {
			t.Errorf("stderr does not name the field: %q", r.stderr)
		}
		if got := getCluster(t, ctx, ns, "c").ResourceVersion; got != before {
			t.Errorf("resourceVersion %s → %s: something was written", before, got)
		}
	})

	t.Run("refused by the API server: the field named, nothing changed", func(t *testing.T) {
		before := getCluster(t, ctx, ns, "c").ResourceVersion
		// A label value with a space: rayapi's validation lets it through,
		// the API server answers 422.
		editorScript(t, `grep -q 'team: "a b"' "$1" || sed -i 's/^metadata:$/metadata:\n  labels:\n    team: "a b"/' "$1"`)
		r := raydar(t, "", "-n", ns, "edit", "rc", "c", "--yes")
		wantErrorContaining(t, r, "Edit cancelled, no valid changes were saved; your edit is kept in ")
		if !strings.Contains(r.stderr, `rayclusters "c" was not valid (the API server refused it): metadata.labels: Invalid value: "a b"`) {
			t.Errorf("stderr does not name the field the API server refused: %q", r.stderr)
		}
		if got := getCluster(t, ctx, ns, "c").ResourceVersion; got != before {
			t.Errorf("resourceVersion %s → %s: something was written", before, got)
		}
	})

	t.Run("a race with another writer reopens the editor with the conflict on top", func(t *testing.T) {
		// The first editor run waits, after its change, for the other
		// writer (a FIFO each way: no sleeps); the second saves as is.
		dir := t.TempDir()
		ready, goOn, seen := filepath.Join(dir, "ready"), filepath.Join(dir, "go"), filepath.Join(dir, "seen")
		for _, f := range []string{ready, goOn} {
			if err := syscall.Mkfifo(f, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		editorScript(t, `if [ ! -e `+seen+` ]; then
  touch `+seen+`
  sed -i 's/^\( *\)replicas: 3$/\1replicas: 2/' "$1"
  echo edited > `+ready+`
  read x < `+goOn+`
else
  cp "$1" `+filepath.Join(dir, "reopened.yaml")+`
fi`)
		other := make(chan error, 1)
		go func() {
			b, err := os.ReadFile(ready) // blocks until the editor wrote
			if err == nil && strings.TrimSpace(string(b)) == "edited" {
				c := &rayv1.RayCluster{}
				if err = cl.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "c"}, c); err == nil {
					c.Labels = map[string]string{"team": "ml"}
					err = cl.Update(context.Background(), c)
				}
			}
			_ = os.WriteFile(goOn, []byte("go\n"), 0o600)
			other <- err
		}()
		r := raydar(t, "", "-n", ns, "edit", "rc", "c", "--yes", "-o", "json")
		if err := <-other; err != nil {
			t.Fatalf("the other writer: %v", err)
		}
		if r.err != nil {
			t.Fatalf("edit: %v\n%s", r.err, r.stderr)
		}
		reopened, err := os.ReadFile(filepath.Join(dir, "reopened.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{`# rayclusters "c" could not be saved: Operation cannot be fulfilled`, "# * the object changed while you edited it", "team: ml", "replicas: 2"} {
			if !strings.Contains(string(reopened), want) {
				t.Errorf("the reopened file lacks %q:\n%s", want, reopened)
			}
		}
		if res := decodeResult(t, r.stdout); res.Action != actions.ActionEdit || res.Outcome != actions.OutcomeApplied {
			t.Errorf("result %+v, want edit applied", res)
		}
		c := getCluster(t, ctx, ns, "c")
		if *c.Spec.WorkerGroupSpecs[0].Replicas != 2 || c.Labels["team"] != "ml" {
			t.Errorf("replicas %d labels %v: want the edit and the other writer's label", *c.Spec.WorkerGroupSpecs[0].Replicas, c.Labels)
		}
	})

	t.Run("read-only sends nothing", func(t *testing.T) {
		editorScript(t, setReplicas1to3)
		before := getCluster(t, ctx, ns, "c").ResourceVersion
		r := raydar(t, "", "-n", ns, "edit", "rc", "c", "--yes", "--readonly")
		wantErrorContaining(t, r, "read-only mode: edit raycluster "+ns+"/c refused")
		if got := getCluster(t, ctx, ns, "c").ResourceVersion; got != before {
			t.Error("something was written in read-only mode")
		}
	})
}
