package rayjob

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/raydar/raydar/controller/internal/fixture"
	"github.com/raydar/raydar/rayapi/dashboard"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

func TestRayJobDecideStopRequest(t *testing.T) {
	req := func(v string) func(*rayv1.RayJob) {
		return func(j *rayv1.RayJob) { j.Annotations = map[string]string{rayv1.StopRequestedAnnotationKey: v} }
	}
	running := inPhase(rayv1.JobDeploymentStatusRunning, rayv1.JobStatusRunning)
	rc := withCluster(newCluster(true))

	t.Run("running: one stop for the request", func(t *testing.T) {
		p := Decide(observe(newJob(running, req("alice@1")), fixture.T0.Add(time.Minute), rc, withDash(info(dashboard.JobRunning))))
		if p.Stop == nil || *p.Stop != (StopCall{ClusterName: "rj-rc001", JobID: "rj-id001", Request: "alice@1"}) {
			t.Fatalf("%+v", p.Stop)
		}
		if p.RequeueAfter != time.Second {
			t.Fatal(p.RequeueAfter)
		}
	})
	t.Run("back-off while the stop is not confirmed", func(t *testing.T) {
		last := func(o *Observed) { o.StopFailures, o.StopLastAttempt = 3, fixture.T0.Add(time.Minute) }
		j := newJob(running, req("alice@1"))
		p := Decide(observe(j, fixture.T0.Add(time.Minute+time.Second), rc, withDash(info(dashboard.JobRunning)), last))
		if p.Stop != nil || p.RequeueAfter != 3*time.Second { // 4 s after the third failure
			t.Fatalf("%+v %s", p.Stop, p.RequeueAfter)
		}
		p = Decide(observe(j, fixture.T0.Add(time.Minute+4*time.Second), rc, withDash(info(dashboard.JobRunning)), last))
		if p.Stop == nil || p.RequeueAfter != 8*time.Second {
			t.Fatalf("%+v %s", p.Stop, p.RequeueAfter)
		}
	})
	t.Run("recorded for this request: not again, the poll sees STOPPED", func(t *testing.T) {
		j := newJob(running, req("alice@1"))
		SetStopRecord(j, StopRecord{JobID: "rj-id001", Request: "alice@1", Confirmed: true}, "stopping", fixture.T0)
		p := Decide(observe(j, fixture.T0.Add(time.Minute), rc, withDash(info(dashboard.JobRunning))))
		if p.Stop != nil {
			t.Fatal("stop sent twice for one request")
		}
		p = Decide(observe(j, fixture.T0.Add(time.Minute), rc, withDash(info(dashboard.JobStopped))))
		if p.Status.JobStatus != rayv1.JobStatusStopped || p.Status.JobDeploymentStatus != rayv1.JobDeploymentStatusComplete {
			t.Fatalf("%+v", p.Status)
		}
		if s, _ := condStatusOf(p.Status, rayv1.JobStopConditionType); s != metav1.ConditionTrue {
			t.Fatal("StopConfirmed", s)
		}
	})
	t.Run("a new request value: stopped again", func(t *testing.T) {
		j := newJob(running, req("bob@2"))
		SetStopRecord(j, StopRecord{JobID: "rj-id001", Request: "alice@1", Confirmed: true}, "", fixture.T0)
		if p := Decide(observe(j, fixture.T0.Add(time.Minute), rc, withDash(info(dashboard.JobRunning)))); p.Stop == nil || p.Stop.Request != "bob@2" {
			t.Fatalf("%+v", p.Stop)
		}
	})
	t.Run("a pending record does not count", func(t *testing.T) {
		j := newJob(running, req("alice@1"))
		SetStopRecord(j, StopRecord{JobID: "rj-id001", Request: "alice@1"}, "refused", fixture.T0)
		if p := Decide(observe(j, fixture.T0.Add(time.Minute), rc, withDash(info(dashboard.JobRunning)))); p.Stop == nil {
			t.Fatal("pending stop not retried")
		}
	})
	t.Run("before submission: STOPPED without a call, no cluster", func(t *testing.T) {
		for _, ds := range []rayv1.JobDeploymentStatus{rayv1.JobDeploymentStatusNew, rayv1.JobDeploymentStatusInitializing,
			rayv1.JobDeploymentStatusRetrying, rayv1.JobDeploymentStatusSuspended} {
			j := newJob(inPhase(ds, ""), req("alice@1"))
			p := Decide(observe(j, fixture.T0.Add(time.Minute)))
			st := p.Status
			if p.Stop != nil || p.CreateCluster != nil || st.JobStatus != rayv1.JobStatusStopped || st.JobDeploymentStatus != rayv1.JobDeploymentStatusComplete {
				t.Fatalf("%s: %+v", ds, st)
			}
			if !StopConfirmedFor(applied(j, p), st.JobId) || !hasEvent(p, ReasonStopConfirmed, "nothing was submitted") {
				t.Fatalf("%s: %v %s", ds, st.Conditions, eventsOf(p))
			}
		}
	})
	t.Run("already finished: recorded, no call", func(t *testing.T) {
		j := newJob(inPhase(rayv1.JobDeploymentStatusComplete, rayv1.JobStatusSucceeded), req("alice@1"))
		p := Decide(observe(j, fixture.T0.Add(2*time.Minute), rc))
		if p.Stop != nil || !StopConfirmedFor(applied(j, p), "rj-id001") || p.Status.JobStatus != rayv1.JobStatusSucceeded {
			t.Fatalf("%+v", p.Status)
		}
	})
}

