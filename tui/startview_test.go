package tui

import (
	"strings"
	"testing"
)

// raydar -c VIEW takes every alias the `:` prompt takes and refuses the
// rest with the names there are.
func TestStartViewByName(t *testing.T) {
	for name, want := range map[string]ViewKind{
		"pods": PodsView, "po": PodsView, "PODS": PodsView,
		"rayclusters": ClustersView, "rc": ClustersView,
		"rj": JobsView, "rayservices": ServicesView, "rcj": CronJobsView,
	} {
		got, err := StartViewByName(name)
		if err != nil || got != want {
			t.Errorf("StartViewByName(%q) = %q, %v; want %q", name, got, err, want)
		}
	}
	_, err := StartViewByName("deployments")
	if err == nil || !strings.Contains(err.Error(), `"deployments"`) || !strings.Contains(err.Error(), "rayclusters") {
		t.Fatalf("unknown view: err = %v, want one naming it and the known views", err)
	}
	a, err := New(Options{StartView: mustView(t, "po"), Store: fixture(), Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	if got := a.top().Kind(); got != PodsView {
		t.Fatalf("app opened on %s, want pods", got)
	}
}

func mustView(t *testing.T, name string) ViewKind {
	t.Helper()
	v, err := StartViewByName(name)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
