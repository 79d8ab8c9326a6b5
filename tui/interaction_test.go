package tui

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/raydar/raydar/kube/watch"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/tui/keys"
	"github.com/raydar/raydar/tui/table"
)

// rowNames returns the first column of the visible rows of the top page.
func rowNames(a *App) []string {
	var out []string
	switch t := a.top().Table().(type) {
	case *table.Model[*rayv1.RayCluster]:
		for _, v := range t.Visible() {
			out = append(out, v.Name)
		}
	case *table.Model[*rayv1.RayJob]:
		for _, v := range t.Visible() {
			out = append(out, v.Name)
		}
	}
	return out
}

func run(t *testing.T, opts Options, seq ...string) (string, *App) {
	t.Helper()
	tm, _ := start(t, opts, 100, 30)
	typeKeys(tm, seq...)
	return finalScreen(t, tm)
}

func TestFilter(t *testing.T) {
	cases := []struct {
		seq  []string
		want []string
	}{
		{[]string{"/", "TRAIN", "<enter>"}, []string{"train-a"}},
		{[]string{"/", "!fruit", "<enter>"}, []string{"notebook", "train-a"}},
		{[]string{"/", "-l team=ml", "<enter>"}, []string{"fruit-raycluster-abcde", "fruit-raycluster-fghij", "notebook", "train-a"}},
		{[]string{"/", "-l team!=ml", "<enter>"}, nil},
		{[]string{"/", "provisioning"}, []string{"fruit-raycluster-fghij"}},                                                               // applied while typing
		{[]string{"/", "train", "<enter>", "<esc>"}, []string{"fruit-raycluster-abcde", "fruit-raycluster-fghij", "notebook", "train-a"}}, // esc clears
		{[]string{"/", "note", "<esc>"}, []string{"fruit-raycluster-abcde", "fruit-raycluster-fghij", "notebook", "train-a"}},
		{[]string{"/", "note(", "<enter>"}, []string{"notebook"}}, // invalid keeps the last valid filter
	}
	for _, c := range cases {
		t.Run(strings.Join(c.seq, ""), func(t *testing.T) {
			screen, a := run(t, Options{}, c.seq...)
			if got := rowNames(a); !slices.Equal(got, c.want) {
				t.Fatalf("rows %v, want %v\n%s", got, c.want, screen)
			}
		})
	}
	t.Run("invalid regex shows the error", func(t *testing.T) {
		screen, _ := run(t, Options{}, "/", "a(")
		if !strings.Contains(screen, "/a(") || !strings.Contains(screen, "missing closing )") {
			t.Fatalf("no error beside the prompt:\n%s", screen)
		}
	})
}

func TestSort(t *testing.T) {
	cases := []struct {
		seq  []string
		want []string
	}{
		{nil, []string{"fruit-raycluster-abcde", "fruit-raycluster-fghij", "notebook", "train-a"}},
		{[]string{"N"}, []string{"train-a", "notebook", "fruit-raycluster-fghij", "fruit-raycluster-abcde"}},
		{[]string{"A"}, []string{"fruit-raycluster-fghij", "fruit-raycluster-abcde", "train-a", "notebook"}},
		{[]string{"A", "A"}, []string{"notebook", "train-a", "fruit-raycluster-abcde", "fruit-raycluster-fghij"}},
		{[]string{"S"}, []string{"fruit-raycluster-fghij", "fruit-raycluster-abcde", "notebook", "train-a"}},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.seq, ""), func(t *testing.T) {
			screen, a := run(t, Options{}, c.seq...)
			if got := rowNames(a); !slices.Equal(got, c.want) {
				t.Fatalf("rows %v, want %v\n%s", got, c.want, screen)
			}
		})
	}
	screen, _ := run(t, Options{}, "A", "A")
	if !strings.Contains(screen, "AGE↓") {
		t.Fatalf("no descending marker on AGE:\n%s", screen)
	}
}

