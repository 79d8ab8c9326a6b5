package widgets

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/raydar/raydar/tui/host"
	"github.com/raydar/raydar/tui/keys"
	"github.com/raydar/raydar/tui/styles"
)

// Dialog keys are the KeyMap's Dialog bindings (rebindable in keys.yaml;
// by default tab / shift+tab move the focus, ←/→ switch between the
// buttons, enter chooses, esc cancels); editing a text field (backspace,
// ctrl+u) is fixed, like the prompt's. Every dialog opens with the focus
// away from Confirm: enter on Cancel closes it with nothing done.

// cliHints rewrites the CLI flag hints of kube/actions' messages into the
// dialog's words.
func cliHints(msg string) string {
	return strings.NewReplacer(
		"(--max)", "(the Max field)",
		"(--min)", "(the Min field)",
		"(--lower-min)", "(lower the group's Min first: s)",
	).Replace(msg)
}

func cancelled() tea.Cmd {
	return func() tea.Msg { return host.ResultMsg{Text: "cancelled: nothing was changed"} }
}

// wrapLines wraps each line to width cells; "warning: " lines are drawn
// in the warning style.
func wrapLines(st *styles.Styles, lines []string, width int) []string {
	var out []string
	for _, l := range lines {
		s := ansi.Wrap(l, max(width, 1), "")
		if strings.HasPrefix(l, "warning: ") {
			s = st.FlashWarn.Render(s)
		}
		out = append(out, s)
	}
	return out
}

// Button focus for renderButtons.
const (
	noButton = iota
	cancelButton
	confirmButton
)

// renderButtons draws the Cancel and Confirm buttons; the focused one
// carries the cursor glyph and brackets (visible without colour).
func renderButtons(st *styles.Styles, focus int, enabled bool) string {
	btn := func(label string, focused bool) string {
		if focused {
			return st.Glyphs.Cursor + st.Selected.Render("["+label+"]")
		}
		return "  " + label + " "
	}
	confirm := btn("Confirm", focus == confirmButton)
	if !enabled {
		confirm = "  " + st.Faint.Render("Confirm (disabled)")
	}
	return btn("Cancel", focus == cancelButton) + "  " + confirm
}

// confirmBox is a confirmation: a title, the context written to, what
// will happen (a plan's lines), and Cancel / Confirm with Cancel focused.
// Without apply (the action is not possible) it shows err and only Cancel
// works. On a protected context (Guard) Confirm stays disabled until the
// object's name is typed; letters then go to that field.
type confirmBox struct {
	st        *styles.Styles
	km        *keys.KeyMap
	title     string
	guard     guardInput
	lines     []string
	err       string
	apply     func(confirmation string) tea.Cmd
	onConfirm bool
}

// NewConfirm is a confirmation of something outside the cluster (no
// context to name).
func NewConfirm(st *styles.Styles, km *keys.KeyMap, title string, lines []string, err string, apply func() tea.Cmd) *confirmBox {
	var a func(string) tea.Cmd
	if apply != nil {
		a = func(string) tea.Cmd { return apply() }
	}
	return NewWriteConfirm(st, km, Guard{}, title, lines, err, a)
}

// NewWriteConfirm is the confirmation of a write to g's context; apply
// gets what was typed to confirm it (the object's name on a protected
// context, for kube/actions.WithConfirmation).
func NewWriteConfirm(st *styles.Styles, km *keys.KeyMap, g Guard, title string, lines []string, err string, apply func(confirmation string) tea.Cmd) *confirmBox {
	return &confirmBox{st: st, km: km, title: title, guard: guardInput{Guard: g}, lines: lines, err: cliHints(err), apply: apply}
}

// canConfirm: the action is possible and, on a protected context, its
// object's name was typed.
func (d *confirmBox) canConfirm() bool { return d.apply != nil && d.guard.ok() }

// Update implements Dialog.
func (d *confirmBox) Update(msg tea.KeyPressMsg) (bool, tea.Cmd) {
	km := d.km
	switch {
	case key.Matches(msg, km.DialogCancel):
		return true, cancelled()
	case key.Matches(msg, km.DialogNext, km.DialogPrev):
		if d.canConfirm() {
			d.onConfirm = !d.onConfirm
		}
		return false, nil
	case key.Matches(msg, km.DialogChoose):
		if d.onConfirm && d.canConfirm() {
			return true, d.apply(d.guard.typed)
		}
		return true, cancelled()
	}
	if d.apply != nil && d.guard.handleKey(msg) {
		if !d.guard.ok() {
			d.onConfirm = false
		}
		return false, nil
	}
	// After the name field: h and l (DialogSwitch's letters) are letters of
	// the name there; the arrows it never takes.
	if key.Matches(msg, km.DialogSwitch) && d.canConfirm() {
		d.onConfirm = !d.onConfirm
	}
	return false, nil
}

// View implements Dialog.
func (d *confirmBox) View(width int) string {
	st := d.st
	out := []string{st.Section.Render(ansi.Wrap(d.title, max(width, 1), ""))}
	out = append(out, d.guard.header(st)...)
	out = append(out, "")
	out = append(out, wrapLines(st, d.lines, width)...)
	if d.err != "" {
		out = append(out, st.FlashErr.Render(ansi.Wrap("error: "+d.err, max(width, 1), "")))
	}
	if d.apply != nil {
		out = append(out, d.guard.input(st, width)...)
	}
	focus := cancelButton
	if d.onConfirm {
		focus = confirmButton
	}
	km := d.km
	hint := fmt.Sprintf("%s/%s switch · %s choose · %s cancel", hk(km.DialogNext), hk(km.DialogSwitch), hk(km.DialogChoose), hk(km.DialogCancel))
	out = append(out, "", renderButtons(st, focus, d.canConfirm()),
		st.Faint.Render(ansi.Wrap(hint, max(width, 1), "")))
	return strings.Join(out, "\n")
}

// hk is a binding's key as the hints name it.
func hk(b key.Binding) string { return b.Help().Key }

// Caret is the text cursor of prompts: "_" in plain mode, "█" otherwise.
func Caret(plain bool) string {
	if plain {
		return "_"
	}
	return "█"
}
