package widgets

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/raydar/raydar/kube/actions"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/tui/keys"
	"github.com/raydar/raydar/tui/styles"
)

// The scale dialog (action s in the cluster detail): its fields are
// validated as they are typed (scaleDialog.validate, with kube/actions'
// ParseCount and PlanScale), Confirm is reachable only for a valid plan
// that changes something, and the plan's lines are the preview.

// Fields of the scale dialog.
const (
	fieldReplicas = iota
	fieldMin
	fieldMax
	// fieldName takes the cluster's name on a protected context (Guard);
	// skipped elsewhere.
	fieldName
	focusCancel
	focusConfirm
	numFocus
)

// maxFieldLen bounds what can be typed into a field.
const maxFieldLen = 12

// textField is one input of the scale dialog. A pristine field shows its
// initial value; the first character typed replaces it.
type textField struct {
	label    string
	text     string
	initial  string
	pristine bool
}

func (f *textField) handleKey(msg tea.KeyPressMsg) bool {
	switch msg.String() {
	case "backspace":
		if f.pristine {
			f.text = ""
		} else if r := []rune(f.text); len(r) > 0 {
			f.text = string(r[:len(r)-1])
		}
	case "ctrl+u":
		f.text = ""
	default:
		if msg.Text == "" || strings.ContainsAny(msg.Text, "\n\t") {
			return false
		}
		if f.pristine {
			f.text = ""
		}
		if len(f.text)+len(msg.Text) > maxFieldLen {
			return true
		}
		f.text += msg.Text
	}
	f.pristine = false
	return true
}

// scaleDialog is the scale form: replicas (and optionally min and max),
// validated as typed, the plan's preview, Cancel / Confirm.
type scaleDialog struct {
	st     *styles.Styles
	km     *keys.KeyMap
	rc     *rayv1.RayCluster
	group  string
	cur    actions.GroupSize
	fields [3]textField
	focus  int
	plan   *actions.ScalePlan
	err    error
	guard  guardInput
	apply  func(req actions.ScaleRequest, confirmation string) tea.Cmd
	req    actions.ScaleRequest
}

// NewScaleDialog is the scale form for group of rc, writing to gd's
// context; apply gets the request and what was typed to confirm it (the
// cluster's name on a protected context).
func NewScaleDialog(st *styles.Styles, km *keys.KeyMap, gd Guard, rc *rayv1.RayCluster, group string, apply func(req actions.ScaleRequest, confirmation string) tea.Cmd) *scaleDialog {
	g, _ := rc.Spec.WorkerGroup(group)
	d := &scaleDialog{st: st, km: km, rc: rc, group: group, apply: apply, guard: guardInput{Guard: gd}}
	d.cur = actions.GroupSize{Min: g.Min(), Max: g.Max()}
	if g.Replicas != nil {
		d.cur.Replicas = *g.Replicas
	}
	maxText := fmt.Sprint(d.cur.Max)
	if d.cur.Max == int32(^uint32(0)>>1) {
		maxText = "" // unbounded
	}
	d.fields = [3]textField{
		{label: "Replicas", text: fmt.Sprint(d.cur.Replicas)},
		{label: "Min", text: fmt.Sprint(d.cur.Min)},
		{label: "Max", text: maxText},
	}
	for i := range d.fields {
		d.fields[i].initial, d.fields[i].pristine = d.fields[i].text, true
	}
	d.validate()
	return d
}

// validate parses the fields and plans the request.
func (d *scaleDialog) validate() {
	d.plan, d.err = nil, nil
	n, err := actions.ParseCount("replicas", d.fields[fieldReplicas].text)
	if err != nil {
		d.err = err
		return
	}
	req := actions.ScaleRequest{Replicas: n}
	for _, b := range []struct {
		i    int
		what string
	}{{fieldMin, "minReplicas"}, {fieldMax, "maxReplicas"}} {
		i, what := b.i, b.what
		f := d.fields[i]
		if f.text == f.initial {
			continue
		}
		v, err := actions.ParseCount(what, f.text)
		if err != nil {
			d.err = err
			return
		}
		if i == fieldMin {
			req.Min = &v
		} else {
			req.Max = &v
		}
	}
	d.plan, d.err = actions.PlanScale(d.rc, d.group, req)
	d.req = req
}

