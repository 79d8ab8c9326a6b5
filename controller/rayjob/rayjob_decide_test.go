package rayjob

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/raydar/raydar/controller/internal/fixture"
	"github.com/raydar/raydar/controller/kit"
	"github.com/raydar/raydar/controller/raycluster"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/raydar/raydar/rayapi/dashboard"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// Fixtures: an HTTPMode RayJob "rj" with its own cluster, in each phase.

func newJob(mods ...func(*rayv1.RayJob)) *rayv1.RayJob {
	spec := fixture.Cluster("template").Spec
	j := &rayv1.RayJob{
		ObjectMeta: metav1.ObjectMeta{Name: "rj", Namespace: "ns", UID: "rj-uid", Generation: 1, ResourceVersion: "1",
			Finalizers: []string{rayv1.RayJobStopJobFinalizer}},
		Spec: rayv1.RayJobSpec{Entrypoint: "python job.py", SubmissionMode: rayv1.HTTPMode, RayClusterSpec: &spec},
	}
	for _, m := range mods {
		m(j)
	}
	return j
}

func mode(m rayv1.JobSubmissionMode) func(*rayv1.RayJob) {
	return func(j *rayv1.RayJob) { j.Spec.SubmissionMode = m }
}

// inPhase sets the status of a job that reached ds with its names set.
func inPhase(ds rayv1.JobDeploymentStatus, js rayv1.JobStatus) func(*rayv1.RayJob) {
	return func(j *rayv1.RayJob) {
		j.Status.JobDeploymentStatus = ds
		j.Status.JobStatus = js
		j.Status.JobId = "rj-id001"
		j.Status.RayClusterName = "rj-rc001"
		j.Status.StartTime = apiTime(fixture.T0)
		j.Status.Succeeded, j.Status.Failed = fixture.Ptr(int32(0)), fixture.Ptr(int32(0))
		if ds == rayv1.JobDeploymentStatusRunning || rayv1.IsJobDeploymentTerminal(ds) {
			j.Status.DashboardURL = "rj-rc001-head-svc.ns.svc.cluster.local:8265"
		}
		if rayv1.IsJobDeploymentTerminal(ds) {
			j.Status.EndTime = apiTime(fixture.T0.Add(time.Minute))
		}
	}
}

func selector(name string) func(*rayv1.RayJob) {
	return func(j *rayv1.RayJob) {
		j.Spec.RayClusterSpec = nil
		j.Spec.ClusterSelector = map[string]string{rayv1.RayClusterLabelKey: name}
	}
}

// newCluster is the job's cluster "rj-rc001", owned by the job.
func newCluster(readyState bool) *rayv1.RayCluster {
	rc := fixture.Cluster("rj-rc001")
	rc.OwnerReferences = []metav1.OwnerReference{kit.RayJobOwnerRef(newJob())}
	if readyState {
		rc.Status.State = rayv1.Ready
	}
	return rc
}

func submitterJob(cond batchv1.JobConditionType, at time.Time) *batchv1.Job {
	j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "rj", Namespace: "ns", UID: "sub-uid",
		OwnerReferences: []metav1.OwnerReference{kit.RayJobOwnerRef(newJob())}}}
	if cond != "" {
		j.Status.Conditions = []batchv1.JobCondition{{Type: cond, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded",
			Message: "Job has reached the specified backoff limit", LastTransitionTime: metav1.NewTime(at)}}
	}
	return j
}

func info(s dashboard.JobStatus) *DashAnswer {
	i := &dashboard.JobInfo{Status: s, SubmissionID: "rj-id001", Message: "msg " + string(s), StartTime: fixture.T0.Add(2 * time.Second).UnixMilli()}
	if s.IsTerminal() {
		i.EndTime = fixture.T0.Add(30 * time.Second).UnixMilli()
	}
	return &DashAnswer{Info: i}
}

func dashErr(err error) *DashAnswer { return &DashAnswer{Err: err} }

var errRefused = fmt.Errorf("dial tcp: connection refused: %w", dashboard.ErrUnavailable)

func observe(j *rayv1.RayJob, now time.Time, mods ...func(*Observed)) *Observed {
	o := &Observed{Job: j, Now: now, Config: defaultConfig(), NewSuffix: func() string { return "abcde" }}
	for _, m := range mods {
		m(o)
	}
	return o
}

