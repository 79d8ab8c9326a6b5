package rayjob

import (
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