func TestDrillDownAndBack(t *testing.T) {
	tm, _ := start(t, Options{}, 100, 30)
	typeKeys(tm, "j", "j", "j", "<enter>") // train-a
	waitScreen(t, tm, "RayCluster ml/train-a")
	typeKeys(tm, "j", "<esc>")
	screen, a := finalScreen(t, tm)
	if len(a.stack) != 1 || a.top().Kind() != ClustersView {
		t.Fatalf("stack %d, top %v", len(a.stack), a.top().Kind())
	}
	if !strings.Contains(screen, "▶ train-a") {
		t.Fatalf("selection not kept on train-a after coming back:\n%s", screen)
	}

	// Job → job detail → its cluster → back twice.
	_, a = run(t, Options{}, ":rj", "<enter>", "G", "<enter>", "<enter>")
	var crumbs []string
	for _, p := range a.stack {
		crumbs = append(crumbs, p.Crumb())
	}
	if !slices.Equal(crumbs, []string{"rayjobs", "ml/nightly-eval", "ml/train-a"}) {
		t.Fatalf("crumbs %v", crumbs)
	}
	_, a = run(t, Options{}, ":rj", "<enter>", "G", "<enter>", "<enter>", "<esc>", "<esc>", "<esc>")
	if len(a.stack) != 1 || a.top().Kind() != JobsView {
		t.Fatalf("esc did not go back to the list: %d %v", len(a.stack), a.top().Kind())
	}

	// Pods drill down to their cluster; services to their active cluster.
	_, a = run(t, Options{}, ":pods", "<enter>", "G", "<enter>")
	if a.top().Crumb() != "ml/train-a" {
		t.Fatalf("pod drill-down: %s", a.top().Crumb())
	}
	_, a = run(t, Options{}, ":rs", "<enter>", "<enter>", "<enter>")
	if a.top().Crumb() != "serve/fruit-raycluster-abcde" {
		t.Fatalf("service drill-down: %s", a.top().Crumb())
	}
}

func TestNamespaceSwitch(t *testing.T) {
	screen, a := run(t, Options{}, ":ns ml", "<enter>")
	if got := rowNames(a); !slices.Equal(got, []string{"notebook", "train-a"}) {
		t.Fatalf("rows %v", got)
	}
	if !strings.Contains(screen, "RayClusters(ml)[2]") || strings.Contains(screen, "NAMESPACE") || !strings.Contains(screen, "ns: ml") {
		t.Fatalf("namespace view:\n%s", screen)
	}
	// The namespace sticks when switching views; 0 goes back to all.
	_, a = run(t, Options{}, ":ns ml", "<enter>", ":rj", "<enter>")
	if got := rowNames(a); !slices.Equal(got, []string{"backfill", "nightly-eval"}) {
		t.Fatalf("jobs in ml: %v", got)
	}
	_, a = run(t, Options{}, ":ns serve", "<enter>", "0")
	if a.ns != "" || len(rowNames(a)) != 4 {
		t.Fatalf("0: ns %q rows %v", a.ns, rowNames(a))
	}
	// `:rc NS` switches view and namespace; an unknown namespace warns.
	screen, a = run(t, Options{}, ":rc serve", "<enter>")
	if a.ns != "serve" || len(rowNames(a)) != 2 || !strings.Contains(screen, "namespace: serve") {
		t.Fatalf(":rc serve: ns %q rows %v\n%s", a.ns, rowNames(a), screen)
	}
	screen, _ = run(t, Options{}, ":ns nope", "<enter>")
	if !strings.Contains(screen, "no Ray objects there yet") || !strings.Contains(screen, "RayClusters(nope)[0]") {
		t.Fatalf("unknown namespace:\n%s", screen)
	}
	// A session may start in one namespace.
	_, a = run(t, Options{Session: Session{Namespace: "serve"}})
	if a.ns != "serve" || len(rowNames(a)) != 2 {
		t.Fatalf("initial namespace: %q %v", a.ns, rowNames(a))
	}
}

