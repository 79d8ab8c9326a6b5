package job

import (
	"context"
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"k8s.io/apimachinery/pkg/types"

	"github.com/raydar/raydar/kube/gauges"
	"github.com/raydar/raydar/kube/history"
	"github.com/raydar/raydar/kube/raydash"
	"github.com/raydar/raydar/kube/redact"
	"github.com/raydar/raydar/kube/watch"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/rayapi/why"
	"github.com/raydar/raydar/tui/format"
	"github.com/raydar/raydar/tui/host"
	"github.com/raydar/raydar/tui/pages/raylogs"
	"github.com/raydar/raydar/tui/styles"
	"github.com/raydar/raydar/tui/widgets"
)

const (
	// maxLogLines is how many log lines the job view keeps.
	maxLogLines = 1000
	// logRefresh is how often the logs of a running job are fetched again
	// while its view is on top.
	logRefresh = 5 * time.Second
	logTimeout = 10 * time.Second
)

type jobLogsMsg struct {
	uid  types.UID
	text string
	err  error
}

// Detail shows one RayJob and the tail of its Ray job's logs.
type Detail struct {
	host.Base
	job        *rayv1.RayJob
	uid        types.UID
	deleted    bool
	logs       []string
	logErr     error
	loaded     bool
	fetching   bool
	lastFetch  time.Time
	lastStatus string
	scroll     int // lines scrolled up from the end of the logs
	// sec is the security line of the job's cluster (why.JobSecurity),
	// read again when a RayJob or RayCluster changes, not every frame.
	sec why.Security
	// use is Ray's gauges of the job's cluster (Session.Gauges), read on
	// ticks while the page is on top: the Use block beside its run.
	use gauges.Cluster
}

// newDetail is the detail page of j, in e.
func newDetail(e *host.Env, j *rayv1.RayJob) *Detail {
	d := &Detail{Base: host.Base{E: e, VK: DetailView}, job: j, uid: watch.Key(j), lastStatus: jobState(j)}
	d.sec = why.JobSecurity(j, d.cluster())
	return d
}

func jobState(j *rayv1.RayJob) string {
	return string(j.Status.JobStatus) + "/" + string(j.Status.JobDeploymentStatus)
}

// Title is "RayJob ns/name", "(deleted)" once it is gone.
func (d *Detail) Title() string { return host.Titled(rayv1.KindRayJob, d.job, d.deleted) }

// Crumb is "ns/name".
func (d *Detail) Crumb() string { return d.job.Namespace + "/" + d.job.Name }

// Init reads the job's logs and its cluster's gauges.
func (d *Detail) Init() tea.Cmd { d.pollGauges(); return d.fetch() }

// pollGauges reads the gauges of the job's cluster (marking it on screen).
func (d *Detail) pollGauges() {
	src, name := d.E.Sess.Gauges, d.job.Status.RayClusterName
	if src == nil || name == "" {
		d.use = gauges.Cluster{}
		return
	}
	d.use = src.Get(d.job.Namespace, name)
}

// useLines is the Use block of the job's cluster while it has one.
func (d *Detail) useLines() []string {
	if d.E.Sess.Gauges == nil || d.job.Status.RayClusterName == "" {
		return nil
	}
	return widgets.UseLines(d.E.St, d.use, d.W)
}

// Keys are Enter (the job's RayCluster), E (the Ray log that explains the
// job) and, with a logs client, r (reload the logs).
func (d *Detail) Keys() []key.Binding {
	bs := []key.Binding{d.E.KM.Open, d.E.KM.Explain}
	if d.E.Sess.Logs != nil {
		r := d.E.KM.Refresh
		r.SetHelp(r.Help().Key, "reload logs")
		bs = append(bs, r)
	}
	return bs
}

// CanOpen says whether the job names a RayCluster.
func (d *Detail) CanOpen() bool { return d.job.Status.RayClusterName != "" }

// Open is the detail page of the job's RayCluster, nil while the store
// has none.
func (d *Detail) Open() host.Page {
	rc := d.cluster()
	if rc == nil {
		return nil
	}
	return d.E.Kinds.Open(d.E, rc)
}