func TestRayJobDecideDeletion(t *testing.T) {
	deleting := func(j *rayv1.RayJob) { j.DeletionTimestamp = &metav1.Time{Time: fixture.T0} }
	running := inPhase(rayv1.JobDeploymentStatusRunning, rayv1.JobStatusRunning)
	rc := withCluster(newCluster(true))
	for _, tc := range []struct {
		name       string
		job        *rayv1.RayJob
		now        time.Time
		mods       []func(*Observed)
		wantStop   bool
		wantRemove bool
		wantEvent  string
		requeue    time.Duration
	}{
		{name: "running: stop, finalizer kept", job: newJob(running, deleting), now: fixture.T0.Add(time.Second), mods: []func(*Observed){rc},
			wantStop: true, requeue: time.Second},
		{name: "running, failing: waits out the back-off", job: newJob(running, deleting), now: fixture.T0.Add(101 * time.Second),
			mods: []func(*Observed){rc, func(o *Observed) { o.StopFailures, o.StopLastAttempt = 5, fixture.T0.Add(100*time.Second) }}, requeue: 14 * time.Second},
		{name: "running, failing: back-off bounded by the deadline", job: newJob(running, deleting), now: fixture.T0.Add(115 * time.Second),
			mods: []func(*Observed){rc, func(o *Observed) { o.StopFailures, o.StopLastAttempt = 5, fixture.T0.Add(100*time.Second) }}, wantStop: true, requeue: 5 * time.Second},
		{name: "past the bound: released with a warning", job: newJob(running, deleting), now: fixture.T0.Add(DefaultStopConfirmTimeout),
			mods: []func(*Observed){rc, func(o *Observed) { o.StopLastError = "connection refused" }}, wantRemove: true, wantEvent: ReasonStopNotConfirmed},
		{name: "stop on record for this job: released", job: newJob(running, deleting, func(j *rayv1.RayJob) {
			SetStopRecord(j, StopRecord{JobID: "rj-id001", Deletion: true, Confirmed: true}, "", fixture.T0)
		}), now: fixture.T0.Add(time.Second), mods: []func(*Observed){rc}, wantRemove: true},
		{name: "a request's stop on record counts too", job: newJob(running, deleting, func(j *rayv1.RayJob) {
			SetStopRecord(j, StopRecord{JobID: "rj-id001", Request: "r", Confirmed: true}, "", fixture.T0)
		}), now: fixture.T0.Add(time.Second), mods: []func(*Observed){rc}, wantRemove: true},
		{name: "a stop on record for an older attempt does not", job: newJob(running, deleting, func(j *rayv1.RayJob) {
			SetStopRecord(j, StopRecord{JobID: "rj-old", Deletion: true, Confirmed: true}, "", fixture.T0)
		}), now: fixture.T0.Add(time.Second), mods: []func(*Observed){rc}, wantStop: true, requeue: time.Second},
		{name: "terminal: released", job: newJob(inPhase(rayv1.JobDeploymentStatusComplete, rayv1.JobStatusSucceeded), deleting),
			now: fixture.T0.Add(time.Second), mods: []func(*Observed){rc}, wantRemove: true},
		{name: "not submitted yet: released", job: newJob(inPhase(rayv1.JobDeploymentStatusInitializing, ""), deleting),
			now: fixture.T0.Add(time.Second), mods: []func(*Observed){rc}, wantRemove: true},
		{name: "cluster gone: released", job: newJob(running, deleting), now: fixture.T0.Add(time.Second), wantRemove: true},
		{name: "cluster deleted with all its pods: released", job: newJob(running, deleting), now: fixture.T0.Add(time.Second),
			mods: []func(*Observed){rc, func(o *Observed) { o.ClusterEmpty = true }}, wantRemove: true},
		{name: "no finalizer: nothing", job: newJob(running, deleting, func(j *rayv1.RayJob) { j.Finalizers = []string{"other"} }),
			now: fixture.T0.Add(time.Second), mods: []func(*Observed){rc}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Decide(observe(tc.job, tc.now, tc.mods...))
			if (p.Stop != nil) != tc.wantStop || p.RemoveFinalizer != tc.wantRemove || p.RequeueAfter != tc.requeue {
				t.Fatalf("stop=%+v remove=%v requeue=%s", p.Stop, p.RemoveFinalizer, p.RequeueAfter)
			}
			if tc.wantStop && (p.Stop.Request != "" || p.Stop.JobID != "rj-id001") {
				t.Fatalf("%+v", p.Stop)
			}
			if tc.wantEvent != "" && !hasEvent(p, tc.wantEvent, "may still run") {
				t.Fatal(eventsOf(p))
			}
			if tc.wantEvent == ReasonStopNotConfirmed && !hasEvent(p, tc.wantEvent, "connection refused") {
				t.Fatal(eventsOf(p))
			}
			if p.WriteStatus || p.CreateCluster != nil || p.Submit != nil || p.AddFinalizer {
				t.Fatalf("deleting RayJob got %+v", p)
			}
		})
	}
}

