package cronjob

import (
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/raydar/raydar/kube/history"
	"github.com/raydar/raydar/kube/redact"
	"github.com/raydar/raydar/kube/watch"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/tui/format"
	"github.com/raydar/raydar/tui/host"
	"github.com/raydar/raydar/tui/registry"
	"github.com/raydar/raydar/tui/styles"
	"github.com/raydar/raydar/tui/table"
)

// Detail shows one RayCronJob: its schedule and what it means,
// whether it is suspended, its last schedule and next run, and the RayJobs
// it created (newest first) with their states and, for a failed one, why.
// Enter opens the selected RayJob.
type Detail struct {
	host.Base
	cj      *rayv1.RayCronJob
	uid     types.UID
	deleted bool
	t       *table.Model[*rayv1.RayJob]
	jobs    host.UIDSet
	// ticks keeps the next tick the summary counts down to.
	ticks format.CronTicks
}

// JobWhy is why a failed RayJob failed, on one line: "reason: message"
// ("" unless it failed).
func JobWhy(j *rayv1.RayJob) string {
	s := j.Status
	if s.JobStatus != rayv1.JobStatusFailed && s.JobDeploymentStatus != rayv1.JobDeploymentStatusFailed &&
		s.JobDeploymentStatus != rayv1.JobDeploymentStatusValidationFailed {
		return ""
	}
	parts := make([]string, 0, 2)
	for _, p := range []string{string(s.Reason), format.OneLine(s.Message)} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	if len(parts) == 0 {
		return "failed (no reason given)"
	}
	return strings.Join(parts, ": ")
}

// newDetail is the page of cj; its table of RayJobs has the jobs list's
// meta (format.JobMeta) with the RayCronJob's columns (jobColumns).
func newDetail(e *host.Env, cj *rayv1.RayCronJob) *Detail {
	d := &Detail{Base: host.Base{E: e, VK: DetailView}, cj: cj, uid: watch.Key(cj), ticks: format.CronTicks{}}
	sp := registry.Spec(jobColumns(), format.JobMeta, nil, nil)
	sp.NoMarks = true // its actions (trigger, suspend, delete) act on the RayCronJob
	d.t = table.New(sp, e.St, e.KM, e.Now)
	d.t.SortBy(table.ByAge) // newest first
	d.refresh()
	return d
}

// ownJob reports whether j is one of the RayCronJob's (by KubeRay's
// label, in its namespace).
func (d *Detail) ownJob(j metav1.Object) bool {
	return j.GetNamespace() == d.cj.Namespace && j.GetLabels()[rayv1.RayCronJobNameLabelKey] == d.cj.Name
}

// refresh lists the RayCronJob's RayJobs from the store.
func (d *Detail) refresh() {
	var jobs []*rayv1.RayJob
	d.jobs = host.UIDSet{}
	for _, o := range d.E.Store.List(watch.RayJob) {
		if j, ok := o.(*rayv1.RayJob); ok && d.ownJob(j) {
			jobs = append(jobs, j)
			d.jobs[watch.Key(j)] = true
		}
	}
	d.t.Set(jobs)
}

// Title is "RayCronJob ns/name", "(deleted)" once it is gone.
func (d *Detail) Title() string { return host.Titled(rayv1.KindRayCronJob, d.cj, d.deleted) }

// Crumb is "ns/name".
func (d *Detail) Crumb() string { return d.cj.Namespace + "/" + d.cj.Name }

// Table is the RayJobs table.
func (d *Detail) Table() host.Tabler { return d.t }

// SetSize gives the RayJobs table what the summary and History block leave.
func (d *Detail) SetSize(w, h int) {
	d.W, d.H = w, h
	d.t.SetSize(w, max(h-cronSummaryLines-2-d.E.Hist.Height(), 3))
}

// CanOpen says whether there is a RayJob to open.
func (d *Detail) CanOpen() bool { return d.t.Len() > 0 }

// Keys is Enter, which opens the selected RayJob.
func (d *Detail) Keys() []key.Binding { return []key.Binding{d.E.KM.Open} }

// Update moves in the RayJobs table.
func (d *Detail) Update(msg tea.KeyPressMsg) (bool, tea.Cmd) { return d.t.HandleKey(msg), nil }

