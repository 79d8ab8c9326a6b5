package tui

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/raydar/raydar/kube/watch"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// Golden snapshots of the RayCronJobs list and a RayCronJob's detail, at
// 80×24 and wide. `go test ./tui -run TestCronJobSnapshots -update`.
func TestCronJobSnapshots(t *testing.T) {
	cases := []struct {
		name string
		w, h int
		keys []string
	}{
		{"cronjobs", 160, 30, []string{":rcj", "<enter>"}},
		{"cronjobs_80x24", 80, 24, []string{":rcj", "<enter>"}},
		{"cronjob_detail", 160, 30, []string{":rcj", "<enter>", "j", "j", "<enter>", "j"}},
		{"cronjob_detail_80x24", 80, 24, []string{":rcj", "<enter>", "j", "j", "<enter>", "j"}},
		{"help_cronjob_detail", 100, 30, []string{":rcj", "<enter>", "j", "j", "<enter>", "?"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tm, _ := start(t, Options{Store: cronFixture(), Actions: DefaultActions(ActionDeps{})}, c.w, c.h)
			typeKeys(tm, c.keys...)
			screen, _ := finalScreen(t, tm)
			requireSize(t, screen, c.w, c.h)
			requireGolden(t, screen)
		})
	}
}

// row is the screen line that shows name (fails without one).
func row(t *testing.T, a *App, name string) string {
	t.Helper()
	screen := ansi.Strip(a.View().Content)
	for _, l := range strings.Split(screen, "\n") {
		if strings.Contains(l, " "+name+" ") {
			return l
		}
	}
	t.Fatalf("no row %s:\n%s", name, screen)
	return ""
}

// The RayCronJobs list is live: NEXT RUN counts down with the clock, is
// "due" once the tick has come and its RayJob is not there yet, and JOBS
// follows the RayJobs the store gets and loses; the detail follows them
// too, newest first, and Enter opens the selected RayJob.
func TestCronJobsAreLive(t *testing.T) {
	now := fixedNow
	a := newApp(t, Options{Store: cronFixture(), Now: func() time.Time { return now }})
	typeApp(a, ":rcj", "<enter>")
	// The row's cells, single-spaced: "… in 60s 2 scheduled" (NEXT RUN,
	// JOBS, STATUS; AGE is dropped at 100 columns).
	cells := func(name string) string { return strings.Join(strings.Fields(row(t, a, name)), " ") }
	if f := cells("every-minute"); !strings.HasSuffix(f, " in 60s 2 scheduled") {
		t.Fatalf("every-minute: %q", f)
	}
	now = now.Add(30 * time.Second)
	a.Update(tickMsg{})
	if r := row(t, a, "every-minute"); !strings.Contains(r, "in 30s") {
		t.Fatalf("no countdown: %q", r)
	}
	now = fixedNow.Add(time.Minute)
	a.Update(tickMsg{})
	if r := row(t, a, "every-minute"); !strings.Contains(r, " due ") {
		t.Fatalf("the 12:01 tick is not due: %q", r)
	}

	// The reconciler creates the 12:01 RayJob and moves lastScheduleTime;
	// a nightly RayJob goes.
	st := a.e.Store
	o, _ := st.Find(watch.RayCronJob, "ml", "every-minute")
	minutely := o.(*rayv1.RayCronJob).DeepCopy()
	minutely.Status.LastScheduleTime = ptr.To(metav1.NewTime(now))
	tick := rayv1.CronJobTickJob(minutely, now)
	tick.UID, tick.CreationTimestamp = "tick-1201", metav1.NewTime(now)
	old, _ := st.Find(watch.RayJob, "ml", "nightly-train-29535900")
	a.Update(batchMsg{gen: a.gen, deltas: []watch.Delta{
		{Kind: watch.RayCronJob, Object: minutely}, {Kind: watch.RayJob, Object: tick},
		{Kind: watch.RayJob, Deleted: true, Object: old},
	}})
	if f := cells("every-minute"); !strings.HasSuffix(f, " in 60s 3 scheduled") {
		t.Fatalf("every-minute after its tick: %q", f)
	}
	if f := cells("nightly-train"); !strings.HasSuffix(f, " in 12h 2 scheduled") {
		t.Fatalf("nightly-train after a RayJob went: %q", f)
	}

	typeApp(a, "j", "<enter>") // every-minute
	if a.top().Kind() != CronJobDetailView {
		t.Fatalf("top %v", a.top().Kind())
	}
	names := rowNames(a)
	if want := []string{tick.Name, rayv1.CronJobTickName("every-minute", fixedNow), rayv1.CronJobTickName("every-minute", fixedNow.Add(-time.Minute))}; !slices.Equal(names, want) {
		t.Fatalf("RayJobs %v, want %v (newest first)", names, want)
	}
	later := rayv1.CronJobTickJob(minutely, now.Add(time.Minute))
	later.UID, later.CreationTimestamp = "tick-1202", metav1.NewTime(now.Add(time.Minute))
	a.Update(batchMsg{gen: a.gen, deltas: []watch.Delta{{Kind: watch.RayJob, Object: later}}})
	if names := rowNames(a); len(names) != 4 || names[0] != later.Name {
		t.Fatalf("RayJobs %v after a new one", names)
	}
	typeApp(a, "g", "<enter>")
	if a.top().Kind() != JobDetailView || a.top().Title() != "RayJob ml/"+later.Name {
		t.Fatalf("top %v %q", a.top().Kind(), a.top().Title())
	}
}

// A RayCronJob's describe page has its fields; with --readonly trigger,
// suspend/resume and delete are neither offered nor bound.
func TestCronJobDescribeAndReadOnly(t *testing.T) {
	screen, a := run(t, Options{Store: cronFixture(), Actions: DefaultActions(ActionDeps{})}, seq(nightlyRow, "d")...)
	mustContain(t, screen, "Describe RayCronJob ml/nightly-train", "In words:       every day at 02:00 Europe/Berlin",
		"Time zone:      Europe/Berlin", "Next run:       in 13h", "Last schedule:  11h", "ScheduleValid=True (Valid)")
	if a.top().Kind() != DescribeView {
		t.Fatalf("top %v", a.top().Kind())
	}
	screen, _ = run(t, Options{Store: cronFixture(), ReadOnly: true, Actions: DefaultActions(ActionDeps{})}, seq(nightlyPage, "?")...)
	mustContain(t, screen, "Help ml/nightly-train", "describe")
	for _, hidden := range []string{"trigger now", "suspend/resume", "delete"} {
		if strings.Contains(screen, hidden) {
			t.Fatalf("read-only help offers %q:\n%s", hidden, screen)
		}
	}
}