// The exactly-once rule, end to end through Decide: a stop goes out only
// while no confirmed record answers it, the record being the RayJob's (as
// observe read it) with this process's remembered confirmation laid over;
// after an unconfirmed attempt, only once the back-off has passed.
func TestStopExactlyOnce(t *testing.T) {
	running := inPhase(rayv1.JobDeploymentStatusRunning, rayv1.JobStatusRunning)
	req := func(v string) func(*rayv1.RayJob) {
		return func(j *rayv1.RayJob) {
			if j.Annotations == nil {
				j.Annotations = map[string]string{}
			}
			j.Annotations[rayv1.StopRequestedAnnotationKey] = v
		}
	}
	deleting := func(j *rayv1.RayJob) { j.DeletionTimestamp = &metav1.Time{Time: fixture.T0} }
	record := func(r StopRecord) func(*rayv1.RayJob) {
		return func(j *rayv1.RayJob) { SetStopRecord(j, r, "", fixture.T0) }
	}
	annotation := func(v string) func(*rayv1.RayJob) {
		return func(j *rayv1.RayJob) {
			if j.Annotations == nil {
				j.Annotations = map[string]string{}
			}
			j.Annotations[rayv1.JobStopRecordAnnotationKey] = v
		}
	}
	remember := func(r StopRecord) func(*Observed) { return func(o *Observed) { o.RememberedStop = &r } }
	failed := func(n int, key string, ago time.Duration) func(*Observed) {
		return func(o *Observed) {
			o.StopFailures, o.StopFailing, o.StopLastAttempt = n, key, fixture.T0.Add(time.Minute-ago)
		}
	}
	confirmedA := StopRecord{JobID: "rj-id001", Request: "a@1", Confirmed: true}
	confirmedDel := StopRecord{JobID: "rj-id001", Deletion: true, Confirmed: true}
	for _, tc := range []struct {
		name    string
		job     []func(*rayv1.RayJob)
		mods    []func(*Observed)
		due     bool      // stopMayBeDue: observe reads the RayJob live
		want    *StopCall // nil: no stop
		release bool      // the deletion's finalizer goes without a stop
		rewrite bool      // the remembered record is written again
	}{
		{name: "request, no record: one stop", job: fns(req("a@1")), due: true,
			want: &StopCall{ClusterName: "rj-rc001", JobID: "rj-id001", Request: "a@1"}},
		{name: "request confirmed on record: none", job: fns(req("a@1"), record(confirmedA))},
		{name: "request confirmed in the words of an earlier raydar: none",
			job: fns(req("a@1"), annotation(`Stop of Ray job "rj-id001" for request "a@1" confirmed: x`))},
		{name: "request confirmed in the condition of an older raydar: none", job: fns(req("a@1"), func(j *rayv1.RayJob) {
			j.Status.Conditions = []metav1.Condition{{Type: rayv1.JobStopConditionType, Status: metav1.ConditionTrue,
				Message: `Stop of Ray job "rj-id001" for request "a@1" confirmed`}}
		})},
		{name: "another request on record: a stop for this one", job: fns(req("b@2"), record(confirmedA)), due: true,
			want: &StopCall{ClusterName: "rj-rc001", JobID: "rj-id001", Request: "b@2"}},
		{name: "a pending record answers nothing", job: fns(req("a@1"), record(StopRecord{JobID: "rj-id001", Request: "a@1"})), due: true,
			want: &StopCall{ClusterName: "rj-rc001", JobID: "rj-id001", Request: "a@1"}},
		{name: "confirmed to this process, not on the RayJob yet: none, the record written again",
			job: fns(req("a@1")), mods: fns(remember(confirmedA)), due: true, rewrite: true},
		{name: "remembered and on the RayJob: none, nothing written", job: fns(req("a@1"), record(confirmedA)), mods: fns(remember(confirmedA))},
		{name: "unconfirmed attempt 1 s ago: wait for the back-off (2 s)", job: fns(req("a@1")),
			mods: fns(failed(2, stopKey("rj-id001", "a@1"), time.Second)), due: true},
		{name: "back-off over: the same stop again, not told again", job: fns(req("a@1")),
			mods: fns(failed(2, stopKey("rj-id001", "a@1"), 3*time.Second)), due: true,
			want: &StopCall{ClusterName: "rj-rc001", JobID: "rj-id001", Request: "a@1", Retry: true}},
		{name: "failures of another stop: this one is told", job: fns(req("b@2")),
			mods: fns(failed(1, stopKey("rj-id001", "a@1"), 3*time.Second)), due: true,
			want: &StopCall{ClusterName: "rj-rc001", JobID: "rj-id001", Request: "b@2"}},
		{name: "deletion, no record: one stop", job: fns(deleting), due: true,
			want: &StopCall{ClusterName: "rj-rc001", JobID: "rj-id001", ConfirmTimeout: DefaultStopConfirmTimeout}},
		{name: "deletion, confirmed on record: released, none", job: fns(deleting, record(confirmedDel)), release: true},
		{name: "deletion, a request's confirmed stop of the job: released, none", job: fns(deleting, record(confirmedA)), release: true},
		{name: "deletion, a stop of an older attempt's job: one stop", due: true,
			job:  fns(deleting, record(StopRecord{JobID: "rj-old", Deletion: true, Confirmed: true})),
			want: &StopCall{ClusterName: "rj-rc001", JobID: "rj-id001", ConfirmTimeout: DefaultStopConfirmTimeout}},
		{name: "deletion confirmed to this process: released, none, recorded again", job: fns(deleting),
			mods: fns(remember(confirmedDel)), due: true, release: true, rewrite: true},
		{name: "deletion, the Ray job ended: released, none", job: fns(deleting, func(j *rayv1.RayJob) { j.Status.JobStatus = rayv1.JobStatusSucceeded }),
			release: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := newJob(append([]func(*rayv1.RayJob){running}, tc.job...)...)
			if got := stopMayBeDue(j); got != tc.due {
				t.Fatalf("stopMayBeDue %v, want %v", got, tc.due)
			}
			mods := append([]func(*Observed){withCluster(newCluster(true)), withDash(info(dashboard.JobRunning))}, tc.mods...)
			p := Decide(observe(j, fixture.T0.Add(time.Minute), mods...))
			switch {
			case tc.want == nil && p.Stop != nil:
				t.Fatalf("stop sent: %+v", p.Stop)
			case tc.want != nil && (p.Stop == nil || *p.Stop != *tc.want):
				t.Fatalf("stop %+v, want %+v", p.Stop, tc.want)
			}
			if j.DeletionTimestamp != nil && p.RemoveFinalizer != tc.release {
				t.Fatalf("release %v, want %v", p.RemoveFinalizer, tc.release)
			}
			if tc.rewrite {
				r, _, ok := decodeStopRecord(p.StopRecord)
				if !ok || r != *observe(j, fixture.T0, tc.mods...).RememberedStop {
					t.Fatalf("record written again %q", p.StopRecord)
				}
			} else if p.StopRecord != "" {
				t.Fatalf("record written: %q", p.StopRecord)
			}
		})
	}
}

