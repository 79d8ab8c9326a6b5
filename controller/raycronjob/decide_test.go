package raycronjob

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

func utc(y int, mo time.Month, d, h, mi, s int) time.Time {
	return time.Date(y, mo, d, h, mi, s, 0, time.UTC)
}

func location(t *testing.T, name string) *time.Location {
	t.Helper()
	l, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// cronJob is a valid RayCronJob created at created, last scheduled at last
// (zero: never).
func cronJob(schedule string, tz *string, created, last time.Time) *rayv1.RayCronJob {
	cj := &rayv1.RayCronJob{
		ObjectMeta: metav1.ObjectMeta{Name: "report", Namespace: "ml", UID: types.UID("uid-1"), Generation: 1,
			CreationTimestamp: metav1.NewTime(created)},
		Spec: rayv1.RayCronJobSpec{Schedule: schedule, TimeZone: tz, JobTemplate: rayv1.RayJobSpec{
			Entrypoint: "python report.py",
			RayClusterSpec: &rayv1.RayClusterSpec{HeadGroupSpec: rayv1.HeadGroupSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "ray-head", Image: "rayproject/ray:2.52.0"}}}}}},
		}},
	}
	if !last.IsZero() {
		cj.Status.LastScheduleTime = &metav1.Time{Time: last}
	}
	return cj
}

func jobNamed(name string) *rayv1.RayJob {
	return &rayv1.RayJob{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ml"}}
}

// outcome is what a test checks of a Plan.
type outcome struct {
	create  time.Time // the tick of the RayJob to create; zero: none
	last    time.Time // lastScheduleTime written; zero: none written
	requeue time.Duration
	events  []string // "Reason: a substring of the message"
}

func checkPlan(t *testing.T, p Plan, cj *rayv1.RayCronJob, want outcome) {
	t.Helper()
	switch {
	case want.create.IsZero() && p.Create != nil:
		t.Errorf("creates %s, want nothing", p.Create.Name)
	case !want.create.IsZero() && p.Create == nil:
		t.Errorf("creates nothing, want the RayJob of %s", want.create)
	case !want.create.IsZero():
		if p.Create.Name != rayv1.CronJobTickName(cj.Name, want.create) {
			t.Errorf("creates %s, want %s", p.Create.Name, rayv1.CronJobTickName(cj.Name, want.create))
		}
		if got := p.Create.Annotations[rayv1.RayCronJobTimestampAnnotationKey]; got != want.create.UTC().Format(time.RFC3339) {
			t.Errorf("scheduled timestamp %q, want %s", got, want.create.UTC().Format(time.RFC3339))
		}
	}
	var last *metav1.Time
	if p.Status != nil {
		last = p.Status.LastScheduleTime
	}
	switch {
	case want.last.IsZero() && p.Status != nil && !equalTimes(p.Status.LastScheduleTime, cj.Status.LastScheduleTime):
		t.Errorf("writes lastScheduleTime %v, want it unchanged", last)
	case !want.last.IsZero() && (last == nil || !last.Time.Equal(want.last)):
		t.Errorf("lastScheduleTime %v, want %s", last, want.last)
	}
	if p.RequeueAfter != want.requeue {
		t.Errorf("requeue after %s, want %s", p.RequeueAfter, want.requeue)
	}
	if len(p.Events) != len(want.events) {
		t.Errorf("events %+v, want %q", p.Events, want.events)
		return
	}
	for i, w := range want.events {
		reason, msg, _ := strings.Cut(w, ": ")
		if e := p.Events[i]; e.Reason != reason || !strings.Contains(e.Message, msg) {
			t.Errorf("event %d = %+v, want %s with %q", i, e, reason, msg)
		}
	}
}

func equalTimes(a, b *metav1.Time) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Time.Equal(b.Time)
}

const created = rayv1.EventCreatedRayJob + ": Created RayJob ml/report-"

