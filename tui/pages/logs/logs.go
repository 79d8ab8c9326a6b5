package logs

import (
	"context"
	"fmt"
	"io"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"k8s.io/apimachinery/pkg/types"

	"github.com/raydar/raydar/kube/watch"
	"github.com/raydar/raydar/rayapi/podview"
	"github.com/raydar/raydar/tui/format"
	"github.com/raydar/raydar/tui/host"
	"github.com/raydar/raydar/tui/widgets"
)

// Page follows one container's logs: the last MaxPodLogLines lines,
// following new ones (f toggles), wrapping long ones (w toggles), searching
// (/, n, N): a widgets.LogView. On a container that restarted, p switches
// to its previous instance's logs (kubectl logs --previous) and back; on a
// pod with several containers (init containers count), o opens the
// container picker. Esc closes the page and the stream.
type Page struct {
	host.Base
	widgets.LogView
	pod       *podview.Pod
	uid       types.UID
	container string
	// previous: the page shows the previous instance's logs.
	previous bool
	src      host.PodLogs
}

// NewPage is the log page of p's Ray container (its first: KubeRay's
// utils.RayContainerIndex, ray-operator/controllers/ray/utils/
// constant.go:51 of v1.7.0), read from src, in e.
func NewPage(e *host.Env, p *podview.Pod, src host.PodLogs) *Page {
	ctr := ""
	if len(p.Spec.Containers) > 0 {
		ctr = p.Spec.Containers[0].Name
	}
	return NewContainerPage(e, p, ctr, src)
}

// NewContainerPage is the log page of p's container ctr.
func NewContainerPage(e *host.Env, p *podview.Pod, ctr string, src host.PodLogs) *Page {
	return &Page{Base: host.Base{E: e, VK: host.LogsView}, LogView: widgets.NewLogView(e.NextSeq()),
		pod: p, uid: watch.Key(p), container: ctr, src: src}
}

// Open is what l does on pod p: its logs at once when it has one
// container, else the container picker (k9s' habit) with the Ray
// container under the cursor, which pushes the chosen one's page.
func Open(e *host.Env, p *podview.Pod, src host.PodLogs) {
	if len(p.Spec.Containers) <= 1 {
		e.Host.Push(NewPage(e, p, src))
		return
	}
	e.Host.ShowDialog(widgets.NewContainerPicker(e.St, e.KM, p, p.Spec.Containers[0].Name, func(name string) tea.Cmd {
		e.Host.Push(NewContainerPage(e, p, name, src))
		return nil
	}))
}

// Title is "Logs ns/pod (container)", "(container, previous)" on the
// previous instance's logs.
func (p *Page) Title() string {
	what := format.OrNone(p.container)
	if p.previous {
		what += ", previous"
	}
	return fmt.Sprintf("Logs %s/%s (%s)", p.pod.Namespace, p.pod.Name, what)
}

// Crumb is "logs pod".
func (p *Page) Crumb() string { return "logs " + p.pod.Name }

// SetSize records the size and resizes the log view, less the line about
// the containers when there is one.
func (p *Page) SetSize(w, h int) {
	p.W, p.H = w, h
	p.resize()
}

func (p *Page) resize() {
	h := p.H
	if p.about() != "" {
		h--
	}
	p.Resize(p.W, max(h, 1))
}

// Keys are the log view's bindings, p on a container with a previous
// instance, o on a pod with several containers.
func (p *Page) Keys() []key.Binding {
	bs := p.ViewKeys(p.E)
	if p.info().HasPrevious() || p.previous {
		bs = append(bs, p.E.KM.Previous)
	}
	if len(widgets.Containers(p.pod)) > 1 {
		bs = append(bs, p.E.KM.Container)
	}
	return bs
}

// Target is the pod, for the actions.
func (p *Page) Target() host.Target {
	return host.Target{View: host.LogsView, Namespace: p.pod.Namespace, Selected: p.pod, Owner: p.pod}
}

