package privilege

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/kube/actions"
	"github.com/raydar/raydar/kube/sandbox"
	"github.com/raydar/raydar/kube/watch"
	"github.com/raydar/raydar/rayapi/scheme"
	"github.com/raydar/raydar/tui"
)

// tuiScript goes through every view (the four kinds' lists and details,
// the pods list, describe and logs) and presses every action key there
// (a, the shell, too: an exec is a write; the test's input is no terminal,
// so without --readonly it ends before any request),
// answering each confirmation with Confirm (tab, enter). Without
// --readonly the same keys change things (TestReadOnlyTUIMakesNoMutatingRequest
// checks that too, so the script is known to reach the actions).
var tuiScript = [][]string{
	{":rc", "<enter>"}, {"d"}, {"<esc>"}, {"l"}, {"<esc>"},
	{"<enter>"}, {"a"}, {"j", "j"}, {"s"}, {"<tab>", "<enter>"}, {"j"}, {"<ctrl+d>"}, {"<tab>", "<enter>"},
	{"d"}, {"<esc>"}, {"l"}, {"<esc>"}, {"z"}, {"<tab>", "<enter>"}, {"<esc>"},
	{":rc", "<enter>"}, {"z"}, {"<tab>", "<enter>"},
	{":rj", "<enter>"}, {"x"}, {"<tab>", "<enter>"}, {"d"}, {"<esc>"},
	{"<enter>"}, {"x"}, {"<tab>", "<enter>"}, {"z"}, {"<tab>", "<enter>"}, {"d"}, {"<esc>"}, {"<esc>"},
	{":rj", "<enter>"}, {"z"}, {"<tab>", "<enter>"},
	{":rs", "<enter>"}, {"z"}, {"<tab>", "<enter>"}, {"d"}, {"<esc>"},
	{"<enter>"}, {"z"}, {"<tab>", "<enter>"}, {"<esc>"},
	{":rcj", "<enter>"}, {"t"}, {"<tab>", "<enter>"}, {"z"}, {"<tab>", "<enter>"}, {"d"}, {"<esc>"},
	{"<enter>"}, {"t"}, {"<tab>", "<enter>"}, {"z"}, {"<tab>", "<enter>"}, {"<esc>"},
	{":pods", "<enter>"}, {"d"}, {"<esc>"}, {"l"}, {"<esc>"}, {"a"}, {"<enter>"}, {"<esc>"},
	// Deletes last: the objects are gone after them (without --readonly).
	{":rcj", "<enter>"}, {"<ctrl+d>"}, {"<tab>", "<enter>"},
	{":rs", "<enter>"}, {"<ctrl+d>"}, {"<tab>", "<enter>"},
	{":rj", "<enter>"}, {"<ctrl+d>"}, {"<tab>", "<enter>"},
	{":rc", "<enter>"}, {"<ctrl+d>"}, {"<tab>", "<enter>"},
}

// TestReadOnlyTUIMakesNoMutatingRequest drives the TUI (in-process, as
// cmd/raydar assembles it: the feed from a cache, kube/actions, pod logs)
// as a person who may edit everything in the namespace (the edit
// ClusterRole), with --readonly: the audit log shows zero mutating
// requests of that person. Then the same script without --readonly, as a
// second person: it does mutate, so the first run's zero means something.
func TestReadOnlyTUIMakesNoMutatingRequest(t *testing.T) {
	ctx := needSandbox(t)
	w := newViewWorld(t, ctx, "ro", "reader", "edit")
	token := serviceAccountWith(t, ctx, w.ns, "writer", "edit", true)

	cfgRO, err := clientConfigFromFile(w.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	ro, _ := runScript(t, ctx, cfgRO, w.ns, w.user, true)
	before := w.versions(t, ctx)
	evs := only(auditUntilMarker(t, ctx), w.user)
	var writes []string
	for _, e := range evs {
		if e.Mutating() && !everyUserMay(e) {
			writes = append(writes, e.String())
		}
	}
	t.Logf("--readonly session: %d requests of %s, %d mutating; %s", len(evs), w.user, len(writes), sandbox.Summarize(evs))
	if len(writes) > 0 {
		t.Errorf("mutating requests of a --readonly TUI session:\n%s", strings.Join(writes, "\n"))
	}
	if len(evs) < 5 {
		t.Errorf("only %d requests of %s: did the session read as that user?", len(evs), w.user)
	}
	if !strings.Contains(ro, "raydar │ ctx: sandbox") {
		t.Errorf("the --readonly session's last screen:\n%s", ro)
	}
	if after := w.versions(t, ctx); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("objects changed:\nbefore %v\nafter  %v", before, after)
	}

	writer := "system:serviceaccount:" + w.ns + ":writer"
	runScript(t, ctx, sb.TokenConfig(token), w.ns, writer, false)
	evs = only(auditUntilMarker(t, ctx), writer)
	n := 0
	for _, e := range evs {
		if e.Mutating() && e.Code() < 400 && !everyUserMay(e) {
			n++
		}
	}
	t.Logf("the same script without --readonly: %d mutating requests of %s", n, writer)
	if n == 0 {
		t.Errorf("the script without --readonly made no change either: it does not reach the actions")
	}
}

