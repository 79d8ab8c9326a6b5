package rayjob

import (
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/raydar/raydar/controller/internal/fixture"
	"github.com/raydar/raydar/controller/kit"
	"github.com/raydar/raydar/controller/raycluster"
	"github.com/raydar/raydar/rayapi/dashboard"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

func TestRayJobDecideRunning(t *testing.T) {
	run := inPhase(rayv1.JobDeploymentStatusRunning, "")
	now := fixture.T0.Add(20 * time.Second)
	for _, tc := range []struct {
		name  string
		job   *rayv1.RayJob
		mods  []func(*Observed)
		check func(t *testing.T, p *Plan)
	}{
		{name: "HTTPMode: unknown to Ray → submit", job: newJob(run),
			mods: []func(*Observed){withCluster(newCluster(true)), withDash(dashErr(dashboard.ErrNotFound))},
			check: func(t *testing.T, p *Plan) {
				if p.Submit == nil || p.Submit.Request.SubmissionID != "rj-id001" || p.Submit.Request.Entrypoint != "python job.py" {
					t.Fatalf("submit %+v", p.Submit)
				}
				if p.RequeueAfter != time.Second {
					t.Fatal(p.RequeueAfter)
				}
			}},
		{name: "HTTPMode: known to Ray before, unknown now (the head was replaced) → the attempt fails, no second submission",
			job:  newJob(inPhase(rayv1.JobDeploymentStatusRunning, rayv1.JobStatusRunning)),
			mods: []func(*Observed){withCluster(newCluster(true)), withDash(dashErr(dashboard.ErrNotFound))},
			check: func(t *testing.T, p *Plan) {
				st := p.Status
				if p.Submit != nil {
					t.Fatalf("submitted again: %+v", p.Submit)
				}
				if st.JobDeploymentStatus != rayv1.JobDeploymentStatusFailed || st.Reason != rayv1.AppFailed || st.JobStatus != rayv1.JobStatusFailed ||
					!strings.Contains(st.Message, "head was replaced") || !strings.Contains(st.Message, "RUNNING") {
					t.Fatalf("status %s/%s %q", st.JobDeploymentStatus, st.Reason, st.Message)
				}
			}},
		{name: "K8sJobMode: unknown to Ray → wait for the submitter, no submission",
			job:  newJob(run, mode(rayv1.K8sJobMode)),
			mods: []func(*Observed){withCluster(newCluster(true)), withSubmitter(submitterJob("", time.Time{})), withDash(dashErr(dashboard.ErrNotFound))},
			check: func(t *testing.T, p *Plan) {
				if p.Submit != nil || p.Status.JobDeploymentStatus != rayv1.JobDeploymentStatusRunning || p.RequeueAfter == 0 {
					t.Fatalf("%+v", p)
				}
			}},
		{name: "K8sJobMode: submitter gone → created again",
			job:  newJob(run, mode(rayv1.K8sJobMode)),
			mods: []func(*Observed){withCluster(newCluster(true)), withDash(dashErr(dashboard.ErrNotFound))},
			check: func(t *testing.T, p *Plan) {
				if p.CreateSubmitter == nil {
					t.Fatal("no submitter")
				}
			}},
		{name: "RUNNING: status follows Ray, poll by age", job: newJob(run),
			mods: []func(*Observed){withCluster(newCluster(true)), withDash(info(dashboard.JobRunning))},
			check: func(t *testing.T, p *Plan) {
				st := p.Status
				if st.JobStatus != rayv1.JobStatusRunning || st.Message != "msg RUNNING" || !st.RayJobStatusInfo.StartTime.Time.Equal(fixture.T0.Add(2*time.Second)) {
					t.Fatalf("%+v", st)
				}
				if p.RequeueAfter != 4500*time.Millisecond { // the Ray job's age (started at T0+2 s) 18 s / 4
					t.Fatal(p.RequeueAfter)
				}
				if s, _ := condStatusOf(st, rayv1.RayJobSubmitted); s != metav1.ConditionTrue {
					t.Fatal("JobSubmitted", s)
				}
			}},
		{name: "SUCCEEDED → Complete", job: newJob(run),
			mods: []func(*Observed){withCluster(newCluster(true)), withDash(info(dashboard.JobSucceeded))},
			check: func(t *testing.T, p *Plan) {
				st := p.Status
				if st.JobDeploymentStatus != rayv1.JobDeploymentStatusComplete || *st.Succeeded != 1 || *st.Failed != 0 ||
					!st.EndTime.Time.Equal(now) || !st.RayJobStatusInfo.EndTime.Time.Equal(fixture.T0.Add(30*time.Second)) {
					t.Fatalf("%+v", st)
				}
				if s, r := condStatusOf(st, rayv1.RayJobComplete); s != metav1.ConditionTrue || r != rayv1.RayJobReasonSucceeded {
					t.Fatal(s, r)
				}
				if !hasEvent(p, ReasonCompleted, "SUCCEEDED") || p.RequeueAfter != 0 {
					t.Fatal(eventsOf(p), p.RequeueAfter)
				}
			}},
		{name: "STOPPED → Complete, not counted as succeeded", job: newJob(run),
			mods: []func(*Observed){withCluster(newCluster(true)), withDash(info(dashboard.JobStopped))},
			check: func(t *testing.T, p *Plan) {
				if p.Status.JobDeploymentStatus != rayv1.JobDeploymentStatusComplete || *p.Status.Succeeded != 0 {
					t.Fatalf("%+v", p.Status)
				}
				if _, r := condStatusOf(p.Status, rayv1.RayJobComplete); r != reasonStopped {
					t.Fatal(r)
				}
			}},
		{name: "FAILED → Failed AppFailed with Ray's message", job: newJob(run),
			mods: []func(*Observed){withCluster(newCluster(true)), withDash(info(dashboard.JobFailed))},
			check: func(t *testing.T, p *Plan) {
				st := p.Status
				if st.JobDeploymentStatus != rayv1.JobDeploymentStatusFailed || st.Reason != rayv1.AppFailed || st.JobStatus != rayv1.JobStatusFailed || st.Message != "msg FAILED" || *st.Failed != 1 {
					t.Fatalf("%+v", st)
				}
				if s, r := condStatusOf(st, rayv1.RayJobFailedCondition); s != metav1.ConditionTrue || r != string(rayv1.AppFailed) {
					t.Fatal(s, r)
				}
				if !hasEvent(p, string(rayv1.AppFailed), "msg FAILED") {
					t.Fatal(eventsOf(p))
				}
			}},
		{name: "FAILED with retries left → Retrying", job: newJob(run, func(j *rayv1.RayJob) { j.Spec.BackoffLimit = fixture.Ptr(int32(2)) }),
			mods: []func(*Observed){withCluster(newCluster(true)), withDash(info(dashboard.JobFailed))},
			check: func(t *testing.T, p *Plan) {
				if p.Status.JobDeploymentStatus != rayv1.JobDeploymentStatusRetrying || *p.Status.Failed != 1 || p.Status.EndTime != nil {
					t.Fatalf("%+v", p.Status)
				}
				if !hasEvent(p, ReasonRetrying, "Attempt 1 failed") {
					t.Fatal(eventsOf(p))
				}
			}},
		{name: "FAILED with retries used up → Failed", job: newJob(run, func(j *rayv1.RayJob) {
			j.Spec.BackoffLimit = fixture.Ptr(int32(1))
			j.Status.Failed = fixture.Ptr(int32(1))
		}),
			mods: []func(*Observed){withCluster(newCluster(true)), withDash(info(dashboard.JobFailed))},
			check: func(t *testing.T, p *Plan) {
				if p.Status.JobDeploymentStatus != rayv1.JobDeploymentStatusFailed || *p.Status.Failed != 2 {
					t.Fatalf("%+v", p.Status)
				}
			}},
		{name: "FAILED after a stop request is not retried", job: newJob(run, func(j *rayv1.RayJob) {
			j.Spec.BackoffLimit = fixture.Ptr(int32(3))
			j.Annotations = map[string]string{rayv1.StopRequestedAnnotationKey: "alice@x"}
			SetStopRecord(j, StopRecord{JobID: "rj-id001", Request: "alice@x", Confirmed: true}, "", fixture.T0)
		}),
			mods: []func(*Observed){withCluster(newCluster(true)), withDash(info(dashboard.JobFailed))},
			check: func(t *testing.T, p *Plan) {
				if p.Status.JobDeploymentStatus != rayv1.JobDeploymentStatusFailed || p.Stop != nil {
					t.Fatalf("%+v", p.Status)
				}
			}},
		{name: "K8sJobMode: submitter failed → Failed SubmissionFailed", job: newJob(run, mode(rayv1.K8sJobMode)),
			mods: []func(*Observed){withCluster(newCluster(true)), withSubmitter(submitterJob(batchv1.JobFailed, fixture.T0)), withDash(info(dashboard.JobPending))},
			check: func(t *testing.T, p *Plan) {
				if p.Status.JobDeploymentStatus != rayv1.JobDeploymentStatusFailed || p.Status.Reason != rayv1.SubmissionFailed ||
					!strings.Contains(p.Status.Message, "backoff limit") {
					t.Fatalf("%+v", p.Status)
				}
			}},
		{name: "K8sJobMode: terminal but submitter running → wait for it", job: newJob(run, mode(rayv1.K8sJobMode)),
			mods: []func(*Observed){withCluster(newCluster(true)), withSubmitter(submitterJob("", time.Time{})), withDash(info(dashboard.JobSucceeded))},
			check: func(t *testing.T, p *Plan) {
				if p.Status.JobDeploymentStatus != rayv1.JobDeploymentStatusRunning || p.Status.JobStatus != rayv1.JobStatusSucceeded {
					t.Fatalf("%+v", p.Status)
				}
			}},
		{name: "K8sJobMode: SUCCEEDED, submitter not done past the grace → Complete", job: newJob(run, mode(rayv1.K8sJobMode)),
			mods: []func(*Observed){withCluster(newCluster(true)), withSubmitter(submitterJob("", time.Time{})), withDash(info(dashboard.JobSucceeded)),
				func(o *Observed) { o.Now = fixture.T0.Add(30*time.Second + 300*time.Second) }},
			check: func(t *testing.T, p *Plan) {
				if p.Status.Reason != rayv1.JobDeploymentStatusTransitionGracePeriodExceeded {
					t.Fatalf("%+v", p.Status)
				}
			}},
		{name: "K8sJobMode: terminal and submitter complete → Complete", job: newJob(run, mode(rayv1.K8sJobMode)),
			mods: []func(*Observed){withCluster(newCluster(true)), withSubmitter(submitterJob(batchv1.JobComplete, fixture.T0.Add(31*time.Second))), withDash(info(dashboard.JobSucceeded))},
			check: func(t *testing.T, p *Plan) {
				if p.Status.JobDeploymentStatus != rayv1.JobDeploymentStatusComplete {
					t.Fatalf("%+v", p.Status)
				}
			}},
		{name: "K8sJobMode: submitter finished, Ray never knew the job past 30 s → Failed", job: newJob(run, mode(rayv1.K8sJobMode)),
			mods: []func(*Observed){withCluster(newCluster(true)), withSubmitter(submitterJob(batchv1.JobComplete, fixture.T0)), withDash(dashErr(dashboard.ErrNotFound)),
				func(o *Observed) { o.Now = fixture.T0.Add(31 * time.Second) }},
			check: func(t *testing.T, p *Plan) {
				if p.Status.Reason != rayv1.JobDeploymentStatusTransitionGracePeriodExceeded || p.Status.JobStatus != rayv1.JobStatusFailed {
					t.Fatalf("%+v", p.Status)
				}
			}},
		{name: "K8sJobMode: submitter just finished, Ray does not know the job → Failed AppFailed", job: newJob(run, mode(rayv1.K8sJobMode)),
			mods: []func(*Observed){withCluster(newCluster(true)), withSubmitter(submitterJob(batchv1.JobComplete, fixture.T0.Add(15*time.Second))), withDash(dashErr(dashboard.ErrNotFound))},
			check: func(t *testing.T, p *Plan) {
				if p.Status.JobDeploymentStatus != rayv1.JobDeploymentStatusFailed || p.Status.Reason != rayv1.AppFailed ||
					p.Status.Message != "Submitter completed but Ray job not found in RayCluster." {
					t.Fatalf("%+v", p.Status)
				}
			}},
		{name: "SidecarMode: the sidecar exited non-zero → Failed SubmissionFailed", job: newJob(run, mode(rayv1.SidecarMode)),
			mods: []func(*Observed){withCluster(newCluster(true)), withDash(info(dashboard.JobPending)), func(o *Observed) {
				o.HeadPod = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "rj-rc001-head-x"}, Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{
					Name: rayv1.RayJobSubmitterContainerName, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 2, Reason: "Error"}}}}}}
			}},
			check: func(t *testing.T, p *Plan) {
				if p.Status.Reason != rayv1.SubmissionFailed || p.Status.Message != "Ray head pod container ray-job-submitter terminated with exit code 2: Error" {
					t.Fatalf("%+v", p.Status)
				}
			}},
		{name: "SidecarMode: the sidecar exited non-zero after Ray said FAILED → Failed AppFailed, Ray's message kept",
			job: newJob(inPhase(rayv1.JobDeploymentStatusRunning, rayv1.JobStatusFailed), mode(rayv1.SidecarMode), func(j *rayv1.RayJob) { j.Status.Message = "boom" }),
			mods: []func(*Observed){withCluster(newCluster(true)), withDash(info(dashboard.JobFailed)), func(o *Observed) {
				o.HeadPod = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "rj-rc001-head-x"}, Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{
					Name: rayv1.RayJobSubmitterContainerName, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error"}}}}}}
			}},
			check: func(t *testing.T, p *Plan) {
				if p.Status.JobDeploymentStatus != rayv1.JobDeploymentStatusFailed || p.Status.Reason != rayv1.AppFailed || p.Status.Message != "boom" {
					t.Fatalf("%+v", p.Status)
				}
			}},
		{name: "SidecarMode: the sidecar exited 0 and Ray says SUCCEEDED → Complete at once", job: newJob(run, mode(rayv1.SidecarMode)),
			mods: []func(*Observed){withCluster(newCluster(true)), withDash(info(dashboard.JobSucceeded)), func(o *Observed) {
				o.HeadPod = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "rj-rc001-head-x"}, Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{
					Name: rayv1.RayJobSubmitterContainerName, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0,
						FinishedAt: metav1.NewTime(o.Now)}}}}}}
			}},
			check: func(t *testing.T, p *Plan) {
				if p.Status.JobDeploymentStatus != rayv1.JobDeploymentStatusComplete || p.Status.Reason != "" {
					t.Fatalf("%+v", p.Status)
				}
			}},
		{name: "SidecarMode: no head pod → Failed AppFailed", job: newJob(run, mode(rayv1.SidecarMode)),
			mods: []func(*Observed){withCluster(newCluster(true)), withDash(info(dashboard.JobRunning))},
			check: func(t *testing.T, p *Plan) {
				if p.Status.JobDeploymentStatus != rayv1.JobDeploymentStatusFailed || p.Status.Reason != rayv1.AppFailed || p.Status.Message != "Ray head pod not found." {
					t.Fatalf("%+v", p.Status)
				}
			}},
		{name: "K8sJobMode: the submitter Job failed → Failed SubmissionFailed with the Job's condition", job: newJob(run, mode(rayv1.K8sJobMode)),
			mods: []func(*Observed){withCluster(newCluster(true)), withDash(info(dashboard.JobPending)), withSubmitter(func() *batchv1.Job {
				j := submitterJob(batchv1.JobFailed, fixture.T0)
				j.Status.Conditions[0].Reason, j.Status.Conditions[0].Message = "BackoffLimitExceeded", "Job has reached the specified backoff limit"
				return j
			}())},
			check: func(t *testing.T, p *Plan) {
				if p.Status.JobDeploymentStatus != rayv1.JobDeploymentStatusFailed || p.Status.Reason != rayv1.SubmissionFailed ||
					p.Status.Message != "Job submission has failed. Reason: BackoffLimitExceeded. Message: Job has reached the specified backoff limit" {
					t.Fatalf("%+v", p.Status)
				}
			}},
		{name: "cluster deleted underneath (not selector) → created again", job: newJob(run),
			check: func(t *testing.T, p *Plan) {
				if p.CreateCluster == nil || p.RequeueAfter == 0 {
					t.Fatalf("%+v", p)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.check(t, Decide(observe(tc.job, now, tc.mods...)))
		})
	}
}