// canConfirm reports whether the plan is valid and changes something and,
// on a protected context, the cluster's name was typed.
func (d *scaleDialog) canConfirm() bool {
	return d.err == nil && d.plan != nil && !d.plan.Unchanged && d.guard.ok()
}

func (d *scaleDialog) move(step int) {
	for {
		d.focus = (d.focus + step + numFocus) % numFocus
		if (d.focus != focusConfirm || d.canConfirm()) && (d.focus != fieldName || d.guard.Protected) {
			return
		}
	}
}

// Update implements Dialog.
func (d *scaleDialog) Update(msg tea.KeyPressMsg) (bool, tea.Cmd) {
	km := d.km
	switch {
	case key.Matches(msg, km.DialogCancel):
		return true, cancelled()
	case key.Matches(msg, km.DialogNext):
		d.move(1)
		return false, nil
	case key.Matches(msg, km.DialogPrev):
		d.move(-1)
		return false, nil
	}
	if d.focus == fieldName {
		switch {
		case key.Matches(msg, km.DialogChoose):
			d.focus = focusCancel
		case key.Matches(msg, km.DialogUp):
			d.focus = fieldMax
		case key.Matches(msg, km.DialogDown):
		default:
			d.guard.handleKey(msg)
		}
		return false, nil
	}
	if d.focus < focusCancel {
		last := fieldMax
		if d.guard.Protected {
			last = fieldName
		}
		switch {
		case key.Matches(msg, km.DialogChoose):
			d.focus = focusCancel
		case key.Matches(msg, km.DialogUp):
			d.focus = max(d.focus-1, fieldReplicas)
		case key.Matches(msg, km.DialogDown):
			d.focus = min(d.focus+1, last)
		default:
			if d.fields[d.focus].handleKey(msg) {
				d.validate()
			}
		}
		return false, nil
	}
	switch {
	case key.Matches(msg, km.DialogSwitch):
		if d.focus == focusConfirm {
			d.focus = focusCancel
		} else if d.canConfirm() {
			d.focus = focusConfirm
		}
	case key.Matches(msg, km.DialogUp):
		d.focus = fieldMax
		if d.guard.Protected {
			d.focus = fieldName
		}
	case key.Matches(msg, km.DialogChoose):
		if d.focus == focusConfirm && d.canConfirm() {
			return true, d.apply(d.req, d.guard.typed)
		}
		return true, cancelled()
	}
	return false, nil
}

// View implements Dialog.
func (d *scaleDialog) View(width int) string {
	st, w := d.st, max(width, 1)
	title := fmt.Sprintf("Scale worker group %s of RayCluster %s/%s", d.group, d.rc.Namespace, d.rc.Name)
	out := []string{st.Section.Render(ansi.Wrap(title, w, ""))}
	out = append(out, d.guard.header(st)...)
	out = append(out, "")
	for i, f := range d.fields {
		cur, text := "  ", f.text
		if i == d.focus {
			cur = st.Glyphs.Cursor + " "
			text += st.Prompt.Render(Caret(st.Plain))
		} else if text == "" && i == fieldMax {
			text = st.Faint.Render("unbounded")
		}
		out = append(out, fmt.Sprintf("%s%-9s %s", cur, f.label+":", text))
	}
	out = append(out, "")
	if d.plan != nil {
		out = append(out, wrapLines(st, d.plan.Lines()[1:], w)...)
	} else {
		out = append(out, "current: "+d.cur.String())
	}
	if d.err != nil {
		out = append(out, st.FlashErr.Render(ansi.Wrap("error: "+cliHints(d.err.Error()), w, "")))
	}
	if in := d.guard.input(st, w); len(in) > 0 {
		if d.focus == fieldName {
			in[1] = st.Glyphs.Cursor + " " + in[1]
		} else {
			in[1] = "  " + strings.TrimSuffix(in[1], st.Prompt.Render(Caret(st.Plain)))
		}
		out = append(out, in...)
	}
	focus := noButton
	switch d.focus {
	case focusCancel:
		focus = cancelButton
	case focusConfirm:
		focus = confirmButton
	}
	km := d.km
	hint := fmt.Sprintf("%s next · %s to buttons · %s switch · %s cancel", hk(km.DialogNext), hk(km.DialogChoose), hk(km.DialogSwitch), hk(km.DialogCancel))
	out = append(out, "", renderButtons(st, focus, d.canConfirm()),
		st.Faint.Render(ansi.Wrap(hint, w, "")))
	return strings.Join(out, "\n")
}
