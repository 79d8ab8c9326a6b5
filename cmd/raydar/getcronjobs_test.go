package main

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/kube/actions"
	"github.com/raydar/raydar/rayapi/kinds"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

func testCronJob(ns, name, schedule string) *rayv1.RayCronJob {
	return &rayv1.RayCronJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: rayv1.RayCronJobSpec{Schedule: schedule, TimeZone: ptr.To("Europe/Berlin"), JobTemplate: testJob(ns, name, true).Spec}}
}

// TestCronJobCells: the row of `raydar get cronjobs` for a RayCronJob
// that is scheduled, due, suspended and invalid.
func TestCronJobCells(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 30, 0, time.UTC)
	created := metav1.NewTime(now.Add(-3 * time.Hour))
	cj := func(name, schedule string, edit func(*rayv1.RayCronJob)) *rayv1.RayCronJob {
		c := testCronJob("ns", name, schedule)
		c.CreationTimestamp = created
		edit(c)
		return c
	}
	for _, tc := range []struct {
		cj   *rayv1.RayCronJob
		want []string
	}{
		{cj("every-minute", "* * * * *", func(c *rayv1.RayCronJob) { c.Status.LastScheduleTime = &metav1.Time{Time: now.Add(-30 * time.Second)} }),
			[]string{"every-minute", "* * * * * (every minute)", "false", "30s", "in 30s", "scheduled", "3h"}},
		{cj("overdue", "0 11 * * *", func(c *rayv1.RayCronJob) {}), // 10:00 UTC, after its creation: its RayJob is not there yet
			[]string{"overdue", "0 11 * * * (every day at 11:00 Europe/Berlin)", "false", "-", "due", "scheduled", "3h"}},
		{cj("nightly", "0 2 * * *", func(c *rayv1.RayCronJob) {}),
			[]string{"nightly", "0 2 * * * (every day at 02:00 Europe/Berlin)", "false", "-", "in 12h", "scheduled", "3h"}},
		{cj("paused", "0 2 * * *", func(c *rayv1.RayCronJob) { c.Spec.Suspend = ptr.To(true) }),
			[]string{"paused", "0 2 * * * (every day at 02:00 Europe/Berlin)", "true", "-", "-", "suspended", "3h"}},
		{cj("broken", "61 * * * *", func(c *rayv1.RayCronJob) {
			c.Status.Conditions = []metav1.Condition{{Type: rayv1.RayCronJobScheduleValid, Status: metav1.ConditionFalse, Reason: rayv1.RayCronJobReasonInvalidSchedule}}
		}), []string{"broken", "61 * * * *", "false", "-", "-", "invalid schedule", "3h"}},
	} {
		t.Run(tc.cj.Name, func(t *testing.T) {
			if got := cronJobCells(now, tc.cj); !slices.Equal(got, tc.want) {
				t.Errorf("cells\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}

// columns splits a table's lines into cells (tabwriter pads with at least
// three spaces; cells hold single spaces).
func columns(out string) [][]string {
	var rows [][]string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		rows = append(rows, regexp.MustCompile(`\s{3,}`).Split(strings.TrimSpace(l), -1))
	}
	return rows
}

// TestGetCronJobsAndTrigger: raydar get cronjobs lists a RayCronJob with
// its schedule in words; raydar trigger creates its RayJob (once within a
// minute), needs confirmation, and raydar suspend/resume take the kind.
func TestGetCronJobsAndTrigger(t *testing.T) {
	ctx := needSandbox(t)
	ns := newNamespace(t, ctx)
	create(t, ctx, testCronJob(ns, "nightly", "0 2 * * *"))

	for _, spelling := range []string{"cronjobs", "rcj", "raycronjobs", "cronjob"} {
		r := raydar(t, "", "-n", ns, "get", spelling)
		if r.err != nil {
			t.Fatalf("get %s: %v", spelling, r.err)
		}
		rows := columns(r.stdout)
		if len(rows) != 2 || strings.Join(rows[0], "|") != "NAME|SCHEDULE|SUSPEND|LAST SCHEDULE|NEXT RUN|STATUS|AGE" ||
			!slices.Equal(rows[1][:4], []string{"nightly", "0 2 * * * (every day at 02:00 Europe/Berlin)", "false", "-"}) ||
			!strings.HasPrefix(rows[1][4], "in ") || rows[1][5] != "scheduled" {
			t.Fatalf("get %s:\n%s", spelling, r.stdout)
		}
	}
	r := raydar(t, "", "-n", ns, "get", "rcj", "nightly", "-o", "json")
	var one rayv1.RayCronJob
	if err := json.Unmarshal([]byte(r.stdout), &one); r.err != nil || err != nil || one.Kind != "RayCronJob" || one.Spec.Schedule != "0 2 * * *" {
		t.Fatalf("get rcj nightly -o json: %v %v\n%s", r.err, err, r.stdout)
	}

	// Without --yes and without a terminal: refused, nothing created.
	r = raydar(t, "", "-n", ns, "trigger", "nightly")
	wantErrorContaining(t, r, "trigger: confirmation needed but stdin is not a terminal; pass --yes to confirm")
	// Confirmed on a terminal: the preview first.
	withTerminal(t)
	r = raydar(t, "n\n", "-n", ns, "trigger", "nightly")
	if r.err == nil || !strings.Contains(r.stderr, "create RayJob "+ns+"/nightly-manual-") || !strings.Contains(r.stderr, "Run RayCronJob nightly now? [y/N]") {
		t.Fatalf("declined: %v\n%s", r.err, r.stderr)
	}
	jobs := func() []rayv1.RayJob {
		var l rayv1.RayJobList
		if err := cl.List(ctx, &l, client.InNamespace(ns), client.MatchingLabelsSelector{Selector: rayv1.CronJobRayJobSelector("nightly")}); err != nil {
			t.Fatal(err)
		}
		return l.Items
	}
	if n := len(jobs()); n != 0 {
		t.Fatalf("%d RayJobs after declining", n)
	}

	r = raydar(t, "", "-n", ns, "trigger", "nightly", "--yes", "-o", "json")
	if r.err != nil {
		t.Fatalf("%v\n%s", r.err, r.stderr)
	}
	res := decodeResult(t, r.stdout)
	if res.Action != actions.ActionTrigger || res.Outcome != actions.OutcomeApplied ||
		res.Object != (actions.ObjectRef{Kind: kinds.RayCronJob, Namespace: ns, Name: "nightly"}) {
		t.Fatalf("result %+v", res)
	}
	made := jobs()
	if len(made) != 1 || made[0].Name != res.Plan["job"] || made[0].Annotations[rayv1.CronJobInstantiateAnnotationKey] != rayv1.CronJobInstantiateManual {
		t.Fatalf("RayJobs %+v, want the one of the plan %v", made, res.Plan["job"])
	}

	// The same minute (or, across a minute boundary, the next one's name).
	r = raydar(t, "", "-n", ns, "trigger", "nightly", "--yes")
	if r.err != nil {
		t.Fatalf("trigger again: %v", r.err)
	}
	if strings.Contains(r.stdout, ": unchanged, nothing to do") {
		if !strings.Contains(r.stdout, "no change: RayJob "+made[0].Name+" exists already") || len(jobs()) != 1 {
			t.Fatalf("trigger again:\n%s", r.stdout)
		}
	} else if len(jobs()) != 2 {
		t.Fatalf("trigger again in the next minute:\n%s", r.stdout)
	}

	r = raydar(t, "", "-n", ns, "suspend", "cronjob", "nightly", "--yes")
	if r.err != nil || !strings.Contains(r.stdout, "no new RayJobs are created on its schedule") {
		t.Fatalf("suspend cronjob: %v\n%s", r.err, r.stdout)
	}
	r = raydar(t, "", "-n", ns, "get", "cronjobs")
	if rows := columns(r.stdout); r.err != nil || len(rows) != 2 || rows[1][2] != "true" || rows[1][4] != "-" || rows[1][5] != "suspended" {
		t.Fatalf("get cronjobs after suspend:\n%s", r.stdout)
	}
	r = raydar(t, "", "-n", ns, "resume", "rcj", "nightly", "--yes")
	if r.err != nil || !strings.Contains(r.stdout, ": applied") {
		t.Fatalf("resume rcj: %v\n%s", r.err, r.stdout)
	}

	r = raydar(t, "", "-n", ns, "trigger", "missing", "--yes")
	wantErrorContaining(t, r, `raycronjob "missing" not found in namespace `+ns)
}