// A dashboard that cannot be asked: the failure clock is written once (no
// status writes while it stays down), the outage is said by one Warning
// once it has lasted DashboardWarnAfter (a blip is not said), the polls
// back off, and the job fails after StatusCheckTimeout, without a retry.
func TestRayJobDecideDashboardDown(t *testing.T) {
	j := newJob(inPhase(rayv1.JobDeploymentStatusRunning, rayv1.JobStatusRunning), func(j *rayv1.RayJob) { j.Spec.BackoffLimit = fixture.Ptr(int32(5)) })
	rc := newCluster(true)
	now := fixture.T0.Add(time.Minute)
	p := Decide(observe(j, now, withCluster(rc), withDash(dashErr(errRefused))))
	if !p.WriteStatus || !p.Status.JobStatusCheckFailureStartTime.Time.Equal(now) || len(p.Events) != 0 {
		t.Fatalf("first failure: %+v %s", p.Status, eventsOf(p))
	}
	if p.RequeueAfter > 10*time.Second {
		t.Fatalf("first failure: next look in %s, after the Warning is due", p.RequeueAfter)
	}
	// Apply the plan's status (ignoring the copy of the cluster status,
	// which changes with the cluster only).
	j.Status = p.Status
	if p := Decide(observe(j, now.Add(9*time.Second), withCluster(rc), withDash(dashErr(errRefused)))); len(p.Events) != 0 {
		t.Fatalf("a 9 s outage is said: %s", eventsOf(p))
	}
	writes := 0
	var waits []time.Duration
	onces := map[string]bool{}
	for i := 1; i <= 20; i++ {
		at := now.Add(time.Duration(i) * 10 * time.Second)
		p := Decide(observe(j, at, withCluster(rc), withDash(dashErr(errRefused))))
		if p.WriteStatus {
			writes++
		}
		if !hasEvent(p, ReasonDashboardUnreachable, "connection refused") || len(p.Events) != 1 {
			t.Fatalf("pass %d: %s", i, eventsOf(p))
		}
		onces[p.Events[0].Once] = true
		waits = append(waits, p.RequeueAfter)
	}
	if len(onces) != 1 || onces[""] {
		t.Fatalf("the outage's Warning is not one Event told once: once keys %v", onces)
	}
	if writes != 0 {
		t.Fatalf("%d status writes while the dashboard stayed down, want 0", writes)
	}
	if waits[0] != 10*time.Second || waits[len(waits)-1] != 30*time.Second {
		t.Fatalf("back-off %v", waits)
	}
	p = Decide(observe(j, now.Add(300*time.Second), withCluster(rc), withDash(dashErr(errRefused))))
	if p.Status.JobDeploymentStatus != rayv1.JobDeploymentStatusFailed || p.Status.Reason != rayv1.JobStatusCheckTimeoutExceeded {
		t.Fatalf("%+v", p.Status)
	}
	// An answer clears the clock.
	p = Decide(observe(j, now.Add(time.Minute), withCluster(rc), withDash(info(dashboard.JobRunning))))
	if p.Status.JobStatusCheckFailureStartTime != nil {
		t.Fatal("clock not cleared")
	}
}