// runScript runs the TUI on the namespace as user (cfg's identity) through
// tuiScript and returns its last screen, and every screen it showed
// between the steps.
func runScript(t *testing.T, ctx context.Context, cfg *rest.Config, ns, user string, readOnly bool) (last string, seen []string) {
	t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sch := scheme.New()
	c, err := cache.New(cfg, cache.Options{Scheme: sch, DefaultNamespaces: map[string]cache.Config{ns: {}}})
	if err != nil {
		t.Fatal(err)
	}
	src := watch.NewSource(watch.DefaultWindow)
	if err := src.Watch(ctx, c); err != nil {
		t.Fatal(err)
	}
	go func() { _ = c.Start(ctx) }()
	if err := src.WaitSynced(ctx); err != nil {
		t.Fatal(err)
	}
	cl, err := client.New(cfg, client.Options{Scheme: sch})
	if err != nil {
		t.Fatal(err)
	}
	acts, err := actions.New(cl, actions.Options{ReadOnly: readOnly, Actor: user, Context: "sandbox",
		AuditLogPath: t.TempDir() + "/audit.log"})
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	deps := tui.ActionDeps{Context: "sandbox", Actions: acts,
		PodLogs: tui.PodLogsFunc(func(ctx context.Context, ns, pod string, o tui.LogOptions) (io.ReadCloser, error) {
			return cs.CoreV1().Pods(ns).GetLogs(pod, &corev1.PodLogOptions{Container: o.Container, Follow: o.Follow, Previous: o.Previous}).Stream(ctx)
		})}
	app, err := tui.New(tui.Options{
		Actions:  tui.DefaultActions(deps),
		Session:  tui.Session{Context: "sandbox", Server: cfg.Host, Namespace: ns, Feed: src, Synced: src.Synced, Deps: &deps},
		ReadOnly: readOnly,
	})
	if err != nil {
		t.Fatal(err)
	}
	tm := teatest.NewTestModel(t, app, teatest.WithInitialTermSize(160, 50),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.Ascii), tea.WithEnvironment([]string{"TERM=xterm-256color"}),
			tea.WithFilter(probeFilter)))
	waitFor(t, tm, "rc ")
	for _, step := range tuiScript {
		typeKeys(tm, step...)
		// Each step's effect (a page, a dialog, a result) before the next.
		seen = append(seen, settle(tm)...)
	}
	_ = tm.Quit()
	m := tm.FinalModel(t, teatest.WithFinalTimeout(time.Minute))
	return ansi.Strip(m.(*tui.App).View().Content), seen
}

func clientConfigFromFile(path string) (*rest.Config, error) {
	return clientcmd.BuildConfigFromFlags("", path)
}

// probeMsg asks the running program for its screen; probeFilter answers
// inside the event loop (race-free) and swallows it.
type probeMsg struct{ reply chan string }

func probeFilter(m tea.Model, msg tea.Msg) tea.Msg {
	if p, ok := msg.(probeMsg); ok {
		p.reply <- ansi.Strip(m.(*tui.App).View().Content)
		return nil
	}
	return msg
}

func screenNow(tm *teatest.TestModel) string {
	reply := make(chan string, 1)
	tm.Send(probeMsg{reply})
	return <-reply
}

// waitFor waits until the screen shows s.
func waitFor(t *testing.T, tm *teatest.TestModel, s string) {
	t.Helper()
	eventually(t, time.Minute, "the screen to show "+s, func() (bool, string) {
		sc := screenNow(tm)
		return strings.Contains(sc, s), sc
	})
}

// settle waits (at most 3 s) until the screen has not changed over five
// probes 20 ms apart: the keys' commands (reads, a dialog, an apply) have
// had their effect. It returns the screens it saw.
func settle(tm *teatest.TestModel) []string {
	deadline := time.Now().Add(3 * time.Second)
	last, same := screenNow(tm), 0
	seen := []string{last}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for same < 5 && time.Now().Before(deadline) {
		<-tick.C
		if s := screenNow(tm); s == last {
			same++
		} else {
			last, same = s, 0
			seen = append(seen, s)
		}
	}
	return seen
}

// typeKeys types single characters and <named> keys.
func typeKeys(tm *teatest.TestModel, seq ...string) {
	for _, s := range seq {
		switch s {
		case "<enter>":
			tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
		case "<esc>":
			tm.Send(tea.KeyPressMsg{Code: tea.KeyEscape})
		case "<tab>":
			tm.Send(tea.KeyPressMsg{Code: tea.KeyTab})
		case "<ctrl+d>":
			tm.Send(tea.KeyPressMsg{Code: 'd', Mod: tea.ModCtrl})
		default:
			tm.Type(s)
		}
	}
}
