package raylogs

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/raydar/raydar/kube/raydash"
	"github.com/raydar/raydar/kube/watch"
	"github.com/raydar/raydar/rayapi/dashboard"
	"github.com/raydar/raydar/rayapi/podview"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/tui/format"
	"github.com/raydar/raydar/tui/host"
	"github.com/raydar/raydar/tui/widgets"
)

// rayLogTimeout bounds listing a node's files.
const rayLogTimeout = 20 * time.Second

// rayLogNode is the Ray node of a pod of cluster (the head's when pod is
// nil): by IP, with the node ID when Ray's capacity view (polled by the
// cluster detail) knows it. It reads memory only.
func rayLogNode(e *host.Env, namespace, cluster string, pod *podview.Pod) (*podview.Pod, dashboard.LogNode) {
	if pod == nil {
		pod = raydash.HeadPod(e.Store.PodsOf(watch.ClusterRef{Namespace: namespace, Name: cluster}))
	}
	var c *dashboard.Capacity
	if src := e.Sess.Capacity; src != nil {
		c, _, _ = src.Get(namespace, cluster)
	}
	return pod, raydash.NodeForPod(pod, c)
}

// unreachable says in words why Ray's logs cannot be read and what to do
// instead: the pod's container logs (the logs action), when there is a pod.
func unreachable(e *host.Env, namespace, cluster string, pod *podview.Pod, err error) []string {
	st := e.St
	logs := e.KM.Action(host.ActionLogs, host.Binding("l", "logs")).Help().Key
	var out []string
	switch {
	case errors.Is(err, dashboard.ErrUnavailable):
		out = append(out, st.FlashErr.Render(fmt.Sprintf("The Ray dashboard of %s/%s cannot be reached:", namespace, cluster)),
			"  "+err.Error(),
			"Ray's log files are read through the dashboard (the head's port 8265).")
	case errors.Is(err, dashboard.ErrNotFound):
		out = append(out, st.FlashErr.Render("Ray has no such log file or node:"), "  "+err.Error())
	default:
		out = append(out, st.FlashErr.Render("Ray's log files cannot be read:"), "  "+err.Error())
	}
	if pod != nil {
		out = append(out, fmt.Sprintf("Press %s for the container logs of pod %s (what kubectl logs shows).", logs, pod.Name))
	}
	return out
}

type rayLogListMsg struct {
	id    int64
	files dashboard.LogFiles
	err   error
}

// rayLogRow is a row of the file list: a group heading or a file.
type rayLogRow struct {
	group string
	file  string // "": the group's heading
}

// FilesPage lists the Ray log files of one node of a cluster,
// grouped (job drivers, runtime env, serve, then Ray's categories); enter
// follows the selected file; ctrl+r lists again.
type FilesPage struct {
	host.Base
	id        int64
	namespace string
	cluster   string
	pod       *podview.Pod // the node's pod (nil: none known)
	node      dashboard.LogNode
	rows      []rayLogRow
	cursor    int // index in rows of a file row
	top       int
	loading   bool
	loaded    bool
	err       error
}

// NewFilesPage is the Ray log browser of a node of cluster: pod's (nil:
// the head's), in e.
func NewFilesPage(e *host.Env, namespace, cluster string, pod *podview.Pod) *FilesPage {
	pod, node := rayLogNode(e, namespace, cluster, pod)
	return &FilesPage{Base: host.Base{E: e, VK: host.RayLogsView}, id: e.NextSeq(),
		namespace: namespace, cluster: cluster, pod: pod, node: node}
}

func (p *FilesPage) nodeName() string {
	s := "node " + format.OrNone(p.node.IP)
	if p.pod != nil {
		s += " (pod " + p.pod.Name
		if p.pod.Labels[rayv1.RayNodeTypeLabelKey] == string(rayv1.HeadNode) {
			s += ", head"
		}
		s += ")"
	}
	return s
}

// Title is "Ray logs ns/cluster node IP (pod name)".
func (p *FilesPage) Title() string {
	return fmt.Sprintf("Ray logs %s/%s %s", p.namespace, p.cluster, p.nodeName())
}

// Crumb is "ray logs IP".
func (p *FilesPage) Crumb() string { return "ray logs " + format.OrNone(p.node.IP) }

// Keys are Enter (open the selected file) and r (list the files again).
func (p *FilesPage) Keys() []key.Binding {
	r := p.E.KM.Refresh
	r.SetHelp(r.Help().Key, "list again")
	return []key.Binding{p.E.KM.Open, r}
}

// Target is the node's pod, if known, for the actions.
func (p *FilesPage) Target() host.Target {
	t := host.Target{View: host.RayLogsView, Namespace: p.namespace}
	if p.pod != nil {
		t.Selected, t.Owner = p.pod, p.pod
	}
	return t
}

// Init lists the node's files.
func (p *FilesPage) Init() tea.Cmd { return p.list() }

// list asks for the node's files in a command; one listing at a time.
func (p *FilesPage) list() tea.Cmd {
	src := p.E.Sess.RayLogs
	switch {
	case p.loading:
		return nil
	case src == nil:
		p.loaded, p.err = true, errors.New("Ray's log files are not available in this session")
		return nil
	case p.node == (dashboard.LogNode{}):
		p.loaded, p.err = true, fmt.Errorf("the %s has no IP yet, so Ray cannot be asked for its files", p.nodeName())
		return nil
	}
	p.loading = true
	ctx, id, ns, cluster, node := p.E.Ctx, p.id, p.namespace, p.cluster, p.node
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, rayLogTimeout)
		defer cancel()
		files, err := src.List(ctx, ns, cluster, node)
		return rayLogListMsg{id: id, files: files, err: err}
	}
}