// Apply follows the pod: its restarts change what the page says.
func (p *Page) Apply(ch *watch.Changes) {
	up, _ := host.Follow(ch, watch.Pod, p.uid)
	if pod, ok := up.(*podview.Pod); ok {
		p.pod = pod
		p.resize()
	}
}

// Init opens the stream in a command (with the busy indicator); the reader
// goroutine then runs until the stream ends or the page closes.
func (p *Page) Init() tea.Cmd {
	p.Begin(p.E.SessCtx())
	return p.open()
}

// open opens the page's stream: the current instance's followed, or the
// previous one's (it has ended: nothing to follow).
func (p *Page) open() tea.Cmd {
	src := p.src
	ns, name := p.pod.Namespace, p.pod.Name
	o := host.LogOptions{Container: p.container, Follow: !p.previous, Previous: p.previous}
	return p.Start(func(ctx context.Context) (io.ReadCloser, error) {
		return src.PodLogs(ctx, ns, name, o)
	})
}

// show switches the page to container ctr's logs, its previous instance's
// with previous, on a new stream.
func (p *Page) show(ctr string, previous bool) tea.Cmd {
	p.container, p.previous = ctr, previous
	p.Restart(p.E.SessCtx(), p.E.NextSeq())
	p.resize()
	return p.open()
}

// info is the shown container's.
func (p *Page) info() widgets.ContainerInfo {
	for _, c := range widgets.Containers(p.pod) {
		if c.Name == p.container {
			return c
		}
	}
	return widgets.ContainerInfo{Name: p.container}
}

// Update is the log view's keys (follow, wrap, search steps, scrolling),
// p (previous instance) and o (container picker).
func (p *Page) Update(msg tea.KeyPressMsg) (bool, tea.Cmd) {
	km := p.E.KM
	switch {
	case key.Matches(msg, km.Previous):
		if !p.previous && !p.info().HasPrevious() {
			return true, host.Warn("container %s has not restarted: it has no previous logs", p.container)
		}
		return true, p.show(p.container, !p.previous)
	case key.Matches(msg, km.Container):
		if len(widgets.Containers(p.pod)) < 2 {
			return true, host.Warn("pod %s has one container: %s", p.pod.Name, p.container)
		}
		p.E.Host.ShowDialog(widgets.NewContainerPicker(p.E.St, p.E.KM, p.pod, p.container, func(name string) tea.Cmd {
			return p.show(name, false)
		}))
		return true, nil
	}
	return p.HandleKey(p.E, msg), nil
}

// about is the line about the containers above the log: which container
// of how many, its restarts, which instance the page shows; "" for a
// pod's only container that never restarted.
func (p *Page) about() string {
	c, n := p.info(), len(widgets.Containers(p.pod))
	var parts []string
	if n > 1 {
		parts = append(parts, fmt.Sprintf("container %s of %d (%s: other)", p.container, n, p.E.KM.Container.Help().Key))
	}
	switch {
	case p.previous:
		prev := "previous instance"
		if e := c.LastExit(); e != "" {
			prev += ", " + e
		}
		parts = append(parts, prev+fmt.Sprintf(" (%s: current)", p.E.KM.Previous.Help().Key))
	case c.HasPrevious():
		parts = append(parts, c.Restarted()+fmt.Sprintf(" (%s: previous logs)", p.E.KM.Previous.Help().Key))
	}
	return strings.Join(parts, " · ")
}

// View is the line about the containers, then the log view with its
// heading.
func (p *Page) View() string {
	name := "Logs"
	if p.previous {
		name = "Previous logs"
	}
	body := p.Render(p.E.St, name)
	a := p.about()
	if a == "" {
		return body
	}
	st := p.E.St
	line := ansi.Truncate(a, max(p.W, 1), st.Glyphs.Ellipsis)
	if p.previous {
		line = st.FlashWarn.Render(line)
	} else {
		line = st.Label.Render(line)
	}
	return line + "\n" + body
}