func TestCommandMode(t *testing.T) {
	for _, c := range []struct {
		cmd  string
		kind ViewKind
	}{
		{"rc", ClustersView}, {"rayclusters", ClustersView}, {"raycluster", ClustersView},
		{"rj", JobsView}, {"rayjobs", JobsView}, {"rs", ServicesView}, {"rayservices", ServicesView},
		{"pods", PodsView}, {"po", PodsView},
	} {
		_, a := run(t, Options{StartView: PodsView}, ":"+c.cmd, "<enter>")
		if c.kind == PodsView {
			_, a = run(t, Options{}, ":"+c.cmd, "<enter>")
		}
		if a.top().Kind() != c.kind {
			t.Fatalf(":%s → %v", c.cmd, a.top().Kind())
		}
	}
	// Completion: unique, common prefix, cycling, namespaces.
	comp := []struct {
		seq  []string
		want string
	}{
		{[]string{":rayj", "<tab>"}, "rayjob"},
		{[]string{":rayj", "<tab>", "<tab>"}, "rayjob"},
		{[]string{":rayj", "<tab>", "<tab>", "<tab>"}, "rayjobs"},
		{[]string{":namesp", "<tab>"}, "namespace "},
		{[]string{":ns s", "<tab>"}, "ns serve"},
		{[]string{":pods m", "<tab>"}, "pods ml"},
		{[]string{":zzz", "<tab>"}, "zzz"},
	}
	for _, c := range comp {
		_, a := run(t, Options{}, c.seq...)
		if a.mode != modeCommand || a.prompt.text != c.want {
			t.Fatalf("%v: mode %v text %q, want %q", c.seq, a.mode, a.prompt.text, c.want)
		}
	}
	// History, backspace on empty leaves, unknown command flashes.
	_, a := run(t, Options{}, ":rj", "<enter>", ":", "<up>")
	if a.prompt.text != "rj" {
		t.Fatalf("history: %q", a.prompt.text)
	}
	_, a = run(t, Options{}, ":", "<backspace>")
	if a.mode != modeNormal {
		t.Fatal("backspace on an empty prompt should leave command mode")
	}
	screen, _ := run(t, Options{}, ":frobnicate", "<enter>")
	if !strings.Contains(screen, `error: unknown command "frobnicate"`) {
		t.Fatalf("no error flash:\n%s", screen)
	}
	screen, _ = run(t, Options{}, ":ctx other", "<enter>")
	if !strings.Contains(screen, "switching contexts is not available") {
		t.Fatalf("ctx without backend:\n%s", screen)
	}
}

func TestQuit(t *testing.T) {
	for _, seq := range [][]string{{":q", "<enter>"}, {":quit", "<enter>"}, {"<ctrl+c>"}, {"?", "<ctrl+c>"}, {":", "<ctrl+c>"}} {
		tm, _ := start(t, Options{}, 80, 24)
		typeKeys(tm, seq...)
		// No Quit from the test: the program must end by itself.
		m := tm.FinalModel(t, teatestFinal()).(*App)
		if !m.quitting {
			t.Fatalf("%v did not quit", seq)
		}
	}
}

// fakeBackend switches between two contexts with fixed stores.
type fakeBackend struct {
	stores map[string]*watch.Source
}

func (b *fakeBackend) Contexts() ([]string, error) {
	return []string{"sandbox", "staging", "prod"}, nil
}

func (b *fakeBackend) Switch(_ context.Context, name string) (Session, error) {
	src, ok := b.stores[name]
	if !ok {
		return Session{}, errors.New("no such context")
	}
	return Session{Context: name, Server: "https://" + name + ":6443", Feed: src, Namespace: "team"}, nil
}

func TestContextSwitch(t *testing.T) {
	staging := watch.NewSource(0)
	rc := mkCluster("team", "staging-cluster", time.Hour, group("cpu", 1, 1, 1))
	staging.Push(watch.Delta{Kind: watch.RayCluster, Object: rc})
	b := &fakeBackend{stores: map[string]*watch.Source{"staging": staging}}

	tm, _ := start(t, Options{Backend: b}, 100, 30)
	typeKeys(tm, ":rj", "<enter>", ":ctx st", "<tab>", "<enter>")
	waitScreen(t, tm, "ctx: staging")
	typeKeys(tm, ":rc", "<enter>")
	waitScreen(t, tm, "staging-cluster")
	typeKeys(tm, ":ctx prod", "<enter>")
	waitScreen(t, tm, "context prod: no such context")
	screen, a := finalScreen(t, tm)
	if a.e.Sess.Context != "staging" || a.ns != "team" || !slices.Equal(rowNames(a), []string{"staging-cluster"}) {
		t.Fatalf("after switch: ctx %q ns %q rows %v\n%s", a.e.Sess.Context, a.ns, rowNames(a), screen)
	}
	if a.e.Store.Len(watch.RayJob) != 0 {
		t.Fatal("old context's objects survived the switch")
	}
}

