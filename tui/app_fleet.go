package tui

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/raydar/raydar/kube/watch"
	"github.com/raydar/raydar/tui/diagnose"
	"github.com/raydar/raydar/tui/host"
)

// A fleet view (Options.Fleet; raydar --context a,b, --all-contexts):
// every context is a member with an Env of its own (store, session,
// diagnoses, history), fed by its own Feed, so a slow or unreachable
// context delays no other's. The lists are the fleet Env's (host.Env.Fleet):
// they merge the members' stores with a CONTEXT column. Every page opened
// from a row, and every action on one, gets the row's member Env (envOf):
// it reads that context's store and writes through that context's
// ActionDeps and its kube/actions guard. `:ctx NAME` shows one member as a
// single context's view (its Env becomes the App's, the others keep being
// fed), `:ctx all` the fleet again.

// FleetMember is one context of a fleet view: its session and its initial
// store (nil: empty; tests fill it).
type FleetMember struct {
	Session Session
	Store   *watch.Store
}

// AllContexts is what `:ctx` takes to show every context of a fleet view
// again.
const AllContexts = "all"

// startFleet makes the members the App's contexts and the fleet Env,
// which merges them, the current one.
func (a *App) startFleet(members []FleetMember) {
	ctx := a.newSessionCtx()
	a.fleet = make([]*host.Env, len(members))
	for i, m := range members {
		store := m.Store
		if store == nil {
			store = watch.NewStore()
		}
		a.fleet[i] = a.newEnv(m.Session, store, ctx)
	}
	fe := a.newEnv(Session{Context: strings.Join(a.fleetNames(), ","), Namespace: members[0].Session.Namespace}, watch.NewStore(), ctx)
	fe.Fleet = a.fleet
	a.fleetEnv = fe
	a.since = map[*host.Env]time.Time{}
	a.markStale()
	a.useEnv(fe)
}

// members are the contexts the App is fed by: a fleet's members, or the
// one session's Env.
func (a *App) members() []*host.Env {
	if a.fleet != nil {
		return a.fleet
	}
	return []*host.Env{a.e}
}

// envOf is the Env page p was built with (its context's), the App's for
// a page without one.
func (a *App) envOf(p host.Page) *host.Env {
	if ep, ok := p.(interface{ Env() *host.Env }); ok && ep.Env() != nil {
		return ep.Env()
	}
	return a.e
}

// useEnv makes e the Env of the views (the fleet's, or one member's after
// `:ctx NAME`): its role, sync state and namespace; the lists are built
// again from it.
func (a *App) useEnv(e *host.Env) {
	a.e = e
	a.ns = e.Sess.Namespace
	a.lists = map[ViewKind]host.Page{}
	a.role = ""
	if e.Sess.Role != nil {
		a.role = e.Sess.Role()
	}
	a.readSynced(e)
	a.fleetHeader()
}

// focusContext shows one member of a fleet (`:ctx NAME`), or all of them
// again (`:ctx all`); ok is false when name is neither.
func (a *App) focusContext(name string) (cmd tea.Cmd, ok bool) {
	var to *host.Env
	if name == AllContexts {
		to = a.fleetEnv
	}
	for _, m := range a.fleet {
		if m.Sess.Context == name {
			to = m
		}
	}
	if to == nil {
		return nil, false
	}
	var root ViewKind
	if len(a.stack) > 0 {
		root = a.stack[0].Kind()
	}
	ns := a.ns
	a.useEnv(to)
	a.ns = ns
	a.showList(root)
	if to == a.fleetEnv {
		a.setFlash(flashInfo, "contexts: all ("+to.Sess.Context+")")
	} else {
		a.setFlash(flashInfo, "context: "+name+" (:ctx "+AllContexts+" shows every context)")
	}
	return a.syncPoll(), true
}

// fleetHeader refreshes the header's per-context states (fleet view
// only): each member's name with ✓ (synced), ⟳ and how long (syncing), or
// ✗ and why (its session's Health). Called on ticks and when the shown
// Env changes, so the header's View reads a string.
func (a *App) fleetHeader() {
	if a.fleet == nil || a.e != a.fleetEnv {
		a.fleetLine = ""
		return
	}
	g := a.st.Glyphs
	parts := make([]string, 0, len(a.fleet))
	roles := make([]string, 0, len(a.fleet)) // "NAME: role"
	first, same := "", true
	if a.states == nil {
		a.states = map[*host.Env]string{}
	}
	for i, m := range a.fleet {
		a.states[m] = m.Sess.Context + " " + a.memberState(m, g.CtxOk, g.CtxRetry, g.CtxFailed)
		parts = append(parts, a.states[m])
		r := ""
		if m.Sess.Role != nil {
			r = m.Sess.Role()
		}
		if i == 0 {
			first = r
		}
		same = same && r == first
		roles = append(roles, m.Sess.Context+": "+r)
	}
	a.fleetLine = strings.Join(parts, "  ")
	// The role: one word when every member has it, else each member's
	// (one of them reconciles: --reconcile-contexts).
	if same {
		a.role = first
	} else {
		a.role = strings.Join(roles, ", ")
	}
}

