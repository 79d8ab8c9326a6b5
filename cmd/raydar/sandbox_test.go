package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSandboxContextNameRefused: a --context-name that cannot be typed in
// `--context a,b`, or a --state-dir whose base name would give one, is
// refused before anything starts, naming where the name came from.
func TestSandboxContextNameRefused(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"sandbox", "--context-name", "a,b"}, `--context-name: sandbox: context name "a,b": "," is not allowed`},
		{[]string{"sandbox", "--context-name", ""}, "--context-name: sandbox: context name: empty"},
		{[]string{"sandbox", "--state-dir", dir + "/my box"}, `context name "raydar-sandbox-my box": " " is not allowed`},
	} {
		r := raydar(t, "", c.args...)
		wantErrorContaining(t, r, c.want)
		if strings.Contains(r.stderr, "starting the sandbox") {
			t.Errorf("%q started a sandbox before refusing:\n%s", c.args, r.stderr)
		}
	}
}

// TestTwoSandboxesLine: the start-up paragraph names this sandbox's
// kubeconfig and context and a second sandbox whose state directory and
// context differ from this one's.
func TestTwoSandboxesLine(t *testing.T) {
	tmp := os.TempDir()
	for _, c := range []struct{ context, stateDir, otherDir, other string }{
		{"raydar-sandbox", "/var/tmp/x", "b", "raydar-sandbox-b"},
		{"raydar-sandbox-b", "/var/tmp/b", "c", "raydar-sandbox-c"},
		{"mine", filepath.Join(tmp, "b"), "c", "raydar-sandbox-c"},
	} {
		got := twoSandboxes("/k/kubeconfig", c.context, c.stateDir)
		otherDir := filepath.Join(tmp, c.otherDir)
		for _, want := range []string{
			"raydar sandbox --state-dir " + otherDir + ": its context is " + c.other + ")",
			"  KUBECONFIG=/k/kubeconfig:" + filepath.Join(otherDir, "kubeconfig") + " raydar --context " + c.context + "," + c.other + "\n",
		} {
			if !strings.Contains(got, want) {
				t.Errorf("twoSandboxes(%s, %s):\n%s\nwant %q", c.context, c.stateDir, got, want)
			}
		}
	}
}
