package main

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

// The binary takes the kubectl connection flags and every flag of
// `raydar operator`, and prints its version (hack/image's test runs `raydar-operator version`).
func TestFlags(t *testing.T) {
	cmd := newRootCmd()
	for _, name := range []string{"kubeconfig", "context", "no-leader-election", "leader-election-namespace",
		"metrics-bind-address", "health-probe-bind-address", "pprof-bind-address", "watch-namespaces",
		"ignore-other-operator", "concurrency", "status-coalesce", "kube-api-qps", "kube-api-burst", "feature-gates"} {
		if cmd.Flags().Lookup(name) == nil && cmd.PersistentFlags().Lookup(name) == nil {
			t.Errorf("raydar-operator has no --%s", name)
		}
	}
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetArgs([]string{"version"})
	if err := cmd.Execute(); err != nil || out.String() != "dev\n" {
		t.Fatalf("version: %v, %q; want dev", err, out.String())
	}
}

// The binary links the reconcile loop only: none of the terminal UI, the
// sandbox (its address book reader is kube/raydash/addrbook, outside it), envtest or Bubble Tea.
func TestLinksNoTUIOrSandbox(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		switch {
		case strings.HasPrefix(pkg, "github.com/raydar/raydar/tui"),
			pkg == "github.com/raydar/raydar/kube/sandbox",
			strings.HasPrefix(pkg, "github.com/raydar/raydar/kube/sandbox/"),
			strings.Contains(pkg, "controller-runtime/pkg/envtest"),
			strings.Contains(pkg, "bubbletea"), strings.Contains(pkg, "lipgloss"):
			t.Errorf("raydar-operator links %s", pkg)
		}
	}
}

// --feature-gates refuses, before anything connects, an unknown gate, a
// gate raydar does not implement turned on and one it cannot turn off,
// each by name.
func TestFeatureGatesRefusedAtStartup(t *testing.T) {
	for gates, want := range map[string]string{
		"NoSuchGate=true": `unknown feature gate "NoSuchGate"`,
		"RayClusterNetworkPolicy=true,RayClusterMTLS=true,RayMultiHostIndexing=false": "feature gate RayMultiHostIndexing=false: raydar cannot turn it off",
		"RayClusterStatusConditions=false":                                            "feature gate RayClusterStatusConditions=false: raydar cannot turn it off",
	} {
		cmd := newRootCmd()
		var out bytes.Buffer
		cmd.SetOut(&out)
		cmd.SetErr(&out)
		cmd.SetArgs([]string{"--kubeconfig", "/nonexistent", "--feature-gates", gates})
		err := cmd.Execute()
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("--feature-gates %s: %v; want an error containing %q", gates, err, want)
		}
	}
}