func TestDecideTicks(t *testing.T) {
	berlin, taipei, tokyo := location(t, "Europe/Berlin"), location(t, "Asia/Taipei"), location(t, "Asia/Tokyo")
	t0 := utc(2024, 1, 1, 0, 0, 0)
	day := 24 * time.Hour
	tests := []struct {
		name     string
		schedule string
		tz       *string
		local    *time.Location
		created  time.Time
		last     time.Time
		jobs     []string
		now      time.Time
		want     outcome
	}{
		// KubeRay v1.7.0's unit tests, same numbers.
		{name: "first tick after creation", schedule: "*/5 * * * *", created: t0, now: t0.Add(5*time.Minute + 30*time.Second),
			want: outcome{create: t0.Add(5 * time.Minute), last: t0.Add(5 * time.Minute), requeue: 4*time.Minute + 30*time.Second, events: []string{created}}},
		{name: "tick after lastScheduleTime", schedule: "*/5 * * * *", created: t0.Add(-day), last: t0, now: t0.Add(5*time.Minute + 30*time.Second),
			want: outcome{create: t0.Add(5 * time.Minute), last: t0.Add(5 * time.Minute), requeue: 4*time.Minute + 30*time.Second, events: []string{created}}},
		{name: "not due yet: wait for the first tick", schedule: "*/5 * * * *", created: t0.Add(10 * time.Second), now: t0.Add(4 * time.Minute),
			want: outcome{requeue: time.Minute}},
		{name: "due exactly now", schedule: "*/5 * * * *", created: t0, now: t0.Add(5 * time.Minute),
			want: outcome{create: t0.Add(5 * time.Minute), last: t0.Add(5 * time.Minute), requeue: 5 * time.Minute, events: []string{created}}},

		// Idempotence: the deterministic name is there already.
		{name: "stale lastScheduleTime, RayJob exists: only the status moves", schedule: "*/5 * * * *", created: t0, last: t0,
			jobs: []string{rayv1.CronJobTickName("report", t0.Add(5*time.Minute))}, now: t0.Add(5*time.Minute + 30*time.Second),
			want: outcome{last: t0.Add(5 * time.Minute), requeue: 4*time.Minute + 30*time.Second}},
		{name: "tick done: nothing at all", schedule: "*/5 * * * *", created: t0, last: t0.Add(5 * time.Minute),
			jobs: []string{rayv1.CronJobTickName("report", t0.Add(5*time.Minute))}, now: t0.Add(5*time.Minute + 30*time.Second),
			want: outcome{requeue: 4*time.Minute + 30*time.Second}},
		{name: "other RayJobs do not count", schedule: "*/5 * * * *", created: t0, last: t0,
			jobs: []string{rayv1.CronJobTickName("report", t0), rayv1.CronJobManualName("report", t0.Add(5*time.Minute))}, now: t0.Add(5*time.Minute + 30*time.Second),
			want: outcome{create: t0.Add(5 * time.Minute), last: t0.Add(5 * time.Minute), requeue: 4*time.Minute + 30*time.Second, events: []string{created}}},

		// Missed ticks: only the latest, with an Event counting the others.
		{name: "operator down a day on a per-minute schedule", schedule: "* * * * *", created: t0.Add(-day), last: t0, now: t0.Add(day + 30*time.Second),
			want: outcome{create: t0.Add(day), last: t0.Add(day), requeue: 30 * time.Second, events: []string{
				rayv1.EventSkippedMissedTicks + ": skipped 1439 missed ticks after 2024-01-01T00:00:00Z; created a RayJob only for the latest, 2024-01-02T00:00:00Z",
				created}}},
		{name: "one tick missed", schedule: "*/5 * * * *", created: t0, last: t0, now: t0.Add(11 * time.Minute),
			want: outcome{create: t0.Add(10 * time.Minute), last: t0.Add(10 * time.Minute), requeue: 4 * time.Minute, events: []string{
				rayv1.EventSkippedMissedTicks + ": skipped 1 missed tick after", created}}},
		{name: "down for over a year: the count stops, the latest tick is still found", schedule: "* * * * *", created: t0, last: t0,
			now: t0.Add(400*day + 10*time.Second),
			want: outcome{create: t0.Add(400 * day), last: t0.Add(400 * day), requeue: 50 * time.Second, events: []string{
				rayv1.EventSkippedMissedTicks + ": skipped more than 100000 missed ticks", created}}},
		{name: "missed ticks whose latest RayJob exists: no Event", schedule: "* * * * *", created: t0, last: t0,
			jobs: []string{rayv1.CronJobTickName("report", t0.Add(day))}, now: t0.Add(day + 30*time.Second),
			want: outcome{last: t0.Add(day), requeue: 30 * time.Second}},

		// Time zones.
		{name: "KubeRay's sample: 21:45 in Taipei is 13:45 UTC", schedule: "45 21 * * *", tz: ptr.To("Asia/Taipei"), created: t0, now: utc(2024, 1, 1, 13, 45, 10),
			want: outcome{create: time.Date(2024, 1, 1, 21, 45, 0, 0, taipei), last: utc(2024, 1, 1, 13, 45, 0), requeue: day - 10*time.Second, events: []string{created}}},
		{name: "no time zone: the operator's", schedule: "0 9 * * *", local: tokyo, created: t0.Add(-time.Hour), now: t0.Add(time.Minute),
			want: outcome{create: t0, last: t0, requeue: day - time.Minute, events: []string{created}}},
		{name: "spec.timeZone wins over the operator's", schedule: "0 9 * * *", tz: ptr.To("UTC"), local: tokyo, created: t0.Add(-time.Hour), now: t0.Add(time.Minute),
			want: outcome{requeue: 9*time.Hour - time.Minute}},
		{name: "@daily in Berlin is 23:00 UTC in winter", schedule: "@daily", tz: ptr.To("Europe/Berlin"), created: t0, now: utc(2024, 1, 1, 23, 0, 1),
			want: outcome{create: utc(2024, 1, 1, 23, 0, 0), last: utc(2024, 1, 1, 23, 0, 0), requeue: day - time.Second, events: []string{created}}},
		{name: "@hourly", schedule: "@hourly", tz: ptr.To("Europe/Berlin"), created: t0, last: utc(2024, 1, 1, 10, 0, 0), now: utc(2024, 1, 1, 11, 0, 1),
			want: outcome{create: utc(2024, 1, 1, 11, 0, 0), last: utc(2024, 1, 1, 11, 0, 0), requeue: time.Hour - time.Second, events: []string{created}}},
		{name: "@every counts from the last tick", schedule: "@every 90m", created: t0, last: t0, now: t0.Add(4*time.Hour + 31*time.Minute),
			want: outcome{create: t0.Add(270 * time.Minute), last: t0.Add(270 * time.Minute), requeue: 89 * time.Minute, events: []string{
				rayv1.EventSkippedMissedTicks + ": skipped 2 missed ticks", created}}},
		{name: "a schedule that never fires", schedule: "0 0 30 2 *", created: t0, now: t0.Add(day)},

		// DST in Europe/Berlin (robfig/cron's rules, so KubeRay's and batch/v1 CronJob's).
		{name: "spring forward: 02:30 does not exist on 29 March, that day has no tick", schedule: "30 2 * * *", tz: ptr.To("Europe/Berlin"),
			created: t0, last: time.Date(2026, 3, 28, 2, 30, 0, 0, berlin), now: utc(2026, 3, 29, 12, 0, 0),
			want: outcome{requeue: utc(2026, 3, 30, 0, 30, 0).Sub(utc(2026, 3, 29, 12, 0, 0))}},
		{name: "spring forward: the day after, 02:30 CEST", schedule: "30 2 * * *", tz: ptr.To("Europe/Berlin"),
			created: t0, last: time.Date(2026, 3, 28, 2, 30, 0, 0, berlin), now: utc(2026, 3, 30, 0, 30, 5),
			want: outcome{create: utc(2026, 3, 30, 0, 30, 0), last: utc(2026, 3, 30, 0, 30, 0), requeue: day - 5*time.Second, events: []string{created}}},
		{name: "fall back: 02:30 happens twice on 25 October, the second is a tick of its own", schedule: "30 2 * * *", tz: ptr.To("Europe/Berlin"),
			created: t0, last: utc(2026, 10, 25, 0, 30, 0), jobs: []string{rayv1.CronJobTickName("report", utc(2026, 10, 25, 0, 30, 0))}, now: utc(2026, 10, 25, 1, 30, 5),
			want: outcome{create: utc(2026, 10, 25, 1, 30, 0), last: utc(2026, 10, 25, 1, 30, 0), requeue: day - 5*time.Second, events: []string{created}}},
		{name: "hourly across spring forward: 01:00 CET then 03:00 CEST, an hour apart", schedule: "0 * * * *", tz: ptr.To("Europe/Berlin"),
			created: t0, last: utc(2026, 3, 29, 0, 0, 0), now: utc(2026, 3, 29, 1, 0, 1),
			want: outcome{create: time.Date(2026, 3, 29, 3, 0, 0, 0, berlin), last: utc(2026, 3, 29, 1, 0, 0), requeue: time.Hour - time.Second, events: []string{created}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cj := cronJob(tt.schedule, tt.tz, tt.created, tt.last)
			var jobs []*rayv1.RayJob
			for _, n := range tt.jobs {
				jobs = append(jobs, jobNamed(n))
			}
			local := tt.local
			if local == nil {
				local = time.UTC
			}
			before := cj.DeepCopy()
			p := Decide(Input{CronJob: cj, Jobs: jobs, Now: tt.now, Local: local})
			checkPlan(t, p, cj, tt.want)
			if p.Status != nil && meta.FindStatusCondition(p.Status.Conditions, rayv1.RayCronJobScheduleValid) != nil {
				t.Errorf("a valid RayCronJob gets a ScheduleValid condition: %+v", p.Status.Conditions)
			}
			if !equalCronJobs(before, cj) {
				t.Error("Decide changed its input")
			}
		})
	}
}

