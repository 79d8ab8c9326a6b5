package rayjob

import (
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/raydar/raydar/controller/internal/fixture"
	"github.com/raydar/raydar/rayapi/dashboard"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

func TestRayJobDecideRetryAndSuspend(t *testing.T) {
	retrying := newJob(inPhase(rayv1.JobDeploymentStatusRetrying, rayv1.JobStatusFailed), mode(rayv1.K8sJobMode), func(j *rayv1.RayJob) {
		j.Spec.BackoffLimit = fixture.Ptr(int32(2))
		j.Status.Failed = fixture.Ptr(int32(1))
		j.Status.Reason = rayv1.AppFailed
	})
	rc, sub := newCluster(true), submitterJob(batchv1.JobComplete, fixture.T0)
	p := Decide(observe(retrying, fixture.T0.Add(time.Minute), withCluster(rc), withSubmitter(sub)))
	if p.DeleteCluster == nil || p.DeleteCluster.UID != string(rc.UID) || p.DeleteSubmitter == nil || p.DeleteSubmitter.UID != "sub-uid" {
		t.Fatalf("retry deletes: %+v %+v", p.DeleteCluster, p.DeleteSubmitter)
	}
	if p.Status.JobDeploymentStatus != rayv1.JobDeploymentStatusRetrying {
		t.Fatal(p.Status.JobDeploymentStatus)
	}
	// Deleting: wait, don't delete twice.
	gone := rc.DeepCopy()
	gone.DeletionTimestamp = &metav1.Time{Time: fixture.T0}
	p = Decide(observe(retrying, fixture.T0.Add(time.Minute), withCluster(gone)))
	if p.DeleteCluster != nil || p.Status.JobDeploymentStatus != rayv1.JobDeploymentStatusRetrying {
		t.Fatalf("%+v", p)
	}
	// All gone: a new attempt, counts kept, names cleared, the start kept
	// until the next Initializing sets a new one (as KubeRay v1.6.2).
	p = Decide(observe(retrying, fixture.T0.Add(time.Minute)))
	st := p.Status
	if st.JobDeploymentStatus != rayv1.JobDeploymentStatusNew || st.JobId != "" || st.RayClusterName != "" ||
		!st.StartTime.Equal(apiTime(fixture.T0)) ||
		*st.Failed != 1 || st.Reason != "" || st.JobStatus != "" {
		t.Fatalf("%+v", st)
	}
	// …which gets fresh names.
	retrying.Status = st
	p = Decide(observe(retrying, fixture.T0.Add(2*time.Minute)))
	if p.Status.JobId != "rj-abcde" || p.Status.RayClusterName != "rj-abcde" {
		t.Fatalf("%+v", p.Status)
	}

	// Suspend from Running, then resume.
	susp := newJob(inPhase(rayv1.JobDeploymentStatusRunning, rayv1.JobStatusRunning), func(j *rayv1.RayJob) {
		j.Spec.Suspend, j.Spec.ShutdownAfterJobFinishes = true, true
	})
	p = Decide(observe(susp, fixture.T0.Add(time.Minute), withCluster(rc), withDash(info(dashboard.JobRunning))))
	if p.Status.JobDeploymentStatus != rayv1.JobDeploymentStatusSuspending || p.Stop != nil || !hasEvent(p, reasonSuspending, "") {
		t.Fatalf("%+v %s", p.Status, eventsOf(p))
	}
	susp.Status = p.Status
	p = Decide(observe(susp, fixture.T0.Add(time.Minute), withCluster(rc)))
	if p.DeleteCluster == nil {
		t.Fatal("suspending keeps the cluster")
	}
	p = Decide(observe(susp, fixture.T0.Add(time.Minute)))
	if p.Status.JobDeploymentStatus != rayv1.JobDeploymentStatusSuspended || p.Status.RayClusterName != "" {
		t.Fatalf("%+v", p.Status)
	}
	if s, _ := condStatusOf(p.Status, rayv1.RayJobSuspended); s != metav1.ConditionTrue {
		t.Fatal("Suspended condition", s)
	}
	susp.Status = p.Status
	susp.Spec.Suspend = false
	p = Decide(observe(susp, fixture.T0.Add(2*time.Minute)))
	if p.Status.JobDeploymentStatus != rayv1.JobDeploymentStatusNew || !hasEvent(p, reasonResumed, "") {
		t.Fatalf("%+v", p.Status)
	}
	// Suspend from Initializing goes the same way; Suspended stays put.
	init := newJob(inPhase(rayv1.JobDeploymentStatusInitializing, ""), func(j *rayv1.RayJob) { j.Spec.Suspend, j.Spec.ShutdownAfterJobFinishes = true, true })
	if p := Decide(observe(init, fixture.T0)); p.Status.JobDeploymentStatus != rayv1.JobDeploymentStatusSuspending || p.CreateCluster != nil {
		t.Fatalf("%+v", p)
	}
}

func TestRayJobDecideCleanup(t *testing.T) {
	end := fixture.T0.Add(time.Minute)
	done := func(js rayv1.JobStatus, ds rayv1.JobDeploymentStatus, mods ...func(*rayv1.RayJob)) *rayv1.RayJob {
		return newJob(append([]func(*rayv1.RayJob){inPhase(ds, js)}, mods...)...)
	}
	shutdown := func(ttl int32) func(*rayv1.RayJob) {
		return func(j *rayv1.RayJob) { j.Spec.ShutdownAfterJobFinishes, j.Spec.TTLSecondsAfterFinished = true, ttl }
	}
	rule := func(pol rayv1.DeletionPolicyType, js rayv1.JobStatus, ds rayv1.JobDeploymentStatus, ttl int32) rayv1.DeletionRule {
		r := rayv1.DeletionRule{Policy: pol, Condition: rayv1.DeletionCondition{TTLSeconds: ttl}}
		if js != "" {
			r.Condition.JobStatus = &js
		} else {
			r.Condition.JobDeploymentStatus = &ds
		}
		return r
	}
	rules := func(rs ...rayv1.DeletionRule) func(*rayv1.RayJob) {
		return func(j *rayv1.RayJob) { j.Spec.DeletionStrategy = &rayv1.DeletionStrategy{DeletionRules: rs} }
	}
	legacy := func(onSuccess, onFailure rayv1.DeletionPolicyType, ttl int32) func(*rayv1.RayJob) {
		return func(j *rayv1.RayJob) {
			j.Spec.ShutdownAfterJobFinishes, j.Spec.TTLSecondsAfterFinished = true, ttl
			j.Spec.DeletionStrategy = &rayv1.DeletionStrategy{OnSuccess: &rayv1.DeletionPolicy{Policy: &onSuccess}, OnFailure: &rayv1.DeletionPolicy{Policy: &onFailure}}
		}
	}
	threeStage := rules(
		rule(rayv1.DeleteWorkers, rayv1.JobStatusSucceeded, "", 0),
		rule(rayv1.DeleteCluster, rayv1.JobStatusSucceeded, "", 10),
		rule(rayv1.DeleteSelf, rayv1.JobStatusSucceeded, "", 20),
		rule(rayv1.DeleteCluster, rayv1.JobStatusFailed, "", 0),
	)
	rc := newCluster(true)
	rc.Spec.WorkerGroupSpecs = []rayv1.WorkerGroupSpec{fixture.Group("g", 2)}
	suspended := rc.DeepCopy()
	suspended.Spec.WorkerGroupSpecs[0].Suspend = fixture.Ptr(true)
	type want struct {
		deleteCluster bool
		suspend       bool
		deleteSelf    bool
		requeue       time.Duration
	}
	for _, tc := range []struct {
		name string
		job  *rayv1.RayJob
		rc   *rayv1.RayCluster
		now  time.Time
		want want
	}{
		{name: "no cleanup asked", job: done(rayv1.JobStatusSucceeded, rayv1.JobDeploymentStatusComplete), rc: rc, now: end.Add(time.Hour)},
		{name: "shutdown: ttl not reached", job: done(rayv1.JobStatusSucceeded, rayv1.JobDeploymentStatusComplete, shutdown(30)), rc: rc,
			now: end.Add(10 * time.Second), want: want{requeue: 20 * time.Second}},
		{name: "shutdown: ttl reached", job: done(rayv1.JobStatusFailed, rayv1.JobDeploymentStatusFailed, shutdown(30)), rc: rc,
			now: end.Add(30 * time.Second), want: want{deleteCluster: true}},
		{name: "shutdown: cluster already gone", job: done(rayv1.JobStatusSucceeded, rayv1.JobDeploymentStatusComplete, shutdown(0)),
			now: end},
		{name: "shutdown never touches a selected cluster", job: done(rayv1.JobStatusSucceeded, rayv1.JobDeploymentStatusComplete, shutdown(0), selector("rj-rc001")),
			rc: rc, now: end.Add(time.Hour)},
		{name: "rules: workers first, cluster next due", job: done(rayv1.JobStatusSucceeded, rayv1.JobDeploymentStatusComplete, threeStage), rc: rc,
			now: end, want: want{suspend: true, requeue: 10 * time.Second}},
		{name: "rules: workers already suspended", job: done(rayv1.JobStatusSucceeded, rayv1.JobDeploymentStatusComplete, threeStage), rc: suspended,
			now: end.Add(5 * time.Second), want: want{requeue: 5 * time.Second}},
		{name: "rules: cluster due", job: done(rayv1.JobStatusSucceeded, rayv1.JobDeploymentStatusComplete, threeStage), rc: suspended,
			now: end.Add(10 * time.Second), want: want{deleteCluster: true, requeue: 10 * time.Second}},
		{name: "rules: several overdue, the most destructive runs", job: done(rayv1.JobStatusSucceeded, rayv1.JobDeploymentStatusComplete, threeStage), rc: rc,
			now: end.Add(25 * time.Second), want: want{deleteSelf: true}},
		{name: "rules: other status matches its own rule", job: done(rayv1.JobStatusFailed, rayv1.JobDeploymentStatusFailed, threeStage), rc: rc,
			now: end, want: want{deleteCluster: true}},
		{name: "rules: STOPPED matches none", job: done(rayv1.JobStatusStopped, rayv1.JobDeploymentStatusComplete, threeStage), rc: rc,
			now: end.Add(time.Hour)},
		{name: "rules: deployment Failed", job: done(rayv1.JobStatusRunning, rayv1.JobDeploymentStatusFailed,
			rules(rule(rayv1.DeleteCluster, "", rayv1.JobDeploymentStatusFailed, 5))), rc: rc, now: end.Add(5 * time.Second), want: want{deleteCluster: true}},
		{name: "rules: DeleteNone does nothing", job: done(rayv1.JobStatusSucceeded, rayv1.JobDeploymentStatusComplete,
			rules(rule(rayv1.DeleteNone, rayv1.JobStatusSucceeded, "", 0))), rc: rc, now: end.Add(time.Hour)},
		{name: "rules: selected cluster: only DeleteSelf", job: done(rayv1.JobStatusSucceeded, rayv1.JobDeploymentStatusComplete, selector("rj-rc001"),
			rules(rule(rayv1.DeleteSelf, rayv1.JobStatusSucceeded, "", 0))), rc: rc, now: end, want: want{deleteSelf: true}},
		{name: "legacy onSuccess", job: done(rayv1.JobStatusSucceeded, rayv1.JobDeploymentStatusComplete, legacy(rayv1.DeleteCluster, rayv1.DeleteWorkers, 10)), rc: rc,
			now: end.Add(10 * time.Second), want: want{deleteCluster: true}},
		{name: "legacy onFailure", job: done(rayv1.JobStatusFailed, rayv1.JobDeploymentStatusFailed, legacy(rayv1.DeleteCluster, rayv1.DeleteWorkers, 0)), rc: rc,
			now: end, want: want{suspend: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Decide(observe(tc.job, tc.now, withCluster(tc.rc)))
			got := want{deleteCluster: p.DeleteCluster != nil, suspend: p.SuspendWorkers != "", deleteSelf: p.DeleteSelf != "", requeue: p.RequeueAfter}
			if got != tc.want {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
			if p.DeleteCluster != nil && (p.DeleteCluster.Name != "rj-rc001" || p.DeleteCluster.UID != string(rc.UID) || p.DeleteCluster.Reason == "") {
				t.Fatalf("%+v", p.DeleteCluster)
			}
		})
	}
	// DeleteRayJobAfterJobFinishes turns shutdown into DeleteSelf.
	p := Decide(observe(done(rayv1.JobStatusSucceeded, rayv1.JobDeploymentStatusComplete, shutdown(0)), end, withCluster(rc),
		func(o *Observed) { o.Config.DeleteRayJobAfterJobFinishes = true }))
	if p.DeleteSelf == "" || p.DeleteCluster != nil {
		t.Fatalf("%+v", p)
	}
}
