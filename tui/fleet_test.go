package tui

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/kube/actions"
	"github.com/raydar/raydar/kube/watch"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/tui/table"
)

// Tests of a fleet view (issue 25): two contexts in one TUI, each with its
// own store and its own fake API server. Both hold the same fixture (the
// same namespaces, names and even UIDs), so every row, drill-down and
// action must be told apart by its context, not by its object.

// fleet is two worlds, prod-us and prod-eu; prod-eu has one cluster more
// (eu-only) and is protected by the config file.
type fleet struct {
	us, eu *world
	// euHealth is prod-eu's Health (a test may lose its connection).
	euHealth atomic.Pointer[Health]
}

func newFleet(t *testing.T) *fleet {
	t.Helper()
	policy := &actions.Policy{Path: "/cfg/config.yaml", Protected: []string{"prod-eu"}}
	f := &fleet{
		us: newWorld(t, worldOpts{context: "prod-us", policy: policy}),
		eu: newWorld(t, worldOpts{context: "prod-eu", policy: policy, mod: func(st *watch.Store) {
			st.Add(mkCluster("ml", "eu-only", time.Hour, group("cpu", 1, 1, 2)))
		}}),
	}
	return f
}

func (f *fleet) member(w *world, name string, health func() Health) FleetMember {
	deps := w.deps
	deps.Context = name
	return FleetMember{Store: w.store, Session: Session{Context: name, Server: "https://" + name, Deps: &deps, Health: health,
		Role: func() string { return "observer (reconcile loop off)" }}}
}

func (f *fleet) opts() Options {
	return Options{
		Fleet: []FleetMember{
			f.member(f.us, "prod-us", nil),
			f.member(f.eu, "prod-eu", func() Health {
				if h := f.euHealth.Load(); h != nil {
					return *h
				}
				return Health{}
			}),
		},
		Actions: DefaultActions(ActionDeps{}),
		Tick:    20 * time.Millisecond,
	}
}

func TestFleetListsShowEveryContext(t *testing.T) {
	f := newFleet(t)
	tm, _ := start(t, f.opts(), 120, 30)
	screen := waitScreen(t, tm, "eu-only")
	mustContain(t, screen, "CONTEXT", "prod-us ✓", "prod-eu ✓", "role: observer (reconcile loop off)")
	if strings.Contains(screen, "server:") {
		t.Fatalf("a fleet's header names no one server:\n%s", screen)
	}
	// Every cluster of both contexts, the same names twice.
	for _, name := range []string{"train-a", "notebook", "fruit-raycluster-abcde"} {
		n := 0
		for _, l := range strings.Split(screen, "\n") {
			if strings.Contains(l, " "+name+" ") {
				n++
				if !strings.Contains(l, "prod-us") && !strings.Contains(l, "prod-eu") {
					t.Fatalf("row of %s without its context: %q", name, l)
				}
			}
		}
		if n != 2 {
			t.Fatalf("%s: %d rows, want one per context:\n%s", name, n, screen)
		}
	}
	// The filter reads the CONTEXT column: prod-eu's rows only.
	typeKeys(tm, "/", "prod-eu", "<enter>")
	screen = waitScreen(t, tm, "/prod-eu")
	_, a := finalScreen(t, tm)
	if got := rowNames(a); !slices.Equal(got, []string{"eu-only", "fruit-raycluster-abcde", "fruit-raycluster-fghij", "notebook", "train-a"}) {
		t.Fatalf("filtered rows %v\n%s", got, screen)
	}
}

func TestOneContextHasNoContextColumn(t *testing.T) {
	// A fleet of one is a single context's view: no CONTEXT column, the
	// header names the server (the goldens hold the rest).
	f := newFleet(t)
	o := f.opts()
	o.Fleet = o.Fleet[:1] // --all-contexts of a kubeconfig with one context
	tm, _ := start(t, o, 120, 30)
	screen := waitScreen(t, tm, "train-a")
	mustContain(t, screen, "ctx: prod-us", "server: https://prod-us")
	if strings.Contains(screen, "CONTEXT") {
		t.Fatalf("one context shows a CONTEXT column:\n%s", screen)
	}
}

