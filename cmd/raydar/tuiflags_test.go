package main

import (
	"bytes"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/raydar/raydar/tui"
)

// TestStartViewFlag: -c takes the `:` prompt's names, and an unknown view
// is refused before any cluster (or demo sandbox) is touched.
func TestStartViewFlag(t *testing.T) {
	for _, args := range [][]string{{"-c", "deployments"}, {"-A", "--command", "deployments"}, {"demo", "-c", "deployments"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			cmd := newRootCmd()
			cmd.SetArgs(append([]string{"--kubeconfig", "/nonexistent"}, args...))
			var out bytes.Buffer
			cmd.SetOut(&out)
			cmd.SetErr(&out)
			err := cmd.Execute()
			if err == nil || !strings.Contains(err.Error(), `unknown view "deployments"`) || !strings.Contains(err.Error(), "pods") {
				t.Fatalf("error %v; want the unknown view named, with the views there are", err)
			}
		})
	}
	for name, want := range map[string]tui.ViewKind{"": tui.ClustersView, "pods": tui.PodsView, "po": tui.PodsView, "rc": tui.ClustersView, "rayjobs": tui.JobsView} {
		f := tuiFlags{command: name}
		if got, err := f.startView(); err != nil || got != want {
			t.Errorf("-c %q: %q, %v; want %q", name, got, err, want)
		}
	}
}

// The TUI collects at 25 % heap growth unless the user set GOGC or
// GOMEMLIMIT.
func TestTuneGC(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	tuneGC(func(string) string { return "" })
	if got := debug.SetGCPercent(100); got != tuiGCPercent {
		t.Fatalf("GOGC %d, want %d", got, tuiGCPercent)
	}
	tuneGC(func(k string) string {
		if k == "GOGC" {
			return "200"
		}
		return ""
	})
	if got := debug.SetGCPercent(100); got != 100 {
		t.Fatalf("GOGC %d with GOGC set in the environment, want it left alone", got)
	}
}

// The TUI's embedded loop takes the operator's --feature-gates (either may
// lead the election), refused alike before anything connects.
func TestTUIFeatureGatesFlag(t *testing.T) {
	for _, args := range [][]string{{"--feature-gates", "RayClusterStatusConditions=false"}, {"demo", "--feature-gates", "RayClusterStatusConditions=false"}} {
		cmd := newRootCmd()
		cmd.SetArgs(append([]string{"--kubeconfig", "/nonexistent"}, args...))
		var out bytes.Buffer
		cmd.SetOut(&out)
		cmd.SetErr(&out)
		if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), "feature gate RayClusterStatusConditions=false: raydar cannot turn it off") {
			t.Errorf("%v: %v; want the gate refused by name", args, err)
		}
	}
	var f tuiFlags
	cmd := &cobra.Command{}
	f.addTo(cmd)
	if err := cmd.Flags().Set("feature-gates", "RayClusterNetworkPolicy=true"); err != nil || !f.featureGates.Enabled("RayClusterNetworkPolicy") {
		t.Errorf("--feature-gates RayClusterNetworkPolicy=true: %v, enabled %t", err, f.featureGates.Enabled("RayClusterNetworkPolicy"))
	}
}
