package actions_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/kube/actions"
	"github.com/raydar/raydar/rayapi/kinds"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// wantErr checks that err is an *actions.InvalidError mentioning every
// fragment, or nil when there are none.
func wantErr(t *testing.T, err error, fragments ...string) {
	t.Helper()
	if len(fragments) == 0 {
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return
	}
	if err == nil {
		t.Fatalf("no error; want one mentioning %q", fragments)
	}
	if !errors.Is(err, actions.ErrInvalid) {
		t.Fatalf("error %v (%T) is not ErrInvalid", err, err)
	}
	for _, f := range fragments {
		if !strings.Contains(err.Error(), f) {
			t.Fatalf("error %q does not mention %q", err, f)
		}
	}
}

func TestParseCount(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int32
		err  string
	}{
		{in: "3", want: 3},
		{in: " 12 ", want: 12},
		{in: "0", want: 0},
		{in: "+2", want: 2},
		{in: "", err: "enter a whole number"},
		{in: "   ", err: "enter a whole number"},
		{in: "abc", err: `"abc" is not a whole number`},
		{in: "1.5", err: `"1.5" is not a whole number`},
		{in: "1e3", err: `"1e3" is not a whole number`},
		{in: "-1", err: "-1 is negative"},
		{in: "-99999999999", err: "is negative"},
		{in: "99999999999", err: "99999999999 is too large"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := actions.ParseCount("replicas", tc.in)
			if tc.err != "" {
				wantErr(t, err, "replicas: ", tc.err)
				return
			}
			wantErr(t, err)
			if got != tc.want {
				t.Fatalf("got %d, want %d", got, tc.want)
			}
		})
	}
}