func TestFleetActionReachesOnlyTheRowsContext(t *testing.T) {
	f := newFleet(t)
	tm, _ := start(t, f.opts(), 120, 30)
	waitScreen(t, tm, "eu-only")
	// Rows of the same name sort in the contexts' order (prod-us, then
	// prod-eu): the last row is prod-eu's train-a, one up prod-us's.
	typeKeys(tm, "G", "k", "<ctrl+d>")
	screen := waitScreen(t, tm, "Delete RayCluster ml/train-a")
	mustContain(t, screen, "context: prod-us")
	if strings.Contains(screen, "PROTECTED") {
		t.Fatalf("prod-us is not protected:\n%s", screen)
	}
	typeKeys(tm, "<tab>", "<enter>")
	waitScreen(t, tm, "deleted RayCluster ml/train-a")
	finalScreen(t, tm)
	if err := f.us.c.Get(context.Background(), client.ObjectKey{Namespace: "ml", Name: "train-a"}, &rayv1.RayCluster{}); !apierrors.IsNotFound(err) {
		t.Fatalf("prod-us's train-a still there: %v", err)
	}
	f.eu.cluster(t, "ml", "train-a") // prod-eu's is untouched
}

func TestFleetProtectedContextOfTheRowWantsTheName(t *testing.T) {
	f := newFleet(t)
	tm, _ := start(t, f.opts(), 120, 30)
	waitScreen(t, tm, "eu-only")
	typeKeys(tm, "G", "<ctrl+d>") // the last row: prod-eu's train-a
	screen := waitScreen(t, tm, "Delete RayCluster ml/train-a")
	mustContain(t, screen, "PROTECTED context prod-eu", "type train-a to confirm:", "Confirm (disabled)")
	typeKeys(tm, "train-a", "<tab>", "<enter>")
	waitScreen(t, tm, "deleted RayCluster ml/train-a")
	finalScreen(t, tm)
	if err := f.eu.c.Get(context.Background(), client.ObjectKey{Namespace: "ml", Name: "train-a"}, &rayv1.RayCluster{}); !apierrors.IsNotFound(err) {
		t.Fatalf("prod-eu's train-a still there: %v", err)
	}
	f.us.cluster(t, "ml", "train-a")
}

func TestFleetDrillDownIsTheRowsContext(t *testing.T) {
	f := newFleet(t)
	tm, _ := start(t, f.opts(), 120, 30)
	waitScreen(t, tm, "eu-only")
	typeKeys(tm, "g", "<enter>") // eu-only: prod-eu's alone
	screen := waitScreen(t, tm, "RayCluster ml/eu-only")
	// The header names the page's context and server.
	mustContain(t, screen, "ctx: prod-eu ✓", "server: https://prod-eu")
	// Its detail page reads prod-eu's store, and its actions prod-eu's
	// deps: scale names the context and is protected.
	typeKeys(tm, "j", "s")
	waitScreen(t, tm, "PROTECTED context prod-eu")
	typeKeys(tm, "<esc>", "<esc>")
	screen = waitScreen(t, tm, "CONTEXT")
	mustContain(t, screen, "prod-us ✓  prod-eu ✓")
	finalScreen(t, tm)
}

func TestFleetCtxShowsOneContextThenAll(t *testing.T) {
	f := newFleet(t)
	tm, _ := start(t, f.opts(), 120, 30)
	waitScreen(t, tm, "eu-only")
	typeKeys(tm, ":", "ctx prod-us", "<enter>")
	screen := waitScreen(t, tm, "server: https://prod-us")
	if strings.Contains(screen, "CONTEXT") || strings.Contains(screen, "eu-only") {
		t.Fatalf(":ctx prod-us shows another context:\n%s", screen)
	}
	typeKeys(tm, ":", "ctx elsewhere", "<enter>")
	waitScreen(t, tm, "context elsewhere is not open in this view")
	typeKeys(tm, ":", "ctx all", "<enter>")
	screen = waitScreen(t, tm, "eu-only")
	mustContain(t, screen, "CONTEXT", "prod-us ✓", "prod-eu ✓")
	finalScreen(t, tm)
}

