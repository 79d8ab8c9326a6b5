package main

import (
	"bytes"
	"strings"
	"testing"

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
