package rayjob

import (
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/raydar/raydar/controller/internal/fixture"
	"github.com/raydar/raydar/controller/kit"
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

func withDash(d *DashAnswer) func(*Observed) { return func(o *Observed) { o.Dash = d } }

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
	if c := meta.FindStatusCondition(st.Conditions, t); c != nil {
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

func TestRayJobDecideValidation(t *testing.T) {
	bad := newJob(func(j *rayv1.RayJob) { j.Spec.RayClusterSpec = nil; j.Finalizers = nil }) // neither spec nor selector
	p := Decide(observe(bad, fixture.T0))
	if p.AddFinalizer {
		t.Fatal("a refused RayJob got the stop finalizer (KubeRay adds it only after validation)")
	}
	if p.Status.JobDeploymentStatus != rayv1.JobDeploymentStatusValidationFailed || p.Status.Reason != rayv1.ValidationFailed ||
		!strings.Contains(p.Status.Message, "rayClusterSpec") || !hasEvent(p, rayv1.EventInvalidRayJobSpec, "rayClusterSpec") {
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
	fixed.Finalizers = nil
	p = Decide(observe(fixed, fixture.T0.Add(time.Minute)))
	if p.Status.JobDeploymentStatus != rayv1.JobDeploymentStatusInitializing || !hasEvent(p, reasonSpecValid, "") || !p.AddFinalizer {
		t.Fatalf("%+v", p.Status)
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
	if !hasEvent(p, rayv1.EventRayClusterNotFound, "ns/missing set in the clusterSelector is not found") {
		t.Fatal(eventsOf(p))
	}
	j.Status = p.Status
	if p := Decide(observe(j, fixture.T0.Add(2*time.Second))); hasEvent(p, rayv1.EventRayClusterNotFound, "") {
		t.Fatal("repeated:", eventsOf(p))
	}
}

// status.rayClusterStatus is copied when KubeRay copies it (v1.6.2
// rayjob_controller.go: Initializing while the cluster is not ready,
// 216-223; Running with every job status, 354-355), and also on the pass
// that finds the cluster ready and while InteractiveMode waits for its
// jobId, where KubeRay's copy is a timing-dependent snapshot; reset when the
// attempt's cluster is released (Suspending/Retrying, 393), selected
// cluster or not.
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
		{name: "Initializing, ready: copied on the pass that leaves Initializing",
			job: newJob(inPhase(rayv1.JobDeploymentStatusInitializing, ""), withStale), mods: []func(*Observed){withCluster(ready)},
			want: ready.Status, wantName: "rj-rc001"},
		{name: "Waiting for the jobId: kept current",
			job: newJob(inPhase(rayv1.JobDeploymentStatusWaiting, ""), withStale, mode(rayv1.InteractiveMode)), mods: []func(*Observed){withCluster(ready)},
			want: ready.Status, wantName: "rj-rc001"},
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
