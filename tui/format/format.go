package format

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/raydar/raydar/rayapi/podview"
	"github.com/raydar/raydar/rayapi/schedule"
	"github.com/raydar/raydar/rayapi/status"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/tui/styles"
)

// The TUI's words, counts and ages are rayapi/status's, the vocabulary it
// shares with raydar get; these are its short local names.

const None = status.None

// age formats the time since t like kubectl ("5m", "3h", "2d"); "-" if unset.
func Age(now, t time.Time) string { return status.Age(now, t) }

func MetaAge(now time.Time, t *metav1.Time) string { return status.Since(now, t) }

// qty formats a quantity; "-" when zero.
func Qty(q resource.Quantity) string {
	if q.IsZero() {
		return None
	}
	return q.String()
}

func I32(p *int32) string {
	if p == nil {
		return None
	}
	return fmt.Sprint(*p)
}

// clusterStatus is the one-word status of a RayCluster (status.Cluster).
func ClusterStatus(rc *rayv1.RayCluster) string { return status.Cluster(rc) }

// clusterWorkers is a RayCluster's "ready/desired" workers (status.Workers).
func ClusterWorkers(rc *rayv1.RayCluster) string { return status.Workers(rc) }

// serviceStatus is the one-word status of a RayService (status.Service).
func ServiceStatus(s *rayv1.RayService) string { return status.Service(s) }

// appsReady counts RUNNING applications.
func AppsReady(st rayv1.RayServiceStatus) (ready, total int) { return status.AppsReady(st) }

// podStatus is kubectl's STATUS column, simplified (status.Pod).
func PodStatus(p *podview.Pod) string { return status.Pod(p) }

// podReady is "ready/total" containers and the restart count.
func PodReady(p *podview.Pod) (string, int32) { return status.PodReady(p) }

func PodIsReady(p *podview.Pod) bool { return status.PodIsReady(p) }

// conditions formats conditions as "Type=Status(Reason)" sorted by type.
func Conditions(cs []metav1.Condition) string { return status.Conditions(cs) }

// jobStatus is a RayJob's job status (status.Job); jobDeployment its
// deployment status (status.JobDeployment).
func JobStatus(j *rayv1.RayJob) string     { return status.Job(j) }
func JobDeployment(j *rayv1.RayJob) string { return status.JobDeployment(j) }

// jobDuration is how long the job ran (so far, if it has not ended).
func JobDuration(now time.Time, j *rayv1.RayJob) string { return status.JobDuration(now, j) }

// cronStatus is the one-word status of a RayCronJob (status.CronJob).
func CronStatus(c *rayv1.RayCronJob) string { return status.CronJob(c) }

// cronWords is a RayCronJob's schedule in words (schedule.Describe):
// "every day at 02:00 Europe/Berlin".
func CronWords(c *rayv1.RayCronJob) string { return schedule.Describe(&c.Spec) }

// cronNext is when a RayCronJob's next RayJob is due (schedule.NextRun,
// in the TUI's time zone for one without spec.timeZone); ok is false
// while it is suspended or invalid, or never fires again.
func CronNext(c *rayv1.RayCronJob, now time.Time) (time.Time, bool) {
	return schedule.NextRun(c, now, time.Local)
}

// cronNextRun counts down to the next run: "in 4m12s", "due" when the
// tick is at or before now (its RayJob is not there yet), "-" when there
// is none.
func CronNextRun(c *rayv1.RayCronJob, now time.Time) string {
	t, ok := CronNext(c, now)
	return status.NextRun(now, t, ok)
}

func OrNone(s string) string { return status.OrNone(s) }

// wrapEach wraps each of lines at w cells.
func WrapEach(lines []string, w int) []string {
	var out []string
	for _, l := range lines {
		out = append(out, strings.Split(ansi.Wrap(l, max(w, 1), ""), "\n")...)
	}
	return out
}

// padRight pads s with spaces to w cells.
func PadRight(s string, w int) string {
	if n := w - len([]rune(s)); n > 0 {
		return s + strings.Repeat(" ", n)
	}
	return s
}

func ClampInt(v, lo, hi int) int { return min(max(v, lo), hi) }

// wrap lays out label followed by parts, as many parts per line as fit in
// width; continuation lines are indented.
func Wrap(label string, parts []string, width int) []string {
	var out []string
	line, lw := label, ansi.StringWidth(label)
	for _, p := range parts {
		pw := ansi.StringWidth(p)
		if lw+1+pw > width && lw > 2 && line != label {
			out = append(out, line)
			line, lw = "  ", 2
		}
		line += " " + p
		lw += 1 + pw
	}
	return append(out, line)
}

func OneLine(s string) string { return strings.ReplaceAll(s, "\n", " ") }

// describer builds the lines of a describe page; each kind adds its own
// fields (kind.describe) between the common ones and the Events.
type Describer struct {
	St  *styles.Styles
	Now time.Time
	Out []string
}

// field is a "Label: value" line.
func (d *Describer) Field(k, v string) {
	d.Out = append(d.Out, d.St.Label.Render(fmt.Sprintf("%-16s", k+":"))+OneLine(v))
}

// label starts an indented list.
func (d *Describer) Label(k string) { d.Out = append(d.Out, d.St.Label.Render(k+":")) }

// sub is a line of an indented list.
func (d *Describer) Sub(s string) { d.Out = append(d.Out, "  "+OneLine(s)) }

func (d *Describer) Section(s string) { d.Out = append(d.Out, "", d.St.Section.Render(s)) }

// conds lists conditions, one a line.
func (d *Describer) Conds(cs []metav1.Condition) {
	if len(cs) == 0 {
		d.Field("Conditions", None)
		return
	}
	d.Label("Conditions")
	for _, c := range cs {
		s := fmt.Sprintf("%s=%s", c.Type, c.Status)
		if c.Reason != "" {
			s += " (" + c.Reason + ")"
		}
		if c.Message != "" {
			s += ": " + c.Message
		}
		d.Sub(s)
	}
}