func TestPlanScale(t *testing.T) {
	base := func() *rayv1.RayCluster {
		return cluster("ns", "rc", group("cpu", 1, 2, 5), group("gpu", 0, 0, 4))
	}
	multi := func() *rayv1.RayCluster {
		g := group("tpu", 0, 1, 4)
		g.NumOfHosts = 4
		return cluster("ns", "rc", g)
	}
	autoscaled := func() *rayv1.RayCluster {
		rc := base()
		rc.Spec.EnableInTreeAutoscaling = ptr.To(true)
		return rc
	}
	suspended := func() *rayv1.RayCluster {
		rc := base()
		rc.Spec.Suspend = ptr.To(true)
		return rc
	}
	for _, tc := range []struct {
		name  string
		rc    *rayv1.RayCluster
		group string
		req   actions.ScaleRequest
		err   []string
		check func(t *testing.T, p *actions.ScalePlan)
	}{
		{name: "up within bounds", rc: base(), group: "cpu", req: actions.ScaleRequest{Replicas: 4},
			check: func(t *testing.T, p *actions.ScalePlan) {
				want := actions.ScalePlan{Namespace: "ns", Cluster: "rc", Group: "cpu", NumOfHosts: 1,
					Current: actions.GroupSize{Min: 1, Replicas: 2, Max: 5}, New: actions.GroupSize{Min: 1, Replicas: 4, Max: 5},
					CurrentPods: 2, NewPods: 4, PodsToCreate: 2}
				if !planEqual(p, &want) {
					t.Fatalf("plan %+v, want %+v", *p, want)
				}
			}},
		{name: "down within bounds", rc: base(), group: "cpu", req: actions.ScaleRequest{Replicas: 1},
			check: func(t *testing.T, p *actions.ScalePlan) {
				if p.PodsToDelete != 1 || p.PodsToCreate != 0 {
					t.Fatalf("create %d delete %d, want 0 and 1", p.PodsToCreate, p.PodsToDelete)
				}
				if !slices.ContainsFunc(p.Warnings, func(w string) bool { return strings.Contains(w, "reconciler picks which pods go") }) {
					t.Fatalf("warnings %q lack the which-pods note", p.Warnings)
				}
			}},
		{name: "above max", rc: base(), group: "cpu", req: actions.ScaleRequest{Replicas: 6},
			err: []string{"replicas 6 is above maxReplicas 5 of group cpu", "--max"}},
		{name: "above max, max raised too", rc: base(), group: "cpu", req: actions.ScaleRequest{Replicas: 6, Max: ptr.To[int32](8)},
			check: func(t *testing.T, p *actions.ScalePlan) {
				if p.New != (actions.GroupSize{Min: 1, Replicas: 6, Max: 8}) || p.PodsToCreate != 4 {
					t.Fatalf("new %+v create %d", p.New, p.PodsToCreate)
				}
			}},
		{name: "above the new max", rc: base(), group: "cpu", req: actions.ScaleRequest{Replicas: 6, Max: ptr.To[int32](5)},
			err: []string{"replicas 6 is above the new maxReplicas 5"}},
		{name: "below min", rc: base(), group: "cpu", req: actions.ScaleRequest{Replicas: 0},
			err: []string{"replicas 0 is below minReplicas 1 of group cpu", "--min"}},
		{name: "below min, min lowered too", rc: base(), group: "cpu", req: actions.ScaleRequest{Replicas: 0, Min: ptr.To[int32](0)},
			check: func(t *testing.T, p *actions.ScalePlan) {
				if p.New != (actions.GroupSize{Min: 0, Replicas: 0, Max: 5}) || p.PodsToDelete != 2 {
					t.Fatalf("new %+v delete %d", p.New, p.PodsToDelete)
				}
			}},
		{name: "negative", rc: base(), group: "cpu", req: actions.ScaleRequest{Replicas: -1}, err: []string{"replicas: -1 is negative"}},
		{name: "negative min", rc: base(), group: "cpu", req: actions.ScaleRequest{Replicas: 1, Min: ptr.To[int32](-1)}, err: []string{"minReplicas: -1 is negative"}},
		{name: "min above max", rc: base(), group: "cpu", req: actions.ScaleRequest{Replicas: 3, Min: ptr.To[int32](4), Max: ptr.To[int32](3)},
			err: []string{"minReplicas 4 is above maxReplicas 3"}},
		{name: "unknown group", rc: base(), group: "tpu", req: actions.ScaleRequest{Replicas: 1},
			err: []string{`RayCluster ns/rc has no worker group "tpu" (groups: cpu, gpu)`}},
		{name: "unbounded max", rc: cluster("ns", "rc", rayv1.WorkerGroupSpec{GroupName: "g", Template: podTemplate("w")}), group: "g",
			req: actions.ScaleRequest{Replicas: 1000},
			check: func(t *testing.T, p *actions.ScalePlan) {
				if p.New.Max != 2147483647 || p.PodsToCreate != 1000 {
					t.Fatalf("new %+v create %d", p.New, p.PodsToCreate)
				}
				if !slices.Contains(p.Lines(), "new:     min 0 / replicas 1000 / max unbounded") {
					t.Fatalf("lines %q", p.Lines())
				}
			}},
		{name: "multi-host counts pods", rc: multi(), group: "tpu", req: actions.ScaleRequest{Replicas: 3},
			check: func(t *testing.T, p *actions.ScalePlan) {
				if p.NumOfHosts != 4 || p.CurrentPods != 4 || p.NewPods != 12 || p.PodsToCreate != 8 {
					t.Fatalf("plan %+v", *p)
				}
			}},
		{name: "autoscaler warns", rc: autoscaled(), group: "gpu", req: actions.ScaleRequest{Replicas: 2},
			check: func(t *testing.T, p *actions.ScalePlan) {
				if !p.Autoscaling || !slices.Contains(p.Warnings, "in-tree autoscaling is on: the autoscaler owns scaling and may change replicas again") {
					t.Fatalf("autoscaling %t warnings %q", p.Autoscaling, p.Warnings)
				}
				if !slices.Contains(p.Lines(), "warning: in-tree autoscaling is on: the autoscaler owns scaling and may change replicas again") {
					t.Fatalf("lines %q", p.Lines())
				}
			}},
		{name: "suspended cluster changes no pods", rc: suspended(), group: "cpu", req: actions.ScaleRequest{Replicas: 4},
			check: func(t *testing.T, p *actions.ScalePlan) {
				if p.PodsToCreate != 0 || p.PodsToDelete != 0 || len(p.Warnings) == 0 || !strings.Contains(p.Warnings[0], "suspended") {
					t.Fatalf("plan %+v", *p)
				}
			}},
		{name: "unchanged", rc: base(), group: "cpu", req: actions.ScaleRequest{Replicas: 2},
			check: func(t *testing.T, p *actions.ScalePlan) {
				if !p.Unchanged || p.PodsToCreate != 0 || p.PodsToDelete != 0 {
					t.Fatalf("plan %+v", *p)
				}
			}},
		{name: "a broken rule elsewhere does not block", rc: func() *rayv1.RayCluster {
			rc := base()
			rc.Spec.WorkerGroupSpecs[1].ScaleStrategy.WorkersToDelete = []string{""}
			if len(rayv1.ValidateRayCluster(rc)) == 0 {
				panic("fixture should be invalid")
			}
			return rc
		}(), group: "cpu", req: actions.ScaleRequest{Replicas: 3},
			check: func(t *testing.T, p *actions.ScalePlan) {
				if p.New.Replicas != 3 {
					t.Fatalf("plan %+v", *p)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := tc.rc.DeepCopy()
			p, err := actions.PlanScale(tc.rc, tc.group, tc.req)
			wantErr(t, err, tc.err...)
			if tc.check != nil {
				tc.check(t, p)
			}
			if !equalJSON(t, before, tc.rc) {
				t.Fatal("PlanScale modified its input")
			}
		})
	}
}

func planEqual(a, b *actions.ScalePlan) bool {
	return a.Namespace == b.Namespace && a.Cluster == b.Cluster && a.Group == b.Group && a.NumOfHosts == b.NumOfHosts &&
		a.Current == b.Current && a.New == b.New && a.CurrentPods == b.CurrentPods && a.NewPods == b.NewPods &&
		a.PodsToCreate == b.PodsToCreate && a.PodsToDelete == b.PodsToDelete && a.Autoscaling == b.Autoscaling &&
		a.Unchanged == b.Unchanged && slices.Equal(a.Warnings, b.Warnings)
}

func TestPlanDeleteWorkers(t *testing.T) {
	const ns = "ns"
	base := func() *rayv1.RayCluster {
		return cluster(ns, "rc", group("cpu", 1, 3, 5), group("gpu", 0, 2, 4))
	}
	pods := []corev1.Pod{
		rayPod(ns, "rc", "", "rc-head"),
		rayPod(ns, "rc", "cpu", "rc-cpu-a"), rayPod(ns, "rc", "cpu", "rc-cpu-b"), rayPod(ns, "rc", "cpu", "rc-cpu-c"),
		rayPod(ns, "rc", "gpu", "rc-gpu-a"), rayPod(ns, "rc", "gpu", "rc-gpu-b"),
		rayPod(ns, "other", "cpu", "other-cpu-a"),
		rayPod(ns, "rc", "gone", "rc-gone-a"),
		{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nginx"}},
	}
	terminating := rayPod(ns, "rc", "cpu", "rc-cpu-d")
	terminating.DeletionTimestamp = &metav1.Time{Time: time.Unix(1, 0)}
	pods = append(pods, terminating)

	multi := func() *rayv1.RayCluster {
		g := group("tpu", 0, 2, 4)
		g.NumOfHosts = 2
		return cluster(ns, "rc", g)
	}
	multiPods := []corev1.Pod{
		multiHostPod(ns, "rc", "tpu", "r1", 0), multiHostPod(ns, "rc", "tpu", "r1", 1),
		multiHostPod(ns, "rc", "tpu", "r2", 0), multiHostPod(ns, "rc", "tpu", "r2", 1),
	}

	for _, tc := range []struct {
		name  string
		rc    *rayv1.RayCluster
		pods  []corev1.Pod
		req   actions.DeleteWorkersRequest
		err   []string
		check func(t *testing.T, p *actions.DeleteWorkersPlan)
	}{
		{name: "two groups", rc: base(), pods: pods,
			req: actions.DeleteWorkersRequest{Pods: []string{"rc-gpu-b", "rc-cpu-a", "rc-cpu-c", "rc-cpu-a"}},
			check: func(t *testing.T, p *actions.DeleteWorkersPlan) {
				if !slices.Equal(p.Pods, []string{"rc-cpu-a", "rc-cpu-c", "rc-gpu-b"}) {
					t.Fatalf("pods %q", p.Pods)
				}
				if len(p.Groups) != 2 {
					t.Fatalf("groups %+v", p.Groups)
				}
				cpu, gpu := p.Groups[0], p.Groups[1]
				if cpu.Group != "cpu" || !slices.Equal(cpu.Pods, []string{"rc-cpu-a", "rc-cpu-c"}) || cpu.ReplicasRemoved != 2 ||
					cpu.Current != (actions.GroupSize{Min: 1, Replicas: 3, Max: 5}) || cpu.New != (actions.GroupSize{Min: 1, Replicas: 1, Max: 5}) ||
					!slices.Equal(cpu.WorkersToDelete, []string{"rc-cpu-a", "rc-cpu-c"}) {
					t.Fatalf("cpu %+v", cpu)
				}
				if gpu.Group != "gpu" || !slices.Equal(gpu.Pods, []string{"rc-gpu-b"}) || gpu.New.Replicas != 1 {
					t.Fatalf("gpu %+v", gpu)
				}
				if len(p.Warnings) != 0 {
					t.Fatalf("warnings %q", p.Warnings)
				}
				lines := strings.Join(p.Lines(), "\n")
				for _, want := range []string{"delete exactly these 3 worker pods and no others", "group cpu: rc-cpu-a, rc-cpu-c", "replicas 3 → 1", "group gpu: rc-gpu-b"} {
					if !strings.Contains(lines, want) {
						t.Fatalf("lines %q lack %q", lines, want)
					}
				}
			}},
		{name: "keeps earlier workersToDelete", rc: func() *rayv1.RayCluster {
			rc := base()
			rc.Spec.WorkerGroupSpecs[1].ScaleStrategy.WorkersToDelete = []string{"rc-gpu-old"}
			return rc
		}(), pods: pods, req: actions.DeleteWorkersRequest{Pods: []string{"rc-gpu-a"}},
			check: func(t *testing.T, p *actions.DeleteWorkersPlan) {
				if !slices.Equal(p.Groups[0].WorkersToDelete, []string{"rc-gpu-old", "rc-gpu-a"}) {
					t.Fatalf("workersToDelete %q", p.Groups[0].WorkersToDelete)
				}
			}},
		{name: "head refused", rc: base(), pods: pods, req: actions.DeleteWorkersRequest{Pods: []string{"rc-head", "rc-cpu-a"}},
			err: []string{"pod rc-head is the head of RayCluster rc: the head cannot be deleted as a worker"}},
		{name: "missing pod", rc: base(), pods: pods, req: actions.DeleteWorkersRequest{Pods: []string{"rc-cpu-zzz"}},
			err: []string{"pod rc-cpu-zzz not found in namespace ns"}},
		{name: "other cluster's pod", rc: base(), pods: pods, req: actions.DeleteWorkersRequest{Pods: []string{"other-cpu-a"}},
			err: []string{"pod other-cpu-a belongs to RayCluster other, not rc"}},
		{name: "not a Ray pod", rc: base(), pods: pods, req: actions.DeleteWorkersRequest{Pods: []string{"nginx"}},
			err: []string{"pod nginx is not a Ray pod"}},
		{name: "group not in spec", rc: base(), pods: pods, req: actions.DeleteWorkersRequest{Pods: []string{"rc-gone-a"}},
			err: []string{`pod rc-gone-a is in worker group "gone", which is not in the spec`}},
		{name: "terminating", rc: base(), pods: pods, req: actions.DeleteWorkersRequest{Pods: []string{"rc-cpu-d"}},
			err: []string{"pod rc-cpu-d is already terminating"}},
		{name: "already listed", rc: func() *rayv1.RayCluster {
			rc := base()
			rc.Spec.WorkerGroupSpecs[0].ScaleStrategy.WorkersToDelete = []string{"rc-cpu-b"}
			return rc
		}(), pods: pods, req: actions.DeleteWorkersRequest{Pods: []string{"rc-cpu-b"}},
			err: []string{"pod rc-cpu-b is already listed in scaleStrategy.workersToDelete of group cpu"}},
		{name: "every problem is named", rc: base(), pods: pods, req: actions.DeleteWorkersRequest{Pods: []string{"rc-head", "nope"}},
			err: []string{"pod nope not found", "pod rc-head is the head"}},
		{name: "empty", rc: base(), pods: pods, req: actions.DeleteWorkersRequest{}, err: []string{"name at least one worker pod of RayCluster ns/rc"}},
		{name: "below min refused", rc: base(), pods: pods, req: actions.DeleteWorkersRequest{Pods: []string{"rc-cpu-a", "rc-cpu-b", "rc-cpu-c"}},
			err: []string{"deleting 3 pods of group cpu would lower its replicas to 0, below minReplicas 1", "--lower-min"}},
		{name: "below min with LowerMin", rc: base(), pods: pods,
			req: actions.DeleteWorkersRequest{Pods: []string{"rc-cpu-a", "rc-cpu-b", "rc-cpu-c"}, LowerMin: true},
			check: func(t *testing.T, p *actions.DeleteWorkersPlan) {
				if g := p.Groups[0]; g.New != (actions.GroupSize{Min: 0, Replicas: 0, Max: 5}) {
					t.Fatalf("new %+v", g.New)
				}
				if !strings.Contains(strings.Join(p.Lines(), "\n"), "minReplicas 1 → 0") {
					t.Fatalf("lines %q", p.Lines())
				}
			}},
		{name: "autoscaler warns", rc: func() *rayv1.RayCluster {
			rc := base()
			rc.Spec.EnableInTreeAutoscaling = ptr.To(true)
			return rc
		}(), pods: pods, req: actions.DeleteWorkersRequest{Pods: []string{"rc-gpu-a"}},
			check: func(t *testing.T, p *actions.DeleteWorkersPlan) {
				if !p.Autoscaling || !slices.Contains(p.Lines(), "warning: in-tree autoscaling is on: the autoscaler owns scaling and may change replicas again") {
					t.Fatalf("plan %+v lines %q", *p, p.Lines())
				}
			}},
		{name: "multi-host part of a replica refused", rc: multi(), pods: multiPods, req: actions.DeleteWorkersRequest{Pods: []string{"r1-0"}},
			err: []string{"group tpu has 2 hosts per replica and deletes replicas whole: pod r1-0 is part of replica r1; name its other pods too (r1-1)"}},
		{name: "multi-host whole replica", rc: multi(), pods: multiPods, req: actions.DeleteWorkersRequest{Pods: []string{"r1-0", "r1-1"}},
			check: func(t *testing.T, p *actions.DeleteWorkersPlan) {
				if g := p.Groups[0]; g.ReplicasRemoved != 1 || g.New.Replicas != 1 || !slices.Equal(g.Pods, []string{"r1-0", "r1-1"}) {
					t.Fatalf("group %+v", g)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := tc.rc.DeepCopy()
			p, err := actions.PlanDeleteWorkers(tc.rc, tc.pods, tc.req)
			wantErr(t, err, tc.err...)
			if tc.check != nil {
				tc.check(t, p)
			}
			if !equalJSON(t, before, tc.rc) {
				t.Fatal("PlanDeleteWorkers modified its input")
			}
		})
	}
}

func TestPlanStopJob(t *testing.T) {
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	running := func() *rayv1.RayJob {
		j := rayJob("ns", "job", true)
		j.Status = rayv1.RayJobStatus{JobId: "job-abc", RayClusterName: "job-raycluster-x",
			JobStatus: rayv1.JobStatusRunning, JobDeploymentStatus: rayv1.JobDeploymentStatusRunning}
		return j
	}
	with := func(f func(j *rayv1.RayJob)) *rayv1.RayJob {
		j := running()
		f(j)
		return j
	}
	t.Run("running", func(t *testing.T) {
		p, err := actions.PlanStopJob(running(), "alice", now)
		wantErr(t, err)
		if p.Via != actions.StopViaAnnotation || p.Annotation != rayv1.StopRequestedAnnotationKey+"=alice@2030-01-02T03:04:05Z" ||
			p.Cluster != "job-raycluster-x" || p.SubmissionID != "job-abc" || len(p.Warnings) != 0 {
			t.Fatalf("plan %+v", *p)
		}
		if l := p.Lines(); l[0] != "stop RayJob ns/job on RayCluster job-raycluster-x" {
			t.Fatalf("lines %q", l)
		}
	})
	for _, tc := range []struct {
		name string
		job  *rayv1.RayJob
		err  []string
	}{
		{"succeeded", with(func(j *rayv1.RayJob) { j.Status.JobStatus = rayv1.JobStatusSucceeded }), []string{"RayJob ns/job has already finished (job status SUCCEEDED", "nothing to stop"}},
		{"stopped", with(func(j *rayv1.RayJob) { j.Status.JobStatus = rayv1.JobStatusStopped }), []string{"already finished (job status STOPPED"}},
		{"deployment complete", with(func(j *rayv1.RayJob) {
			j.Status.JobStatus, j.Status.JobDeploymentStatus = "", rayv1.JobDeploymentStatusComplete
		}), []string{"deployment status Complete"}},
		{"deployment failed", with(func(j *rayv1.RayJob) { j.Status.JobDeploymentStatus = rayv1.JobDeploymentStatusFailed }), []string{"already finished"}},
		{"suspended", with(func(j *rayv1.RayJob) { j.Spec.Suspend = true }), []string{"RayJob ns/job is suspended"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := actions.PlanStopJob(tc.job, "alice", now)
			wantErr(t, err, tc.err...)
			_, err = actions.PlanStopJobDirect(tc.job)
			wantErr(t, err, tc.err...)
		})
	}
	t.Run("asked before", func(t *testing.T) {
		j := with(func(j *rayv1.RayJob) {
			j.Annotations = map[string]string{rayv1.StopRequestedAnnotationKey: "bob@2029-01-01T00:00:00Z"}
		})
		p, err := actions.PlanStopJob(j, "alice", now)
		wantErr(t, err)
		if p.PreviousRequest != "bob@2029-01-01T00:00:00Z" || len(p.Warnings) != 1 {
			t.Fatalf("plan %+v", *p)
		}
	})
	t.Run("managed by kueue", func(t *testing.T) {
		j := with(func(j *rayv1.RayJob) { j.Spec.ManagedBy = ptr.To(rayv1.MultiKueueController) })
		p, err := actions.PlanStopJob(j, "alice", now)
		wantErr(t, err)
		if len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0], "stop through the dashboard instead") {
			t.Fatalf("warnings %q", p.Warnings)
		}
	})
	t.Run("direct", func(t *testing.T) {
		p, err := actions.PlanStopJobDirect(running())
		wantErr(t, err)
		if p.Via != actions.StopViaDashboard || p.SubmissionID != "job-abc" || p.Annotation != "" {
			t.Fatalf("plan %+v", *p)
		}
	})
	t.Run("direct needs a submission", func(t *testing.T) {
		j := with(func(j *rayv1.RayJob) {
			j.Status.JobId, j.Status.JobStatus, j.Status.JobDeploymentStatus = "", "", rayv1.JobDeploymentStatusInitializing
		})
		_, err := actions.PlanStopJobDirect(j)
		wantErr(t, err, "has no Ray job yet (status.jobId is empty)")
		p, err := actions.PlanStopJob(j, "alice", now)
		wantErr(t, err)
		if !slices.Contains(p.Warnings, "the Ray job has not been submitted yet") {
			t.Fatalf("warnings %q", p.Warnings)
		}
	})
}

func TestPlanSuspend(t *testing.T) {
	owned := cluster("ns", "svc-raycluster-a", group("g", 0, 1, 2))
	ownedBy(owned, rayv1.KindRayService, "svc", "svc-uid")
	selectorJob := rayJob("ns", "sel", true)
	selectorJob.Spec.RayClusterSpec = nil
	selectorJob.Spec.ClusterSelector = map[string]string{rayv1.RayClusterLabelKey: "shared"}
	finished := rayJob("ns", "done", true)
	finished.Status.JobDeploymentStatus = rayv1.JobDeploymentStatusComplete
	suspendedRC := cluster("ns", "rc", group("g", 0, 3, 4))
	suspendedRC.Spec.Suspend = ptr.To(true)
	suspendedJob := rayJob("ns", "job", true)
	suspendedJob.Spec.Suspend = true

	for _, tc := range []struct {
		name    string
		obj     client.Object
		suspend bool
		err     []string
		check   func(t *testing.T, p *actions.SuspendPlan)
	}{
		{name: "raycluster", obj: cluster("ns", "rc", group("g", 0, 1, 2)), suspend: true,
			check: func(t *testing.T, p *actions.SuspendPlan) {
				if p.Kind != kinds.RayCluster || !p.Suspend || p.Unchanged || !strings.Contains(p.Effect, "every pod of the cluster is deleted") {
					t.Fatalf("plan %+v", *p)
				}
			}},
		{name: "raycluster resume", obj: suspendedRC, suspend: false,
			check: func(t *testing.T, p *actions.SuspendPlan) {
				if p.Unchanged || p.Effect != "the head and 3 worker pods are created again" {
					t.Fatalf("plan %+v", *p)
				}
			}},
		{name: "raycluster resume when running", obj: cluster("ns", "rc", group("g", 0, 1, 2)), suspend: false,
			check: func(t *testing.T, p *actions.SuspendPlan) {
				if !p.Unchanged || !slices.Contains(p.Lines(), "no change: spec.suspend is already false") {
					t.Fatalf("plan %+v", *p)
				}
			}},
		{name: "owned raycluster warns", obj: owned, suspend: true,
			check: func(t *testing.T, p *actions.SuspendPlan) {
				if len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0], "belongs to RayService svc") {
					t.Fatalf("warnings %q", p.Warnings)
				}
			}},
		{name: "rayjob without shutdownAfterJobFinishes", obj: rayJob("ns", "job", false), suspend: true,
			err: []string{"RayJob ns/job cannot be suspended", "spec.suspend: Forbidden: a RayJob can be suspended only with shutdownAfterJobFinishes: true"}},
		{name: "rayjob", obj: rayJob("ns", "job", true), suspend: true,
			check: func(t *testing.T, p *actions.SuspendPlan) {
				if p.Kind != kinds.RayJob || p.Unchanged || !strings.Contains(p.Effect, "RayCluster and submitter are deleted") {
					t.Fatalf("plan %+v", *p)
				}
			}},
		{name: "rayjob resume", obj: suspendedJob, suspend: false,
			check: func(t *testing.T, p *actions.SuspendPlan) {
				if p.Unchanged || p.Suspend {
					t.Fatalf("plan %+v", *p)
				}
			}},
		{name: "rayjob on a selected cluster", obj: selectorJob, suspend: true,
			err: []string{"spec.suspend: Forbidden: not supported when spec.clusterSelector is set"}},
		{name: "finished rayjob", obj: finished, suspend: true, err: []string{"RayJob ns/done has already finished"}},
		{name: "rayservice", obj: rayService("ns", "svc"), suspend: true,
			check: func(t *testing.T, p *actions.SuspendPlan) {
				if p.Kind != kinds.RayService || !strings.Contains(p.Effect, "every RayCluster of the service is deleted") {
					t.Fatalf("plan %+v", *p)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := tc.obj.DeepCopyObject()
			p, err := actions.PlanSuspend(tc.obj, tc.suspend)
			wantErr(t, err, tc.err...)
			if tc.check != nil {
				tc.check(t, p)
			}
			if !equalJSON(t, before, tc.obj) {
				t.Fatal("PlanSuspend modified its input")
			}
		})
	}
}

