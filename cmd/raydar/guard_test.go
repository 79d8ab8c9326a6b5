package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/raydar/raydar/kube/actions"
)

// Tests of the config file's guardrails on the CLI's writes (issue 25).

// withConfig writes raydar's config file with body in a per-test
// XDG_CONFIG_HOME and returns its path.
func withConfig(t *testing.T, body string) string {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", dir)
	path := filepath.Join(dir, "raydar", "config.yaml")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// unreachableKubeconfig is a kubeconfig whose current context is name, on a
// server nothing listens on: a command that reached it would fail with a
// connection error, not with the guardrail's.
func unreachableKubeconfig(t *testing.T, name string) string {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["c"] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:1"}
	cfg.AuthInfos["u"] = &clientcmdapi.AuthInfo{Token: "t"}
	cfg.Contexts[name] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u", Namespace: "team-a"}
	cfg.CurrentContext = name
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// writes are the CLI's mutating sub-commands, each with the name of the
// object it writes.
var writes = []struct {
	args []string
	name string
}{
	{[]string{"scale", "rc", "cpu", "--replicas", "3"}, "rc"},
	{[]string{"delete-workers", "rc", "rc-cpu-a"}, "rc"},
	{[]string{"stop", "job"}, "job"},
	{[]string{"suspend", "rc", "rc"}, "rc"},
	{[]string{"resume", "rj", "job"}, "job"},
	{[]string{"trigger", "nightly"}, "nightly"},
}

func TestProtectedContextRefusesWithoutConfirm(t *testing.T) {
	path := withConfig(t, "protected: [\"prod-*\"]\n")
	kc := unreachableKubeconfig(t, "prod-eu")
	auditLog(t)
	withTerminal(t)
	for _, w := range writes {
		for _, extra := range [][]string{nil, {"--yes"}, {"--confirm", w.name + "-2"}, {"--confirm", strings.ToUpper(w.name), "--yes"}} {
			r := raydar(t, "y\n", append(append([]string{"--kubeconfig", kc}, w.args...), extra...)...)
			if !errors.Is(r.err, actions.ErrProtected) {
				t.Fatalf("%q %q: error %v; want the protected context's refusal", w.args, extra, r.err)
			}
			for _, want := range []string{"context prod-eu is protected", path, "--confirm " + w.name, "nothing was changed"} {
				if !strings.Contains(r.err.Error(), want) {
					t.Fatalf("%q %q: error %q does not say %q", w.args, extra, r.err, want)
				}
			}
			if r.stdout != "" || strings.Contains(r.stderr, "[y/N]") {
				t.Fatalf("%q %q: previewed or asked before refusing: stdout %q stderr %q", w.args, extra, r.stdout, r.stderr)
			}
		}
	}
	// Confirmed with the name, the command goes on to the cluster (here:
	// a server nothing listens on).
	r := raydar(t, "", "--kubeconfig", kc, "scale", "rc", "cpu", "--replicas", "3", "--confirm", "rc", "--yes")
	if r.err == nil || !strings.Contains(r.err.Error(), "127.0.0.1:1") {
		t.Fatalf("confirmed: error %v; want the unreachable server's", r.err)
	}
	// Another context is not protected.
	r = raydar(t, "", "--kubeconfig", unreachableKubeconfig(t, "staging"), "scale", "rc", "cpu", "--replicas", "3", "--yes")
	if r.err == nil || !strings.Contains(r.err.Error(), "127.0.0.1:1") {
		t.Fatalf("staging: error %v; want the unreachable server's", r.err)
	}
}

func TestReadOnlyContextRefusesNamingTheConfigFile(t *testing.T) {
	path := withConfig(t, "readonly: [\"prod-eu\"]\nprotected: [\"prod-*\"]\n")
	kc := unreachableKubeconfig(t, "prod-eu")
	audit := auditLog(t)
	for _, w := range writes {
		for _, extra := range [][]string{{"--yes"}, {"--confirm", w.name, "--yes"}, {"--yes", "-o", "json"}} {
			r := raydar(t, "", append(append([]string{"--kubeconfig", kc}, w.args...), extra...)...)
			if !errors.Is(r.err, actions.ErrReadOnly) || !strings.Contains(r.err.Error(), "context prod-eu is read-only in "+path) {
				t.Fatalf("%q %q: error %v; want the read-only context's refusal naming %s", w.args, extra, r.err, path)
			}
		}
	}
	if _, err := os.Stat(audit); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("audit log written for refusals: %v", err)
	}
}

func TestBadConfigFileRefusesWrites(t *testing.T) {
	path := withConfig(t, "protected: [\"prod-[\"]\n")
	r := raydar(t, "", "--kubeconfig", unreachableKubeconfig(t, "prod-eu"), "stop", "job", "--yes")
	wantErrorContaining(t, r, "config file "+path+": protected: context pattern \"prod-[\"")
}

// TestProtectedSandboxContext: on a real API server, a protected context
// changes nothing without --confirm and applies with it.
func TestProtectedSandboxContext(t *testing.T) {
	ctx := needSandbox(t)
	ns := newNamespace(t, ctx)
	create(t, ctx, testCluster(ns, "rc"))
	withConfig(t, "protected: [\"raydar-*\"]\n")
	auditLog(t)
	args := []string{"-n", ns, "scale", "rc", "cpu", "--replicas", "4", "--yes"}
	for _, extra := range [][]string{nil, {"--confirm", "r"}} {
		r := raydar(t, "", append(args, extra...)...)
		wantErrorContaining(t, r, "context raydar-sandbox is protected")
		if n := replicasOf(t, ctx, ns, "rc", "cpu"); n != 2 {
			t.Fatalf("%q: replicas %d", extra, n)
		}
	}
	r := raydar(t, "", append(args, "--confirm", "rc")...)
	if r.err != nil {
		t.Fatalf("%v\n%s", r.err, r.stderr)
	}
	if n := replicasOf(t, ctx, ns, "rc", "cpu"); n != 4 {
		t.Fatalf("replicas %d after --confirm rc", n)
	}
}