func fns[T any](f ...T) []T { return f }

// What each answer of the dashboard to a stop leads to.
func TestStopOutcome(t *testing.T) {
	refused := errors.New("connection refused")
	notFound := fmt.Errorf("job: %w", dashboard.ErrNotFound)
	request := StopCall{ClusterName: "rc", JobID: "rj-1", Request: "a@1"}
	deletion := StopCall{ClusterName: "rc", JobID: "rj-1", ConfirmTimeout: time.Minute}
	retry := func(s StopCall) StopCall { s.Retry = true; return s }
	for _, tc := range []struct {
		name    string
		call    StopCall
		stopped bool
		err     error
		want    StopOutcome
		event   string // reason and a word of the message; "" none
	}{
		{name: "request, stopping", call: request, stopped: true, event: ReasonStopConfirmed + " for request a@1",
			want: StopOutcome{Confirmed: true, Record: StopRecord{JobID: "rj-1", Request: "a@1", Confirmed: true}, Detail: "the dashboard is stopping it"}},
		{name: "request, already ended", call: request, event: ReasonStopConfirmed + " already ended",
			want: StopOutcome{Confirmed: true, Record: StopRecord{JobID: "rj-1", Request: "a@1", Confirmed: true}, Detail: "it had already ended"}},
		{name: "request, unknown to the dashboard", call: request, err: notFound, event: ReasonStopConfirmed + " does not know",
			want: StopOutcome{Confirmed: true, Record: StopRecord{JobID: "rj-1", Request: "a@1", Confirmed: true}, Detail: "the dashboard does not know it"}},
		{name: "request, refused: told once, pending record", call: request, err: refused, event: reasonStopFailed + " the stop request a@1",
			want: StopOutcome{Record: StopRecord{JobID: "rj-1", Request: "a@1"}, Detail: "the dashboard did not answer: connection refused"}},
		{name: "request, refused again: nothing", call: retry(request), err: refused},
		{name: "deletion, stopping: released", call: deletion, stopped: true, event: ReasonStopConfirmed + " because the RayJob is deleted",
			want: StopOutcome{Confirmed: true, Record: StopRecord{JobID: "rj-1", Deletion: true, Confirmed: true}, Detail: "the dashboard is stopping it", ReleaseFinalizer: true}},
		{name: "deletion, refused: told once, no record", call: deletion, err: refused, event: reasonStopFailed + " released after 1m0s"},
		{name: "deletion, refused again: nothing", call: retry(deletion), err: refused},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.call.Outcome(tc.stopped, tc.err)
			ev := got.Event
			got.Event = nil
			if got != tc.want {
				t.Fatalf("%+v, want %+v", got, tc.want)
			}
			if tc.event == "" {
				if ev != nil {
					t.Fatalf("event %+v", ev)
				}
				return
			}
			reason, word, _ := strings.Cut(tc.event, " ")
			if ev == nil || ev.Reason != reason || !strings.Contains(ev.Message, word) {
				t.Fatalf("event %+v, want %s with %q", ev, reason, word)
			}
		})
	}
}

