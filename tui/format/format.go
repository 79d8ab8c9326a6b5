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

// None is what a cell shows for no value: "-".
const None = status.None

// Age formats the time since t like kubectl ("5m", "3h", "2d"); "-" if unset.
func Age(now, t time.Time) string { return status.Age(now, t) }

// MetaAge is Age of an optional timestamp; "-" if nil.
func MetaAge(now time.Time, t *metav1.Time) string { return status.Since(now, t) }

// Qty formats a quantity; "-" when zero.
func Qty(q resource.Quantity) string {
	if q.IsZero() {
		return None
	}
	return q.String()
}

// I32 formats *p; "-" when p is nil.
func I32(p *int32) string {
	if p == nil {
		return None
	}
	return fmt.Sprint(*p)
}

// ClusterStatus is the one-word status of a RayCluster (status.Cluster).
func ClusterStatus(rc *rayv1.RayCluster) string { return status.Cluster(rc) }

// ClusterWorkers is a RayCluster's "ready/desired" workers (status.Workers).
func ClusterWorkers(rc *rayv1.RayCluster) string { return status.Workers(rc) }

// ServiceStatus is the one-word status of a RayService (status.Service).
func ServiceStatus(s *rayv1.RayService) string { return status.Service(s) }

// AppsReady counts RUNNING applications.
func AppsReady(st rayv1.RayServiceStatus) (ready, total int) { return status.AppsReady(st) }

// PodStatus is kubectl's STATUS column, simplified (status.Pod).
func PodStatus(p *podview.Pod) string { return status.Pod(p) }

// PodReady is "ready/total" containers and the restart count.
func PodReady(p *podview.Pod) (string, int32) { return status.PodReady(p) }

// PodIsReady reports whether the pod's Ready condition is true.
func PodIsReady(p *podview.Pod) bool { return status.PodIsReady(p) }

// Conditions formats conditions as "Type=Status(Reason)" sorted by type.
func Conditions(cs []metav1.Condition) string { return status.Conditions(cs) }

// JobStatus is a RayJob's STATUS word in a list (status.JobWord): its job
// status, marked when its other fields contradict it.
func JobStatus(j *rayv1.RayJob, now time.Time) string { return status.JobWord(j, now) }

// JobDeployment is a RayJob's deployment status (status.JobDeployment).
func JobDeployment(j *rayv1.RayJob) string { return status.JobDeployment(j) }

// JobDuration is how long the job ran (so far, if it has not ended).
func JobDuration(now time.Time, j *rayv1.RayJob) string { return status.JobDuration(now, j) }

// CronStatus is the one-word status of a RayCronJob (status.CronJob).
func CronStatus(c *rayv1.RayCronJob) string { return status.CronJob(c) }

// CronWords is a RayCronJob's schedule in words (schedule.Describe):
// "every day at 02:00 Europe/Berlin".
func CronWords(c *rayv1.RayCronJob) string { return schedule.Describe(&c.Spec) }

// CronNext is when a RayCronJob's next RayJob is due (schedule.NextRun,
// in the TUI's time zone for one without spec.timeZone); ok is false
// while it is suspended or invalid, or never fires again.
func CronNext(c *rayv1.RayCronJob, now time.Time) (time.Time, bool) {
	return schedule.NextRun(c, now, time.Local)
}

// CronNextRun counts down to the next run: "in 4m12s", "due" when the
// tick is at or before now (its RayJob is not there yet), "-" when there
// is none.
func CronNextRun(c *rayv1.RayCronJob, now time.Time) string {
	t, ok := CronNext(c, now)
	return status.NextRun(now, t, ok)
}

// OrNone is s, or "-" when s is empty.
func OrNone(s string) string { return status.OrNone(s) }

// WrapEach wraps each of lines at w cells.
func WrapEach(lines []string, w int) []string {
	var out []string
	for _, l := range lines {
		out = append(out, strings.Split(ansi.Wrap(l, max(w, 1), ""), "\n")...)
	}
	return out
}

// PadRight pads s with spaces to w cells.
func PadRight(s string, w int) string {
	if n := w - len([]rune(s)); n > 0 {
		return s + strings.Repeat(" ", n)
	}
	return s
}

// ClampInt is v bounded to [lo, hi].
func ClampInt(v, lo, hi int) int { return min(max(v, lo), hi) }

// Wrap lays out label followed by parts, as many parts per line as fit in
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

// OneLine is s with its newlines made spaces.
func OneLine(s string) string { return strings.ReplaceAll(s, "\n", " ") }

// Describer builds the lines of a describe page; each kind adds its own
// fields (kind.describe) between the common ones and the Events.
type Describer struct {
	St  *styles.Styles
	Now time.Time
	Out []string
}

// Field is a "Label: value" line.
func (d *Describer) Field(k, v string) {
	d.Out = append(d.Out, d.St.Label.Render(fmt.Sprintf("%-16s", k+":"))+OneLine(v))
}

// Label starts an indented list.
func (d *Describer) Label(k string) { d.Out = append(d.Out, d.St.Label.Render(k+":")) }

// Sub is a line of an indented list.
func (d *Describer) Sub(s string) { d.Out = append(d.Out, "  "+OneLine(s)) }

// Section starts a titled section after a blank line.
func (d *Describer) Section(s string) { d.Out = append(d.Out, "", d.St.Section.Render(s)) }

// Conds lists conditions, one a line.
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