func TestRayJobDecideDeadlines(t *testing.T) {
	active := func(j *rayv1.RayJob) { j.Spec.ActiveDeadlineSeconds = fixture.Ptr(int32(60)) }
	pre := func(j *rayv1.RayJob) { j.Spec.PreRunningDeadlineSeconds = fixture.Ptr(int32(30)) }
	retries := func(j *rayv1.RayJob) { j.Spec.BackoffLimit = fixture.Ptr(int32(3)) }
	rc := withCluster(newCluster(true))
	for _, tc := range []struct {
		name        string
		job         *rayv1.RayJob
		now         time.Time
		dash        *DashAnswer
		wantReason  rayv1.JobFailedReason
		wantRequeue time.Duration
	}{
		{name: "active deadline ahead: requeue exactly then", job: newJob(inPhase(rayv1.JobDeploymentStatusInitializing, ""), active),
			now: fixture.T0.Add(45 * time.Second), wantRequeue: 15 * time.Second},
		{name: "active deadline passed while initializing", job: newJob(inPhase(rayv1.JobDeploymentStatusInitializing, ""), active, retries),
			now: fixture.T0.Add(60 * time.Second), wantReason: rayv1.DeadlineExceeded},
		{name: "active deadline passed while running", job: newJob(inPhase(rayv1.JobDeploymentStatusRunning, rayv1.JobStatusRunning), active, retries),
			now: fixture.T0.Add(61 * time.Second), dash: info(dashboard.JobRunning), wantReason: rayv1.DeadlineExceeded},
		{name: "pre-running deadline passed while PENDING", job: newJob(inPhase(rayv1.JobDeploymentStatusRunning, rayv1.JobStatusPending), pre, retries),
			now: fixture.T0.Add(30 * time.Second), dash: info(dashboard.JobPending), wantReason: rayv1.PreRunningDeadlineExceeded},
		{name: "pre-running deadline does not apply once RUNNING", job: newJob(inPhase(rayv1.JobDeploymentStatusRunning, rayv1.JobStatusRunning), pre),
			now: fixture.T0.Add(40 * time.Second), dash: info(dashboard.JobRunning), wantRequeue: 9500 * time.Millisecond}, // the Ray job's age 38 s / 4
		{name: "pre-running deadline ahead: requeue then", job: newJob(inPhase(rayv1.JobDeploymentStatusInitializing, ""), pre),
			now: fixture.T0.Add(28 * time.Second), wantRequeue: 2 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mods := []func(*Observed){}
			if tc.job.Status.JobDeploymentStatus == rayv1.JobDeploymentStatusRunning {
				mods = append(mods, rc, withDash(tc.dash))
			}
			p := Decide(observe(tc.job, tc.now, mods...))
			if tc.wantReason != "" {
				// Deadlines are not retried.
				if p.Status.JobDeploymentStatus != rayv1.JobDeploymentStatusFailed || p.Status.Reason != tc.wantReason {
					t.Fatalf("%s %s: %s", p.Status.JobDeploymentStatus, p.Status.Reason, p.Status.Message)
				}
				return
			}
			if p.Status.JobDeploymentStatus == rayv1.JobDeploymentStatusFailed || p.RequeueAfter != tc.wantRequeue {
				t.Fatalf("status %s requeue %s, want %s", p.Status.JobDeploymentStatus, p.RequeueAfter, tc.wantRequeue)
			}
		})
	}
}