// TestLiveFeed: objects pushed into the bridge appear, change and
// disappear on screen.
func TestLiveFeed(t *testing.T) {
	src := watch.NewSource(watch.DefaultWindow)
	tm, _ := start(t, Options{Session: Session{Feed: src}}, 100, 30)
	rc := mkCluster("ml", "fresh", time.Minute, group("cpu", 2, 1, 4))
	rc.Status.State = ""
	src.Push(watch.Delta{Kind: watch.RayCluster, Object: rc})
	waitScreen(t, tm, "fresh ")
	rc2 := rc.DeepCopy()
	rc2.Status.State = rayv1.Suspended
	src.Push(watch.Delta{Kind: watch.RayCluster, Object: rc2})
	waitScreen(t, tm, "suspended")
	src.Push(watch.Delta{Kind: watch.RayCluster, Deleted: true, Object: rc2})
	waitScreen(t, tm, "RayClusters(all)[4]")
	screen, _ := finalScreen(t, tm)
	if strings.Contains(screen, "fresh") {
		t.Fatalf("deleted cluster still shown:\n%s", screen)
	}
}

// TestClusterDetailIsLive: scaling shows up in the open cluster detail.
func TestClusterDetailIsLive(t *testing.T) {
	src := watch.NewSource(0)
	store := fixture()
	tm, _ := start(t, Options{Store: store, Session: Session{Feed: src}}, 100, 30)
	typeKeys(tm, "G", "<enter>")
	waitScreen(t, tm, "RayCluster ml/train-a")
	o, _ := store.Find(watch.RayCluster, "ml", "train-a")
	rc := o.(*rayv1.RayCluster)
	p := mkPod(rc, "train-a-cpu-worker-new01", "worker", "cpu", 0, false, "")
	src.Push(watch.Delta{Kind: watch.Pod, Object: p})
	waitScreen(t, tm, "train-a-cpu-worker-new01")
	src.Push(watch.Delta{Kind: watch.Event, Object: mkEvent(rc, rayv1.KindRayCluster, "ray.io/v1", "Normal", "ScaledUp", "scaled cpu to 4", 0)})
	waitScreen(t, tm, "scaled cpu to 4")
	gone := store.PodsOf(watch.ClusterRef{Namespace: "ml", Name: "train-a"})[0]
	src.Push(watch.Delta{Kind: watch.Pod, Deleted: true, Object: gone})
	src.Push(watch.Delta{Kind: watch.RayCluster, Deleted: true, Object: rc})
	waitScreen(t, tm, "(deleted)")
	screen, _ := finalScreen(t, tm)
	if strings.Contains(screen, gone.Name) {
		t.Fatalf("deleted pod still shown:\n%s", screen)
	}
}

func TestJobLogs(t *testing.T) {
	calls := make(chan string, 10)
	logs := JobLogsFunc(func(_ context.Context, ns, name string) (string, error) {
		calls <- ns + "/" + name
		if name == "backfill" {
			return "", errors.New("dashboard unreachable")
		}
		return "\x1b[32mstarting\x1b[0m\n\tstep 1\nstep 2\n", nil
	})
	tm, _ := start(t, Options{Session: Session{Logs: logs}}, 100, 30)
	typeKeys(tm, ":rj", "<enter>", "G", "<enter>")
	waitScreen(t, tm, "step 2")
	typeKeys(tm, "<ctrl+r>")
	if got := recv(t, calls); got != "ml/nightly-eval" {
		t.Fatalf("first fetch %q", got)
	}
	if got := recv(t, calls); got != "ml/nightly-eval" {
		t.Fatalf("reload fetch %q", got)
	}
	typeKeys(tm, "<esc>", "g", "<enter>")
	waitScreen(t, tm, "dashboard unreachable")
	screen, _ := finalScreen(t, tm)
	if !strings.Contains(screen, "error: dashboard unreachable") {
		t.Fatalf("no log error:\n%s", screen)
	}
	// Without a dashboard client the view says so.
	screen, _ = run(t, Options{}, ":rj", "<enter>", "<enter>")
	if !strings.Contains(screen, "not available") {
		t.Fatalf("no logs note:\n%s", screen)
	}
}

