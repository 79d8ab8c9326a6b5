package tui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	corev1 "k8s.io/api/core/v1"

	"github.com/raydar/raydar/kube/raydash"
	"github.com/raydar/raydar/kube/watch"
	"github.com/raydar/raydar/rayapi/dashboard"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// RayLogSource reaches Ray's log files through a cluster's dashboard
// (*kube/raydash.RayLogs). Its methods do I/O: the TUI calls them inside
// commands and reader goroutines, never from Update or View.
type RayLogSource interface {
	// List lists a node's log files.
	List(ctx context.Context, namespace, cluster string, node dashboard.LogNode) (dashboard.LogFiles, error)
	// Open opens a file: its tail, then, with follow, what is appended.
	Open(ctx context.Context, namespace, cluster string, req dashboard.LogRequest, follow bool) (io.ReadCloser, error)
	// Resolve finds the file of an explanation on the head node.
	Resolve(ctx context.Context, namespace string, e raydash.Explanation, head dashboard.LogNode) (dashboard.LogRequest, error)
}

// The Ray log views.
const (
	// RayLogsView lists the Ray log files of one node of a cluster (L).
	RayLogsView ViewKind = "raylogs"
	// RayLogView follows one Ray log file (enter on a file; E from a job
	// or service).
	RayLogView ViewKind = "raylog"
)

// rayLogTimeout bounds listing a node's files.
const rayLogTimeout = 20 * time.Second

// rayLogNode is the Ray node of a pod of cluster (the head's when pod is
// nil): by IP, with the node ID when Ray's capacity view (polled by the
// cluster detail) knows it. It reads memory only.
func rayLogNode(e *env, namespace, cluster string, pod *corev1.Pod) (*corev1.Pod, dashboard.LogNode) {
	if pod == nil {
		pod = raydash.HeadPod(e.store.PodsOf(watch.ClusterRef{Namespace: namespace, Name: cluster}))
	}
	var c *dashboard.Capacity
	if src := e.sess.Capacity; src != nil {
		c, _, _ = src.Get(namespace, cluster)
	}
	return pod, raydash.NodeForPod(pod, c)
}

// unreachable says in words why Ray's logs cannot be read and what to do
// instead: the pod's container logs (the logs action), when there is a pod.
func unreachable(e *env, namespace, cluster string, pod *corev1.Pod, err error) []string {
	st := e.st
	logs := e.km.Action(ActionLogs, binding("l", "logs")).Help().Key
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

// rayLogFilesPage lists the Ray log files of one node of a cluster,
// grouped (job drivers, runtime env, serve, then Ray's categories); enter
// follows the selected file; ctrl+r lists again.
type rayLogFilesPage struct {
	pageBase
	id        int64
	namespace string
	cluster   string
	pod       *corev1.Pod // the node's pod (nil: none known)
	node      dashboard.LogNode
	rows      []rayLogRow
	cursor    int // index in rows of a file row
	top       int
	loading   bool
	loaded    bool
	err       error
}

func newRayLogFilesPage(e *env, namespace, cluster string, pod *corev1.Pod) *rayLogFilesPage {
	pod, node := rayLogNode(e, namespace, cluster, pod)
	return &rayLogFilesPage{pageBase: pageBase{e: e, vk: RayLogsView}, id: e.nextSeq(),
		namespace: namespace, cluster: cluster, pod: pod, node: node}
}

func (p *rayLogFilesPage) nodeName() string {
	s := "node " + orNone(p.node.IP)
	if p.pod != nil {
		s += " (pod " + p.pod.Name
		if p.pod.Labels[rayv1.RayNodeTypeLabelKey] == string(rayv1.HeadNode) {
			s += ", head"
		}
		s += ")"
	}
	return s
}

func (p *rayLogFilesPage) title() string {
	return fmt.Sprintf("Ray logs %s/%s %s", p.namespace, p.cluster, p.nodeName())
}
func (p *rayLogFilesPage) crumb() string { return "ray logs " + orNone(p.node.IP) }
func (p *rayLogFilesPage) keys() []key.Binding {
	r := p.e.km.Refresh
	r.SetHelp(r.Help().Key, "list again")
	return []key.Binding{p.e.km.Open, r}
}
func (p *rayLogFilesPage) target() Target {
	t := Target{View: RayLogsView, Namespace: p.namespace}
	if p.pod != nil {
		t.Selected, t.Owner = p.pod, p.pod
	}
	return t
}
func (p *rayLogFilesPage) init() tea.Cmd { return p.list() }

// list asks for the node's files in a command; one listing at a time.
func (p *rayLogFilesPage) list() tea.Cmd {
	src := p.e.sess.RayLogs
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
	ctx, id, ns, cluster, node := p.e.ctx, p.id, p.namespace, p.cluster, p.node
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, rayLogTimeout)
		defer cancel()
		files, err := src.List(ctx, ns, cluster, node)
		return rayLogListMsg{id: id, files: files, err: err}
	}
}

func (p *rayLogFilesPage) receive(msg tea.Msg) (tea.Cmd, bool) {
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
	p.clamp()
	return nil, true
}

// selected is the selected file ("": none).
func (p *rayLogFilesPage) selected() string {
	if p.cursor >= 0 && p.cursor < len(p.rows) {
		return p.rows[p.cursor].file
	}
	return ""
}

func (p *rayLogFilesPage) canOpen() bool { return p.selected() != "" }

func (p *rayLogFilesPage) open() page {
	f := p.selected()
	if f == "" {
		return nil
	}
	req := dashboard.LogRequest{Node: p.node, Filename: f, Lines: MaxPodLogLines}
	return newRayLogPage(p.e, p.namespace, p.cluster, p.pod, req, raydash.Explanation{}, f+" on "+p.nodeName())
}

// move moves the cursor by n file rows (headings are skipped).
func (p *rayLogFilesPage) move(n int) {
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
	p.clamp()
}

func (p *rayLogFilesPage) bodyHeight() int { return max(p.h-1, 1) }

func (p *rayLogFilesPage) clamp() {
	h := p.bodyHeight()
	if p.cursor < p.top {
		p.top = max(p.cursor-1, 0) // keep the group heading in view
	}
	if p.cursor >= p.top+h {
		p.top = p.cursor - h + 1
	}
	p.top = clampInt(p.top, 0, max(len(p.rows)-h, 0))
}

func (p *rayLogFilesPage) setSize(w, h int) { p.w, p.h = w, h; p.clamp() }

func (p *rayLogFilesPage) update(msg tea.KeyPressMsg) (bool, tea.Cmd) {
	km := p.e.km
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

func (p *rayLogFilesPage) view() string {
	st := p.e.st
	var out []string
	switch {
	case !p.loaded:
		out = append(out, st.Faint.Render("listing the Ray log files of "+p.nodeName()+"…"))
	case p.err != nil:
		out = append(out, wrapEach(unreachable(p.e, p.namespace, p.cluster, p.pod, p.err), p.w)...)
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
				line = st.Selected.Render(padRight(line, max(p.w, 1)))
			}
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}

// wrapEach wraps each of lines at w cells.
func wrapEach(lines []string, w int) []string {
	var out []string
	for _, l := range lines {
		out = append(out, strings.Split(ansi.Wrap(l, max(w, 1), ""), "\n")...)
	}
	return out
}

// padRight pads s with spaces to w cells.
func padRight(s string, w int) string {
	if n := w - len([]rune(s)); n > 0 {
		return s + strings.Repeat(" ", n)
	}
	return s
}