func TestRayJobPollInterval(t *testing.T) {
	cfg := defaultConfig()
	for _, tc := range []struct {
		age  time.Duration
		want time.Duration
	}{{0, time.Second}, {2 * time.Second, time.Second}, {20 * time.Second, 5 * time.Second}, {time.Hour, 10 * time.Second}} {
		st := &rayv1.RayJobStatus{StartTime: apiTime(fixture.T0.Add(-time.Minute)), RayJobStatusInfo: rayv1.RayJobStatusInfo{StartTime: apiTime(fixture.T0)}}
		if got := pollInterval(&Observed{Now: fixture.T0.Add(tc.age), Config: cfg}, st); got != tc.want {
			t.Fatalf("Ray job's age %s: %s, want %s", tc.age, got, tc.want)
		}
	}
	// Its cluster ready after a minute's bring-up, the job just
	// submitted: asked every MinPoll, whatever the RayJob's own age; then
	// backing off from that step, not from the RayJob's start.
	st := &rayv1.RayJobStatus{StartTime: apiTime(fixture.T0), JobStatus: rayv1.JobStatusPending,
		Conditions: []metav1.Condition{{Type: string(rayv1.RayJobClusterReady), Status: metav1.ConditionTrue, LastTransitionTime: metav1.NewTime(fixture.T0.Add(58 * time.Second))}}}
	if got := pollInterval(&Observed{Now: fixture.T0.Add(time.Minute), Config: cfg}, st); got != time.Second {
		t.Fatalf("a RayJob whose cluster became ready 2 s ago after a minute: %s, want 1s", got)
	}
	if got := pollInterval(&Observed{Now: fixture.T0.Add(78 * time.Second), Config: cfg}, st); got != 5*time.Second {
		t.Fatalf("20 s after its cluster became ready: %s, want 5s", got)
	}
}