// TestActions: the issue-7 extension point. An action gets the selection
// and the marks, runs with the busy indicator, flashes its result; read-only
// mode hides dangerous actions; clashing keys are refused.
func TestActions(t *testing.T) {
	got := make(chan Target, 1)
	scale := Action{Name: "scale", Key: key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "scale")),
		Run: func(tg Target) tea.Cmd {
			got <- tg
			return func() tea.Msg { return ResultMsg{Text: "scaled " + tg.Selected.GetName()} }
		}}
	del := Action{Name: "delete-workers", Dangerous: true, Key: key.NewBinding(key.WithKeys("ctrl+d"), key.WithHelp("ctrl+d", "delete workers")),
		Run: func(tg Target) tea.Cmd {
			return func() tea.Msg { return ResultMsg{Err: errors.New("refused")} }
		}}
	acts := map[ViewKind][]Action{ClustersView: {scale}, ClusterDetailView: {scale, del}}

	tm, _ := start(t, Options{Actions: acts}, 100, 30)
	typeKeys(tm, "G", "s")
	waitScreen(t, tm, "scaled train-a")
	tg := recv(t, got)
	if tg.View != ClustersView || tg.Selected.GetName() != "train-a" {
		t.Fatalf("target %+v", tg)
	}
	typeKeys(tm, "<enter>", "j", "j", "j", "<space>", "<space>", "s")
	tg = recv(t, got)
	var marked []string
	for _, o := range tg.Marked {
		marked = append(marked, o.GetName())
	}
	if tg.Owner.GetName() != "train-a" || !slices.Equal(marked, []string{"train-a-cpu-worker-4hq9d", "train-a-cpu-worker-8mz2n"}) {
		t.Fatalf("detail target: owner %v marked %v", tg.Owner.GetName(), marked)
	}
	typeKeys(tm, "?")
	screen, _ := finalScreen(t, tm)
	if !strings.Contains(screen, "ctrl+d") || !strings.Contains(screen, "delete workers") {
		t.Fatalf("help lacks the actions:\n%s", screen)
	}

	// Read-only: the dangerous action is neither listed nor run.
	screen, _ = run(t, Options{Actions: acts, ReadOnly: true}, "G", "<enter>", "?")
	if strings.Contains(screen, "delete workers") || !strings.Contains(screen, "scale") {
		t.Fatalf("read-only help:\n%s", screen)
	}
	// Keys rebound from the key file; clashes refused.
	km, err := keys.Parse([]byte("actions:\n  scale: [x]\n"))
	if err != nil {
		t.Fatal(err)
	}
	a, err := New(Options{Keys: km, Actions: acts, Now: clock})
	if err != nil || !slices.Equal(a.actions[ClustersView][0].Key.Keys(), []string{"x"}) {
		t.Fatalf("rebind: %v", err)
	}
	bad := Action{Name: "oops", Key: key.NewBinding(key.WithKeys("j"))}
	if _, err := New(Options{Actions: map[ViewKind][]Action{PodsView: {bad}}}); err == nil || !strings.Contains(err.Error(), "down and action oops") {
		t.Fatalf("clash: %v", err)
	}
}

// confirmDialog is a minimal Dialog: y runs, anything else cancels.
type confirmDialog struct{ ran *bool }

func (d confirmDialog) Update(msg tea.KeyPressMsg) (bool, tea.Cmd) {
	if msg.String() == "y" {
		return true, func() tea.Msg { *d.ran = true; return ResultMsg{Text: "confirmed"} }
	}
	return msg.String() == "esc", nil
}
func (d confirmDialog) View(int) string { return "Really? (y/esc)" }

func TestDialog(t *testing.T) {
	ran := false
	open := Action{Name: "confirm", Key: key.NewBinding(key.WithKeys("u"), key.WithHelp("u", "confirm")),
		Run: func(Target) tea.Cmd {
			return func() tea.Msg { return ShowDialogMsg{Dialog: confirmDialog{&ran}} }
		}}
	tm, _ := start(t, Options{Actions: map[ViewKind][]Action{ClustersView: {open}}}, 80, 24)
	typeKeys(tm, "u")
	waitScreen(t, tm, "Really? (y/esc)")
	typeKeys(tm, "j", "y") // j goes to the dialog, not the table
	waitScreen(t, tm, "confirmed")
	_, a := finalScreen(t, tm)
	if !ran || a.mode != modeNormal {
		t.Fatalf("ran %v mode %v", ran, a.mode)
	}
	if sel := a.top().Target().Selected; sel.GetName() != "fruit-raycluster-abcde" {
		t.Fatalf("the dialog's key moved the cursor: %s", sel.GetName())
	}
}

