package forwards

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/raydar/raydar/kube/portforward"
	"github.com/raydar/raydar/rayapi/status"
	"github.com/raydar/raydar/tui/format"
	"github.com/raydar/raydar/tui/host"
	"github.com/raydar/raydar/tui/styles"
	"github.com/raydar/raydar/tui/widgets"
)

// Page lists the session's port-forwards (:forwards, :pf): state,
// local address, target and pod, since when, last error, and for the
// selected one the `ssh -L` line for a laptop. ctrl+k stops the selected
// forward after a confirmation.
type Page struct {
	host.Base
	cursor int
}

// NewPage is the port-forwards page, in e.
func NewPage(e *host.Env) *Page {
	return &Page{Base: host.Base{E: e, VK: host.ForwardsView}}
}

// Title is "Port-forwards".
func (p *Page) Title() string { return "Port-forwards" }

// Crumb is "forwards".
func (p *Page) Crumb() string { return "forwards" }

// Target is the forwards view, with nothing selected.
func (p *Page) Target() host.Target {
	return host.Target{View: host.ForwardsView}
}

// Keys is ctrl+k, which stops the selected forward.
func (p *Page) Keys() []key.Binding { return []key.Binding{p.E.KM.StopForward} }

func (p *Page) selected() (portforward.State, bool) {
	fs := p.E.Forwards
	if len(fs) == 0 {
		return portforward.State{}, false
	}
	p.cursor = format.ClampInt(p.cursor, 0, len(fs)-1)
	return fs[p.cursor], true
}

// Update moves the cursor, or asks to confirm stopping the selected
// forward.
func (p *Page) Update(msg tea.KeyPressMsg) (bool, tea.Cmd) {
	km := p.E.KM
	switch {
	case key.Matches(msg, km.Up):
		p.cursor = max(p.cursor-1, 0)
	case key.Matches(msg, km.Down):
		p.cursor = min(p.cursor+1, max(len(p.E.Forwards)-1, 0))
	case key.Matches(msg, km.StopForward):
		s, ok := p.selected()
		fw := p.E.Sess.Forwards
		if !ok || fw == nil {
			return true, func() tea.Msg { return host.WarnMsg("no port-forward to stop") }
		}
		what := fmt.Sprintf("%s (%s)", s.Target, localAddrs(s))
		d := widgets.NewConfirm(p.E.St, p.E.KM, "Stop the port-forward to "+s.Target+"?",
			[]string{"local " + localAddrs(s) + " stops listening; nothing in the cluster changes"}, "",
			func() tea.Cmd { return widgets.StopForward(fw, s.ID, what) })
		p.E.Host.ShowDialog(d)
		return true, nil
	default:
		return false, nil
	}
	return true, nil
}

func localAddrs(s portforward.State) string {
	var out []string
	for _, p := range s.Ports {
		out = append(out, fmt.Sprintf("%s->%d", widgets.JoinAddr(s.Address, p.Local), p.Remote))
	}
	return strings.Join(out, " ")
}

// stateCell is a forward's phase with its glyph and class.
func (p *Page) stateCell(s portforward.State) string {
	st := p.E.St
	switch s.Phase {
	case portforward.Up:
		return st.Class(styles.OK).Render(st.Glyphs.FwdUp + " Up")
	case portforward.Failed:
		return st.Class(styles.Bad).Render(st.Glyphs.FwdFailed + " Failed")
	case portforward.Stopped:
		return "Stopped"
	}
	return st.Class(styles.Warn).Render(st.Glyphs.FwdRetry + " " + string(s.Phase))
}

// View lists the session's forwards and, for the selected one, its `ssh -L`
// line.
func (p *Page) View() string {
	st := p.E.St
	fs := p.E.Forwards
	if p.E.Sess.Forwards == nil {
		return st.Faint.Render("port-forwarding is not available in this session")
	}
	if len(fs) == 0 {
		return st.Faint.Render("no port-forwards: shift-f on a RayCluster, in a cluster's page or on a pod starts one")
	}
	now := p.E.Now()
	head := fmt.Sprintf("  %-3s %-16s %-32s %-36s %-28s %-6s %s", "ID", "STATE", "LOCAL", "TARGET", "POD", "SINCE", "LAST ERROR")
	lines := []string{st.TableHeader.Render(head)}
	sel, _ := p.selected()
	for i, s := range fs {
		cur := "  "
		if i == p.cursor {
			cur = st.Glyphs.Cursor + " "
		}
		state := p.stateCell(s)
		pad := max(16-ansi.StringWidth(state), 0)
		row := fmt.Sprintf("%s%-3d %s%s %-32s %-36s %-28s %-6s %s", cur, s.ID, state, strings.Repeat(" ", pad),
			localAddrs(s), s.Target, format.OrNone(s.Pod), status.Age(now, s.Since), format.OneLine(s.LastError))
		lines = append(lines, row)
	}
	// The table's rows are cut at the width; the selected forward's block
	// beneath wraps.
	rows := widgets.RenderRows(lines, 0, p.W, p.H, false)
	lines = []string{""}
	if sel.ID != 0 {
		lines = append(lines, st.Section.Render(fmt.Sprintf("forward %d: %s", sel.ID, sel.Target)))
		for _, port := range sel.Ports {
			lines = append(lines, fmt.Sprintf("  %-9s %s", format.OrNone(port.Name), sel.LocalURL(port)))
		}
		if sel.LastError != "" {
			lines = append(lines, fmt.Sprintf("  last error (%s ago): %s", status.Age(now, sel.LastErrorAt), sel.LastError))
		}
		lines = append(lines, fmt.Sprintf("  from a laptop (raydar runs here as %s; use how you reach this machine):",
			format.OrNone(portforward.Where(p.E.SSHUser, p.E.SSHHost))),
			"  "+portforward.SSHLine(sel.Address, sel.Ports, p.E.SSHUser, p.E.SSHHost))
	}
	rows = append(rows, widgets.RenderRows(lines, 0, p.W, max(p.H-len(rows), 0), true)...)
	return strings.Join(rows, "\n")
}
