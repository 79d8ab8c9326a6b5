package main

import (
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
// kubeconfig and context and a second context distinct from it.
func TestTwoSandboxesLine(t *testing.T) {
	for ctx, other := range map[string]string{"raydar-sandbox": "raydar-sandbox-b", "raydar-sandbox-b": "raydar-sandbox-c"} {
		got := twoSandboxes("/tmp/x/kubeconfig", ctx)
		want := "KUBECONFIG=/tmp/x/kubeconfig:/tmp/" + strings.TrimPrefix(other, "raydar-sandbox-") + "/kubeconfig raydar --context " + ctx + "," + other + "\n"
		if !strings.Contains(got, want) || !strings.Contains(got, "its context is "+other) {
			t.Errorf("twoSandboxes(%s):\n%s\nwant a line %q", ctx, got, want)
		}
	}
}
