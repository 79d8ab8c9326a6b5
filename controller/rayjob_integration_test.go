package controller

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/raydar/raydar/controller/internal/fixture"
	"github.com/raydar/raydar/controller/kit"
	"github.com/raydar/raydar/controller/rayjob"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/kube/raydash"
	"github.com/raydar/raydar/kube/sandbox/headsim"
	"github.com/raydar/raydar/rayapi/dashboard"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// Integration tests of the RayJob reconciler on the package's sandbox: the
// RayCluster reconciler brings the job's cluster up on kwok's fake nodes,
// the simulated Ray heads (kube/sandbox/headsim) run the jobs as real
// subprocesses and count every dashboard call, kube-controller-manager's
// Job controller runs the K8sJobMode submitter Jobs (whose submission
// headsim makes, since kwok runs no containers).

// rjLong is how long an integration wait may take on a small, busy machine.
const rjLong = 3 * time.Minute

// rjHarness is one test's namespace, simulated heads and operator.
type rjHarness struct {
	t   *testing.T
	ns  string
	sim *headsim.Sim
	op  *runningOperator

	mu           sync.Mutex
	statusWrites map[string]int // by RayJob name
}

func newRJHarness(t *testing.T, mod func(*Options)) *rjHarness {
	t.Helper()
	needSandbox(t)
	t.Parallel()
	h := &rjHarness{t: t, ns: newNamespace(t), statusWrites: map[string]int{}}
	sim, err := headsim.Start(context.Background(), headsim.Options{Config: sb.Config, Namespace: h.ns, SetPodPhase: sb.SetPodPhase, EndContainer: sb.EndContainer, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	h.sim = sim
	h.op = h.start(context.Background(), mod)
	return h
}

// start starts an operator with the RayCluster and RayJob reconcilers (a
// fresh process: nothing in memory carries over from a stopped one).
func (h *rjHarness) start(ctx context.Context, mod func(*Options)) *runningOperator {
	t := h.t
	t.Helper()
	prefix := "/apis/ray.io/v1/namespaces/" + h.ns + "/rayjobs/"
	cfg := countingConfig(func(r *httpRequestInfo) {
		if (r.Method == "PUT" || r.Method == "PATCH") && strings.HasPrefix(r.Path, prefix) && strings.HasSuffix(r.Path, "/status") {
			name := strings.TrimSuffix(strings.TrimPrefix(r.Path, prefix), "/status")
			h.mu.Lock()
			h.statusWrites[name]++
			h.mu.Unlock()
		}
	})
	res, err := raydash.New(raydash.Options{AddressBook: h.sim, HeadServiceName: kit.HeadServiceName})
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{DisableLeaderElection: true, Namespaces: []string{h.ns}, IgnoreOtherOperators: true,
		SkipControllerNameValidation: true, StatusCoalesceWindow: 200 * time.Millisecond, Logger: testLogger(),
		Dashboards: res, RayJob: rayjob.Options{MaxPollInterval: 2 * time.Second}}
	if mod != nil {
		mod(&opts)
	}
	op, err := New(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(ctx)
	r := &runningOperator{Operator: op, cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- op.Start(ctx) }()
	t.Cleanup(r.stop)
	return r
}

func (h *rjHarness) writes(name string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.statusWrites[name]
}

// rayJob is an HTTPMode RayJob on a cluster of one head (no workers).
func (h *rjHarness) rayJob(name, entrypoint string, mods ...func(*rayv1.RayJob)) *rayv1.RayJob {
	spec := testCluster(h.ns, "unused", 0).Spec
	j := &rayv1.RayJob{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: h.ns},
		Spec:       rayv1.RayJobSpec{Entrypoint: entrypoint, SubmissionMode: rayv1.HTTPMode, RayClusterSpec: &spec},
	}
	for _, m := range mods {
		m(j)
	}
	if err := cl.Create(context.Background(), j); err != nil {
		h.t.Fatal(err)
	}
	return j
}

func (h *rjHarness) get(name string) (*rayv1.RayJob, error) {
	j := &rayv1.RayJob{}
	err := cl.Get(context.Background(), client.ObjectKey{Namespace: h.ns, Name: name}, j)
	return j, err
}

func describeRJ(j *rayv1.RayJob) string {
	var conds []string
	for _, c := range j.Status.Conditions {
		conds = append(conds, fmt.Sprintf("%s=%s/%s", c.Type, c.Status, c.Reason))
	}
	return fmt.Sprintf("deployment=%q job=%q reason=%q message=%q cluster=%q conds=%v", j.Status.JobDeploymentStatus, j.Status.JobStatus,
		j.Status.Reason, j.Status.Message, j.Status.RayClusterName, conds)
}

// wait polls the RayJob until cond holds.
func (h *rjHarness) wait(name, what string, cond func(*rayv1.RayJob) bool) *rayv1.RayJob {
	h.t.Helper()
	var j *rayv1.RayJob
	eventually(h.t, rjLong, name+" "+what, func() (bool, string) {
		var err error
		if j, err = h.get(name); err != nil {
			return false, err.Error()
		}
		return cond(j), describeRJ(j)
	})
	return j
}

func (h *rjHarness) waitGone(name string) {
	h.t.Helper()
	eventually(h.t, rjLong, name+" to be gone", func() (bool, string) {
		j, err := h.get(name)
		if apierrors.IsNotFound(err) {
			return true, ""
		}
		if err != nil {
			return false, err.Error()
		}
		return false, fmt.Sprintf("finalizers %v; %s", j.Finalizers, describeRJ(j))
	})
}

func deploymentIs(ds rayv1.JobDeploymentStatus) func(*rayv1.RayJob) bool {
	return func(j *rayv1.RayJob) bool { return j.Status.JobDeploymentStatus == ds }
}

func jobIs(js rayv1.JobStatus) func(*rayv1.RayJob) bool {
	return func(j *rayv1.RayJob) bool { return j.Status.JobStatus == js }
}

// events lists the Events regarding a RayJob.
func (h *rjHarness) events(name string) []eventsv1.Event {
	h.t.Helper()
	list, err := kc.EventsV1().Events(h.ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	var out []eventsv1.Event
	for _, e := range list.Items {
		if e.Regarding.Kind == rayv1.KindRayJob && e.Regarding.Name == name {
			out = append(out, e)
		}
	}
	return out
}

func (h *rjHarness) waitEvent(name, reason, substr string) eventsv1.Event {
	h.t.Helper()
	var found eventsv1.Event
	eventually(h.t, time.Minute, "Event "+reason+" containing "+substr, func() (bool, string) {
		var seen []string
		for _, e := range h.events(name) {
			seen = append(seen, e.Reason+": "+e.Note)
			if e.Reason == reason && strings.Contains(e.Note, substr) {
				found = e
				return true, ""
			}
		}
		return false, strings.Join(seen, " | ")
	})
	return found
}

// dashboard is a client for a cluster's simulated dashboard. The
// simulator serves it once it sees the head pod Ready, which the operator
// may see first (an InteractiveMode RayJob is Waiting by then): wait for it.
func (h *rjHarness) dashboard(cluster string) *dashboard.Client {
	h.t.Helper()
	var u string
	eventually(h.t, rjLong, "cluster "+cluster+"'s simulated dashboard", func() (bool, string) {
		var ok bool
		u, ok = h.sim.DashboardURL(h.ns, cluster)
		return ok, "not served yet"
	})
	dc, err := dashboard.New(u)
	if err != nil {
		h.t.Fatal(err)
	}
	return dc
}

func (h *rjHarness) stopCalls(j *rayv1.RayJob) int {
	return h.sim.Calls(h.ns, j.Status.RayClusterName, "POST", "/api/jobs/"+j.Status.JobId+"/stop")
}

func (h *rjHarness) submissions(j *rayv1.RayJob) int {
	return h.sim.Calls(h.ns, j.Status.RayClusterName, "POST", "/api/jobs/")
}

func condTrue(j *rayv1.RayJob, t string) bool { return rayv1.IsConditionTrue(j.Status.Conditions, t) }

func TestIntegrationRayJobHTTPModeSucceeds(t *testing.T) {
	h := newRJHarness(t, nil)
	h.rayJob("ok", `echo "hello from $GREETING"; sleep 1`, func(j *rayv1.RayJob) {
		j.Spec.RuntimeEnvYAML = "env_vars:\n  GREETING: raydar\n"
		j.Spec.Metadata = map[string]string{"owner": "tests"}
	})
	j := h.wait("ok", "Complete", deploymentIs(rayv1.JobDeploymentStatusComplete))
	st := j.Status
	if st.JobStatus != rayv1.JobStatusSucceeded || rayjob.DerefInt32(st.Succeeded) != 1 || rayjob.DerefInt32(st.Failed) != 0 || st.Reason != "" {
		t.Fatal(describeRJ(j))
	}
	if !strings.HasPrefix(st.RayClusterName, "ok-") || len(st.RayClusterName) != len("ok-")+5 || !strings.HasPrefix(st.JobId, "ok-") {
		t.Fatalf("names: cluster %q job %q", st.RayClusterName, st.JobId)
	}
	if st.DashboardURL != st.RayClusterName+"-head-svc."+h.ns+".svc.cluster.local:8265" {
		t.Fatalf("dashboardURL %q", st.DashboardURL)
	}
	if st.StartTime == nil || st.EndTime == nil || st.RayJobStatusInfo.StartTime == nil || st.RayJobStatusInfo.EndTime == nil ||
		st.EndTime.Before(st.StartTime) || st.ObservedGeneration != j.Generation || st.RayClusterStatus.State != rayv1.Ready {
		t.Fatalf("status %+v", st)
	}
	for _, c := range []string{rayv1.RayJobComplete, rayv1.RayJobSubmitted, rayv1.RayJobClusterReady} {
		if !condTrue(j, c) {
			t.Fatalf("condition %s not true: %s", c, describeRJ(j))
		}
	}
	if condTrue(j, rayv1.RayJobFailedCondition) {
		t.Fatal("Failed is true")
	}
	// The cluster belongs to the RayJob and says where it came from.
	rc := getRC(t, h.ns, st.RayClusterName)
	if kit.ControllerUID(rc.OwnerReferences) != string(j.UID) || rc.Labels[rayv1.RayOriginatedFromCRNameLabelKey] != "ok" ||
		rc.Labels[rayv1.RayOriginatedFromCRDLabelKey] != "RayJob" || rc.Labels[rayv1.RayJobSubmissionModeLabelKey] != "HTTPMode" {
		t.Fatalf("cluster %+v", rc.ObjectMeta)
	}
	// The job ran with its runtime env; its logs are readable; it was
	// submitted once.
	logs, err := h.dashboard(st.RayClusterName).GetJobLogs(context.Background(), st.JobId)
	if err != nil || logs != "hello from raydar\n" {
		t.Fatalf("logs %q %v", logs, err)
	}
	if n := h.submissions(j); n != 1 {
		t.Fatalf("%d submissions, want 1: %v", n, h.sim.AllCalls(h.ns, st.RayClusterName))
	}
	h.waitEvent("ok", rayv1.EventCreatedRayCluster, st.RayClusterName)
	h.waitEvent("ok", rayjob.ReasonSubmitted, st.JobId)
	h.waitEvent("ok", rayjob.ReasonCompleted, "SUCCEEDED")
	// Status is written on changes only: a handful of transitions.
	if n := h.writes("ok"); n > 15 {
		t.Fatalf("%d status writes for one job", n)
	}
}

func TestIntegrationRayJobFailingEntrypoint(t *testing.T) {
	h := newRJHarness(t, nil)
	h.rayJob("bad", `echo "it broke" >&2; exit 3`)
	j := h.wait("bad", "Failed", deploymentIs(rayv1.JobDeploymentStatusFailed))
	st := j.Status
	if st.JobStatus != rayv1.JobStatusFailed || st.Reason != rayv1.AppFailed || rayjob.DerefInt32(st.Failed) != 1 ||
		!strings.Contains(st.Message, "exit code 3") || !strings.Contains(st.Message, "it broke") {
		t.Fatal(describeRJ(j))
	}
	if !condTrue(j, rayv1.RayJobFailedCondition) || condTrue(j, rayv1.RayJobComplete) {
		t.Fatal(describeRJ(j))
	}
	h.waitEvent("bad", string(rayv1.AppFailed), "exit code 3")
}

func TestIntegrationRayJobK8sJobMode(t *testing.T) {
	h := newRJHarness(t, nil)
	h.rayJob("k8s", `echo submitted by the submitter`, func(j *rayv1.RayJob) { j.Spec.SubmissionMode = rayv1.K8sJobMode })
	j := h.wait("k8s", "Complete", deploymentIs(rayv1.JobDeploymentStatusComplete))
	if j.Status.JobStatus != rayv1.JobStatusSucceeded {
		t.Fatal(describeRJ(j))
	}
	sub := &batchv1.Job{}
	if err := cl.Get(context.Background(), client.ObjectKey{Namespace: h.ns, Name: "k8s"}, sub); err != nil {
		t.Fatal(err)
	}
	if kit.ControllerUID(sub.OwnerReferences) != string(j.UID) || sub.Labels[rayv1.RayOriginatedFromCRNameLabelKey] != "k8s" ||
		sub.Labels[rayv1.KubernetesCreatedByLabelKey] != rayv1.ComponentName {
		t.Fatalf("submitter %+v", sub.ObjectMeta)
	}
	if done, failed, _, _ := rayjob.SubmitterFinished(sub); !done || failed {
		t.Fatalf("submitter not complete: %s", rayjob.DescribeSubmitter(sub))
	}
	if n := h.submissions(j); n != 1 {
		t.Fatalf("%d submissions, want 1", n)
	}
	logs, err := h.dashboard(j.Status.RayClusterName).GetJobLogs(context.Background(), j.Status.JobId)
	if err != nil || logs != "submitted by the submitter\n" {
		t.Fatalf("logs %q %v", logs, err)
	}
	h.waitEvent("k8s", rayv1.EventCreatedRayJobSubmitter, j.Status.JobId)
}

// The sidecar runs `ray job submit` (without --no-wait) in the head pod;
// when the Ray job ends it exits, and the head pod shows that container
// terminated (the sandbox's stand-in runs the command and shows its end as
// the kubelet would): the RayJob completes at once, not after the
// transition grace period it would wait for a sidecar that never exits
// (KubeRay v1.6.2 rayjob_controller.go:283-300, checkSubmitterAndUpdateStatusIfNeeded).
func TestIntegrationRayJobSidecarMode(t *testing.T) {
	h := newRJHarness(t, func(o *Options) { o.RayJob.TransitionGracePeriod = time.Hour })
	h.rayJob("side", `echo from the sidecar`, func(j *rayv1.RayJob) { j.Spec.SubmissionMode = rayv1.SidecarMode })
	j := h.wait("side", "Complete", deploymentIs(rayv1.JobDeploymentStatusComplete))
	if j.Status.JobStatus != rayv1.JobStatusSucceeded || j.Status.Reason != "" {
		t.Fatal(describeRJ(j))
	}
	heads, _ := clusterPods(t, h.ns, j.Status.RayClusterName)
	if len(heads) != 1 || !rayjob.HasContainer(heads[0].Spec.Containers, rayv1.RayJobSubmitterContainerName) ||
		heads[0].Spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Fatalf("head pods %v", allPodNames(heads))
	}
	var exited *corev1.ContainerStateTerminated
	for _, cs := range heads[0].Status.ContainerStatuses {
		if cs.Name == rayv1.RayJobSubmitterContainerName {
			exited = cs.State.Terminated
		}
	}
	if exited == nil || exited.ExitCode != 0 {
		t.Fatalf("the sidecar's status: %+v", heads[0].Status.ContainerStatuses)
	}
	if log := h.sim.SubmitterLog(h.ns, heads[0].Name); !strings.Contains(log, "from the sidecar") {
		t.Fatalf("sidecar log %q", log)
	}
}

func TestIntegrationRayJobClusterSelector(t *testing.T) {
	h := newRJHarness(t, nil)
	createRC(t, testCluster(h.ns, "shared", 0))
	waitReady(t, h.ns, "shared", 0)
	h.rayJob("sel", `echo on a shared cluster`, func(j *rayv1.RayJob) {
		j.Spec.RayClusterSpec = nil
		j.Spec.ClusterSelector = map[string]string{rayv1.RayClusterLabelKey: "shared"}
	})
	j := h.wait("sel", "Complete", deploymentIs(rayv1.JobDeploymentStatusComplete))
	if j.Status.RayClusterName != "shared" || j.Status.JobStatus != rayv1.JobStatusSucceeded {
		t.Fatal(describeRJ(j))
	}
	rc := getRC(t, h.ns, "shared")
	if len(rc.OwnerReferences) != 0 || rc.DeletionTimestamp != nil {
		t.Fatalf("the selected cluster was touched: %+v", rc.ObjectMeta)
	}
	list := &rayv1.RayClusterList{}
	if err := cl.List(context.Background(), list, client.InNamespace(h.ns)); err != nil || len(list.Items) != 1 {
		t.Fatalf("clusters %d %v", len(list.Items), err)
	}
}

func TestIntegrationRayJobShutdownAfterJobFinishes(t *testing.T) {
	h := newRJHarness(t, nil)
	h.rayJob("ttl", `true`, func(j *rayv1.RayJob) { j.Spec.ShutdownAfterJobFinishes, j.Spec.TTLSecondsAfterFinished = true, 3 })
	j := h.wait("ttl", "Complete", deploymentIs(rayv1.JobDeploymentStatusComplete))
	name := j.Status.RayClusterName
	var gone time.Time
	eventually(t, rjLong, "cluster "+name+" deleted", func() (bool, string) {
		rc := &rayv1.RayCluster{}
		err := cl.Get(context.Background(), client.ObjectKey{Namespace: h.ns, Name: name}, rc)
		switch {
		case apierrors.IsNotFound(err):
		case err == nil && rc.DeletionTimestamp != nil:
		default:
			return false, fmt.Sprint(err)
		}
		gone = time.Now()
		return true, ""
	})
	if early := j.Status.EndTime.Add(3 * time.Second).Sub(gone); early > time.Second { // endTime has whole seconds
		t.Fatalf("cluster deleted %s before the TTL", early)
	}
	h.waitEvent("ttl", rayv1.EventDeletedRayCluster, "ttlSecondsAfterFinished 3s")
	// The RayJob stays (KubeRay's default), with its result.
	j, err := h.get("ttl")
	if err != nil || j.Status.JobStatus != rayv1.JobStatusSucceeded {
		t.Fatalf("%v %v", err, describeRJ(j))
	}
}

func TestIntegrationRayJobDeletionRules(t *testing.T) {
	h := newRJHarness(t, nil)
	succeeded := rayv1.JobStatusSucceeded
	failed := rayv1.JobStatusFailed
	h.rayJob("rules", `true`, func(j *rayv1.RayJob) {
		j.Spec.RayClusterSpec.WorkerGroupSpecs[0].Replicas = fixture.Ptr(int32(1))
		j.Spec.DeletionStrategy = &rayv1.DeletionStrategy{DeletionRules: []rayv1.DeletionRule{
			{Policy: rayv1.DeleteWorkers, Condition: rayv1.DeletionCondition{JobStatus: &succeeded}},
			{Policy: rayv1.DeleteCluster, Condition: rayv1.DeletionCondition{JobStatus: &succeeded, TTLSeconds: 4}},
			{Policy: rayv1.DeleteSelf, Condition: rayv1.DeletionCondition{JobStatus: &failed}},
		}}
	})
	j := h.wait("rules", "Complete", deploymentIs(rayv1.JobDeploymentStatusComplete))
	name := j.Status.RayClusterName
	// DeleteWorkers first: every group suspended, the workers go, the head
	// stays.
	eventually(t, rjLong, "workers deleted", func() (bool, string) {
		rc := &rayv1.RayCluster{}
		if err := cl.Get(context.Background(), client.ObjectKey{Namespace: h.ns, Name: name}, rc); err != nil {
			return false, err.Error()
		}
		heads, workers := clusterPods(t, h.ns, name)
		return rc.Spec.WorkerGroupSpecs[0].IsSuspended() && len(workers) == 0 && len(heads) == 1,
			fmt.Sprintf("suspended=%v heads=%d workers=%d", rc.Spec.WorkerGroupSpecs[0].IsSuspended(), len(heads), len(workers))
	})
	// Then DeleteCluster after its TTL; the FAILED rule (DeleteSelf) never
	// applies.
	eventually(t, rjLong, "cluster deleted", func() (bool, string) {
		rc := &rayv1.RayCluster{}
		err := cl.Get(context.Background(), client.ObjectKey{Namespace: h.ns, Name: name}, rc)
		return apierrors.IsNotFound(err) || (err == nil && rc.DeletionTimestamp != nil), fmt.Sprint(err)
	})
	h.waitEvent("rules", rayv1.EventDeletedRayCluster, "DeleteCluster")
	consistently(t, 2*time.Second, "the RayJob stays", func() (bool, string) {
		_, err := h.get("rules")
		return err == nil, fmt.Sprint(err)
	})
}

func TestIntegrationRayJobRetriesWithNewCluster(t *testing.T) {
	h := newRJHarness(t, nil)
	h.rayJob("retry", `exit 1`, func(j *rayv1.RayJob) { j.Spec.BackoffLimit = fixture.Ptr(int32(1)) })
	j := h.wait("retry", "Failed after the retry", deploymentIs(rayv1.JobDeploymentStatusFailed))
	if rayjob.DerefInt32(j.Status.Failed) != 2 || j.Status.Reason != rayv1.AppFailed {
		t.Fatal(describeRJ(j))
	}
	h.waitEvent("retry", rayjob.ReasonRetrying, "Attempt 1 failed")
	// Two attempts, two clusters: the first one was deleted.
	var deleted int
	for _, e := range h.events("retry") {
		if e.Reason == rayv1.EventDeletedRayCluster && strings.Contains(e.Note, "retried") {
			deleted++
		}
	}
	if deleted != 1 {
		t.Fatalf("%d clusters deleted for the retry, want 1", deleted)
	}
}

func containsString(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// patchRJ applies f to a fresh copy and updates it, retrying conflicts.
func patchRJ(t testing.TB, ns, name string, f func(*rayv1.RayJob)) {
	t.Helper()
	for range 10 {
		j := &rayv1.RayJob{}
		if err := cl.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, j); err != nil {
			t.Fatal(err)
		}
		f(j)
		err := cl.Update(context.Background(), j)
		if err == nil {
			return
		}
		if !apierrors.IsConflict(err) {
			t.Fatal(err)
		}
	}
	t.Fatal("too many conflicts updating", name)
}

func TestIntegrationRayJobInteractiveMode(t *testing.T) {
	h := newRJHarness(t, nil)
	h.rayJob("inter", "unused by InteractiveMode", func(j *rayv1.RayJob) { j.Spec.SubmissionMode = rayv1.InteractiveMode })
	j := h.wait("inter", "Waiting", deploymentIs(rayv1.JobDeploymentStatusWaiting))
	// The user submits with their own tools, then names the submission.
	if _, err := h.dashboard(j.Status.RayClusterName).SubmitJob(context.Background(),
		dashboard.SubmitJobRequest{Entrypoint: "echo by hand", SubmissionID: "by-hand-1"}); err != nil {
		t.Fatal(err)
	}
	patchRJ(t, h.ns, "inter", func(j *rayv1.RayJob) { j.Spec.JobId = "by-hand-1" })
	j = h.wait("inter", "Complete", deploymentIs(rayv1.JobDeploymentStatusComplete))
	if j.Status.JobId != "by-hand-1" || j.Status.JobStatus != rayv1.JobStatusSucceeded {
		t.Fatal(describeRJ(j))
	}
	if n := h.submissions(j); n != 1 {
		t.Fatalf("%d submissions, want only the user's", n)
	}
}

func TestIntegrationRayJobActiveDeadline(t *testing.T) {
	h := newRJHarness(t, nil)
	h.rayJob("late", `sleep 600`, func(j *rayv1.RayJob) {
		j.Spec.ActiveDeadlineSeconds = fixture.Ptr(int32(8))
		j.Spec.BackoffLimit = fixture.Ptr(int32(2))
	})
	j := h.wait("late", "Failed", deploymentIs(rayv1.JobDeploymentStatusFailed))
	if j.Status.Reason != rayv1.DeadlineExceeded || rayjob.DerefInt32(j.Status.Failed) != 1 {
		t.Fatal(describeRJ(j))
	}
	if took := j.Status.EndTime.Sub(j.Status.StartTime.Time); took < 8*time.Second || took > 20*time.Second {
		t.Fatalf("failed %s after the start, deadline 8s", took)
	}
	h.waitEvent("late", string(rayv1.DeadlineExceeded), "activeDeadlineSeconds (8s)")
}

// While the dashboard refuses, a running RayJob writes its status once
// (the start of the failure clock), not on every poll, and recovers when
// the dashboard answers again.
func TestIntegrationRayJobQuietWhileDashboardRefuses(t *testing.T) {
	h := newRJHarness(t, func(o *Options) { o.RayJob.MinPollInterval = 200 * time.Millisecond })
	h.rayJob("quiet", `sleep 600`)
	j := h.wait("quiet", "RUNNING", jobIs(rayv1.JobStatusRunning))
	if err := h.sim.SetRefuse(h.ns, j.Status.RayClusterName, true); err != nil {
		t.Fatal(err)
	}
	j = h.wait("quiet", "the failure clock", func(j *rayv1.RayJob) bool { return j.Status.JobStatusCheckFailureStartTime != nil })
	before := h.writes("quiet")
	time.Sleep(8 * time.Second) // many poll periods
	if n := h.writes("quiet") - before; n > 1 {
		t.Fatalf("%d status writes in 8 s while the dashboard refused", n)
	}
	if j, _ := h.get("quiet"); j.Status.JobDeploymentStatus != rayv1.JobDeploymentStatusRunning {
		t.Fatal(describeRJ(j))
	}
	h.waitEvent("quiet", rayjob.ReasonDashboardUnreachable, "retrying with back-off")
	if err := h.sim.SetRefuse(h.ns, j.Status.RayClusterName, false); err != nil {
		t.Fatal(err)
	}
	h.wait("quiet", "the clock cleared", func(j *rayv1.RayJob) bool {
		return j.Status.JobStatusCheckFailureStartTime == nil && j.Status.JobStatus == rayv1.JobStatusRunning
	})
}

// The RayJob's own head Service "<rayjob>-head-svc" follows the head of the
// job's current cluster: made on the first attempt, re-pointed at the new
// cluster of the retry. The RayJob's annotations reach each cluster.
func TestIntegrationRayJobHeadService(t *testing.T) {
	h := newRJHarness(t, nil)
	h.rayJob("hsvc", `exit 1`, func(j *rayv1.RayJob) {
		j.Spec.BackoffLimit = fixture.Ptr(int32(1))
		j.Annotations = map[string]string{"team.io/cost-center": "42"}
	})
	j := h.wait("hsvc", "Failed after the retry", deploymentIs(rayv1.JobDeploymentStatusFailed))
	svc := &corev1.Service{}
	if err := cl.Get(context.Background(), client.ObjectKey{Namespace: h.ns, Name: "hsvc-head-svc"}, svc); err != nil {
		t.Fatal(err)
	}
	if kit.ControllerUID(svc.OwnerReferences) != string(j.UID) || svc.Labels[rayv1.RayOriginatedFromCRDLabelKey] != "RayJob" ||
		svc.Labels[rayv1.RayIDLabelKey] != "hsvc-head" || svc.Labels[rayv1.RayClusterLabelKey] != "" {
		t.Fatalf("Service %+v", svc.ObjectMeta)
	}
	if got := svc.Spec.Selector[rayv1.RayClusterLabelKey]; got != j.Status.RayClusterName {
		t.Fatalf("the head Service selects cluster %q, want the last attempt's %q", got, j.Status.RayClusterName)
	}
	h.waitEvent("hsvc", rayv1.EventCreatedService, "hsvc-head-svc")
	h.waitEvent("hsvc", rayv1.EventUpdatedService, "hsvc-head-svc")
	if rc := getRC(t, h.ns, j.Status.RayClusterName); rc.Annotations["team.io/cost-center"] != "42" {
		t.Fatalf("cluster annotations %v", rc.Annotations)
	}
}
