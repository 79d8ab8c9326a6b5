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

// Every name of a kind opens its list from the `:` prompt, in any case, and
// completes a namespace after it (rayapi/kinds lists the names).
func TestPromptTakesEveryName(t *testing.T) {
	for _, name := range []string{"cluster", "Clusters", "cronjobs", "CronJob", "job", "services", "workers"} {
		a := newApp(t, Options{})
		typeApp(a, ":"+name+" m", "<tab>")
		if want := name + " ml"; a.prompt.text != want {
			t.Errorf(":%s m<tab> = %q, want %q", name, a.prompt.text, want)
		}
		typeApp(a, "<enter>")
		want, _ := StartViewByName(name)
		if got := a.top().Kind(); got != want || want == "" {
			t.Errorf(":%s opened %s, want %s", name, got, want)
		}
	}
}
