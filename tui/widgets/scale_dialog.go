package widgets

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/raydar/raydar/kube/actions"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/tui/styles"
)

// The scale dialog (action s in the cluster detail): its fields are
// validated as they are typed (ScaleDialog.validate, with kube/actions'
// ParseCount and PlanScale), Confirm is reachable only for a valid plan
// that changes something, and the plan's lines are the preview.

// Fields of the scale dialog.
const (
	FieldReplicas = iota
	fieldMin
	fieldMax
	// fieldName takes the cluster's name on a protected context (Guard);
	// skipped elsewhere.
	fieldName
	focusCancel
	FocusConfirm
	numFocus
)

// maxFieldLen bounds what can be typed into a field.
const maxFieldLen = 12

// textField is one input of the scale dialog. A pristine field shows its
// initial value; the first character typed replaces it.
type textField struct {
	label    string
	Text     string
	initial  string
	pristine bool
}

func (f *textField) HandleKey(msg tea.KeyPressMsg) bool {
	switch msg.String() {
	case "backspace":
		if f.pristine {
			f.Text = ""
		} else if r := []rune(f.Text); len(r) > 0 {
			f.Text = string(r[:len(r)-1])
		}
	case "ctrl+u":
		f.Text = ""
	default:
		if msg.Text == "" || strings.ContainsAny(msg.Text, "\n\t") {
			return false
		}
		if f.pristine {
			f.Text = ""
		}
		if len(f.Text)+len(msg.Text) > maxFieldLen {
			return true
		}
		f.Text += msg.Text
	}
	f.pristine = false
	return true
}

// ScaleDialog is the scale form: replicas (and optionally min and max),
// validated as typed, the plan's preview, Cancel / Confirm.
type ScaleDialog struct {
	st     *styles.Styles
	rc     *rayv1.RayCluster
	group  string
	cur    actions.GroupSize
	Fields [3]textField
	Focus  int
	Plan   *actions.ScalePlan
	Err    error
	guard  guardInput
	apply  func(req actions.ScaleRequest, confirmation string) tea.Cmd
	Req    actions.ScaleRequest
}

// NewScaleDialog is the scale form for group of rc, writing to gd's
// context; apply gets the request and what was typed to confirm it (the
// cluster's name on a protected context).
func NewScaleDialog(st *styles.Styles, gd Guard, rc *rayv1.RayCluster, group string, apply func(req actions.ScaleRequest, confirmation string) tea.Cmd) *ScaleDialog {
	g, _ := rc.Spec.WorkerGroup(group)
	d := &ScaleDialog{st: st, rc: rc, group: group, apply: apply, guard: guardInput{Guard: gd}}
	d.cur = actions.GroupSize{Min: g.Min(), Max: g.Max()}
	if g.Replicas != nil {
		d.cur.Replicas = *g.Replicas
	}
	maxText := fmt.Sprint(d.cur.Max)
	if d.cur.Max == int32(^uint32(0)>>1) {
		maxText = "" // unbounded
	}
	d.Fields = [3]textField{
		{label: "Replicas", Text: fmt.Sprint(d.cur.Replicas)},
		{label: "Min", Text: fmt.Sprint(d.cur.Min)},
		{label: "Max", Text: maxText},
	}
	for i := range d.Fields {
		d.Fields[i].initial, d.Fields[i].pristine = d.Fields[i].Text, true
	}
	d.validate()
	return d
}

// validate parses the fields and plans the request.
func (d *ScaleDialog) validate() {
	d.Plan, d.Err = nil, nil
	n, err := actions.ParseCount("replicas", d.Fields[FieldReplicas].Text)
	if err != nil {
		d.Err = err
		return
	}
	req := actions.ScaleRequest{Replicas: n}
	for _, b := range []struct {
		i    int
		what string
	}{{fieldMin, "minReplicas"}, {fieldMax, "maxReplicas"}} {
		i, what := b.i, b.what
		f := d.Fields[i]
		if f.Text == f.initial {
			continue
		}
		v, err := actions.ParseCount(what, f.Text)
		if err != nil {
			d.Err = err
			return
		}
		if i == fieldMin {
			req.Min = &v
		} else {
			req.Max = &v
		}
	}
	d.Plan, d.Err = actions.PlanScale(d.rc, d.group, req)
	d.Req = req
}

