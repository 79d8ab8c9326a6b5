package widgets

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/raydar/raydar/kube/actions"
	"github.com/raydar/raydar/kube/portforward"
	"github.com/raydar/raydar/tui/internal/tuitest"
	"github.com/raydar/raydar/tui/keys"
	"github.com/raydar/raydar/tui/styles"
)

func press(s string) tea.KeyPressMsg {
	switch s {
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "tab":
		return tea.KeyPressMsg{Code: tea.KeyTab}
	case "space":
		return tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}
	}
	return tea.KeyPressMsg{Code: []rune(s)[0], Text: s}
}

// rebound is the KeyMap of a keys.yaml that rebinds the dialogs' keys.
func rebound(t *testing.T) *keys.KeyMap {
	t.Helper()
	// Quoted: YAML 1.1 reads a bare n or y as a boolean.
	km, err := keys.Parse([]byte(`keys:
  dialog-cancel: ["q"]
  dialog-next: ["n"]
  dialog-choose: ["y"]
  dialog-switch: [left, right]
  dialog-toggle: ["x"]
  dialog-up: ["ctrl+p"]
  dialog-down: ["ctrl+n"]
`))
	if err != nil {
		t.Fatal(err)
	}
	return km
}

// The dialogs take their keys from the KeyMap (keys.yaml's dialog-*), and
// their hints name the keys bound.
func TestDialogKeysAreRebindable(t *testing.T) {
	t.Run("confirmation", func(t *testing.T) {
		runs := 0
		d := NewConfirm(styles.Plain(), rebound(t), "Delete RayCluster ml/train-a", nil, "", func() tea.Cmd { runs++; return nil })
		if v := d.View(80); !strings.Contains(v, "n/left/right switch · y choose · q cancel") {
			t.Fatalf("hints do not name the keys bound:\n%s", v)
		}
		for _, k := range []string{"esc", "tab", "enter"} { // the default keys do nothing now
			if done, _ := d.Update(press(k)); done || d.onConfirm {
				t.Fatalf("%s acted: done %v, on Confirm %v", k, done, d.onConfirm)
			}
		}
		if done, _ := d.Update(press("n")); done || !d.onConfirm {
			t.Fatal("n did not move to Confirm")
		}
		if done, _ := d.Update(press("y")); !done || runs != 1 {
			t.Fatalf("y on Confirm: done %v, %d runs", done, runs)
		}
		d = NewConfirm(styles.Plain(), rebound(t), "Delete RayCluster ml/train-a", nil, "", func() tea.Cmd { runs++; return nil })
		if done, _ := d.Update(press("q")); !done || runs != 1 {
			t.Fatalf("q did not cancel: done %v, %d runs", done, runs)
		}
	})
	t.Run("scale", func(t *testing.T) {
		rc := tuitest.MkCluster("ml", "train-a", 0, tuitest.Group("cpu", 3, 1, 5))
		var applied *actions.ScaleRequest
		d := NewScaleDialog(styles.Plain(), rebound(t), Guard{}, rc, "cpu", func(req actions.ScaleRequest, _ string) tea.Cmd {
			applied = &req
			return nil
		})
		d.Update(press("4"))
		d.Update(press("n")) // next: Min
		if d.focus != fieldMin {
			t.Fatalf("n moved the focus to %d", d.focus)
		}
		for _, k := range []string{"y", "right", "y"} { // to the buttons, Confirm, choose
			d.Update(press(k))
		}
		if applied == nil || applied.Replicas != 4 || applied.Min != nil {
			t.Fatalf("applied %+v", applied)
		}
		if v := d.View(120); !strings.Contains(v, "n next · y to buttons · left/right switch · q cancel") {
			t.Fatalf("hints do not name the keys bound:\n%s", v)
		}
	})
	t.Run("port-forward", func(t *testing.T) {
		d := NewForwardDialog(styles.Plain(), rebound(t), "Port-forward", portforward.Spec{Namespace: "ml", Cluster: "train-a"}, nil)
		d.Update(press("space"))
		if !d.on[0] {
			t.Fatal("space toggled the dashboard though toggle is x")
		}
		d.Update(press("x"))
		if d.on[0] {
			t.Fatal("x did not toggle the dashboard")
		}
		if v := d.View(120); !strings.Contains(v, "ctrl+p/ctrl+n/n move · x toggle · y start · q cancel") {
			t.Fatalf("hints do not name the keys bound:\n%s", v)
		}
		if done, _ := d.Update(press("q")); !done {
			t.Fatal("q did not cancel")
		}
	})
}