// ClustersShown is the job's RayCluster, whose causes the job's Why block
// states as well (its autoscaler access is asked while the page is on
// top).
func (d *Detail) ClustersShown() []*rayv1.RayCluster {
	if o, ok := d.E.Store.Find(watch.RayCluster, d.job.Namespace, d.job.ClusterName()); ok && d.job.ClusterName() != "" {
		return []*rayv1.RayCluster{o.(*rayv1.RayCluster)}
	}
	return nil
}

// cluster is the job's RayCluster in the store, nil before it has one.
func (d *Detail) cluster() *rayv1.RayCluster {
	name := d.job.Status.RayClusterName
	if name == "" {
		return nil
	}
	o, ok := d.E.Store.Find(watch.RayCluster, d.job.Namespace, name)
	if !ok {
		return nil
	}
	return o.(*rayv1.RayCluster)
}

// Target is the RayJob, for the actions.
func (d *Detail) Target() host.Target {
	return host.Target{View: DetailView, Namespace: d.job.Namespace, Selected: d.job, Owner: d.job}
}

// fetch asks for the logs in a command; one fetch at a time.
func (d *Detail) fetch() tea.Cmd {
	logs := d.E.Sess.Logs
	if logs == nil || d.fetching {
		return nil
	}
	d.fetching = true
	d.lastFetch = d.E.Now()
	ctx, ns, name, uid := d.E.Ctx, d.job.Namespace, d.job.Name, d.uid
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, logTimeout)
		defer cancel()
		text, err := logs.JobLogs(ctx, ns, name)
		return jobLogsMsg{uid: uid, text: text, err: err}
	}
}

// Receive takes the logs read for this page's job.
func (d *Detail) Receive(msg tea.Msg) (tea.Cmd, bool) {
	m, ok := msg.(jobLogsMsg)
	if !ok || m.uid != d.uid {
		return nil, false
	}
	d.fetching = false
	d.loaded = true
	d.logErr = m.err
	if m.err == nil {
		d.logs = splitLogs(m.text)
	}
	return nil, true
}

// splitLogs keeps the last maxLogLines lines, without escape sequences.
func splitLogs(text string) []string {
	text = strings.TrimRight(ansi.Strip(text), "\n")
	if text == "" {
		return nil
	}
	lines := strings.Split(text, "\n")
	if len(lines) > maxLogLines {
		lines = lines[len(lines)-maxLogLines:]
	}
	for i, l := range lines {
		lines[i] = strings.ReplaceAll(strings.TrimRight(l, "\r"), "\t", "    ")
	}
	return lines
}

// Tick reads the gauges, and the logs again every logRefresh until the job
// has ended.
func (d *Detail) Tick() tea.Cmd {
	d.pollGauges()
	if d.job.Status.JobStatus.IsTerminal() || d.E.Now().Sub(d.lastFetch) < logRefresh {
		return nil
	}
	return d.fetch()
}

// Apply is ApplyCmd without its command.
func (d *Detail) Apply(ch *watch.Changes) { _ = d.ApplyCmd(ch) }

// ApplyCmd follows the RayJob and its cluster's security line, and reads
// the logs again when the job's status or deployment status changed.
func (d *Detail) ApplyCmd(ch *watch.Changes) tea.Cmd {
	host.FollowInto(ch, watch.RayJob, d.uid, &d.job, &d.deleted)
	if ch.Any(watch.RayJob) || ch.Any(watch.RayCluster) {
		d.sec = why.JobSecurity(d.job, d.cluster())
	}
	if s := jobState(d.job); s != d.lastStatus {
		d.lastStatus = s
		return d.fetch()
	}
	return nil
}

// Update reloads the logs (r), opens the Ray log that explains the job (E)
// or scrolls the logs.
func (d *Detail) Update(msg tea.KeyPressMsg) (bool, tea.Cmd) {
	km := d.E.KM
	switch {
	case key.Matches(msg, km.Refresh):
		return true, d.fetch()
	case key.Matches(msg, km.Explain): // the runtime env setup log of a PENDING job, else the driver log
		ex, ok := raydash.ExplainRayJob(d.job)
		return true, raylogs.ExplainKey(d.E, d.job.Namespace, ex, ok, "the RayJob has no Ray job yet (no cluster or no submission ID), so no Ray log explains it")
	case !widgets.ScrollKey(km, msg, &d.scroll, widgets.FromEnd, max(d.logHeight()-1, 1), len(d.logs)):
		return false, nil
	}
	d.scroll = format.ClampInt(d.scroll, 0, max(len(d.logs)-d.logHeight(), 0))
	return true, nil
}

