package tui

import (
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"k8s.io/utils/ptr"

	"github.com/raydar/raydar/kube/actions"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/tui/styles"
	"github.com/raydar/raydar/tui/widgets"
)

// maxFuzzKeys bounds the keys of one fuzz input. Each key renders a whole
// frame, so thousands of them took seconds per input (a CI run's FuzzPrompt
// worker, ~8,000 typed bytes, was taken for hung under load); no dialog or
// prompt needs more keys than a few screen lines to reach any state.
const maxFuzzKeys = 512

// fuzzKeys turns fuzz text into key presses (the first maxFuzzKeys): a few
// control bytes stand for the keys dialogs and prompts react to, every other
// rune is typed.
func fuzzKeys(s string) []tea.KeyPressMsg {
	var out []tea.KeyPressMsg
	for _, r := range s {
		if len(out) == maxFuzzKeys {
			break
		}
		var k tea.KeyPressMsg
		switch r {
		case '\t':
			k = tea.KeyPressMsg{Code: tea.KeyTab}
		case '\r', '\n':
			k = tea.KeyPressMsg{Code: tea.KeyEnter}
		case 0x1b:
			k = tea.KeyPressMsg{Code: tea.KeyEscape}
		case 0x7f:
			k = tea.KeyPressMsg{Code: tea.KeyBackspace}
		case 0x15:
			k = tea.KeyPressMsg{Code: 'u', Mod: tea.ModCtrl}
		case 0x17:
			k = tea.KeyPressMsg{Code: 'w', Mod: tea.ModCtrl}
		case 0x01:
			k = tea.KeyPressMsg{Code: tea.KeyUp}
		case 0x02:
			k = tea.KeyPressMsg{Code: tea.KeyDown}
		case 0x03:
			k = tea.KeyPressMsg{Code: tea.KeyTab, Mod: tea.ModShift}
		case 0x04:
			k = tea.KeyPressMsg{Code: tea.KeyLeft}
		case 0x05:
			k = tea.KeyPressMsg{Code: tea.KeyRight}
		default:
			k = tea.KeyPressMsg{Code: r, Text: string(r)}
		}
		out = append(out, k)
	}
	return out
}

// FuzzScaleDialog types arbitrary keys into the scale dialog of a worker
// group of arbitrary size (action s).
//
// Invariants: nothing panics and every frame renders; Confirm is reachable
// only for a valid plan that changes something, and confirming applies
// exactly the numbers the fields show (what PlanScale accepts for them);
// every refusal the dialog shows names the field it is about (replicas,
// minReplicas, maxReplicas, or the spec path the validator names).
func FuzzScaleDialog(f *testing.F) {
	f.Add(int32(2), int32(1), int32(4), int32(1), false, false, "3\t\t\r")
	f.Add(int32(2), int32(1), int32(4), int32(1), false, false, "9\t\t\r")
	f.Add(int32(2), int32(1), int32(4), int32(1), false, false, "3\r\x05\r")
	f.Add(int32(2), int32(1), int32(4), int32(2), false, false, "9\t\t9\r\x05\r")
	f.Add(int32(2), int32(1), int32(4), int32(1), false, false, "9\t\x7f\x7f8\t9\t\t\r")
	f.Add(int32(0), int32(0), int32(2147483647), int32(1), false, true, "-1\r\x05\r")
	f.Add(int32(5), int32(6), int32(3), int32(2), true, false, "99999999999999\x15 7 \r\x04\r")
	f.Add(int32(1), int32(0), int32(1), int32(4), false, false, "+1\t0\t\x7f\r\x05\x05\r")
	f.Add(int32(1), int32(0), int32(1), int32(1), false, false, "٣\t\t\r")
	f.Add(int32(-3), int32(-1), int32(-2), int32(-1), false, false, "0\t0\t0\r\x05\r")
	f.Add(int32(1), int32(0), int32(1), int32(1), false, false, "\x1b")
	f.Fuzz(func(t *testing.T, replicas, minR, maxR, hosts int32, suspended, autoscaling bool, keys string) {
		rc := mkCluster("ml", "train-a", 0, rayv1.WorkerGroupSpec{
			GroupName: "cpu", Replicas: ptr.To(replicas), MinReplicas: ptr.To(minR), MaxReplicas: ptr.To(maxR),
			NumOfHosts: hosts, Suspend: ptr.To(suspended),
		})
		rc.Spec.EnableInTreeAutoscaling = ptr.To(autoscaling)
		var applied *actions.ScaleRequest
		d := widgets.NewScaleDialog(styles.Plain(), widgets.Guard{Context: "kind-dev"}, rc, "cpu", func(req actions.ScaleRequest, _ string) tea.Cmd {
			applied = &req
			return nil
		})
		check := func() {
			_ = d.View(1)
			for _, w := range []int{40, 120} {
				if v := d.View(w); !strings.Contains(strings.ReplaceAll(ansi.Strip(v), "\n", " "), "Scale worker group cpu") {
					t.Fatalf("frame at width %d lost its title:\n%s", w, v)
				}
			}
			if d.CanConfirm() && (d.Err != nil || d.Plan == nil || d.Plan.Unchanged) {
				t.Fatalf("Confirm enabled with err %v, plan %+v", d.Err, d.Plan)
			}
			if d.Err != nil && !namesScaleField(d.Err.Error()) {
				t.Fatalf("the dialog refuses %q without naming the field: %q", fieldTexts(d), d.Err)
			}
		}
		check()
		for _, k := range fuzzKeys(keys) {
			couldConfirm, req, focus := d.CanConfirm(), d.Req, d.Focus
			done, _ := d.Update(k)
			if applied != nil {
				if !couldConfirm || focus != widgets.FocusConfirm {
					t.Fatalf("applied %+v from focus %d without an enabled Confirm", *applied, focus)
				}
				if *applied != req && !samePtrs(*applied, req) {
					t.Fatalf("applied %+v, the dialog showed %+v", *applied, req)
				}
				n, err := actions.ParseCount("replicas", d.Fields[widgets.FieldReplicas].Text)
				if err != nil || n != applied.Replicas {
					t.Fatalf("applied replicas %d, the field reads %q (%v)", applied.Replicas, d.Fields[widgets.FieldReplicas].Text, err)
				}
				if _, err := actions.PlanScale(rc, "cpu", *applied); err != nil {
					t.Fatalf("applied %+v, which PlanScale refuses: %v", *applied, err)
				}
			}
			if done {
				return
			}
			check()
		}
	})
}