func equalCronJobs(a, b *rayv1.RayCronJob) bool {
	return a.Name == b.Name && equalTimes(a.Status.LastScheduleTime, b.Status.LastScheduleTime) && len(a.Status.Conditions) == len(b.Status.Conditions)
}

// TestDecideSuspendAndInvalid: suspended or invalid, a RayCronJob creates
// nothing and waits for a spec change; invalid says which field, in an
// Event and in the ScheduleValid condition.
func TestDecideSuspendAndInvalid(t *testing.T) {
	t0 := utc(2024, 1, 1, 0, 0, 0)
	now := t0.Add(time.Hour + 30*time.Second)
	tests := []struct {
		name       string
		mutate     func(cj *rayv1.RayCronJob)
		wantEvent  string
		wantReason string // ScheduleValid False with this reason; "" for none
		wantMsg    string
	}{
		{"suspended", func(cj *rayv1.RayCronJob) { cj.Spec.Suspend = ptr.To(true) },
			rayv1.EventSuspendedRayCronJob + ": RayCronJob suspended, no new RayJobs will be created", "", ""},
		{"invalid schedule", func(cj *rayv1.RayCronJob) { cj.Spec.Schedule = "invalid cron string" },
			rayv1.EventInvalidRayCronJobSpec + `: ml/report: spec.schedule: Invalid value: "invalid cron string"`,
			rayv1.RayCronJobReasonInvalidSchedule, "spec.schedule"},
		{"invalid schedule wins over suspend", func(cj *rayv1.RayCronJob) { cj.Spec.Schedule = "61 * * * *"; cj.Spec.Suspend = ptr.To(true) },
			rayv1.EventInvalidRayCronJobSpec + ": spec.schedule", rayv1.RayCronJobReasonInvalidSchedule, "spec.schedule"},
		{"unknown time zone", func(cj *rayv1.RayCronJob) { cj.Spec.TimeZone = ptr.To("Europe/Atlantis") },
			rayv1.EventInvalidRayCronJobSpec + `: spec.timeZone: Invalid value: "Europe/Atlantis"`,
			rayv1.RayCronJobReasonInvalidTimeZone, "spec.timeZone"},
		{"empty time zone", func(cj *rayv1.RayCronJob) { cj.Spec.TimeZone = ptr.To("") },
			rayv1.EventInvalidRayCronJobSpec + ": spec.timeZone", rayv1.RayCronJobReasonInvalidTimeZone, "spec.timeZone"},
		{"job template without a cluster", func(cj *rayv1.RayCronJob) { cj.Spec.JobTemplate.RayClusterSpec = nil },
			rayv1.EventInvalidRayCronJobSpec + ": spec.jobTemplate.rayClusterSpec", rayv1.RayCronJobReasonInvalidJobTemplate, "spec.jobTemplate.rayClusterSpec"},
		{"name too long for its RayJobs", func(cj *rayv1.RayCronJob) { cj.Name = strings.Repeat("r", 37) },
			rayv1.EventInvalidRayCronJobSpec + ": metadata.name", rayv1.RayCronJobReasonInvalidName, "metadata.name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cj := cronJob("*/5 * * * *", nil, t0, t0)
			tt.mutate(cj)
			p := Decide(Input{CronJob: cj, Now: now, Local: time.UTC})
			checkPlan(t, p, cj, outcome{events: []string{tt.wantEvent}})
			if tt.wantReason == "" {
				if p.Status != nil {
					t.Errorf("writes status %+v, want none", p.Status)
				}
				return
			}
			if p.Status == nil {
				t.Fatal("no status written, want the ScheduleValid condition")
			}
			c := meta.FindStatusCondition(p.Status.Conditions, rayv1.RayCronJobScheduleValid)
			if c == nil || c.Status != metav1.ConditionFalse || c.Reason != tt.wantReason || !strings.Contains(c.Message, tt.wantMsg) {
				t.Fatalf("condition %+v, want False %s naming %s", c, tt.wantReason, tt.wantMsg)
			}
			if !c.LastTransitionTime.Time.Equal(now) || c.ObservedGeneration != cj.Generation {
				t.Errorf("condition time %s generation %d, want %s and %d", c.LastTransitionTime, c.ObservedGeneration, now, cj.Generation)
			}

			// Decided again on the written status: nothing more to write.
			cj.Status = *p.Status
			again := Decide(Input{CronJob: cj, Now: now.Add(time.Minute), Local: time.UTC})
			if again.Status != nil {
				t.Errorf("second decision writes %+v, want nothing", again.Status)
			}

			// Fixed: the condition turns True and the tick is due.
			fixed := cronJob("*/5 * * * *", nil, t0, t0)
			fixed.Status = *p.Status
			p = Decide(Input{CronJob: fixed, Now: now, Local: time.UTC})
			c = meta.FindStatusCondition(p.Status.Conditions, rayv1.RayCronJobScheduleValid)
			if c == nil || c.Status != metav1.ConditionTrue || c.Reason != rayv1.RayCronJobReasonValid {
				t.Errorf("after the fix: condition %+v, want True %s", c, rayv1.RayCronJobReasonValid)
			}
			if p.Create == nil || p.Create.Name != rayv1.CronJobTickName("report", t0.Add(time.Hour)) {
				t.Errorf("after the fix: creates %v, want the tick at %s", p.Create, t0.Add(time.Hour))
			}
		})
	}
}