// A submitter that comes late (its pod waited for the plane): while Ray
// does not know the job, it is asked every 3 s at most, as KubeRay does,
// not at the back-off grown since the cluster was ready (10 s, checked
// below as what it replaces).
func TestRayJobNotYetSubmittedIsAskedEvery3s(t *testing.T) {
	readyAt := fixture.T0
	now := readyAt.Add(90 * time.Second)
	job := newJob(inPhase(rayv1.JobDeploymentStatusRunning, ""), mode(rayv1.K8sJobMode), func(j *rayv1.RayJob) {
		j.Status.Conditions = []metav1.Condition{{Type: string(rayv1.RayJobClusterReady), Status: metav1.ConditionTrue, LastTransitionTime: metav1.NewTime(readyAt)}}
	})
	p := Decide(observe(job, now, withCluster(newCluster(true)), withSubmitter(submitterJob("", time.Time{})), withDash(dashErr(dashboard.ErrNotFound))))
	if p.RequeueAfter != 3*time.Second || p.Status.JobDeploymentStatus != rayv1.JobDeploymentStatusRunning {
		t.Fatalf("not yet known to Ray, 90 s after its cluster was ready: asked again after %s (%s), want 3s", p.RequeueAfter, p.Status.JobDeploymentStatus)
	}
	if got := pollInterval(observe(job, now), &job.Status); got != 10*time.Second {
		t.Fatalf("the back-off it replaces: %s, want 10s", got)
	}
}

