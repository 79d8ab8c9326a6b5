package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/raydar/raydar/kube/portforward"
	"github.com/raydar/raydar/tui/styles"
)

// Port-forwards in the TUI (issue 14): shift-f on a RayCluster row, in a
// cluster's detail or on a pod row opens a dialog (forwards_dialog.go) that
// starts a forward in the session's Forwarder; `:forwards` (`:pf`) lists
// them (forwards_page.go) and the header counts them. The Forwarder is
// read only through messages: a command waits for its change notification
// and hands Update a snapshot; Start and Stop run in commands.
//
// Port-forwarding changes nothing in the cluster, so it is not a Dangerous
// action and --readonly keeps it; the API server still needs create on
// pods/portforward, which the view ClusterRole does not grant (edit does):
// a refusal says so.

// forwardsMsg carries a snapshot of the session gen's forwards.
type forwardsMsg struct {
	gen    int
	states []portforward.State
}

// watchForwards waits for the next change of the session's forwards.
func (a *App) watchForwards() tea.Cmd {
	fw, ctx, gen := a.e.Sess.Forwards, a.e.Ctx, a.gen
	if fw == nil {
		return nil
	}
	return func() tea.Msg {
		select {
		case <-fw.Changed():
		case <-ctx.Done():
			return nil
		}
		return forwardsMsg{gen: gen, states: fw.Snapshot()}
	}
}

// onForwards takes a snapshot in and waits for the next.
func (a *App) onForwards(msg forwardsMsg) tea.Cmd {
	if msg.gen != a.gen {
		return nil
	}
	a.e.Forwards = msg.states
	return a.watchForwards()
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