func recv[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(teatestTimeout):
		t.Fatal("timed out waiting for a call")
	}
	panic("unreachable")
}

// Direct Update calls (no program) for the timing-dependent bits.

func newApp(t *testing.T, opts Options) *App {
	t.Helper()
	if opts.Now == nil {
		opts.Now = clock
	}
	if opts.Store == nil {
		opts.Store = fixture()
	}
	a, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	a.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	return a
}

func TestResizeIsDebounced(t *testing.T) {
	a := newApp(t, Options{})
	if a.width != 100 {
		t.Fatal("first size not applied at once")
	}
	var cmd tea.Cmd
	for _, w := range []int{90, 85, 80} {
		_, cmd = a.Update(tea.WindowSizeMsg{Width: w, Height: 24})
	}
	if a.width != 100 || cmd == nil {
		t.Fatalf("resize applied before the debounce: %d", a.width)
	}
	a.Update(resizeMsg{seq: a.resizeSeq - 1}) // a stale timer
	if a.width != 100 {
		t.Fatal("stale debounce tick applied")
	}
	a.Update(resizeMsg{seq: a.resizeSeq})
	if a.width != 80 || a.height != 24 || len(strings.Split(ansi.Strip(a.View().Content), "\n")) != 24 {
		t.Fatalf("after debounce: %dx%d", a.width, a.height)
	}
}

func TestBusyIndicatorAndFlashExpiry(t *testing.T) {
	now := fixedNow
	a := newApp(t, Options{Now: func() time.Time { return now }})
	release := make(chan struct{})
	cmd := a.track(func() tea.Msg { <-release; return ResultMsg{Text: "done"} })
	if a.busy != 1 || !strings.Contains(a.headerLine(), a.spin.View()) {
		t.Fatalf("busy %d, header %q", a.busy, a.headerLine())
	}
	close(release)
	// Run the tracked command (the first of the batch) and feed its result back.
	msgs := cmd().(tea.BatchMsg)
	a.Update(msgs[0]())
	if a.busy != 0 || strings.Contains(a.headerLine(), a.spin.View()) || a.flash.text != "done" {
		t.Fatalf("after: busy %d flash %q", a.busy, a.flash.text)
	}
	now = now.Add(6 * time.Second)
	a.Update(tickMsg{})
	if a.flash.text != "" {
		t.Fatal("flash did not expire")
	}
}

func TestRoleIsRefreshedOnTick(t *testing.T) {
	role := "observer"
	a := newApp(t, Options{Session: Session{Role: func() string { return role }}})
	if !strings.Contains(ansi.Strip(a.headerLine()), "role: observer") {
		t.Fatal(a.headerLine())
	}
	role = "leader"
	a.Update(tickMsg{})
	if !strings.Contains(ansi.Strip(a.headerLine()), "role: leader") {
		t.Fatal(a.headerLine())
	}
}

func TestSyncingUntilTheFeedIsSynced(t *testing.T) {
	synced := false
	a := newApp(t, Options{Session: Session{Synced: func() bool { return synced }}})
	if !strings.Contains(ansi.Strip(a.headerLine()), "syncing") {
		t.Fatal(a.headerLine())
	}
	synced = true
	a.Update(batchMsg{gen: a.gen})
	if strings.Contains(ansi.Strip(a.headerLine()), "syncing") {
		t.Fatal(a.headerLine())
	}
}

// A header wider than the terminal is cut at its end; "syncing…" must
// survive the cut (at 120 columns an observer's header lost it).
func TestSyncingSurvivesANarrowHeader(t *testing.T) {
	a := newApp(t, Options{Session: Session{
		Context: "raydar-sandbox", Server: "https://127.0.0.1:40429/",
		Role:   func() string { return "observer (reconcile loop off)" },
		Synced: func() bool { return false },
	}})
	a.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	a.Update(tickMsg{})
	full := ansi.Strip(a.headerLine())
	if ansi.StringWidth(full) <= 100 {
		t.Fatalf("the header fits in 100 columns, the test needs it wider: %q", full)
	}
	top := strings.SplitN(ansi.Strip(a.render()), "\n", 2)[0]
	if !strings.Contains(top, "syncing") {
		t.Fatalf("the header on screen lost syncing: %q", top)
	}
}