func TestPlanDelete(t *testing.T) {
	const ns = "ns"
	svc := rayService(ns, "svc")
	active := cluster(ns, "svc-raycluster-a", group("g", 0, 1, 2))
	ownedBy(active, rayv1.KindRayService, svc.Name, svc.UID)
	pending := cluster(ns, "svc-raycluster-b", group("g", 0, 1, 2))
	ownedBy(pending, rayv1.KindRayService, svc.Name, svc.UID)
	unrelated := cluster(ns, "alone", group("g", 0, 1, 2))

	podOf := func(rc *rayv1.RayCluster, g, name string) corev1.Pod {
		p := rayPod(ns, rc.Name, g, name)
		ownedBy(&p, rayv1.KindRayCluster, rc.Name, rc.UID)
		return p
	}
	serveSvc := corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "svc-serve-svc", UID: "serve-uid"}}
	ownedBy(&serveSvc, rayv1.KindRayService, svc.Name, svc.UID)
	headSvc := corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "svc-raycluster-a-head-svc", UID: "head-svc-uid"}}
	ownedBy(&headSvc, rayv1.KindRayCluster, active.Name, active.UID)
	foreignPod := podOf(active, "g", "elsewhere")
	foreignPod.Namespace = "other-ns"

	job := rayJob(ns, "job", true)
	jobCluster := cluster(ns, "job-raycluster-x", group("small", 0, 1, 2))
	ownedBy(jobCluster, rayv1.KindRayJob, job.Name, job.UID)
	submitter := batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "job", UID: "submitter-uid"}}
	ownedBy(&submitter, rayv1.KindRayJob, job.Name, job.UID)
	submitterPod := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "job-xyz", UID: "job-xyz-uid"}}
	ownedBy(&submitterPod, "Job", submitter.Name, submitter.UID)
	job.Finalizers = []string{rayv1.RayJobStopJobFinalizer}

	related := actions.Related{
		RayClusters: []rayv1.RayCluster{*active, *pending, *unrelated, *jobCluster},
		Pods: []corev1.Pod{
			podOf(active, "", "svc-raycluster-a-head"), podOf(active, "g", "svc-raycluster-a-w1"),
			podOf(pending, "", "svc-raycluster-b-head"), podOf(unrelated, "", "alone-head"),
			podOf(jobCluster, "", "job-raycluster-x-head"), submitterPod, foreignPod,
		},
		Services: []corev1.Service{serveSvc, headSvc},
		Jobs:     []batchv1.Job{submitter},
	}

	t.Run("rayservice", func(t *testing.T) {
		p, err := actions.PlanDelete(svc, related)
		wantErr(t, err)
		want := []actions.Dependent{
			{Kind: "RayCluster", Name: "svc-raycluster-a", Owner: "RayService svc"},
			{Kind: "RayCluster", Name: "svc-raycluster-b", Owner: "RayService svc"},
			{Kind: "Service", Name: "svc-raycluster-a-head-svc", Owner: "RayCluster svc-raycluster-a"},
			{Kind: "Service", Name: "svc-serve-svc", Owner: "RayService svc"},
			{Kind: "Pod", Name: "svc-raycluster-a-head", Owner: "RayCluster svc-raycluster-a"},
			{Kind: "Pod", Name: "svc-raycluster-a-w1", Owner: "RayCluster svc-raycluster-a"},
			{Kind: "Pod", Name: "svc-raycluster-b-head", Owner: "RayCluster svc-raycluster-b"},
		}
		if !slices.Equal(p.Dependents, want) {
			t.Fatalf("dependents\n%+v\nwant\n%+v", p.Dependents, want)
		}
		if l := p.Lines(); l[1] != "also deleted: 2 rayclusters, 2 services, 3 pods" {
			t.Fatalf("lines %q", l)
		}
	})
	t.Run("rayjob", func(t *testing.T) {
		p, err := actions.PlanDelete(job, related)
		wantErr(t, err)
		want := []actions.Dependent{
			{Kind: "RayCluster", Name: "job-raycluster-x", Owner: "RayJob job"},
			{Kind: "Job", Name: "job", Owner: "RayJob job"},
			{Kind: "Pod", Name: "job-raycluster-x-head", Owner: "RayCluster job-raycluster-x"},
			{Kind: "Pod", Name: "job-xyz", Owner: "Job job"},
		}
		if !slices.Equal(p.Dependents, want) {
			t.Fatalf("dependents\n%+v\nwant\n%+v", p.Dependents, want)
		}
		if !slices.Equal(p.Finalizers, []string{rayv1.RayJobStopJobFinalizer}) {
			t.Fatalf("finalizers %q", p.Finalizers)
		}
	})
	t.Run("raycluster alone", func(t *testing.T) {
		p, err := actions.PlanDelete(unrelated, related)
		wantErr(t, err)
		if len(p.Dependents) != 1 || p.Dependents[0].Name != "alone-head" || len(p.Warnings) != 0 {
			t.Fatalf("plan %+v", *p)
		}
	})
	t.Run("owned raycluster warns", func(t *testing.T) {
		p, err := actions.PlanDelete(active, related)
		wantErr(t, err)
		if len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0], "belongs to RayService svc") {
			t.Fatalf("warnings %q", p.Warnings)
		}
	})
	t.Run("job on a selected cluster", func(t *testing.T) {
		j := rayJob(ns, "sel", true)
		j.Spec.RayClusterSpec = nil
		j.Spec.ClusterSelector = map[string]string{rayv1.RayClusterLabelKey: "alone"}
		p, err := actions.PlanDelete(j, related)
		wantErr(t, err)
		if len(p.Dependents) != 0 || len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0], "RayCluster alone (clusterSelector), which it does not own") {
			t.Fatalf("plan %+v", *p)
		}
		if l := p.Lines(); l[1] != "nothing else goes with it (no owned objects found)" {
			t.Fatalf("lines %q", l)
		}
	})
	t.Run("already deleting", func(t *testing.T) {
		rc := unrelated.DeepCopy()
		rc.DeletionTimestamp = &metav1.Time{Time: time.Unix(1, 0)}
		_, err := actions.PlanDelete(rc, related)
		wantErr(t, err, "RayCluster ns/alone is already being deleted")
	})
}

func TestParseKind(t *testing.T) {
	for in, want := range map[string]actions.Kind{
		"rc": kinds.RayCluster, "RayCluster": kinds.RayCluster, "rayclusters": kinds.RayCluster,
		"rj": kinds.RayJob, "rayjob": kinds.RayJob, "RAYJOBS": kinds.RayJob,
		"rs": kinds.RayService, "rayservice": kinds.RayService,
		"rcj": kinds.RayCronJob, "RayCronJob": kinds.RayCronJob, "raycronjobs": kinds.RayCronJob, "cronjob": kinds.RayCronJob, "CronJobs": kinds.RayCronJob,
	} {
		got, err := actions.ParseKind(in)
		if err != nil || got != want {
			t.Errorf("ParseKind(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	_, err := actions.ParseKind("pod")
	wantErr(t, err, `unknown kind "pod": use raycluster (rc), rayjob (rj), rayservice (rs) or raycronjob (rcj)`)
}