func samePtrs(a, b actions.ScaleRequest) bool {
	return a.Replicas == b.Replicas && ptr.Equal(a.Min, b.Min) && ptr.Equal(a.Max, b.Max)
}

func fieldTexts(d *widgets.ScaleDialog) []string {
	var out []string
	for _, f := range d.Fields {
		out = append(out, f.Text)
	}
	return out
}

// namesScaleField reports whether a scale refusal names a field: one of the
// dialog's (its messages start with the field's spec name) or a spec path.
func namesScaleField(msg string) bool {
	for _, p := range []string{"replicas", "minReplicas", "maxReplicas"} {
		if strings.HasPrefix(msg, p+":") || strings.HasPrefix(msg, p+" ") {
			return true
		}
	}
	return strings.Contains(msg, "spec.")
}

// FuzzConfirmDialog presses arbitrary keys in a confirmation (delete,
// suspend, stop...), with and without a possible action.
//
// Invariants: nothing panics; the action runs at most once, only when it is
// possible and only when enter is pressed with the focus on Confirm (an odd
// number of focus switches since the dialog opened); esc and enter on
// Cancel close it with nothing done.
func FuzzConfirmDialog(f *testing.F) {
	f.Add(true, "\r")
	f.Add(true, "\t\r")
	f.Add(true, "\x04\x05\x05\r")
	f.Add(false, "\t\r")
	f.Add(true, "hl\x1b")
	f.Fuzz(func(t *testing.T, possible bool, keys string) {
		runs := 0
		var apply func() tea.Cmd
		errText := "not possible (--max)"
		if possible {
			apply, errText = func() tea.Cmd { runs++; return nil }, ""
		}
		d := widgets.NewConfirm(styles.Plain(), "Delete RayCluster ml/train-a", []string{"delete 1 head and 3 worker pods"}, errText, apply)
		switches := 0
		for _, k := range fuzzKeys(keys) {
			done, _ := d.Update(k)
			switch k.String() {
			case "tab", "shift+tab", "left", "right", "h", "l":
				switches++
			}
			_ = d.View(30)
			if runs > 0 && (!possible || switches%2 == 0 || k.String() != "enter") {
				t.Fatalf("the action ran after %q (possible %v, %d focus switches)", keys, possible, switches)
			}
			if done {
				want := 0
				if possible && switches%2 == 1 && k.String() == "enter" {
					want = 1
				}
				if runs != want {
					t.Fatalf("closed by %q with the action run %d times, want %d", k.String(), runs, want)
				}
				return
			}
		}
		if runs != 0 {
			t.Fatalf("the action ran with the dialog still open")
		}
		if !possible && !strings.Contains(d.View(80), "the Max field") {
			t.Fatalf("an impossible action's confirmation lost its reason:\n%s", d.View(80))
		}
	})
}

