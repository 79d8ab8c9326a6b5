package tui

import (
	"slices"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/raydar/raydar/kube/watch"
	"github.com/raydar/raydar/tui/pages/pod"
	"github.com/raydar/raydar/tui/registry"
)

// The registry is the one place kinds differ: every alias opens its own
// kind's list, no alias is taken twice or shadows a command, and each view
// offers the actions it always did, in the same order.
func TestRegistryAliases(t *testing.T) {
	r := kinds()
	commands := []string{"ns", "namespace", "ctx", "context", "q", "q!", "quit", "exit", "help", "?"}
	seen := map[string]ViewKind{}
	for _, k := range r.Entries {
		if len(k.AliasList()) == 0 || k.Title == "" || k.Help == "" || k.Typed == nil {
			t.Fatalf("%s: incomplete entry %+v", k.List, k)
		}
		for _, a := range k.AliasList() {
			if prev, ok := seen[a]; ok {
				t.Fatalf("alias %q of %s is also %s's", a, k.List, prev)
			}
			if slices.Contains(commands, a) {
				t.Fatalf("alias %q of %s shadows a command", a, k.List)
			}
			seen[a] = k.List
			if got, _ := r.ByAlias(a); got == nil || got.List != k.List {
				t.Fatalf("alias %q → %v, want %s", a, got, k.List)
			}
		}
		if got, _ := r.ByView(k.List); got == nil || got.List != k.List {
			t.Fatalf("%s: list view not found", k.List)
		}
		if got, _ := r.ByView(k.Detail); k.Detail != "" && (got == nil || got.List != k.List) {
			t.Fatalf("%s: views not indexed", k.List)
		}
		if r.IsDetail(k.List) || (k.Detail != "" && !r.IsDetail(k.Detail)) {
			t.Fatalf("%s: isDetail wrong", k.List)
		}
	}
	if got := r.LifecycleKinds(); got != "RayCluster, RayJob, RayService or RayCronJob" {
		t.Fatalf("lifecycleKinds %q", got)
	}
}

func TestDefaultActionsPerView(t *testing.T) {
	want := map[ViewKind][]string{
		ClustersView:      {ActionDescribe, ActionSuspend, ActionDelete, ActionPortForward, ActionEdit},
		JobsView:          {ActionDescribe, ActionStopJob, ActionSuspend, ActionDelete, ActionEdit},
		ServicesView:      {ActionDescribe, ActionSuspend, ActionDelete, ActionEdit},
		PodsView:          {ActionDescribe, ActionLogs, ActionPortForward, ActionShell},
		ClusterDetailView: {ActionScale, ActionDeleteWorkers, ActionDescribe, ActionLogs, ActionSuspend, ActionPortForward, ActionShell, ActionEdit},
		JobDetailView:     {ActionDescribe, ActionStopJob, ActionSuspend, ActionDelete, ActionEdit},
		ServiceDetailView: {ActionDescribe, ActionSuspend, ActionDelete, ActionEdit},
		CronJobsView:      {ActionDescribe, ActionTrigger, ActionSuspend, ActionDelete, ActionEdit},
		CronJobDetailView: {ActionDescribe, ActionTrigger, ActionSuspend, ActionDelete, ActionEdit},
		RayLogsView:       {ActionLogs},
		RayLogView:        {ActionLogs},
		GPUsView:          {ActionScale, ActionSuspend},
	}
	got := DefaultActions(ActionDeps{})
	if len(got) != len(want) {
		t.Fatalf("%d views have actions, want %d", len(got), len(want))
	}
	for v, names := range want {
		var have []string
		for _, a := range got[v] {
			if a.Run == nil || a.Name == "" {
				t.Fatalf("%s: action %+v has no name or Run", v, a)
			}
			have = append(have, a.Name)
		}
		if !slices.Equal(have, names) {
			t.Fatalf("%s: actions %v, want %v", v, have, names)
		}
	}
}

// A kind is one registry entry: with an entry added (here a second view of
// the Ray pods under the alias "tp"), the command line, completion, the help,
// the list page and the unknown-command message know it.
func TestRegistryEntryReachesCommandsHelpAndList(t *testing.T) {
	a := newApp(t, Options{Actions: DefaultActions(ActionDeps{})})
	a.reg.Entries = append(a.reg.Entries, registry.Entry{
		List: "testpods", Title: "Test pods", Help: "test pods", Aliases: "tp testpods",
		Watch: watch.Pod, Typed: pod.Entry().Typed,
	})
	typeApp(a, ":testp", "<tab>")
	if a.prompt.text != "testpods" {
		t.Fatalf("completion %q", a.prompt.text)
	}
	typeApp(a, "<enter>")
	if a.top().Kind() != "testpods" || a.top().Title() != "Test pods" || a.top().Table().Len() != a.e.Store.Len(watch.Pod) {
		t.Fatalf("top %v %q", a.top().Kind(), a.top().Title())
	}
	screen := ansi.Strip(a.View().Content)
	mustContain(t, screen, "Test pods(all)", "train-a-head-x7k2p", "<testpods>")
	typeApp(a, "?")
	mustContain(t, ansi.Strip(a.View().Content), ":tp", "test pods")
	typeApp(a, "<esc>", ":nope", "<enter>")
	mustContain(t, ansi.Strip(a.View().Content), "(try :rc :rj :rs :rcj :pods :tp :ns :ctx :q)")
}