// TestDecideResume: ticks missed while suspended count as missed: resuming
// creates the latest (as batch/v1 CronJob), not all of them (as KubeRay).
func TestDecideResume(t *testing.T) {
	t0 := utc(2024, 1, 1, 0, 0, 0)
	cj := cronJob("0 * * * *", nil, t0, t0)
	cj.Spec.Suspend = ptr.To(true)
	now := t0.Add(5*time.Hour + 10*time.Minute)
	if p := Decide(Input{CronJob: cj, Now: now, Local: time.UTC}); p.Create != nil || p.RequeueAfter != 0 {
		t.Fatalf("suspended: creates %v, requeues after %s; want nothing", p.Create, p.RequeueAfter)
	}
	cj.Spec.Suspend = ptr.To(false)
	checkPlan(t, Decide(Input{CronJob: cj, Now: now, Local: time.UTC}), cj, outcome{
		create: t0.Add(5 * time.Hour), last: t0.Add(5 * time.Hour), requeue: 50 * time.Minute,
		events: []string{rayv1.EventSkippedMissedTicks + ": skipped 4 missed ticks", created}})
}

// TestDecideRestart: a tick that falls while raydar is down is created once
// it is back, and only once, whether or not the first raydar created it and
// wrote the status before it stopped.
func TestDecideRestart(t *testing.T) {
	t0 := utc(2024, 1, 1, 0, 0, 0)
	tick := t0.Add(5 * time.Minute)
	after := tick.Add(2 * time.Minute) // raydar is back
	for _, tt := range []struct {
		name       string
		jobExists  bool
		statusMove bool
		want       outcome
	}{
		{"died before creating", false, false, outcome{create: tick, last: tick, requeue: 3 * time.Minute, events: []string{created}}},
		{"died after creating, before the status", true, false, outcome{last: tick, requeue: 3 * time.Minute}},
		{"died after both", true, true, outcome{requeue: 3 * time.Minute}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			last := t0
			if tt.statusMove {
				last = tick
			}
			cj := cronJob("*/5 * * * *", nil, t0, last)
			var jobs []*rayv1.RayJob
			if tt.jobExists {
				jobs = append(jobs, rayv1.CronJobTickJob(cj, tick))
			}
			checkPlan(t, Decide(Input{CronJob: cj, Jobs: jobs, Now: after, Local: time.UTC}), cj, tt.want)
		})
	}
}
