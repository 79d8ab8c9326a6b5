package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// A view is drawn complete once the lists it reads are synced, while lists
// only other views read still load: the screen no longer says "syncing"
// (test/e2e/bench reads such a screen as the first full one), and the
// header still names what loads. A view that reads a list still loading
// says "syncing" for it.
func TestViewIsCompleteOnceItsOwnListsAreSynced(t *testing.T) {
	for _, tc := range []struct {
		view ViewKind
		// own are lists the view reads, others the ones it does not.
		own, others []string
	}{
		{ClustersView, []string{"RayClusters", "Pods", "Events"}, []string{"RayJobs", "Nodes"}},
		{PodsView, []string{"Pods"}, []string{"RayClusters", "Nodes"}},
	} {
		t.Run(string(tc.view), func(t *testing.T) {
			pending := append(append([]string{}, tc.own...), tc.others...)
			a := newApp(t, Options{StartView: tc.view, Session: Session{
				Synced:   func() bool { return len(pending) == 0 },
				Unsynced: func() []string { return pending },
			}})
			if top := topLine(a); !strings.Contains(top, "syncing") {
				t.Fatalf("every list loading, the header says %q, want syncing", top)
			}
			pending = tc.others // the view's own lists are in
			a.Update(syncPollMsg{gen: a.gen})
			if s := ansi.Strip(a.render()); strings.Contains(s, "syncing") {
				t.Fatalf("the view's lists are synced but the screen says syncing:\n%s", s)
			}
			want := strings.ToLower(strings.Join(tc.others, ", ")) + " loading…"
			if top := topLine(a); !strings.Contains(top, want) {
				t.Fatalf("header %q, want it to name what still loads (%q)", top, want)
			}
			// A view that reads a list still loading is not complete.
			typeApp(a, ":rj", "<enter>")
			if top := topLine(a); !strings.Contains(top, "syncing "+strings.Join(tc.others, ", ")+"…") {
				t.Fatalf("the RayJob list while %v load: header %q, want syncing", tc.others, top)
			}
			pending = nil
			a.Update(syncPollMsg{gen: a.gen})
			if top := topLine(a); strings.Contains(top, "syncing") || strings.Contains(top, "loading") {
				t.Fatalf("header %q after sync", top)
			}
		})
	}
}

// topLine is the header as drawn.
func topLine(a *App) string {
	return strings.SplitN(ansi.Strip(a.render()), "\n", 2)[0]
}
