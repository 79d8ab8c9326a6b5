package tui

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
	"github.com/raydar/raydar/kube/watch"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/tui/format"
	"github.com/raydar/raydar/tui/host"
	"github.com/raydar/raydar/tui/pages/job"
	"github.com/raydar/raydar/tui/styles"
	"github.com/raydar/raydar/tui/table"
)

// cronJobDetail shows one RayCronJob: its schedule and what it means,
// whether it is suspended, its last schedule and next run, and the RayJobs
// it created (newest first) with their states and, for a failed one, why.
// Enter opens the selected RayJob.
type cronJobDetail struct {
	host.Base
	cj      *rayv1.RayCronJob
	uid     types.UID
	deleted bool
	t       *table.Model[*rayv1.RayJob]
	jobs    host.UIDSet
	// ticks keeps the next tick the summary counts down to.
	ticks cronTicks
}

// cronJobColumns are the columns of a RayCronJob's RayJobs: the jobs
// list's states and times, and WHY a failed one failed.
func cronJobColumns() []column[*rayv1.RayJob] {
	return []column[*rayv1.RayJob]{
		{Column: table.Column{Title: "NAME", Width: 30, Grow: true, Min: 24, Sort: table.ByName}, cell: func(j *rayv1.RayJob) string { return j.Name }},
		{Column: table.Column{Title: "STATUS", Width: 9, Sort: table.ByStatus}, cell: format.JobStatus},
		{Column: table.Column{Title: "DEPLOYMENT", Width: 10}, cell: format.JobDeployment},
		{Column: table.Column{Title: "START", Width: 5, Right: true, Drop: 2}, live: func(j *rayv1.RayJob, now time.Time) string { return format.MetaAge(now, j.Status.StartTime) }},
		{Column: table.Column{Title: "DURATION", Width: 8, Right: true}, live: func(j *rayv1.RayJob, now time.Time) string { return format.JobDuration(now, j) }},
		{Column: table.Column{Title: "AGE", Width: 5, Right: true, Sort: table.ByAge}, live: func(j *rayv1.RayJob, now time.Time) string { return format.Age(now, j.CreationTimestamp.Time) }},
		{Column: table.Column{Title: "WHY", Width: 30, Grow: true, Min: 12, Drop: 1}, cell: func(j *rayv1.RayJob) string { return format.OrNone(jobWhy(j)) }},
	}
}