// Receive takes the files listed for this page, grouped, and keeps the
// selected file selected.
func (p *FilesPage) Receive(msg tea.Msg) (tea.Cmd, bool) {
	m, ok := msg.(rayLogListMsg)
	if !ok || m.id != p.id {
		return nil, false
	}
	p.loading, p.loaded, p.err = false, true, m.err
	if m.err != nil {
		return nil, true
	}
	sel := p.selected()
	p.rows = p.rows[:0]
	for _, g := range m.files.Groups() {
		if g.Name == dashboard.LogGroupDirs {
			continue // their files are listed in their groups
		}
		p.rows = append(p.rows, rayLogRow{group: g.Name})
		for _, f := range g.Files {
			p.rows = append(p.rows, rayLogRow{group: g.Name, file: f})
		}
	}
	p.cursor = -1
	for i, r := range p.rows {
		if r.file != "" && (p.cursor < 0 || r.file == sel) {
			p.cursor = i
		}
		if r.file != "" && r.file == sel {
			break
		}
	}
	p.Clamp()
	return nil, true
}

// selected is the selected file ("": none).
func (p *FilesPage) selected() string {
	if p.cursor >= 0 && p.cursor < len(p.rows) {
		return p.rows[p.cursor].file
	}
	return ""
}

// CanOpen says whether a file is selected.
func (p *FilesPage) CanOpen() bool { return p.selected() != "" }

// Open is the log page of the selected file.
func (p *FilesPage) Open() host.Page {
	f := p.selected()
	if f == "" {
		return nil
	}
	req := dashboard.LogRequest{Node: p.node, Filename: f, Lines: widgets.MaxPodLogLines}
	return NewLogPage(p.E, p.namespace, p.cluster, p.pod, req, raydash.Explanation{}, f+" on "+p.nodeName())
}

// move moves the cursor by n file rows (headings are skipped).
func (p *FilesPage) move(n int) {
	step := 1
	if n < 0 {
		step, n = -1, -n
	}
	for ; n > 0; n-- {
		i := p.cursor + step
		for i >= 0 && i < len(p.rows) && p.rows[i].file == "" {
			i += step
		}
		if i < 0 || i >= len(p.rows) {
			break
		}
		p.cursor = i
	}
	p.Clamp()
}

func (p *FilesPage) bodyHeight() int { return max(p.H-1, 1) }

// Clamp keeps the cursor, and its group's heading, in view.
func (p *FilesPage) Clamp() {
	h := p.bodyHeight()
	if p.cursor < p.top {
		p.top = max(p.cursor-1, 0) // keep the group heading in view
	}
	if p.cursor >= p.top+h {
		p.top = p.cursor - h + 1
	}
	p.top = format.ClampInt(p.top, 0, max(len(p.rows)-h, 0))
}

// SetSize records the size and keeps the cursor in view.
func (p *FilesPage) SetSize(w, h int) { p.W, p.H = w, h; p.Clamp() }

// Update lists the files again (r) or moves the cursor between files.
func (p *FilesPage) Update(msg tea.KeyPressMsg) (bool, tea.Cmd) {
	km := p.E.KM
	page := max(p.bodyHeight()-1, 1)
	switch {
	case key.Matches(msg, km.Refresh):
		return true, p.list()
	case key.Matches(msg, km.Up):
		p.move(-1)
	case key.Matches(msg, km.Down):
		p.move(1)
	case key.Matches(msg, km.PageUp):
		p.move(-page)
	case key.Matches(msg, km.PageDown):
		p.move(page)
	case key.Matches(msg, km.Top):
		p.move(-len(p.rows))
	case key.Matches(msg, km.Bottom):
		p.move(len(p.rows))
	default:
		return false, nil
	}
	return true, nil
}

// View lists the node's files under their groups' headings.
func (p *FilesPage) View() string {
	st := p.E.St
	var out []string
	switch {
	case !p.loaded:
		out = append(out, st.Faint.Render("listing the Ray log files of "+p.nodeName()+"…"))
	case p.err != nil:
		out = append(out, format.WrapEach(unreachable(p.E, p.namespace, p.cluster, p.pod, p.err), p.W)...)
	case len(p.rows) == 0:
		out = append(out, "Ray lists no log files on "+p.nodeName()+".")
	default:
		n := 0
		for _, r := range p.rows {
			if r.file != "" {
				n++
			}
		}
		head := fmt.Sprintf("Ray log files of %s: %d", p.nodeName(), n)
		if p.loading {
			head += "  " + st.Faint.Render("listing again…")
		}
		out = append(out, st.Section.Render(head))
		for i := p.top; i < len(p.rows) && len(out) <= p.bodyHeight(); i++ {
			r := p.rows[i]
			if r.file == "" {
				out = append(out, st.Label.Render(r.group))
				continue
			}
			line := "  " + r.file
			if i == p.cursor {
				line = st.Selected.Render(format.PadRight(line, max(p.W, 1)))
			}
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}