// A Ray job that ended while its submitter still runs past the transition
// grace period (300 s from Ray's end time) ends the RayJob as the Ray job
// ended: a SUCCEEDED (or STOPPED) job is Complete and never run again,
// whatever backoffLimit allows; only a FAILED one is retried (KubeRay's
// checkTransitionGracePeriodAndUpdateStatusIfNeeded, then its backoff).
func TestRayJobDecideTerminalWithSubmitterStillRunning(t *testing.T) {
	end := fixture.T0.Add(30 * time.Second) // info(): Ray's end time
	running := submitterJob("", time.Time{})
	sidecarRunning := func(o *Observed) {
		o.HeadPod = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "rj-rc001-head-x"}, Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{
			Name: rayv1.RayJobSubmitterContainerName, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}}}
	}
	for _, tc := range []struct {
		name      string
		mode      rayv1.JobSubmissionMode
		ray       dashboard.JobStatus
		now       time.Time
		wantDS    rayv1.JobDeploymentStatus
		wantJS    rayv1.JobStatus
		wantSucc  int32
		wantFail  int32
		wantRsn   rayv1.JobFailedReason
		wantAfter time.Duration // requeue no later than this
	}{
		{name: "SUCCEEDED within the grace: keep waiting", mode: rayv1.K8sJobMode, ray: dashboard.JobSucceeded, now: end.Add(299 * time.Second),
			wantDS: rayv1.JobDeploymentStatusRunning, wantJS: rayv1.JobStatusSucceeded, wantAfter: time.Second},
		{name: "SUCCEEDED past the grace: Complete, not retried", mode: rayv1.K8sJobMode, ray: dashboard.JobSucceeded, now: end.Add(300 * time.Second),
			wantDS: rayv1.JobDeploymentStatusComplete, wantJS: rayv1.JobStatusSucceeded, wantSucc: 1,
			wantRsn: rayv1.JobDeploymentStatusTransitionGracePeriodExceeded},
		{name: "STOPPED past the grace: Complete, not retried", mode: rayv1.K8sJobMode, ray: dashboard.JobStopped, now: end.Add(301 * time.Second),
			wantDS: rayv1.JobDeploymentStatusComplete, wantJS: rayv1.JobStatusStopped,
			wantRsn: rayv1.JobDeploymentStatusTransitionGracePeriodExceeded},
		{name: "FAILED past the grace: retried (backoffLimit)", mode: rayv1.K8sJobMode, ray: dashboard.JobFailed, now: end.Add(300 * time.Second),
			wantDS: rayv1.JobDeploymentStatusRetrying, wantJS: rayv1.JobStatusFailed, wantFail: 1,
			wantRsn: rayv1.JobDeploymentStatusTransitionGracePeriodExceeded},
		{name: "SidecarMode: SUCCEEDED, sidecar still running: keep waiting for it", mode: rayv1.SidecarMode,
			ray: dashboard.JobSucceeded, now: end.Add(10 * time.Second),
			wantDS: rayv1.JobDeploymentStatusRunning, wantJS: rayv1.JobStatusSucceeded, wantAfter: 10 * time.Second},
		{name: "SidecarMode: FAILED, sidecar still running past the grace: Failed as KubeRay, retried", mode: rayv1.SidecarMode,
			ray: dashboard.JobFailed, now: end.Add(300 * time.Second),
			wantDS: rayv1.JobDeploymentStatusRetrying, wantJS: rayv1.JobStatusFailed, wantFail: 1,
			wantRsn: rayv1.JobDeploymentStatusTransitionGracePeriodExceeded},
		{name: "SidecarMode: SUCCEEDED, sidecar still running past the grace: Complete", mode: rayv1.SidecarMode,
			ray: dashboard.JobSucceeded, now: end.Add(300 * time.Second),
			wantDS: rayv1.JobDeploymentStatusComplete, wantJS: rayv1.JobStatusSucceeded, wantSucc: 1,
			wantRsn: rayv1.JobDeploymentStatusTransitionGracePeriodExceeded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := newJob(inPhase(rayv1.JobDeploymentStatusRunning, rayv1.JobStatusRunning), mode(tc.mode),
				func(j *rayv1.RayJob) { j.Spec.BackoffLimit = fixture.Ptr(int32(3)) })
			mods := []func(*Observed){withCluster(newCluster(true)), withDash(info(tc.ray))}
			if tc.mode == rayv1.K8sJobMode {
				mods = append(mods, withSubmitter(running))
			} else {
				mods = append(mods, sidecarRunning)
			}
			p := Decide(observe(j, tc.now, mods...))
			st := p.Status
			if st.JobDeploymentStatus != tc.wantDS || st.JobStatus != tc.wantJS || st.Reason != tc.wantRsn ||
				*st.Succeeded != tc.wantSucc || *st.Failed != tc.wantFail {
				t.Fatalf("deployment %s, job %s, reason %q, succeeded %d, failed %d; want %s, %s, %q, %d, %d",
					st.JobDeploymentStatus, st.JobStatus, st.Reason, *st.Succeeded, *st.Failed, tc.wantDS, tc.wantJS, tc.wantRsn, tc.wantSucc, tc.wantFail)
			}
			if tc.wantDS == rayv1.JobDeploymentStatusComplete {
				if p.CreateCluster != nil || p.DeleteCluster != nil || p.Submit != nil || hasEvent(p, ReasonRetrying, "") {
					t.Fatalf("a finished job is not run again: %+v | %s", p, eventsOf(p))
				}
				if tc.wantRsn != "" && st.Message != "JobDeploymentStatus does not transition to Complete or Failed within the grace period after JobStatus reaches a terminal state." {
					t.Fatal(st.Message)
				}
				// The next pass leaves it Complete.
				j.Status = st
				if p2 := Decide(observe(j, tc.now.Add(time.Hour), mods...)); p2.Status.JobDeploymentStatus != rayv1.JobDeploymentStatusComplete || *p2.Status.Succeeded != tc.wantSucc {
					t.Fatalf("next pass: %+v", p2.Status)
				}
			}
			if tc.wantAfter > 0 && (p.RequeueAfter == 0 || p.RequeueAfter > tc.wantAfter) {
				t.Fatalf("requeue %s, want within %s", p.RequeueAfter, tc.wantAfter)
			}
		})
	}
}