// jobWhy is why a failed RayJob failed, on one line: "reason: message"
// ("" unless it failed).
func jobWhy(j *rayv1.RayJob) string {
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

func newCronJobDetail(e *host.Env, cj *rayv1.RayCronJob) *cronJobDetail {
	d := &cronJobDetail{Base: host.Base{E: e, VK: CronJobDetailView}, cj: cj, uid: watch.Key(cj), ticks: cronTicks{}}
	jd := jobDef()
	sp := spec(cronJobColumns(), jd.meta, nil, nil)
	sp.NoMarks = true // its actions (trigger, suspend, delete) act on the RayCronJob
	d.t = table.New(sp, e.St, e.KM, e.Now)
	d.t.SortBy(table.ByAge) // newest first
	d.refresh()
	return d
}

// ownJob reports whether j is one of the RayCronJob's (by KubeRay's
// label, in its namespace).
func (d *cronJobDetail) ownJob(j metav1.Object) bool {
	return j.GetNamespace() == d.cj.Namespace && j.GetLabels()[rayv1.RayCronJobNameLabelKey] == d.cj.Name
}

// refresh lists the RayCronJob's RayJobs from the store.
func (d *cronJobDetail) refresh() {
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

func (d *cronJobDetail) Title() string      { return host.Titled(rayv1.KindRayCronJob, d.cj, d.deleted) }
func (d *cronJobDetail) Crumb() string      { return d.cj.Namespace + "/" + d.cj.Name }
func (d *cronJobDetail) Table() host.Tabler { return d.t }
func (d *cronJobDetail) SetSize(w, h int) {
	d.W, d.H = w, h
	d.t.SetSize(w, max(h-cronSummaryLines-2-d.E.Hist.Height(), 3))
}
func (d *cronJobDetail) CanOpen() bool { return d.t.Len() > 0 }

func (d *cronJobDetail) Keys() []key.Binding { return []key.Binding{d.E.KM.Open} }

func (d *cronJobDetail) Update(msg tea.KeyPressMsg) (bool, tea.Cmd) { return d.t.HandleKey(msg), nil }

func (d *cronJobDetail) Open() host.Page {
	j, ok := d.t.Selected()
	if !ok {
		return nil
	}
	return job.NewDetail(d.E, j)
}

func (d *cronJobDetail) Target() Target {
	t := Target{View: CronJobDetailView, Namespace: d.cj.Namespace, Owner: d.cj}
	if j, ok := d.t.Selected(); ok {
		t.Selected = j
	}
	return t
}

// apply follows the RayCronJob and lists its RayJobs again when a change
// touches one of them (one it has, or a new one naming it).
func (d *cronJobDetail) Apply(ch *watch.Changes) {
	host.FollowInto(ch, watch.RayCronJob, d.uid, &d.cj, &d.deleted)
	touched := ch.Touches(d.jobs)
	for _, o := range ch.Upserted[watch.RayJob] {
		touched = touched || d.ownJob(o)
	}
	if touched {
		d.refresh()
	}
}

// cronZone is the time zone of cj's schedule (the TUI's own without
// spec.timeZone, as cronNext).
func cronZone(cj *rayv1.RayCronJob) *time.Location {
	if tz := cj.Spec.TimeZone; tz != nil {
		if l, err := time.LoadLocation(*tz); err == nil {
			return l
		}
	}
	return time.Local
}

// cronSummaryLines is how many lines the summary above the RayJobs takes.
const cronSummaryLines = 6

func (d *cronJobDetail) View() string {
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
	next := tick.countdown(now)
	if tick.ok {
		next += " (" + tick.at.In(tick.zone).Format("Mon 2006-01-02 15:04 MST") + ")"
	}
	why := format.Conditions(cj.Status.Conditions)
	if c := meta.FindStatusCondition(cj.Status.Conditions, rayv1.RayCronJobScheduleValid); c != nil && c.Status == metav1.ConditionFalse && c.Message != "" {
		why = st.Class(styles.Bad).Render(c.Reason + ": " + format.OneLine(c.Message))
	}
	lines := []string{
		lbl("Status") + " " + st.Class(styles.ClassOf(word)).Render(word) + "  " + lbl("Suspend") + " " + suspend +
			"  " + lbl("Age") + " " + format.Age(now, cj.CreationTimestamp.Time),
		lbl("Schedule") + " " + cj.Spec.Schedule + "  " + st.Faint.Render("("+tick.words+")"),
		lbl("Last schedule") + " " + last,
		lbl("Next run") + " " + next,
		lbl("Conditions") + " " + why,
		lbl("Entrypoint") + " " + format.OrNone(format.OneLine(cj.Spec.JobTemplate.Entrypoint)),
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
func (d *cronJobDetail) footer() string {
	j, ok := d.t.Selected()
	if !ok {
		return ""
	}
	w := jobWhy(j)
	if w == "" {
		return ""
	}
	st := d.E.St
	return ansi.Truncate(st.Label.Render("Why "+j.Name+":")+" "+st.Class(styles.Bad).Render(w), max(d.W, 1), "…")
}

func (d *cronJobDetail) HistoryRef() history.Ref {
	return host.RefOf(history.KindRayCronJob, d.cj.Namespace, d.cj.Name, d.uid)
}

func (d *cronJobDetail) historyBlock() []string {
	return d.E.Hist.Block(d.E.St, d.E, d.uid, d.W, host.HistoryRows, true)
}
