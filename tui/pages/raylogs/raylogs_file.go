package raylogs

import (
	"context"
	"errors"
	"io"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/raydar/raydar/kube/raydash"
	"github.com/raydar/raydar/rayapi/dashboard"
	"github.com/raydar/raydar/rayapi/podview"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/tui/format"
	"github.com/raydar/raydar/tui/host"
	"github.com/raydar/raydar/tui/widgets"
)

// rayLogResolvedMsg: the file an explanation names was found (or not).
type rayLogResolvedMsg struct {
	id  int64
	req dashboard.LogRequest
	err error
}

// LogPage follows one Ray log file through the dashboard: the last
// MaxPodLogLines lines, then what Ray appends, in the pod log page's
// widgets.LogView (follow, wrap, search). Opened from an explanation (E), it first
// finds the file on the head node.
type LogPage struct {
	host.Base
	widgets.LogView
	namespace string
	cluster   string
	pod       *podview.Pod // the node's pod, for the container-logs offer
	req       dashboard.LogRequest
	explain   raydash.Explanation // when the file is still to be found
	name      string              // what the title says

}

// NewLogPage is the page following the log file req names on a node of
// cluster (pod's, or nil), titled name, in e; a known ex (an explanation)
// is resolved to its file on Init.
func NewLogPage(e *host.Env, namespace, cluster string, pod *podview.Pod, req dashboard.LogRequest, ex raydash.Explanation, name string) *LogPage {
	return &LogPage{Base: host.Base{E: e, VK: host.RayLogView}, LogView: widgets.NewLogView(e.NextSeq()),
		namespace: namespace, cluster: cluster, pod: pod, req: req, explain: ex, name: name}
}

// newExplainPage opens the file ex names, on cluster's head node.
func newExplainPage(e *host.Env, namespace string, ex raydash.Explanation) *LogPage {
	pod, node := rayLogNode(e, namespace, ex.Cluster, nil)
	req := ex.Req
	if req.Node == (dashboard.LogNode{}) {
		req.Node = node
	}
	return NewLogPage(e, namespace, ex.Cluster, pod, req, ex, ex.Why)
}

// Title is "Ray log ns/cluster: name".
func (p *LogPage) Title() string {
	return "Ray log " + p.namespace + "/" + p.cluster + ": " + p.name
}

// Crumb is "ray log FILE", the file a job's driver log is in for a
// submission ID.
func (p *LogPage) Crumb() string {
	if f := p.req.Filename; f != "" {
		return "ray log " + f
	}
	if p.req.SubmissionID != "" {
		return "ray log " + dashboard.JobDriverLogFile(p.req.SubmissionID)
	}
	return "ray log"
}

// SetSize records the size and resizes the log view.
func (p *LogPage) SetSize(w, h int) {
	p.W, p.H = w, h
	p.Resize(w, h)
}

// Keys are the log view's bindings.
func (p *LogPage) Keys() []key.Binding { return p.ViewKeys(p.E) }

// Target is the node's pod, if known, for the actions.
func (p *LogPage) Target() host.Target {
	t := host.Target{View: host.RayLogView, Namespace: p.namespace}
	if p.pod != nil {
		t.Selected, t.Owner = p.pod, p.pod
	}
	return t
}

// Init finds the file an explanation names on the head node first, if it
// must, then opens the stream.
func (p *LogPage) Init() tea.Cmd {
	p.Begin(p.E.Ctx)
	src := p.E.Sess.RayLogs
	if src == nil {
		p.Fail(errors.New("Ray's log files are not available in this session"))
		return nil
	}
	if !p.explain.Known() && p.explain.Glob != "" && p.req.Filename == "" {
		if p.req.Node == (dashboard.LogNode{}) {
			p.Fail(errors.New("the head pod has no IP yet, so Ray cannot be asked for its files"))
			return nil
		}
		ctx, id, ns, ex, head := p.Ctx, p.ID, p.namespace, p.explain, p.req.Node
		return func() tea.Msg {
			ctx, cancel := context.WithTimeout(ctx, rayLogTimeout)
			defer cancel()
			req, err := src.Resolve(ctx, ns, ex, head)
			return rayLogResolvedMsg{id: id, req: req, err: err}
		}
	}
	return p.openStream()
}

func (p *LogPage) openStream() tea.Cmd {
	src, ns, cluster, req := p.E.Sess.RayLogs, p.namespace, p.cluster, p.req
	if req.Lines == 0 {
		req.Lines = widgets.MaxPodLogLines
	}
	return p.Start(func(ctx context.Context) (io.ReadCloser, error) {
		return src.Open(ctx, ns, cluster, req, true)
	})
}

// Receive takes the file found for this page and opens it, or a batch of
// lines (LogView.Receive).
func (p *LogPage) Receive(msg tea.Msg) (tea.Cmd, bool) {
	if m, ok := msg.(rayLogResolvedMsg); ok {
		if m.id != p.ID {
			return nil, false
		}
		if m.err != nil {
			p.Fail(m.err)
			return nil, true
		}
		p.req = m.req
		p.name += ": " + m.req.Filename
		return p.openStream(), true
	}
	return p.LogView.Receive(msg)
}

// Update is the log view's keys: follow, wrap, search steps, scrolling.
func (p *LogPage) Update(msg tea.KeyPressMsg) (bool, tea.Cmd) {
	return p.HandleKey(p.E, msg), nil
}

// View is the log view with its heading or, when reading failed before
// any line came, why Ray's logs cannot be read and what to do instead.
func (p *LogPage) View() string {
	if p.Err != nil && len(p.Lines) == 0 {
		return strings.Join(format.WrapEach(unreachable(p.E, p.namespace, p.cluster, p.pod, p.Err), p.W), "\n")
	}
	return p.Render(p.E.St, "Ray log")
}

// ClusterKey opens the Ray log browser of a cluster's node (L): the pod's
// (nil: the head's), in e, the Env of the cluster's context. It reads
// memory only.
func ClusterKey(e *host.Env, rc *rayv1.RayCluster, pod *podview.Pod) tea.Cmd {
	ns, name := rc.Namespace, rc.Name
	return func() tea.Msg {
		return host.PushMsg{Build: func() host.Page { return NewFilesPage(e, ns, name, pod) }}
	}
}

// PodKey opens the Ray log browser of a pod's Ray node (L on the
// pods list), in e, the Env of the pod's context, or says why there is
// none. It reads memory only.
func PodKey(e *host.Env, pod *podview.Pod) tea.Cmd {
	cluster := pod.Labels[rayv1.RayClusterLabelKey]
	if cluster == "" {
		return host.Warn("ray logs: pod %s/%s has no %s label: it is not a node of a RayCluster", pod.Namespace, pod.Name, rayv1.RayClusterLabelKey)
	}
	ns := pod.Namespace
	return func() tea.Msg {
		return host.PushMsg{Build: func() host.Page { return NewFilesPage(e, ns, cluster, pod) }}
	}
}

// ExplainKey opens the file that explains obj (E), in e, the Env of its
// context, or says why there is none.
func ExplainKey(e *host.Env, namespace string, ex raydash.Explanation, ok bool, none string) tea.Cmd {
	if !ok {
		return func() tea.Msg { return host.WarnMsg(none) }
	}
	return func() tea.Msg {
		return host.PushMsg{Build: func() host.Page { return newExplainPage(e, namespace, ex) }}
	}
}