// Open is the detail page of the selected RayJob.
func (d *Detail) Open() host.Page {
	j, ok := d.t.Selected()
	if !ok {
		return nil
	}
	return d.E.Kinds.Open(d.E, j)
}

// Target is the RayCronJob with the selected RayJob, for the actions.
func (d *Detail) Target() host.Target {
	t := host.Target{View: DetailView, Namespace: d.cj.Namespace, Owner: d.cj}
	if j, ok := d.t.Selected(); ok {
		t.Selected = j
	}
	return t
}

// Apply follows the RayCronJob and lists its RayJobs again when a change
// touches one of them (one it has, or a new one naming it).
func (d *Detail) Apply(ch *watch.Changes) {
	host.FollowInto(ch, watch.RayCronJob, d.uid, &d.cj, &d.deleted)
	touched := ch.Touches(d.jobs)
	for _, o := range ch.Upserted[watch.RayJob] {
		touched = touched || d.ownJob(o)
	}
	if touched {
		d.refresh()
	}
}

// cronSummaryLines is how many lines the summary above the RayJobs takes.
const cronSummaryLines = 6

// View is the summary, the History block, the RayJobs table and the Why
// line of the selected RayJob.
func (d *Detail) View() string {
	st, cj, now := d.E.St, d.cj, d.E.Now()
	lbl := func(k string) string { return st.Label.Render(k + ":") }
	word := format.CronStatus(cj)
	suspend := "false"
	if cj.Spec.IsSuspended() {
		suspend = st.Class(styles.Pending).Render("true")
	}
	last := format.None
	if t := cj.Status.LastScheduleTime; t != nil {
		last = format.MetaAge(now, t) + " ago (" + t.UTC().Format(time.RFC3339) + ")"
	}
	tick := d.ticks.Get(cj, now)
	next := tick.Countdown(now)
	if tick.OK {
		next += " (" + tick.At.In(tick.Zone).Format("Mon 2006-01-02 15:04 MST") + ")"
	}
	why := format.Conditions(cj.Status.Conditions)
	if c := meta.FindStatusCondition(cj.Status.Conditions, rayv1.RayCronJobScheduleValid); c != nil && c.Status == metav1.ConditionFalse && c.Message != "" {
		why = st.Class(styles.Bad).Render(c.Reason + ": " + format.OneLine(c.Message))
	}
	lines := []string{
		lbl("Status") + " " + st.Class(styles.ClassOf(word)).Render(word) + "  " + lbl("Suspend") + " " + suspend +
			"  " + lbl("Age") + " " + format.Age(now, cj.CreationTimestamp.Time),
		lbl("Schedule") + " " + cj.Spec.Schedule + "  " + st.Faint.Render("("+tick.Words+")"),
		lbl("Last schedule") + " " + last,
		lbl("Next run") + " " + next,
		lbl("Conditions") + " " + why,
		lbl("Entrypoint") + " " + format.OrNone(format.OneLine(redact.Flags(cj.Spec.JobTemplate.Entrypoint))),
	}
	for i, l := range lines {
		lines[i] = ansi.Truncate(l, max(d.W, 1), "…")
	}
	head := st.Section.Render("RayJobs") + " " + st.Faint.Render("(newest first)")
	if d.t.Total() == 0 {
		head += " " + st.Faint.Render("none yet")
	}
	lines = append(append(lines, d.historyBlock()...), head, d.t.View(), d.footer())
	return strings.Join(lines, "\n")
}

// footer says, in full, why the selected RayJob failed.
func (d *Detail) footer() string {
	j, ok := d.t.Selected()
	if !ok {
		return ""
	}
	w := JobWhy(j)
	if w == "" {
		return ""
	}
	st := d.E.St
	return ansi.Truncate(st.Label.Render("Why "+j.Name+":")+" "+st.Class(styles.Bad).Render(w), max(d.W, 1), "…")
}

// HistoryRef is the RayCronJob as kube/history files it.
func (d *Detail) HistoryRef() history.Ref {
	return host.RefOf(rayv1.KindRayCronJob, d.cj.Namespace, d.cj.Name, d.uid)
}

func (d *Detail) historyBlock() []string {
	return d.E.Hist.Block(d.E.St, d.E, d.uid, d.W, host.HistoryRows, true)
}