// The RayJob's own head Service "<rayjob>-head-svc" (KubeRay's
// reconcileServices and BuildHeadServiceForRayJob): made while the job
// runs, a copy of the cluster's head Service with the RayJob's labels and
// owner, re-pointed only when the job's cluster changes.
func TestRayJobDecideHeadService(t *testing.T) {
	run := inPhase(rayv1.JobDeploymentStatusRunning, rayv1.JobStatusRunning)
	now := fixture.T0.Add(20 * time.Second)
	rc := newCluster(true)
	want := buildHeadService(newJob(run), rc, raycluster.DefaultBuildConfig())

	t.Run("built as KubeRay builds it", func(t *testing.T) {
		if want.Name != "rj-head-svc" || want.Namespace != "ns" || kit.ControllerUID(want.OwnerReferences) != "rj-uid" {
			t.Fatalf("%+v", want.ObjectMeta)
		}
		wantLabels := map[string]string{rayv1.RayOriginatedFromCRNameLabelKey: "rj", rayv1.RayOriginatedFromCRDLabelKey: "RayJob",
			rayv1.RayNodeTypeLabelKey: "head", rayv1.RayIDLabelKey: "rj-head"}
		if fmt.Sprint(want.Labels) != fmt.Sprint(wantLabels) {
			t.Fatalf("labels %v, want %v", want.Labels, wantLabels)
		}
		clusterSvc := raycluster.BuildHeadService(rc, raycluster.DefaultBuildConfig())
		if !equality.Semantic.DeepEqual(want.Spec, clusterSvc.Spec) || want.Spec.Selector[rayv1.RayClusterLabelKey] != "rj-rc001" {
			t.Fatalf("spec %+v, want the cluster's head Service's %+v", want.Spec, clusterSvc.Spec)
		}
		withAnn := rc.DeepCopy()
		withAnn.Spec.HeadServiceAnnotations = map[string]string{"lb": "x"}
		if s := buildHeadService(newJob(run), withAnn, raycluster.DefaultBuildConfig()); len(s.Annotations) != 0 {
			t.Fatalf("headServiceAnnotations are the cluster's Service's only: %v", s.Annotations)
		}
	})
	for _, tc := range []struct {
		name       string
		job        *rayv1.RayJob
		have       *corev1.Service
		wantCreate bool
		wantUpdate bool
	}{
		{name: "absent → created", job: newJob(run), wantCreate: true},
		{name: "on the job's cluster → left alone", job: newJob(run), have: want.DeepCopy()},
		{name: "on another cluster → re-pointed", job: newJob(run), have: func() *corev1.Service {
			s := want.DeepCopy()
			s.Spec.Selector[rayv1.RayClusterLabelKey] = "rj-old01"
			s.Spec.ClusterIP = "10.0.0.7"
			return s
		}(), wantUpdate: true},
		{name: "not the RayJob's → left alone", job: newJob(run), have: func() *corev1.Service {
			s := want.DeepCopy()
			s.OwnerReferences = nil
			s.Spec.Selector[rayv1.RayClusterLabelKey] = "other"
			return s
		}()},
		{name: "clusterSelector → none", job: newJob(run, selector("rj-rc001"))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Decide(observe(tc.job, now, withCluster(rc), withDash(info(dashboard.JobRunning)), func(o *Observed) { o.HeadService = tc.have }))
			if (p.CreateHeadService != nil) != tc.wantCreate || (p.UpdateHeadService != nil) != tc.wantUpdate {
				t.Fatalf("create %v, update %v", p.CreateHeadService, p.UpdateHeadService)
			}
			if u := p.UpdateHeadService; u != nil {
				if u.Spec.Selector[rayv1.RayClusterLabelKey] != "rj-rc001" || u.Spec.ClusterIP != "10.0.0.7" || u.ResourceVersion != tc.have.ResourceVersion {
					t.Fatalf("%+v", u)
				}
			}
			if c := p.CreateHeadService; c != nil && !equality.Semantic.DeepEqual(c, want) {
				t.Fatalf("%+v", c)
			}
		})
	}
	// Before the job runs there is none (KubeRay makes it in Running).
	p := Decide(observe(newJob(inPhase(rayv1.JobDeploymentStatusInitializing, "")), now, withCluster(rc)))
	if p.CreateHeadService != nil {
		t.Fatal("created while Initializing")
	}
}

