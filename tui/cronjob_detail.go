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

	"github.com/raydar/raydar/kube/watch"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/tui/styles"
	"github.com/raydar/raydar/tui/table"
)

// cronJobDetail shows one RayCronJob: its schedule and what it means,
// whether it is suspended, its last schedule and next run, and the RayJobs
// it created (newest first) with their states and, for a failed one, why.
// Enter opens the selected RayJob.
type cronJobDetail struct {
	pageBase
	cj      *rayv1.RayCronJob
	uid     types.UID
	deleted bool
	t       *table.Model[*rayv1.RayJob]
	jobs    uidSet
	// ticks keeps the next tick the summary counts down to.
	ticks cronTicks
}

// cronJobColumns are the columns of a RayCronJob's RayJobs: the jobs
// list's states and times, and WHY a failed one failed.
func cronJobColumns() []column[*rayv1.RayJob] {
	return []column[*rayv1.RayJob]{
		{Column: table.Column{Title: "NAME", Width: 30, Grow: true, Min: 24, Sort: table.ByName}, cell: func(j *rayv1.RayJob) string { return j.Name }},
		{Column: table.Column{Title: "STATUS", Width: 9, Sort: table.ByStatus}, cell: jobStatus},
		{Column: table.Column{Title: "DEPLOYMENT", Width: 10}, cell: jobDeployment},
		{Column: table.Column{Title: "START", Width: 5, Right: true, Drop: 2}, live: func(j *rayv1.RayJob, now time.Time) string { return metaAge(now, j.Status.StartTime) }},
		{Column: table.Column{Title: "DURATION", Width: 8, Right: true}, live: func(j *rayv1.RayJob, now time.Time) string { return jobDuration(now, j) }},
		{Column: table.Column{Title: "AGE", Width: 5, Right: true, Sort: table.ByAge}, live: func(j *rayv1.RayJob, now time.Time) string { return age(now, j.CreationTimestamp.Time) }},
		{Column: table.Column{Title: "WHY", Width: 30, Grow: true, Min: 12, Drop: 1}, cell: func(j *rayv1.RayJob) string { return orNone(jobWhy(j)) }},
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
	for _, p := range []string{string(s.Reason), oneLine(s.Message)} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	if len(parts) == 0 {
		return "failed (no reason given)"
	}
	return strings.Join(parts, ": ")
}

func newCronJobDetail(e *env, cj *rayv1.RayCronJob) *cronJobDetail {
	d := &cronJobDetail{pageBase: pageBase{e: e, vk: CronJobDetailView}, cj: cj, uid: watch.Key(cj), ticks: cronTicks{}}
	jd := jobDef()
	sp := spec(cronJobColumns(), jd.meta, nil, nil)
	sp.NoMarks = true // its actions (trigger, suspend, delete) act on the RayCronJob
	d.t = table.New(sp, e.st, e.km, e.now)
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
	d.jobs = uidSet{}
	for _, o := range d.e.store.List(watch.RayJob) {
		if j, ok := o.(*rayv1.RayJob); ok && d.ownJob(j) {
			jobs = append(jobs, j)
			d.jobs[watch.Key(j)] = true
		}
	}
	d.t.Set(jobs)
}

func (d *cronJobDetail) title() string { return titled(rayv1.KindRayCronJob, d.cj, d.deleted) }
func (d *cronJobDetail) crumb() string { return d.cj.Namespace + "/" + d.cj.Name }
func (d *cronJobDetail) tbl() tabler   { return d.t }
func (d *cronJobDetail) setSize(w, h int) {
	d.w, d.h = w, h
	d.t.SetSize(w, max(h-cronSummaryLines-2-d.e.hist.height(), 3))
}
func (d *cronJobDetail) canOpen() bool { return d.t.Len() > 0 }

func (d *cronJobDetail) keys() []key.Binding { return []key.Binding{d.e.km.Open} }

func (d *cronJobDetail) update(msg tea.KeyPressMsg) (bool, tea.Cmd) { return d.t.HandleKey(msg), nil }

func (d *cronJobDetail) open() page {
	j, ok := d.t.Selected()
	if !ok {
		return nil
	}
	return newJobDetail(d.e, j)
}

func (d *cronJobDetail) target() Target {
	t := Target{View: CronJobDetailView, Namespace: d.cj.Namespace, Owner: d.cj}
	if j, ok := d.t.Selected(); ok {
		t.Selected = j
	}
	return t
}

// apply follows the RayCronJob and lists its RayJobs again when a change
// touches one of them (one it has, or a new one naming it).
func (d *cronJobDetail) apply(ch *watch.Changes) {
	followInto(ch, watch.RayCronJob, d.uid, &d.cj, &d.deleted)
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

func (d *cronJobDetail) view() string {
	st, cj, now := d.e.st, d.cj, d.e.now()
	lbl := func(k string) string { return st.Label.Render(k + ":") }
	word := cronStatus(cj)
	suspend := "false"
	if cj.Spec.IsSuspended() {
		suspend = st.Class(styles.Pending).Render("true")
	}
	last := none
	if t := cj.Status.LastScheduleTime; t != nil {
		last = metaAge(now, t) + " ago (" + t.UTC().Format(time.RFC3339) + ")"
	}
	tick := d.ticks.get(cj, now)
	next := tick.countdown(now)
	if tick.ok {
		next += " (" + tick.at.In(tick.zone).Format("Mon 2006-01-02 15:04 MST") + ")"
	}
	why := conditions(cj.Status.Conditions)
	if c := meta.FindStatusCondition(cj.Status.Conditions, rayv1.RayCronJobScheduleValid); c != nil && c.Status == metav1.ConditionFalse && c.Message != "" {
		why = st.Class(styles.Bad).Render(c.Reason + ": " + oneLine(c.Message))
	}
	lines := []string{
		lbl("Status") + " " + st.Class(styles.ClassOf(word)).Render(word) + "  " + lbl("Suspend") + " " + suspend +
			"  " + lbl("Age") + " " + age(now, cj.CreationTimestamp.Time),
		lbl("Schedule") + " " + cj.Spec.Schedule + "  " + st.Faint.Render("("+tick.words+")"),
		lbl("Last schedule") + " " + last,
		lbl("Next run") + " " + next,
		lbl("Conditions") + " " + why,
		lbl("Entrypoint") + " " + orNone(oneLine(cj.Spec.JobTemplate.Entrypoint)),
	}
	for i, l := range lines {
		lines[i] = ansi.Truncate(l, max(d.w, 1), "…")
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
	st := d.e.st
	return ansi.Truncate(st.Label.Render("Why "+j.Name+":")+" "+st.Class(styles.Bad).Render(w), max(d.w, 1), "…")
}
