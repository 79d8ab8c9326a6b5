package widgets

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/raydar/raydar/kube/portforward"
	"github.com/raydar/raydar/tui/host"
	"github.com/raydar/raydar/tui/keys"
	"github.com/raydar/raydar/tui/styles"
)

// forwardDialog picks the ports of a new forward: the presets (dashboard
// preselected, serve, client) and custom LOCAL:REMOTE ports, and the local
// address to listen on (127.0.0.1; 0.0.0.0 for every interface, as the
// CLI's --address), checked as it is typed (portforward.CheckAddress).
// Keys (the KeyMap's Dialog bindings; these are the defaults): ↑/↓ or
// tab move, space toggles a preset, typing edits the custom and address
// fields, enter starts, esc cancels. Starting changes nothing
// in the cluster, so enter starts from any row.
type forwardDialog struct {
	st     *styles.Styles
	km     *keys.KeyMap
	title  string
	spec   portforward.Spec
	fw     host.Forwarder
	on     [3]bool
	custom string
	addr   string
	focus  int // 0-2 the presets, 3 the custom field, 4 the address
	err    string
	// addrErr is why addr cannot be listened on ("": it can).
	addrErr string
}

// Rows of the dialog after the presets.
const (
	fwRowCustom = len(forwardPresets)
	fwRowAddr   = fwRowCustom + 1
	fwRows      = fwRowAddr + 1
)

var forwardPresets = [3]portforward.Port{portforward.Dashboard, portforward.Serve, portforward.Client}

// NewForwardDialog is the dialog that starts a port-forward to spec in fw,
// the dashboard port ticked and 127.0.0.1 the local address.
func NewForwardDialog(st *styles.Styles, km *keys.KeyMap, title string, spec portforward.Spec, fw host.Forwarder) *forwardDialog {
	return &forwardDialog{st: st, km: km, title: title, spec: spec, fw: fw, on: [3]bool{true, false, false}, addr: "127.0.0.1"}
}