// A process SIGKILLed between its stop call and the record leaves the
// RayJob saying RUNNING with no record; its successor asks the dashboard
// first, finds the Ray job ended, and records the stop instead of sending
// it again (a request, and a deletion).
func TestNoSecondStopAfterACrashBeforeItsRecord(t *testing.T) {
	running := inPhase(rayv1.JobDeploymentStatusRunning, rayv1.JobStatusRunning)
	for _, tc := range []struct {
		name string
		mod  func(*rayv1.RayJob)
		want StopRecord
	}{
		{"request", func(j *rayv1.RayJob) { j.Annotations = map[string]string{rayv1.StopRequestedAnnotationKey: "a@1"} },
			StopRecord{JobID: "rj-id001", Request: "a@1", Confirmed: true}},
		{"deletion", func(j *rayv1.RayJob) { j.DeletionTimestamp = &metav1.Time{Time: fixture.T0} },
			StopRecord{JobID: "rj-id001", Deletion: true, Confirmed: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := newJob(running, tc.mod)
			if !stopMayBeDue(j) {
				t.Fatal("stopMayBeDue false: observe would not ask")
			}
			p := Decide(observe(j, fixture.T0.Add(time.Minute), withCluster(newCluster(true)), withDash(info(dashboard.JobStopped))))
			if p.Stop != nil {
				t.Fatalf("stop sent again: %+v", p.Stop)
			}
			if r, _, ok := decodeStopRecord(p.StopRecord); !ok || r != tc.want {
				t.Fatalf("record %q, want %+v", p.StopRecord, tc.want)
			}
			if j.DeletionTimestamp != nil && !p.RemoveFinalizer {
				t.Fatal("the deletion's finalizer kept")
			}
			// The dashboard still says RUNNING: the stop is sent.
			p = Decide(observe(newJob(running, tc.mod), fixture.T0.Add(time.Minute), withCluster(newCluster(true)), withDash(info(dashboard.JobRunning))))
			if p.Stop == nil {
				t.Fatal("no stop while the job runs")
			}
		})
	}
}