// FuzzPrompt types arbitrary text into the command (:) and filter (/)
// prompts of the TUI on the fixture world.
//
// Invariants: nothing panics; after every key the screen is still exactly
// the window's size; a command the TUI does not know is answered with
// "unknown command" (never silently dropped).
func FuzzPrompt(f *testing.F) {
	for _, s := range []string{
		":rc\r", ":ns ml\r", ":ns all\r", ":ctx\r", ":ctx other\r", ":help\r", ":nope\r", ":rj\t\t\r", ":\x01\x02\r",
		"/train\r", "/-l team=ml\r", "/(\r", "/!a\x7f\x7f\x7f\r", "/x\x1b", ":rc ml\x17\x15\r", ":q\r", ":RayCluster\r",
	} {
		f.Add(s)
	}
	const w, h = 100, 24
	f.Fuzz(func(t *testing.T, keys string) {
		app, err := New(Options{Now: clock, Store: fixture()})
		if err != nil {
			t.Fatal(err)
		}
		var m tea.Model = app
		m, _ = m.Update(tea.WindowSizeMsg{Width: w, Height: h})
		for i, k := range fuzzKeys(keys) {
			if k.String() == "ctrl+c" {
				continue // quits
			}
			// The command line enter runs, as the prompt shows it.
			line, runs := app.prompt.text, app.mode == modeCommand && k.String() == "enter"
			m, _ = m.Update(k)
			screen := ansi.Strip(m.View().Content)
			if n := strings.Count(screen, "\n") + 1; n != h {
				t.Fatalf("after key %d (%q) of %q the screen has %d lines, want %d:\n%s", i, k.String(), keys, n, h, screen)
			}
			if f := strings.Fields(line); runs && len(f) > 0 && !knownCommand(app, f[0]) {
				if !strings.Contains(screen, "unknown command") {
					t.Fatalf("the command line %q of %q is not answered with \"unknown command\":\n%s", line, keys, screen)
				}
			}
		}
	})
}

// knownCommand reports whether the TUI knows the command word w (its
// first word, in any case): a kind's alias or one of the commands the
// help lists, with their spellings.
func knownCommand(a *App, w string) bool {
	w = strings.ToLower(w)
	for _, c := range []string{"q", "q!", "quit", "exit", "help", "?", "forwards", "pf", "ns", "namespace", "ctx", "context"} {
		if w == c {
			return true
		}
	}
	return slices.Contains(a.reg.Aliases(), w)
}

// FuzzProtectedConfirmDialog presses arbitrary keys in a confirmation on a
// protected context (raydar's config file, issue 25).
//
// Invariants: nothing panics; the action runs at most once, only on enter,
// and only with the object's name typed exactly, which it receives as the
// confirmation for kube/actions.
func FuzzProtectedConfirmDialog(f *testing.F) {
	f.Add("train-a\t\r")
	f.Add("train-b\t\r")
	f.Add("train-a\x7fa\t\r")
	f.Add("\t\r")
	f.Add("TRAIN-A\t\r")
	f.Add("train-al\t\x7f\t\r")
	f.Fuzz(func(t *testing.T, keys string) {
		var got []string
		d := widgets.NewWriteConfirm(styles.Plain(), widgets.Guard{Context: "prod-eu", Protected: true, Name: "train-a"},
			"Delete RayCluster ml/train-a", []string{"delete 1 head and 3 worker pods"}, "",
			func(confirmation string) tea.Cmd { got = append(got, confirmation); return nil })
		for _, k := range fuzzKeys(keys) {
			done, _ := d.Update(k)
			if v := d.View(30); !strings.Contains(strings.ReplaceAll(v, "\n", " "), "PROTECTED") {
				t.Fatalf("the protected badge is gone:\n%s", v)
			}
			if len(got) > 0 && (k.String() != "enter" || !done) {
				t.Fatalf("the action ran on %q without closing", k.String())
			}
			if done {
				break
			}
		}
		if len(got) > 1 || (len(got) == 1 && got[0] != "train-a") {
			t.Fatalf("after %q the action ran with %q; want at most once, with train-a", keys, got)
		}
		if keys == "train-a\t\r" && len(got) != 1 {
			t.Fatalf("the name typed, tab, enter did not confirm")
		}
	})
}