// headerContext is the header's ctx field in a fleet view: every
// context's state on the fleet's pages, the context of a page opened from
// a row (and its server) on that page; "" outside a fleet view.
func (a *App) headerContext() (ctx, server string) {
	if a.fleetLine == "" {
		return "", ""
	}
	if e := a.envOf(a.top()); e != a.fleetEnv {
		return a.states[e], e.Sess.Server
	}
	return a.fleetLine, ""
}

// memberState is a member's connection in the header's words.
func (a *App) memberState(m *host.Env, ok, retry, failed string) string {
	var h host.Health
	if m.Sess.Health != nil {
		h = m.Sess.Health()
	}
	stale := ""
	if h.Since.IsZero() {
		h.Since = a.since[m]
	}
	if d := a.now().Sub(h.Since); !h.Since.IsZero() && d >= time.Second {
		stale = " " + d.Truncate(time.Second).String()
	}
	switch {
	case h.Err != "":
		return failed + " " + h.Err + stale
	case m.Sess.Synced != nil && !m.Sess.Synced():
		return retry + stale
	}
	return ok
}

// markStale reads each member's health (fleet views): a member whose
// connection is lost gets its rows marked stale (Env.Stale, the fleet
// lists' CONTEXT cells), and back when it is restored; since remembers
// when a member began syncing or was lost, for the header.
func (a *App) markStale() {
	if a.fleet == nil {
		return
	}
	now := a.now()
	for _, m := range a.fleet {
		var h host.Health
		if m.Sess.Health != nil {
			h = m.Sess.Health()
		}
		bad := h.Err != "" || (m.Sess.Synced != nil && !m.Sess.Synced())
		if _, ok := a.since[m]; bad && !ok {
			a.since[m] = now
		} else if !bad {
			delete(a.since, m)
		}
		if lost := h.Err != ""; lost != m.Stale {
			m.Stale = lost
			for _, p := range a.lists {
				if r, ok := p.(interface{ Reproject(*host.Env) }); ok {
					r.Reproject(m)
				}
			}
		}
	}
}

// fleetCapacity drops Ray's capacity from the diagnosis of every member
// but keep's (the Env of the page on top, whose detail page polls it).
func (a *App) fleetCapacity(keep *host.Env) {
	for _, m := range a.members() {
		if m != keep {
			m.Why.SetCapacity("", nil)
		}
	}
}

// newEnv builds the Env of one session: its store, diagnoses and history.
func (a *App) newEnv(sess Session, store *watch.Store, ctx context.Context) *host.Env {
	e := &host.Env{St: a.st, KM: a.km, Now: a.now, Kinds: &a.reg, Host: appHost{a}, Scheme: &a.scheme, Seq: &a.seq, Store: store, Sess: sess, Ctx: ctx,
		SSHUser: a.sshUser, SSHHost: a.sshHost}
	role := ""
	if sess.Role != nil {
		role = sess.Role()
	}
	var nodesKnown func() bool
	if nk, ok := sess.Feed.(interface{ NodesKnown() bool }); ok {
		nodesKnown = nk.NodesKnown
	}
	e.Why = diagnose.NewDiagnoses(store, a.now, role, nodesKnown)
	e.Why.SetReview(ctx, sess.Review)
	e.Why.SetGet(ctx, sess.Get)
	e.Hist = host.NewHistoryCache(sess.History)
	return e
}

// forwardsEnv is the Env `:pf` lists the forwards of: the App's, or in a
// fleet view the context of the page on top; an error when that is the
// fleet's lists.
func (a *App) forwardsEnv() (*host.Env, error) {
	e := a.envOf(a.top())
	if e.Fleet != nil {
		return nil, fmt.Errorf(":pf lists one context's forwards: open a row, or :ctx NAME, first")
	}
	return e, nil
}

// fleetNames are the fleet's contexts, in order.
func (a *App) fleetNames() []string {
	out := make([]string, len(a.fleet))
	for i, m := range a.fleet {
		out[i] = m.Sess.Context
	}
	return out
}

// namespaces are the namespaces of the Ray objects of the contexts shown
// (every member's in a fleet view).
func (a *App) namespaces() []string {
	if a.e.Fleet == nil {
		return a.e.Store.Namespaces()
	}
	var all []string
	for _, m := range a.fleet {
		all = append(all, m.Store.Namespaces()...)
	}
	slices.Sort(all)
	return slices.Compact(all)
}