// ports is what the dialog asks for, or why it cannot be.
func (d *forwardDialog) ports() ([]portforward.Port, error) {
	var out []portforward.Port
	for i, p := range forwardPresets {
		if d.on[i] {
			out = append(out, p)
		}
	}
	for _, f := range strings.FieldsFunc(d.custom, func(r rune) bool { return r == ' ' || r == ',' }) {
		p, err := portforward.ParsePort(f)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, portforward.CheckPorts(out)
}

// Update implements Dialog.
func (d *forwardDialog) Update(msg tea.KeyPressMsg) (bool, tea.Cmd) {
	km := d.km
	switch {
	case key.Matches(msg, km.DialogCancel):
		return true, func() tea.Msg { return host.ResultMsg{Text: "cancelled: no port-forward started"} }
	case key.Matches(msg, km.DialogChoose):
		if d.addrErr != "" {
			d.err = d.addrErr
			return false, nil
		}
		ports, err := d.ports()
		if err != nil {
			d.err = err.Error()
			return false, nil
		}
		spec := d.spec
		spec.Ports, spec.Address = ports, d.addr
		return true, startForward(d.fw, spec)
	case key.Matches(msg, km.DialogUp, km.DialogPrev):
		d.focus = (d.focus + fwRows - 1) % fwRows
	case key.Matches(msg, km.DialogDown, km.DialogNext):
		d.focus = (d.focus + 1) % fwRows
	case msg.String() == "backspace":
		switch {
		case d.focus == fwRowCustom && d.custom != "":
			d.custom = d.custom[:len(d.custom)-1]
		case d.focus == fwRowAddr && d.addr != "":
			d.addr = d.addr[:len(d.addr)-1]
		}
	case key.Matches(msg, km.DialogToggle) && d.focus < fwRowCustom:
		d.on[d.focus] = !d.on[d.focus]
	default:
		// A space typed into the custom field separates ports; an address
		// has none.
		switch {
		case d.focus == fwRowCustom && len(msg.Text) > 0 && strings.Trim(msg.Text, "0123456789:, ") == "":
			d.custom += msg.Text
		case d.focus == fwRowAddr && len(msg.Text) > 0 && strings.TrimFunc(msg.Text, isAddrRune) == "":
			d.addr += msg.Text
		}
	}
	d.err, d.addrErr = "", ""
	if err := portforward.CheckAddress(d.addr); err != nil {
		d.addrErr = err.Error()
	}
	return false, nil
}

// isAddrRune is a rune an IP address or localhost is typed with.
func isAddrRune(r rune) bool {
	return r == '.' || r == ':' || (r >= '0' && r <= '9') || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z')
}

// View implements Dialog.
func (d *forwardDialog) View(width int) string {
	st := d.st
	w := max(width, 1)
	out := []string{st.Section.Render(ansi.Wrap(d.title, w, "")), ""}
	cursor := func(i int) string {
		if d.focus == i {
			return st.Glyphs.Cursor + " "
		}
		return "  "
	}
	for i, p := range forwardPresets {
		box := "[ ]"
		if d.on[i] {
			box = "[x]"
		}
		out = append(out, fmt.Sprintf("%s%s %-9s %s -> %d", cursor(i), box, p.Name, JoinAddr(d.addr, p.Local), p.Remote))
	}
	field := func(i int, s string) string {
		if d.focus == i {
			return s + "_"
		}
		return s
	}
	out = append(out, fmt.Sprintf("%scustom    %s", cursor(fwRowCustom), field(fwRowCustom, d.custom)),
		st.Faint.Render("          LOCAL:REMOTE, several separated by spaces; :REMOTE picks a free local port"),
		fmt.Sprintf("%saddress   %s", cursor(fwRowAddr), field(fwRowAddr, d.addr)),
		st.Faint.Render("          127.0.0.1: this machine only; 0.0.0.0: every interface"))
	switch {
	case d.addrErr != "" && d.err == "":
		out = append(out, st.FlashErr.Render(ansi.Wrap("error: "+d.addrErr, w, "")))
	case d.err != "":
		out = append(out, st.FlashErr.Render(ansi.Wrap("error: "+d.err, w, "")))
	}
	km := d.km
	hint := fmt.Sprintf("%s/%s/%s move · %s toggle · %s start · %s cancel", hk(km.DialogUp), hk(km.DialogDown), hk(km.DialogNext),
		hk(km.DialogToggle), hk(km.DialogChoose), hk(km.DialogCancel))
	out = append(out, "", st.Faint.Render(ansi.Wrap(hint, w, "")))
	return strings.Join(out, "\n")
}

// startForward starts spec in a command; the outcome is flashed (the
// forward's later states come through forwardsMsg).
func startForward(fw host.Forwarder, spec portforward.Spec) tea.Cmd {
	return func() tea.Msg {
		f, err := fw.Start(spec)
		if err != nil {
			return host.ResultMsg{Err: err}
		}
		st := f.State()
		var urls []string
		for _, p := range st.Ports {
			urls = append(urls, st.LocalURL(p))
		}
		return host.ResultMsg{Text: fmt.Sprintf("forwarding %s at %s (:pf lists forwards)", st.Target, strings.Join(urls, " "))}
	}
}

// StopForward stops forward id in a command.
func StopForward(fw host.Forwarder, id int, what string) tea.Cmd {
	return func() tea.Msg {
		if err := fw.Stop(id); err != nil {
			return host.ResultMsg{Err: err}
		}
		return host.ResultMsg{Text: "stopped the port-forward to " + what}
	}
}

// JoinAddr is host:port, host in brackets when it is an IPv6 address.
func JoinAddr(host string, port int) string {
	if strings.Contains(host, ":") {
		return fmt.Sprintf("[%s]:%d", host, port)
	}
	return fmt.Sprintf("%s:%d", host, port)
}