func TestFleetLostContextKeepsItsRowsMarkedStale(t *testing.T) {
	f := newFleet(t)
	tm, _ := start(t, f.opts(), 140, 30)
	waitScreen(t, tm, "eu-only")
	f.euHealth.Store(&Health{Err: "connection refused", Since: fixedNow.Add(-12 * time.Second)})
	screen := waitScreen(t, tm, "prod-eu ✗ connection refused 12s")
	mustContain(t, screen, "prod-us ✓", "prod-eu (stale)", "eu-only")
	for _, l := range strings.Split(screen, "\n") {
		if strings.Contains(l, "prod-us") && strings.Contains(l, "stale") && !strings.Contains(l, "ctx:") {
			t.Fatalf("prod-us's row marked stale: %q", l)
		}
	}
	f.euHealth.Store(nil)
	screen = waitScreen(t, tm, "prod-eu ✓")
	if strings.Contains(screen, "(stale)") {
		t.Fatalf("rows still stale once restored:\n%s", screen)
	}
	finalScreen(t, tm)
}

func TestFleetReadOnlyContextOfTheRowRefuses(t *testing.T) {
	// prod-eu is read-only in the config file, prod-us is not: the fleet
	// list offers the writes, a prod-eu row refuses them before any dialog.
	policy := &actions.Policy{Path: "/cfg/config.yaml", ReadOnly: []string{"prod-eu"}}
	f := &fleet{us: newWorld(t, worldOpts{context: "prod-us", policy: policy}), eu: newWorld(t, worldOpts{context: "prod-eu", policy: policy})}
	tm, _ := start(t, f.opts(), 120, 30)
	waitScreen(t, tm, "prod-eu")
	typeKeys(tm, "G", "<ctrl+d>") // prod-eu's train-a
	screen := waitScreen(t, tm, "delete refused: context prod-eu is read-only in /cfg/config.yaml")
	if strings.Contains(screen, "Confirm") {
		t.Fatalf("a dialog opened on a read-only context's row:\n%s", screen)
	}
	typeKeys(tm, "k", "<ctrl+d>") // prod-us's
	waitScreen(t, tm, "context: prod-us")
	_, a := finalScreen(t, tm)
	if a.mode != modeDialog {
		t.Fatal("prod-us's row opened no dialog")
	}
	f.eu.cluster(t, "ml", "train-a")
}

func TestFleetHeaderSaysWhereTheLoopRuns(t *testing.T) {
	// --reconcile-contexts prod-us: the header names each context's role.
	f := newFleet(t)
	o := f.opts()
	o.Fleet[0].Session.Role = func() string { return "leader" }
	tm, _ := start(t, o, 160, 30)
	waitScreen(t, tm, "role: prod-us: leader, prod-eu: observer (reconcile loop off)")
	finalScreen(t, tm)
}

// TestFleetRowsKeepTheContextsOrderPastNine: rows equal in every sort key
// (the same namespace and name in every context) are in the contexts'
// order, as README says, with more than ten contexts too (--all-contexts).
func TestFleetRowsKeepTheContextsOrderPastNine(t *testing.T) {
	var members []FleetMember
	var want []*rayv1.RayCluster
	for i := range 12 {
		st := watch.NewStore()
		rc := mkCluster("ml", "same", time.Hour)
		st.Add(rc)
		want = append(want, rc)
		members = append(members, FleetMember{Session: Session{Context: fmt.Sprintf("ctx-%d", i)}, Store: st})
	}
	a, err := New(Options{Now: clock, Fleet: members})
	if err != nil {
		t.Fatal(err)
	}
	tb, ok := a.top().Table().(*table.Model[*rayv1.RayCluster])
	if !ok {
		t.Fatalf("top is not the clusters list: %T", a.top().Table())
	}
	got := tb.Visible()
	if len(got) != len(want) {
		t.Fatalf("%d rows, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			j := slices.Index(want, got[i])
			t.Fatalf("row %d is ctx-%d's cluster, want ctx-%d's", i, j, i)
		}
	}
}
