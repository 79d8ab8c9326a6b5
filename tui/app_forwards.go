package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/raydar/raydar/kube/portforward"
	"github.com/raydar/raydar/tui/host"
	"github.com/raydar/raydar/tui/styles"
)

// Port-forwards in the TUI (issue 14): shift-f on a RayCluster row, in a
// cluster's detail or on a pod row opens a dialog (tui/widgets
// forwards_dialog.go) that starts a forward in the session's Forwarder;
// `:forwards` (`:pf`) lists them (tui/pages/forwards) and the header counts
// them. The Forwarder is
// read only through messages: a command waits for its change notification
// and hands Update a snapshot; Start and Stop run in commands.
//
// Port-forwarding changes nothing in the cluster, so it is not a Dangerous
// action and --readonly keeps it; the API server still needs create on
// pods/portforward, which the view ClusterRole does not grant (edit does):
// a refusal says so.

// forwardsMsg carries a snapshot of member env's forwards in session gen.
type forwardsMsg struct {
	gen    int
	env    *host.Env
	states []portforward.State
}

// watchForwards waits for the next change of each member's forwards.
func (a *App) watchForwards() tea.Cmd {
	var cmds []tea.Cmd
	for _, m := range a.members() {
		cmds = append(cmds, a.watchForwardsOf(m))
	}
	return tea.Batch(cmds...)
}

// watchForwardsOf waits for the next change of e's forwards.
func (a *App) watchForwardsOf(e *host.Env) tea.Cmd {
	fw, ctx, gen := e.Sess.Forwards, e.Ctx, a.gen
	if fw == nil {
		return nil
	}
	return func() tea.Msg {
		select {
		case <-fw.Changed():
		case <-ctx.Done():
			return nil
		}
		return forwardsMsg{gen: gen, env: e, states: fw.Snapshot()}
	}
}

// onForwards takes a snapshot in and waits for the next.
func (a *App) onForwards(msg forwardsMsg) tea.Cmd {
	if msg.gen != a.gen {
		return nil
	}
	msg.env.Forwards = msg.states
	return a.watchForwardsOf(msg.env)
}

// forwards are the forwards of every context, for the header's count.
func (a *App) forwards() []portforward.State {
	if a.fleet == nil {
		return a.e.Forwards
	}
	var all []portforward.State
	for _, m := range a.fleet {
		all = append(all, m.Forwards...)
	}
	return all
}

// forwardsSummary is the header's count: "2↑ 1⟳" ("" with no forwards).
func forwardsSummary(g styles.Glyphs, states []portforward.State) string {
	up, retry, failed := 0, 0, 0
	for _, s := range states {
		switch s.Phase {
		case portforward.Up:
			up++
		case portforward.Failed:
			failed++
		case portforward.Connecting, portforward.Reconnecting:
			retry++
		}
	}
	var parts []string
	if up > 0 {
		parts = append(parts, fmt.Sprintf("%d%s", up, g.FwdUp))
	}
	if retry > 0 {
		parts = append(parts, fmt.Sprintf("%d%s", retry, g.FwdRetry))
	}
	if failed > 0 {
		parts = append(parts, fmt.Sprintf("%d%s", failed, g.FwdFailed))
	}
	return strings.Join(parts, " ")
}