func withCluster(rc *rayv1.RayCluster) func(*Observed) {
	return func(o *Observed) { o.Cluster = rc }
}
func withSubmitter(j *batchv1.Job) func(*Observed) { return func(o *Observed) { o.Submitter = j } }
func withDash(d *DashAnswer) func(*Observed)       { return func(o *Observed) { o.Dash = d } }

func hasEvent(p *Plan, reason, substr string) bool {
	for _, e := range p.Events {
		if e.Reason == reason && strings.Contains(e.Message, substr) {
			return true
		}
	}
	return false
}

func eventsOf(p *Plan) string {
	var s []string
	for _, e := range p.Events {
		s = append(s, e.Reason+": "+e.Message)
	}
	return strings.Join(s, " | ")
}

func condStatusOf(st rayv1.RayJobStatus, t string) (metav1.ConditionStatus, string) {
	if c := kit.FindCondition(st.Conditions, t); c != nil {
		return c.Status, c.Reason
	}
	return "", ""
}

func TestRayJobDecideNew(t *testing.T) {
	for _, tc := range []struct {
		name          string
		job           *rayv1.RayJob
		wantJobID     string
		wantCluster   string
		wantFinalizer bool
	}{
		{name: "generated names, finalizer added", job: newJob(func(j *rayv1.RayJob) { j.Finalizers = nil }),
			wantJobID: "rj-abcde", wantCluster: "rj-abcde", wantFinalizer: true},
		{name: "spec.jobId wins", job: newJob(func(j *rayv1.RayJob) { j.Spec.JobId = "mine" }), wantJobID: "mine", wantCluster: "rj-abcde"},
		{name: "InteractiveMode without spec.jobId: none yet", job: newJob(mode(rayv1.InteractiveMode)), wantJobID: "", wantCluster: "rj-abcde"},
		{name: "clusterSelector names the cluster", job: newJob(selector("shared")), wantJobID: "rj-abcde", wantCluster: "shared"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Decide(observe(tc.job, fixture.T0))
			st := p.Status
			if st.JobDeploymentStatus != rayv1.JobDeploymentStatusInitializing || st.JobId != tc.wantJobID || st.RayClusterName != tc.wantCluster {
				t.Fatalf("status %s id=%q cluster=%q", st.JobDeploymentStatus, st.JobId, st.RayClusterName)
			}
			if !st.StartTime.Time.Equal(fixture.T0) || st.ObservedGeneration != 1 || *st.Succeeded != 0 || *st.Failed != 0 {
				t.Fatalf("status %+v", st)
			}
			if p.AddFinalizer != tc.wantFinalizer || !p.WriteStatus || p.RequeueAfter != soon {
				t.Fatalf("plan finalizer=%v write=%v requeue=%s", p.AddFinalizer, p.WriteStatus, p.RequeueAfter)
			}
			// Nothing is created before the names are written.
			if p.CreateCluster != nil || p.CreateSubmitter != nil || p.Submit != nil {
				t.Fatal("acted before recording the names")
			}
		})
	}
}

