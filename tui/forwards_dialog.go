package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/raydar/raydar/kube/portforward"
	"github.com/raydar/raydar/tui/styles"
)

// forwardDialog picks the ports of a new forward: the presets (dashboard
// preselected, serve, client) and custom LOCAL:REMOTE ports. Keys: ↑/↓ or
// tab move, space toggles a preset, typing edits the custom field, enter
// starts, esc cancels. Starting changes nothing in the cluster, so enter
// starts from any row.
type forwardDialog struct {
	st     *styles.Styles
	title  string
	spec   portforward.Spec
	fw     Forwarder
	on     [3]bool
	custom string
	focus  int // 0-2 the presets, 3 the custom field
	err    string
}

var forwardPresets = [3]portforward.Port{portforward.Dashboard, portforward.Serve, portforward.Client}

func newForwardDialog(st *styles.Styles, title string, spec portforward.Spec, fw Forwarder) *forwardDialog {
	return &forwardDialog{st: st, title: title, spec: spec, fw: fw, on: [3]bool{true, false, false}}
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
	switch k := msg.String(); k {
	case "esc":
		return true, func() tea.Msg { return ResultMsg{Text: "cancelled: no port-forward started"} }
	case "enter":
		ports, err := d.ports()
		if err != nil {
			d.err = err.Error()
			return false, nil
		}
		spec := d.spec
		spec.Ports = ports
		return true, startForward(d.fw, spec)
	case "up", "shift+tab":
		d.focus = (d.focus + 3) % 4
	case "down", "tab":
		d.focus = (d.focus + 1) % 4
	case "backspace":
		if d.focus == 3 && d.custom != "" {
			d.custom = d.custom[:len(d.custom)-1]
		}
	case "space":
		if d.focus < 3 {
			d.on[d.focus] = !d.on[d.focus]
		} else {
			d.custom += " "
		}
	default:
		if d.focus == 3 && len(msg.Text) > 0 && strings.Trim(msg.Text, "0123456789:, ") == "" {
			d.custom += msg.Text
		}
	}
	d.err = ""
	return false, nil
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
		out = append(out, fmt.Sprintf("%s%s %-9s 127.0.0.1:%d -> %d", cursor(i), box, p.Name, p.Local, p.Remote))
	}
	field := d.custom
	if d.focus == 3 {
		field += "_"
	}
	out = append(out, fmt.Sprintf("%scustom    %s", cursor(3), field),
		st.Faint.Render("          LOCAL:REMOTE, several separated by spaces; :REMOTE picks a free local port"))
	if d.err != "" {
		out = append(out, st.FlashErr.Render(ansi.Wrap("error: "+d.err, w, "")))
	}
	out = append(out, "", st.Faint.Render(ansi.Wrap("↑/↓/tab move · space toggle · enter start · esc cancel", w, "")))
	return strings.Join(out, "\n")
}
