package widgets

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"k8s.io/utils/ptr"

	"github.com/raydar/raydar/kube/actions"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/tui/internal/tuitest"
	"github.com/raydar/raydar/tui/keys"
	"github.com/raydar/raydar/tui/styles"
)

// defaultKeys is the default KeyMap the dialogs read their keys from (the
// fuzz inputs' keys are named for them).
var defaultKeys = keys.Default()

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
		rc := tuitest.MkCluster("ml", "train-a", 0, rayv1.WorkerGroupSpec{
			GroupName: "cpu", Replicas: ptr.To(replicas), MinReplicas: ptr.To(minR), MaxReplicas: ptr.To(maxR),
			NumOfHosts: hosts, Suspend: ptr.To(suspended),
		})
		rc.Spec.EnableInTreeAutoscaling = ptr.To(autoscaling)
		var applied *actions.ScaleRequest
		d := NewScaleDialog(styles.Plain(), defaultKeys, Guard{Context: "kind-dev"}, rc, "cpu", func(req actions.ScaleRequest, _ string) tea.Cmd {
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
			if d.canConfirm() && (d.err != nil || d.plan == nil || d.plan.Unchanged) {
				t.Fatalf("Confirm enabled with err %v, plan %+v", d.err, d.plan)
			}
			if d.err != nil && !namesScaleField(d.err.Error()) {
				t.Fatalf("the dialog refuses %q without naming the field: %q", fieldTexts(d), d.err)
			}
		}
		check()
		for _, k := range tuitest.FuzzKeys(keys) {
			couldConfirm, req, focus := d.canConfirm(), d.req, d.focus
			done, _ := d.Update(k)
			if applied != nil {
				if !couldConfirm || focus != focusConfirm {
					t.Fatalf("applied %+v from focus %d without an enabled Confirm", *applied, focus)
				}
				if *applied != req && !samePtrs(*applied, req) {
					t.Fatalf("applied %+v, the dialog showed %+v", *applied, req)
				}
				n, err := actions.ParseCount("replicas", d.fields[fieldReplicas].text)
				if err != nil || n != applied.Replicas {
					t.Fatalf("applied replicas %d, the field reads %q (%v)", applied.Replicas, d.fields[fieldReplicas].text, err)
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

func fieldTexts(d *scaleDialog) []string {
	var out []string
	for _, f := range d.fields {
		out = append(out, f.text)
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
		d := NewConfirm(styles.Plain(), defaultKeys, "Delete RayCluster ml/train-a", []string{"delete 1 head and 3 worker pods"}, errText, apply)
		switches := 0
		for _, k := range tuitest.FuzzKeys(keys) {
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
		d := NewWriteConfirm(styles.Plain(), defaultKeys, Guard{Context: "prod-eu", Protected: true, Name: "train-a"},
			"Delete RayCluster ml/train-a", []string{"delete 1 head and 3 worker pods"}, "",
			func(confirmation string) tea.Cmd { got = append(got, confirmation); return nil })
		for _, k := range tuitest.FuzzKeys(keys) {
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
