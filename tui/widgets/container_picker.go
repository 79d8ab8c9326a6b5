package widgets

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	corev1 "k8s.io/api/core/v1"

	"github.com/raydar/raydar/rayapi/podview"
	"github.com/raydar/raydar/tui/format"
	"github.com/raydar/raydar/tui/keys"
	"github.com/raydar/raydar/tui/styles"
)

// The container picker (k9s' habit): l on a pod with several containers,
// and the container key on a pod's log page, list the pod's containers,
// then its init containers, with what each one's restarts left behind;
// the chosen one's logs open.

// ContainerInfo is one container of a pod as the picker and the log page
// tell it.
type ContainerInfo struct {
	Name string
	// Init is an init container.
	Init bool
	// Ray is the Ray container: the pod's first container, as KubeRay
	// builds it (utils.RayContainerIndex, ray-operator/controllers/ray/
	// utils/constant.go:51 of v1.7.0).
	Ray bool
	// Restarts is the container's restartCount.
	Restarts int32
	// Last is how its previous instance ended (nil: there is none: no
	// restart, or the kubelet no longer knows it).
	Last *podview.ContainerStatus
}

// HasPrevious says whether the container has a previous instance whose
// logs `kubectl logs --previous` reads: it restarted, or its last state
// is a termination.
func (c ContainerInfo) HasPrevious() bool {
	return c.Restarts > 0 || (c.Last != nil && c.Last.LastTerminationState.Terminated != nil)
}

// LastExit is how the previous instance ended, "exited REASON (code N)",
// "" when unknown.
func (c ContainerInfo) LastExit() string {
	if c.Last == nil || c.Last.LastTerminationState.Terminated == nil {
		return ""
	}
	t := c.Last.LastTerminationState.Terminated
	reason := t.Reason
	if reason == "" {
		reason = "Error"
		if t.ExitCode == 0 {
			reason = "Completed"
		}
	}
	return fmt.Sprintf("exited %s (code %d)", reason, t.ExitCode)
}

// Restarted is the container's restarts in words: "restarted 3 times,
// last exited OOMKilled (code 137)"; "" without any.
func (c ContainerInfo) Restarted() string {
	if !c.HasPrevious() {
		return ""
	}
	times := "times"
	if c.Restarts == 1 {
		times = "time"
	}
	s := fmt.Sprintf("restarted %d %s", c.Restarts, times)
	if e := c.LastExit(); e != "" {
		s += ", last " + e
	}
	return s
}

// restarts is the restarts in a few words for the picker: "2 restarts,
// OOMKilled (137)": the last exit; "" without any.
func (c ContainerInfo) restarts() string {
	if !c.HasPrevious() {
		return ""
	}
	s := fmt.Sprintf("%d restarts", c.Restarts)
	if c.Restarts == 1 {
		s = "1 restart"
	}
	if c.Last != nil && c.Last.LastTerminationState.Terminated != nil {
		t := c.Last.LastTerminationState.Terminated
		s += fmt.Sprintf(", %s (%d)", format.OrNone(t.Reason), t.ExitCode)
	}
	return s
}

// Containers lists p's containers, then its init containers, with their
// restarts.
func Containers(p *podview.Pod) []ContainerInfo {
	var out []ContainerInfo
	add := func(ctrs []corev1.Container, statuses []podview.ContainerStatus, init bool) {
		for i := range ctrs {
			c := ContainerInfo{Name: ctrs[i].Name, Init: init, Ray: !init && i == 0}
			for j := range statuses {
				if statuses[j].Name == c.Name {
					c.Restarts, c.Last = statuses[j].RestartCount, &statuses[j]
				}
			}
			out = append(out, c)
		}
	}
	add(p.Spec.Containers, p.Status.ContainerStatuses, false)
	add(p.Spec.InitContainers, p.Status.InitContainerStatuses, true)
	return out
}

// containerPicker is the picker's dialog: the containers, the cursor on
// one of them; choose opens the chosen one's logs.
type containerPicker struct {
	st     *styles.Styles
	km     *keys.KeyMap
	title  string
	list   []ContainerInfo
	cur    int
	choose func(name string) tea.Cmd
}

// NewContainerPicker is the picker of p's containers, the cursor on the
// container named current (the Ray container when current is none of
// them); choose gets the chosen container's name, within the App's Update.
func NewContainerPicker(st *styles.Styles, km *keys.KeyMap, p *podview.Pod, current string, choose func(name string) tea.Cmd) *containerPicker {
	d := &containerPicker{st: st, km: km, title: fmt.Sprintf("Logs of pod %s/%s: which container?", p.Namespace, p.Name),
		list: Containers(p), choose: choose}
	for i, c := range d.list {
		if c.Name == current {
			d.cur = i
		}
	}
	return d
}

// Update implements Dialog: up and down (the dialog's, and the list's k
// and j) move, enter chooses, esc closes with nothing opened.
func (d *containerPicker) Update(msg tea.KeyPressMsg) (bool, tea.Cmd) {
	km := d.km
	switch {
	case key.Matches(msg, km.DialogCancel):
		return true, nil
	case key.Matches(msg, km.DialogChoose):
		if len(d.list) == 0 {
			return true, nil
		}
		return true, d.choose(d.list[d.cur].Name)
	case key.Matches(msg, km.DialogUp, km.Up, km.DialogPrev):
		d.cur = max(d.cur-1, 0)
	case key.Matches(msg, km.DialogDown, km.Down, km.DialogNext):
		d.cur = min(d.cur+1, max(len(d.list)-1, 0))
	}
	return false, nil
}

// View implements Dialog: one line a container, the chosen one marked
// by the cursor glyph (visible without colour) and the selection style.
func (d *containerPicker) View(width int) string {
	st, w := d.st, max(width, 1)
	out := []string{st.Section.Render(ansi.Wrap(d.title, w, "")), ""}
	nameW := 0
	for _, c := range d.list {
		nameW = max(nameW, len(c.Name))
	}
	for i, c := range d.list {
		var notes []string
		switch {
		case c.Ray:
			notes = append(notes, "Ray container")
		case c.Init:
			notes = append(notes, "init")
		}
		if r := c.restarts(); r != "" {
			notes = append(notes, r)
		}
		line := fmt.Sprintf("%-*s", nameW, c.Name)
		if len(notes) > 0 {
			line += "  " + strings.Join(notes, ", ")
		}
		line = ansi.Truncate(line, max(w-2, 1), st.Glyphs.Ellipsis)
		if i == d.cur {
			out = append(out, st.Glyphs.Cursor+" "+st.Selected.Render(line))
		} else {
			out = append(out, "  "+line)
		}
	}
	km := d.km
	hint := fmt.Sprintf("%s/%s move · %s open · %s cancel", hk(km.DialogUp), hk(km.DialogDown), hk(km.DialogChoose), hk(km.DialogCancel))
	out = append(out, "", st.Faint.Render(ansi.Wrap(hint, w, "")))
	return strings.Join(out, "\n")
}