// The header names what syncing waits for, and drops it once synced.
func TestSyncingNamesWhatItWaitsFor(t *testing.T) {
	synced, pending := false, []string{"Pods", "Events"}
	a := newApp(t, Options{Session: Session{
		Synced:   func() bool { return synced },
		Unsynced: func() []string { return pending },
	}})
	if h := ansi.Strip(a.headerLine()); !strings.Contains(h, "syncing Pods, Events…") {
		t.Fatalf("header %q, want it to name Pods and Events", h)
	}
	pending = []string{"RayClusters", "Pods", "Events"} // at start: counted, not named
	a.Update(syncPollMsg{gen: a.gen})
	if h := ansi.Strip(a.headerLine()); !strings.Contains(h, "syncing 3 lists…") {
		t.Fatalf("header %q, want the three lists counted", h)
	}
	pending = []string{"Events"}
	a.Update(syncPollMsg{gen: a.gen})
	if h := ansi.Strip(a.headerLine()); !strings.Contains(h, "syncing Events…") || strings.Contains(h, "Pods") {
		t.Fatalf("header %q, want only Events named", h)
	}
	synced, pending = true, nil
	a.Update(syncPollMsg{gen: a.gen})
	if h := ansi.Strip(a.headerLine()); strings.Contains(h, "syncing") {
		t.Fatalf("header %q after sync", h)
	}
}

func TestStaleBatchIsDropped(t *testing.T) {
	a := newApp(t, Options{})
	n := a.e.Store.Len(watch.RayCluster)
	a.Update(batchMsg{gen: a.gen - 1, deltas: []watch.Delta{{Kind: watch.RayCluster, Object: mkCluster("x", "y", 0)}}})
	if a.e.Store.Len(watch.RayCluster) != n {
		t.Fatal("a batch from an old session was applied")
	}
	a.Update(batchMsg{gen: a.gen, deltas: []watch.Delta{{Kind: watch.RayCluster, Object: mkCluster("x", "y", 0)}}})
	if a.e.Store.Len(watch.RayCluster) != n+1 || len(rowNames(a)) != n+1 {
		t.Fatal("current batch not applied")
	}
}

// TestTinyTerminals: every view draws at any size without panicking and
// without lines wider than the terminal.
func TestTinyTerminals(t *testing.T) {
	logs := JobLogsFunc(func(context.Context, string, string) (string, error) { return "a\nb", nil })
	seqs := [][]string{nil, {"<enter>"}, {":rj", "<enter>", "<enter>"}, {":rs", "<enter>", "<enter>"}, {":pods", "<enter>"}, {"?"}, {":ns ml", "<enter>"}}
	for _, size := range [][2]int{{1, 1}, {10, 3}, {20, 6}, {40, 10}, {200, 60}} {
		for _, seq := range seqs {
			a := newApp(t, Options{Session: Session{Logs: logs}})
			requireFits(t, a, size, seq)
		}
	}
}

// requireFits sizes a, types seq (typeApp) and fails if the screen is
// taller or wider than size.
func requireFits(t *testing.T, a *App, size [2]int, seq []string) {
	t.Helper()
	a.Update(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
	a.Update(resizeMsg{seq: a.resizeSeq})
	typeApp(a, seq...)
	lines := strings.Split(ansi.Strip(a.View().Content), "\n")
	if len(lines) > size[1] {
		t.Fatalf("%v %v: %d lines", size, seq, len(lines))
	}
	for _, l := range lines {
		if w := ansi.StringWidth(l); w > size[0] {
			t.Fatalf("%v %v: line %q is %d wide", size, seq, l, w)
		}
	}
}

// typeApp sends keys straight to a: a "<name>" is a named key, anything
// else is typed rune by rune.
func typeApp(a *App, seq ...string) {
	for _, k := range seq {
		if strings.HasPrefix(k, "<") {
			a.Update(namedKey(k[1 : len(k)-1]))
			continue
		}
		for _, r := range k {
			a.Update(tea.KeyPressMsg{Code: r, Text: string(r)})
		}
	}
}
