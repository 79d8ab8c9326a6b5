package logs

import (
	"context"
	"fmt"
	"io"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/raydar/raydar/rayapi/podview"
	"github.com/raydar/raydar/tui/format"
	"github.com/raydar/raydar/tui/host"
	"github.com/raydar/raydar/tui/widgets"
)

// Page follows one container's logs: the last MaxPodLogLines lines,
// following new ones (f toggles), wrapping long ones (w toggles), searching
// (/, n, N): a widgets.LogView. Esc closes the page and the stream.
type Page struct {
	host.Base
	widgets.LogView
	pod       *podview.Pod
	container string
	src       host.PodLogs
}

// NewPage is the log page of p's first container (the Ray container), read
// from src, in e.
func NewPage(e *host.Env, p *podview.Pod, src host.PodLogs) *Page {
	ctr := ""
	if len(p.Spec.Containers) > 0 {
		ctr = p.Spec.Containers[0].Name // the Ray container comes first
	}
	return &Page{Base: host.Base{E: e, VK: host.LogsView}, LogView: widgets.NewLogView(e.NextSeq()),
		pod: p, container: ctr, src: src}
}

// Title is "Logs ns/pod (container)".
func (p *Page) Title() string {
	return fmt.Sprintf("Logs %s/%s (%s)", p.pod.Namespace, p.pod.Name, format.OrNone(p.container))
}

// Crumb is "logs pod".
func (p *Page) Crumb() string { return "logs " + p.pod.Name }

// SetSize records the size and resizes the log view.
func (p *Page) SetSize(w, h int) {
	p.W, p.H = w, h
	p.Resize(w, h)
}

// Keys are the log view's bindings.
func (p *Page) Keys() []key.Binding { return p.ViewKeys(p.E) }

// Target is the pod, for the actions.
func (p *Page) Target() host.Target {
	return host.Target{View: host.LogsView, Namespace: p.pod.Namespace, Selected: p.pod, Owner: p.pod}
}

// Init opens the stream in a command (with the busy indicator); the reader
// goroutine then runs until the stream ends or the page closes.
func (p *Page) Init() tea.Cmd {
	p.Begin(p.E.Ctx)
	src := p.src
	ns, name, ctr := p.pod.Namespace, p.pod.Name, p.container
	return p.Start(func(ctx context.Context) (io.ReadCloser, error) {
		return src.PodLogs(ctx, ns, name, ctr, true)
	})
}

// Update is the log view's keys: follow, wrap, search steps, scrolling.
func (p *Page) Update(msg tea.KeyPressMsg) (bool, tea.Cmd) {
	return p.HandleKey(p.E, msg), nil
}

// View is the log view with its heading.
func (p *Page) View() string { return p.Render(p.E.St, "Logs") }