// Under a CRD that drops status.jobStatusCheckFailureStartTime (KubeRay
// v1.5.0), the failure clock this process remembers stands in for it: a
// dashboard that stays down writes nothing more and still fails the job
// on time; a clock of another Ray job does not count.
func TestRayJobDecideRememberedFailureClock(t *testing.T) {
	j := newJob(inPhase(rayv1.JobDeploymentStatusRunning, rayv1.JobStatusRunning))
	rc := newCluster(true)
	first := fixture.T0.Add(time.Minute)
	p := Decide(observe(j, first, withCluster(rc), withDash(dashErr(errRefused))))
	j.Status = p.Status
	j.Status.JobStatusCheckFailureStartTime = nil // dropped by the API server
	clock := func(id string) func(*Observed) {
		return func(o *Observed) { o.CheckFailJobID, o.CheckFailSince = id, apiTime(first) }
	}
	p = Decide(observe(j, first.Add(time.Minute), withCluster(rc), withDash(dashErr(errRefused)), clock("rj-id001")))
	if p.WriteStatus || len(p.Events) != 1 || p.Events[0].Once != "rj-id001 since "+first.UTC().Format(time.RFC3339Nano) {
		t.Fatalf("written again, or the outage not told as the one since the remembered clock: %v %s", p.WriteStatus, eventsOf(p))
	}
	p = Decide(observe(j, first.Add(300*time.Second), withCluster(rc), withDash(dashErr(errRefused)), clock("rj-id001")))
	if p.Status.Reason != rayv1.JobStatusCheckTimeoutExceeded {
		t.Fatalf("not failed on time: %+v", p.Status)
	}
	p = Decide(observe(j, first.Add(time.Minute), withCluster(rc), withDash(dashErr(errRefused)), clock("rj-other")))
	if !p.WriteStatus || !p.Status.JobStatusCheckFailureStartTime.Time.Equal(first.Add(time.Minute)) {
		t.Fatalf("another job's clock counted: %+v", p.Status)
	}
}