func TestRayJobDecideInitializing(t *testing.T) {
	init := inPhase(rayv1.JobDeploymentStatusInitializing, "")
	foreign := newCluster(true)
	foreign.OwnerReferences = nil

	t.Run("creates the cluster, owned and labelled", func(t *testing.T) {
		p := Decide(observe(newJob(init), fixture.T0.Add(time.Second)))
		c := p.CreateCluster
		if c == nil || c.Name != "rj-rc001" || c.Namespace != "ns" || kit.ControllerUID(c.OwnerReferences) != "rj-uid" {
			t.Fatalf("cluster %+v", c)
		}
		if c.Labels[rayv1.RayOriginatedFromCRNameLabelKey] != "rj" || c.Labels[rayv1.RayOriginatedFromCRDLabelKey] != "RayJob" ||
			c.Labels[rayv1.RayJobSubmissionModeLabelKey] != "HTTPMode" {
			t.Fatalf("labels %v", c.Labels)
		}
		if p.Status.JobDeploymentStatus != rayv1.JobDeploymentStatusInitializing {
			t.Fatal(p.Status.JobDeploymentStatus)
		}
	})
	t.Run("waits for the cluster to be ready, woken by its watch", func(t *testing.T) {
		p := Decide(observe(newJob(init), fixture.T0.Add(time.Second), withCluster(newCluster(false))))
		if p.CreateCluster != nil || p.Status.JobDeploymentStatus != rayv1.JobDeploymentStatusInitializing ||
			!strings.Contains(p.Status.Message, "Waiting for RayCluster rj-rc001") {
			t.Fatalf("%+v", p.Status)
		}
		if s, r := condStatusOf(p.Status, rayv1.RayJobClusterReady); s != metav1.ConditionFalse || r != rayv1.RayJobReasonClusterCreating {
			t.Fatalf("ClusterReady %s %s", s, r)
		}
		// Written once; the second pass with the same view writes nothing
		// and does not poll.
		j := newJob(init)
		j.Status = p.Status
		p2 := Decide(observe(j, fixture.T0.Add(2*time.Second), withCluster(newCluster(false))))
		if p2.WriteStatus || p2.RequeueAfter != 0 {
			t.Fatalf("second pass write=%v requeue=%s", p2.WriteStatus, p2.RequeueAfter)
		}
	})
	t.Run("ready: HTTPMode runs", func(t *testing.T) {
		p := Decide(observe(newJob(init), fixture.T0.Add(time.Second), withCluster(newCluster(true))))
		if p.Status.JobDeploymentStatus != rayv1.JobDeploymentStatusRunning || p.Status.DashboardURL != "rj-rc001-head-svc.ns.svc.cluster.local:8265" {
			t.Fatalf("%+v", p.Status)
		}
		if p.CreateSubmitter != nil || !hasEvent(p, reasonRunning, "HTTPMode") {
			t.Fatal(eventsOf(p))
		}
		if s, _ := condStatusOf(p.Status, rayv1.RayJobClusterReady); s != metav1.ConditionTrue {
			t.Fatal("ClusterReady", s)
		}
	})
	t.Run("ready: K8sJobMode creates the submitter", func(t *testing.T) {
		p := Decide(observe(newJob(init, mode(rayv1.K8sJobMode)), fixture.T0.Add(time.Second), withCluster(newCluster(true))))
		if p.CreateSubmitter == nil || p.CreateSubmitter.Name != "rj" || p.Status.JobDeploymentStatus != rayv1.JobDeploymentStatusRunning {
			t.Fatalf("%+v", p)
		}
	})
	t.Run("ready: InteractiveMode waits for spec.jobId", func(t *testing.T) {
		j := newJob(init, mode(rayv1.InteractiveMode))
		j.Status.JobId = ""
		p := Decide(observe(j, fixture.T0.Add(time.Second), withCluster(newCluster(true))))
		if p.Status.JobDeploymentStatus != rayv1.JobDeploymentStatusWaiting || !hasEvent(p, reasonWaitingForJobID, "") {
			t.Fatalf("%s %s", p.Status.JobDeploymentStatus, eventsOf(p))
		}
		j.Status = p.Status
		j.Spec.JobId = "user-submitted"
		p = Decide(observe(j, fixture.T0.Add(time.Minute), withCluster(newCluster(true))))
		if p.Status.JobDeploymentStatus != rayv1.JobDeploymentStatusRunning || p.Status.JobId != "user-submitted" {
			t.Fatalf("%s %s", p.Status.JobDeploymentStatus, p.Status.JobId)
		}
	})
	t.Run("clusterSelector: never creates, waits for the cluster", func(t *testing.T) {
		j := newJob(init, selector("shared"))
		j.Status.RayClusterName = "shared"
		p := Decide(observe(j, fixture.T0.Add(time.Second)))
		if p.CreateCluster != nil || !strings.Contains(p.Status.Message, "Waiting for RayCluster shared") {
			t.Fatalf("%+v", p.Status)
		}
		shared := fixture.Cluster("shared")
		shared.Status.State = rayv1.Ready
		p = Decide(observe(j, fixture.T0.Add(time.Second), withCluster(shared)))
		if p.Status.JobDeploymentStatus != rayv1.JobDeploymentStatusRunning || p.Status.DashboardURL != "shared-head-svc.ns.svc.cluster.local:8265" {
			t.Fatalf("%+v", p.Status)
		}
	})
	t.Run("a cluster of that name that is not ours is not used", func(t *testing.T) {
		p := Decide(observe(newJob(init), fixture.T0.Add(time.Second), withCluster(foreign)))
		if p.CreateCluster != nil || p.Status.JobDeploymentStatus != rayv1.JobDeploymentStatusInitializing || !hasEvent(p, reasonClusterNameTaken, "") {
			t.Fatalf("%+v %s", p.Status, eventsOf(p))
		}
	})
}

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
				if p.RequeueAfter != 5*time.Second { // age 20 s / 4
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
				if st.JobDeploymentStatus != rayv1.JobDeploymentStatusFailed || st.Reason != rayv1.AppFailed || st.Message != "msg FAILED" || *st.Failed != 1 {
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
// status writes while it stays down), the polls back off, and the job fails
// after StatusCheckTimeout, without a retry.
func TestRayJobDecideDashboardDown(t *testing.T) {
	j := newJob(inPhase(rayv1.JobDeploymentStatusRunning, rayv1.JobStatusRunning), func(j *rayv1.RayJob) { j.Spec.BackoffLimit = fixture.Ptr(int32(5)) })
	rc := newCluster(true)
	now := fixture.T0.Add(time.Minute)
	p := Decide(observe(j, now, withCluster(rc), withDash(dashErr(errRefused))))
	if !p.WriteStatus || !p.Status.JobStatusCheckFailureStartTime.Time.Equal(now) || !hasEvent(p, ReasonDashboardUnreachable, "connection refused") {
		t.Fatalf("first failure: %+v %s", p.Status, eventsOf(p))
	}
	// Apply the plan's status (ignoring the copy of the cluster status,
	// which changes with the cluster only).
	j.Status = p.Status
	writes := 0
	var waits []time.Duration
	for i := 1; i <= 20; i++ {
		at := now.Add(time.Duration(i) * 10 * time.Second)
		p := Decide(observe(j, at, withCluster(rc), withDash(dashErr(errRefused))))
		if p.WriteStatus {
			writes++
		}
		if len(p.Events) > 0 {
			t.Fatalf("pass %d: events again: %s", i, eventsOf(p))
		}
		waits = append(waits, p.RequeueAfter)
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
			now: fixture.T0.Add(40 * time.Second), dash: info(dashboard.JobRunning), wantRequeue: 10 * time.Second},
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
	// All gone: a new attempt, counts kept, names cleared.
	p = Decide(observe(retrying, fixture.T0.Add(time.Minute)))
	st := p.Status
	if st.JobDeploymentStatus != rayv1.JobDeploymentStatusNew || st.JobId != "" || st.RayClusterName != "" || st.StartTime != nil ||
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

func TestRayJobDecideValidation(t *testing.T) {
	bad := newJob(func(j *rayv1.RayJob) { j.Spec.RayClusterSpec = nil }) // neither spec nor selector
	p := Decide(observe(bad, fixture.T0))
	if p.Status.JobDeploymentStatus != rayv1.JobDeploymentStatusValidationFailed || p.Status.Reason != rayv1.ValidationFailed ||
		!strings.Contains(p.Status.Message, "rayClusterSpec") || !hasEvent(p, reasonInvalidSpec, "rayClusterSpec") {
		t.Fatalf("%+v %s", p.Status, eventsOf(p))
	}
	if p.CreateCluster != nil || p.RequeueAfter != 0 {
		t.Fatal("acted on an invalid spec")
	}
	// Unchanged: no new Event, no write.
	bad.Status = p.Status
	if p := Decide(observe(bad, fixture.T0.Add(time.Minute))); p.WriteStatus || len(p.Events) > 0 {
		t.Fatalf("write=%v %s", p.WriteStatus, eventsOf(p))
	}
	// Fixed: starts.
	fixed := newJob()
	fixed.Status = bad.Status
	p = Decide(observe(fixed, fixture.T0.Add(time.Minute)))
	if p.Status.JobDeploymentStatus != rayv1.JobDeploymentStatusInitializing || !hasEvent(p, reasonSpecValid, "") {
		t.Fatalf("%+v", p.Status)
	}
}

func TestRayJobDecideSkip(t *testing.T) {
	j := newJob(func(j *rayv1.RayJob) { j.Finalizers = nil })
	p := Decide(observe(j, fixture.T0, func(o *Observed) { o.SkipReason = "managed by someone else" }))
	if p.AddFinalizer || p.WriteStatus || p.CreateCluster != nil || p.RequeueAfter != 0 {
		t.Fatalf("%+v", p)
	}
	// Deleting, managed elsewhere: the finalizer is not ours to remove.
	j = newJob(inPhase(rayv1.JobDeploymentStatusRunning, rayv1.JobStatusRunning), func(j *rayv1.RayJob) { j.DeletionTimestamp = &metav1.Time{Time: fixture.T0} })
	p = Decide(observe(j, fixture.T0, withCluster(newCluster(true)), func(o *Observed) { o.SkipReason = "x" }))
	if p.RemoveFinalizer || p.Stop != nil {
		t.Fatalf("%+v", p)
	}
}

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

func TestRayJobStopRecordRoundTrip(t *testing.T) {
	for _, r := range []StopRecord{
		{JobID: "rj-abc", Request: "alice@2030-01-02T03:04:05Z", Confirmed: true},
		{JobID: "rj-abc", Request: `quote " and \ backslash: confirmed`, Confirmed: false},
		{JobID: `odd "id"`, Deletion: true, Confirmed: true},
	} {
		j := &rayv1.RayJob{}
		SetStopRecord(j, r, "detail with \"quotes\"", fixture.T0)
		got, ok := StopRecordOf(j)
		if !ok || got != r {
			t.Fatalf("round trip of %+v: %+v %v (%q)", r, got, ok, j.Annotations[rayv1.JobStopRecordAnnotationKey])
		}
		// The annotation is the record: a status without conditions (pruned
		// by KubeRay's CRD) loses nothing.
		j.Status.Conditions = nil
		if got, ok := StopRecordOf(j); !ok || got != r {
			t.Fatalf("without the condition: %+v %v", got, ok)
		}
		// A record of an earlier raydar, in the condition only, still reads.
		legacy := &rayv1.RayJob{}
		setStopCondition(&legacy.Status, stopRecordValue(r, ""), r.Confirmed, r.Deletion, fixture.T0)
		if got, ok := StopRecordOf(legacy); !ok || got != r {
			t.Fatalf("legacy condition: %+v %v", got, ok)
		}
	}
	// A condition written by someone else is no record.
	st := rayv1.RayJobStatus{Conditions: []metav1.Condition{{Type: rayv1.JobStopConditionType, Status: metav1.ConditionTrue, Message: "stopped"}}}
	if _, ok := StopRecordOf(&rayv1.RayJob{Status: st}); ok {
		t.Fatal("parsed a foreign condition")
	}
}

func TestRayJobPollInterval(t *testing.T) {
	cfg := defaultConfig()
	for _, tc := range []struct {
		age  time.Duration
		want time.Duration
	}{{0, time.Second}, {2 * time.Second, time.Second}, {20 * time.Second, 5 * time.Second}, {time.Hour, 10 * time.Second}} {
		st := &rayv1.RayJobStatus{StartTime: apiTime(fixture.T0)}
		if got := pollInterval(&Observed{Now: fixture.T0.Add(tc.age), Config: cfg}, st); got != tc.want {
			t.Fatalf("age %s: %s, want %s", tc.age, got, tc.want)
		}
	}
}

// The status a pass computes compares equal to itself read back (times in
// whole seconds): a second pass over a written status writes nothing.
func TestRayJobDecideIsStable(t *testing.T) {
	now := fixture.T0.Add(1500 * time.Millisecond) // not a whole second
	j := newJob(func(j *rayv1.RayJob) { j.Finalizers = nil })
	rc := newCluster(true)
	for i := 0; i < 6; i++ {
		p := Decide(observe(j, now, withCluster(rc), withDash(info(dashboard.JobRunning))))
		if !p.WriteStatus {
			if j.Status.JobDeploymentStatus != rayv1.JobDeploymentStatusRunning || j.Status.JobStatus != rayv1.JobStatusRunning {
				t.Fatalf("settled at %s/%s", j.Status.JobDeploymentStatus, j.Status.JobStatus)
			}
			return
		}
		j.Status = p.Status
		j.Status.RayClusterName = "rj-rc001" // the fixture's cluster
	}
	t.Fatal("status never settled")
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

// applied is the RayJob as it stands after p's writes: its status and
// stop record.
func applied(j *rayv1.RayJob, p *Plan) *rayv1.RayJob {
	out := j.DeepCopy()
	out.Status = *p.Status.DeepCopy()
	if p.StopRecord != "" {
		if out.Annotations == nil {
			out.Annotations = map[string]string{}
		}
		out.Annotations[rayv1.JobStopRecordAnnotationKey] = p.StopRecord
	}
	return out
}

// KubeRay's Event reasons users alert on: a clusterSelector naming a
// cluster that does not exist gives RayClusterNotFound (once per message).
func TestRayJobDecideSelectedClusterNotFoundEvent(t *testing.T) {
	j := newJob(inPhase(rayv1.JobDeploymentStatusInitializing, ""), selector("missing"))
	j.Status.RayClusterName = "missing"
	p := Decide(observe(j, fixture.T0.Add(time.Second)))
	if !hasEvent(p, reasonClusterNotFoundEvent, "ns/missing set in the clusterSelector is not found") {
		t.Fatal(eventsOf(p))
	}
	j.Status = p.Status
	if p := Decide(observe(j, fixture.T0.Add(2*time.Second))); hasEvent(p, reasonClusterNotFoundEvent, "") {
		t.Fatal("repeated:", eventsOf(p))
	}
}

// status.rayClusterStatus is copied exactly when KubeRay v1.7.0 copies it
// (rayjob_controller.go: Initializing while the cluster is not ready, ~214;
// Running with every job status, ~352) and reset when the attempt's
// cluster is released (Suspending/Retrying, ~394), selected cluster or not.
func TestRayJobDecideClusterStatusCopy(t *testing.T) {
	stale := rayv1.RayClusterStatus{DesiredWorkerReplicas: 99}
	withStale := func(j *rayv1.RayJob) { j.Status.RayClusterStatus = stale }
	notReady := newCluster(false)
	notReady.Status.DesiredWorkerReplicas = 2
	ready := newCluster(true)
	ready.Status.DesiredWorkerReplicas = 3
	selector := func(j *rayv1.RayJob) {
		j.Spec.RayClusterSpec = nil
		j.Spec.ClusterSelector = map[string]string{rayv1.RayClusterLabelKey: "rj-rc001"}
	}
	run := inPhase(rayv1.JobDeploymentStatusRunning, rayv1.JobStatusRunning)
	for _, tc := range []struct {
		name     string
		job      *rayv1.RayJob
		mods     []func(*Observed)
		want     rayv1.RayClusterStatus
		wantName string
	}{
		{name: "Initializing, the cluster is created: the new cluster's empty status",
			job: newJob(inPhase(rayv1.JobDeploymentStatusInitializing, ""), withStale), want: rayv1.RayClusterStatus{}, wantName: "rj-rc001"},
		{name: "Initializing, not ready: copied",
			job: newJob(inPhase(rayv1.JobDeploymentStatusInitializing, ""), withStale), mods: []func(*Observed){withCluster(notReady)},
			want: notReady.Status, wantName: "rj-rc001"},
		{name: "Initializing, ready: not copied (the next copy comes with a job status)",
			job: newJob(inPhase(rayv1.JobDeploymentStatusInitializing, ""), withStale), mods: []func(*Observed){withCluster(ready)},
			want: stale, wantName: "rj-rc001"},
		{name: "Running, the dashboard answered: copied",
			job: newJob(run, withStale), mods: []func(*Observed){withCluster(ready), withDash(info(dashboard.JobRunning))},
			want: ready.Status, wantName: "rj-rc001"},
		{name: "Running, the dashboard fails: not copied",
			job: newJob(run, withStale), mods: []func(*Observed){withCluster(ready), withDash(dashErr(errRefused))},
			want: stale, wantName: "rj-rc001"},
		{name: "Running, the dashboard does not know the job yet: not copied",
			job: newJob(run, withStale, mode(rayv1.K8sJobMode)), mods: []func(*Observed){withCluster(ready), withSubmitter(submitterJob("", time.Time{})),
				withDash(dashErr(dashboard.ErrNotFound))},
			want: stale, wantName: "rj-rc001"},
		{name: "Suspending, its cluster gone: reset",
			job: newJob(inPhase(rayv1.JobDeploymentStatusSuspending, rayv1.JobStatusRunning), withStale), want: rayv1.RayClusterStatus{}},
		{name: "Suspending on a selected cluster: reset too, name and all",
			job:  newJob(inPhase(rayv1.JobDeploymentStatusSuspending, rayv1.JobStatusRunning), withStale, selector),
			mods: []func(*Observed){withCluster(ready)}, want: rayv1.RayClusterStatus{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Decide(observe(tc.job, fixture.T0.Add(time.Second), tc.mods...))
			if !equality.Semantic.DeepEqual(p.Status.RayClusterStatus, tc.want) || p.Status.RayClusterName != tc.wantName {
				t.Fatalf("rayClusterName %q rayClusterStatus %+v\nwant %q %+v", p.Status.RayClusterName, p.Status.RayClusterStatus, tc.wantName, tc.want)
			}
		})
	}
}