// CanConfirm reports whether the plan is valid and changes something and,
// on a protected context, the cluster's name was typed.
func (d *ScaleDialog) CanConfirm() bool {
	return d.Err == nil && d.Plan != nil && !d.Plan.Unchanged && d.guard.ok()
}

func (d *ScaleDialog) move(step int) {
	for {
		d.Focus = (d.Focus + step + numFocus) % numFocus
		if (d.Focus != FocusConfirm || d.CanConfirm()) && (d.Focus != fieldName || d.guard.Protected) {
			return
		}
	}
}

// Update implements Dialog.
func (d *ScaleDialog) Update(msg tea.KeyPressMsg) (bool, tea.Cmd) {
	switch msg.String() {
	case "esc":
		return true, cancelled()
	case "tab":
		d.move(1)
		return false, nil
	case "shift+tab":
		d.move(-1)
		return false, nil
	}
	if d.Focus == fieldName {
		switch msg.String() {
		case "enter":
			d.Focus = focusCancel
		case "up":
			d.Focus = fieldMax
		case "down":
		default:
			d.guard.handleKey(msg)
		}
		return false, nil
	}
	if d.Focus < focusCancel {
		last := fieldMax
		if d.guard.Protected {
			last = fieldName
		}
		switch msg.String() {
		case "enter":
			d.Focus = focusCancel
		case "up":
			d.Focus = max(d.Focus-1, FieldReplicas)
		case "down":
			d.Focus = min(d.Focus+1, last)
		default:
			if d.Fields[d.Focus].HandleKey(msg) {
				d.validate()
			}
		}
		return false, nil
	}
	switch msg.String() {
	case "left", "right", "h", "l":
		if d.Focus == FocusConfirm {
			d.Focus = focusCancel
		} else if d.CanConfirm() {
			d.Focus = FocusConfirm
		}
	case "up":
		d.Focus = fieldMax
		if d.guard.Protected {
			d.Focus = fieldName
		}
	case "enter":
		if d.Focus == FocusConfirm && d.CanConfirm() {
			return true, d.apply(d.Req, d.guard.typed)
		}
		return true, cancelled()
	}
	return false, nil
}

// View implements Dialog.
func (d *ScaleDialog) View(width int) string {
	st, w := d.st, max(width, 1)
	title := fmt.Sprintf("Scale worker group %s of RayCluster %s/%s", d.group, d.rc.Namespace, d.rc.Name)
	out := []string{st.Section.Render(ansi.Wrap(title, w, ""))}
	out = append(out, d.guard.header(st)...)
	out = append(out, "")
	for i, f := range d.Fields {
		cur, text := "  ", f.Text
		if i == d.Focus {
			cur = st.Glyphs.Cursor + " "
			text += st.Prompt.Render(Caret(st.Plain))
		} else if text == "" && i == fieldMax {
			text = st.Faint.Render("unbounded")
		}
		out = append(out, fmt.Sprintf("%s%-9s %s", cur, f.label+":", text))
	}
	out = append(out, "")
	if d.Plan != nil {
		out = append(out, wrapLines(st, d.Plan.Lines()[1:], w)...)
	} else {
		out = append(out, "current: "+d.cur.String())
	}
	if d.Err != nil {
		out = append(out, st.FlashErr.Render(ansi.Wrap("error: "+cliHints(d.Err.Error()), w, "")))
	}
	if in := d.guard.input(st, w); len(in) > 0 {
		if d.Focus == fieldName {
			in[1] = st.Glyphs.Cursor + " " + in[1]
		} else {
			in[1] = "  " + strings.TrimSuffix(in[1], st.Prompt.Render(Caret(st.Plain)))
		}
		out = append(out, in...)
	}
	focus := noButton
	switch d.Focus {
	case focusCancel:
		focus = cancelButton
	case FocusConfirm:
		focus = confirmButton
	}
	out = append(out, "", renderButtons(st, focus, d.CanConfirm()),
		st.Faint.Render(ansi.Wrap("tab next · enter to buttons · ←/→ switch · esc cancel", w, "")))
	return strings.Join(out, "\n")
}