const jobHeaderLines = 8

// minJobLogLines is what the job detail keeps for its logs however long
// the Why block is.
const minJobLogLines = 4

func (d *Detail) whyBlock() []string {
	cs := d.E.Why.Get(d.uid)
	return widgets.WhyLines(d.E.St, cs, d.W, widgets.WhyBudget(cs, d.H, jobHeaderLines+minJobLogLines), true)
}

func (d *Detail) logHeight() int { return d.logHeightWith(len(d.whyBlock())) }

// logHeightWith is logHeight for a Why block of whyN lines already rendered.
func (d *Detail) logHeightWith(whyN int) int {
	return max(d.H-jobHeaderLines-len(d.useLines())-d.E.Hist.Height()-whyN, 1)
}

// View is the Why block, the job's status, cluster and times, the History
// block and the visible part of the logs.
func (d *Detail) View() string {
	st, j, now := d.E.St, d.job, d.E.Now()
	s := j.Status
	lbl := func(k string) string { return st.Label.Render(fmt.Sprintf("%-12s", k+":")) }
	val := func(v string) string { return fmt.Sprintf("%-22s", v) }
	jobStatus := format.OrNone(string(s.JobStatus))
	dep := format.OrNone(string(s.JobDeploymentStatus))
	when := func(t string, abs string) string {
		if abs == "" {
			return t
		}
		return t + " ago (" + abs + ")"
	}
	start, end := format.None, format.None
	if s.StartTime != nil {
		start = when(format.MetaAge(now, s.StartTime), s.StartTime.UTC().Format(time.RFC3339))
	}
	if s.EndTime != nil {
		end = when(format.MetaAge(now, s.EndTime), s.EndTime.UTC().Format(time.RFC3339))
	}
	lines := []string{
		lbl("Job status") + st.Class(styles.ClassOf(jobStatus)).Render(val(jobStatus)) + " " + st.Label.Render("Deployment:") + " " + st.Class(styles.ClassOf(dep)).Render(dep),
		lbl("Cluster") + val(format.OrNone(s.RayClusterName)) + " " + st.Label.Render("Security:") + " " + format.Security(st, d.sec),
		lbl("Job ID") + val(format.OrNone(s.JobId)) + " " + st.Label.Render("Mode:") + " " + format.OrNone(string(j.Spec.SubmissionMode)),
		lbl("Start") + start + "  " + st.Label.Render("Duration:") + " " + format.JobDuration(now, j),
		lbl("End") + end,
		lbl("Reason") + format.OrNone(string(s.Reason)),
		lbl("Message") + format.OrNone(strings.ReplaceAll(s.Message, "\n", " ")),
		lbl("Entrypoint") + format.OrNone(redact.Flags(j.Spec.Entrypoint)),
	}
	lines = append(lines, d.useLines()...)
	wl := d.whyBlock()
	lines = append(append(wl, lines...), d.historyBlock()...)
	out := strings.Join(lines, "\n") + "\n"
	lh := d.logHeightWith(len(wl))
	switch {
	case d.E.Sess.Logs == nil:
		return out + st.Section.Render("Logs") + " " + st.Faint.Render("not available (no dashboard client)")
	case d.logErr != nil:
		return out + st.Section.Render("Logs") + " " + st.FlashErr.Render("error: "+d.logErr.Error())
	case !d.loaded:
		return out + st.Section.Render("Logs") + " " + st.Faint.Render("loading…")
	case len(d.logs) == 0:
		return out + st.Section.Render("Logs") + " " + st.Faint.Render("empty")
	}
	n := lh - 1
	end2 := len(d.logs) - d.scroll
	begin := max(end2-n, 0)
	head := fmt.Sprintf("Logs (lines %d-%d of %d)", begin+1, end2, len(d.logs))
	return out + st.Section.Render(head) + "\n" + strings.Join(d.logs[begin:end2], "\n")
}

// HistoryRef is the RayJob as kube/history files it.
func (d *Detail) HistoryRef() history.Ref {
	return host.RefOf(rayv1.KindRayJob, d.job.Namespace, d.job.Name, d.uid)
}

func (d *Detail) historyBlock() []string {
	return d.E.Hist.Block(d.E.St, d.E, d.uid, d.W, host.HistoryRows, true)
}
