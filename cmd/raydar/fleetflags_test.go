package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
)

// oneContextArgs are well-formed arguments of every sub-command that acts on
// objects of one context: only the context list is wrong with them.
var oneContextArgs = map[string][]string{
	"operator":       {"operator", "--metrics-bind-address=0", "--health-probe-bind-address=0"},
	"why":            {"why", "cluster", "rc"},
	"history":        {"history", "cluster", "rc"},
	"ray-logs":       {"ray-logs", "rc"},
	"scale":          {"scale", "rc", "cpu", "--replicas", "3", "--yes"},
	"delete-workers": {"delete-workers", "rc", "rc-cpu-a", "--yes"},
	"stop":           {"stop", "job", "--yes"},
	"trigger":        {"trigger", "nightly", "--yes"},
	"suspend":        {"suspend", "rc", "rc", "--yes"},
	"resume":         {"resume", "rj", "job", "--yes"},
	"edit":           {"edit", "rc", "rc", "--yes"},
	"port-forward":   {"port-forward", "rc"},
	"exec":           {"exec", "rc"},
}

// notOnAContext are the sub-commands without a context to refuse: get and
// top take several, the others none (version, crds) or their own sandbox's.
var notOnAContext = []string{"get", "top", "version", "crds", "sandbox", "demo", "help", "completion"}

// TestOneContextCommandsRefuseAList: every sub-command but get acts on one
// context, so --context a,b is refused with an error naming the flag and
// the list, before any request reaches an API server; --all-contexts is not
// one of its flags (or is refused likewise). A sub-command added later without a case here fails
// the test.
func TestOneContextCommandsRefuseAList(t *testing.T) {
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		w.WriteHeader(http.StatusNotFound)
	}))
	defer srv.Close()
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kc, []byte(`apiVersion: v1
kind: Config
clusters: [{name: s, cluster: {server: "`+srv.URL+`"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: a, context: {cluster: s, user: u}}, {name: b, context: {cluster: s, user: u}}]
current-context: a
`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range newRootCmd().Commands() {
		if slices.Contains(notOnAContext, c.Name()) {
			continue
		}
		args, ok := oneContextArgs[c.Name()]
		if !ok {
			t.Errorf("sub-command %s: no case in oneContextArgs (or notOnAContext)", c.Name())
			continue
		}
		t.Run(c.Name(), func(t *testing.T) {
			t.Setenv("XDG_STATE_HOME", t.TempDir())
			r := raydar(t, "", append([]string{"--kubeconfig", kc, "--context", "a,b"}, args...)...)
			wantErrorContaining(t, r, `this command acts on one context: --context "a,b" names several; name one with --context`)
			r = raydar(t, "", append(append([]string{"--kubeconfig", kc}, args...), "--all-contexts")...)
			// Not one of its flags; or, should --all-contexts become a
			// flag of every command (the TUI's, persistent), refused as a list.
			if r.err == nil || (r.err.Error() != "unknown flag: --all-contexts" &&
				!strings.Contains(r.err.Error(), "this command acts on one context: --all-contexts names several")) {
				t.Errorf("--all-contexts: %v, want it refused", r.err)
			}
			if n := requests.Load(); n != 0 {
				t.Errorf("%d requests reached the API server", n)
			}
		})
	}
}

// TestAllContextsOfOne: --all-contexts of a kubeconfig with one context is
// get of that context, as printed without the flag: no CONTEXT column, no
// per-context error lines.
func TestAllContextsOfOne(t *testing.T) {
	api := newFakeAPI(t)
	kc := api.kubeconfig(t)
	for _, args := range [][]string{{"get", "clusters"}, {"get", "clusters", "-o", "json"}, {"get", "workers", "rc"}} {
		plain := raydar(t, "", append([]string{"--kubeconfig", kc}, args...)...)
		all := raydar(t, "", append(append([]string{"--kubeconfig", kc}, args...), "--all-contexts")...)
		if plain.stdout != all.stdout || plain.stderr != all.stderr || fmt.Sprint(plain.err) != fmt.Sprint(all.err) {
			t.Errorf("%q with --all-contexts: %q %q %v; without: %q %q %v", args, all.stdout, all.stderr, all.err, plain.stdout, plain.stderr, plain.err)
		}
	}
}
