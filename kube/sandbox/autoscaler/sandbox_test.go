package autoscaler_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/controller"
	"github.com/raydar/raydar/kube/history"
	"github.com/raydar/raydar/kube/sandbox"
	"github.com/raydar/raydar/kube/sandbox/autoscaler"
	"github.com/raydar/raydar/kube/sandbox/headsim"
	"github.com/raydar/raydar/kube/sandbox/sandboxtest"
	"github.com/raydar/raydar/rayapi/crds"
	"github.com/raydar/raydar/rayapi/dashboard"
	"github.com/raydar/raydar/rayapi/scheme"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// One sandbox, the simulated heads with their autoscalers (a decision
// every 200 ms) and raydar's reconcile loop serve every test here. With
// -short none starts and the tests skip.
var (
	sb  *sandbox.Sandbox
	sim *headsim.Sim
	cl  client.Client
)

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run())
	}
	sandboxtest.MustExclusive()
	code, err := run(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "autoscaler sandbox tests:", err)
		code = 1
	}
	os.Exit(code)
}

func logf(who string) func(string, ...any) {
	if os.Getenv("RAYDAR_TEST_LOG") == "" {
		return nil
	}
	return func(f string, a ...any) {
		fmt.Fprintln(os.Stderr, time.Now().Format("15:04:05.000"), who+": "+fmt.Sprintf(f, a...))
	}
}

func run(m *testing.M) (code int, err error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	opts := sandbox.Full()
	opts.CRDs = [][]byte{crds.YAML()}
	if sb, err = sandbox.Start(ctx, opts); err != nil {
		return 1, fmt.Errorf("starting the sandbox: %w", err)
	}
	defer func() {
		if err := sb.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping the sandbox:", err)
		}
	}()
	if cl, err = client.New(sb.Config, client.Options{Scheme: scheme.New()}); err != nil {
		return 1, err
	}
	if sim, err = headsim.Start(ctx, headsim.Options{Config: sb.Config, SetPodPhase: sb.SetPodPhase, EndContainer: sb.EndContainer,
		Logf: logf("headsim"), Autoscaler: &headsim.AutoscalerOptions{Interval: 200 * time.Millisecond}}); err != nil {
		return 1, fmt.Errorf("starting headsim: %w", err)
	}
	defer func() { _ = sim.Close() }()
	op, err := controller.New(sb.Config, controller.Options{DisableLeaderElection: true, IgnoreOtherOperators: true,
		StatusCoalesceWindow: 200 * time.Millisecond, Logger: logr.Discard(), AddressBook: sim})
	if err != nil {
		return 1, err
	}
	done := make(chan error, 1)
	go func() { done <- op.Start(ctx) }()
	defer func() {
		cancel()
		<-done
	}()
	return m.Run(), nil
}

func needSandbox(t *testing.T) {
	t.Helper()
	if sb == nil {
		t.Skip("integration test: needs the sandbox control plane (skipped with -short)")
	}
}

func eventually(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, msg := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s; last: %s", timeout, what, msg)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func ptr[T any](v T) *T { return &v }

// recorder watches a RayCluster and keeps every non-empty workersToDelete
// of its first group with the replicas written with it, so a list the
// autoscaler sets and clears between two polls is still seen.
type recorder struct {
	mu    sync.Mutex
	lists [][]string
	with  []int32
}

func record(t *testing.T, ns, name string) *recorder {
	t.Helper()
	wc, err := client.NewWithWatch(sb.Config, client.Options{Scheme: scheme.New()})
	if err != nil {
		t.Fatal(err)
	}
	w, err := wc.Watch(context.Background(), &rayv1.RayClusterList{}, client.InNamespace(ns))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	r := &recorder{}
	go func() {
		for ev := range w.ResultChan() {
			rc, ok := ev.Object.(*rayv1.RayCluster)
			if !ok || rc.Name != name || len(rc.Spec.WorkerGroupSpecs) == 0 {
				continue
			}
			if l := rc.Spec.WorkerGroupSpecs[0].ScaleStrategy.WorkersToDelete; len(l) > 0 {
				r.mu.Lock()
				if n := len(r.lists); n == 0 || !slices.Equal(r.lists[n-1], l) {
					r.lists = append(r.lists, slices.Clone(l))
					r.with = append(r.with, replicas(rc))
				}
				r.mu.Unlock()
			}
		}
	}()
	return r
}

// named is every pod name the lists held.
func (r *recorder) named() map[string]bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := map[string]bool{}
	for _, l := range r.lists {
		for _, n := range l {
			m[n] = true
		}
	}
	return m
}

func (r *recorder) snapshot() ([][]string, []int32) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.lists), slices.Clone(r.with)
}

func namespace(t *testing.T, name string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := cl.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	return name
}

func res(cpu string) corev1.ResourceRequirements {
	l := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("1Gi")}
	return corev1.ResourceRequirements{Requests: l, Limits: l.DeepCopy()}
}

// cluster is an autoscaling cluster whose head offers no CPU to Ray
// (num-cpus 0, as KubeRay's autoscaler samples) and whose group "cpu" has
// workers of 1 CPU, between 0 and max, with the group's idle timeout.
func cluster(ns, name string, replicas, maxReplicas, idleSeconds int32) *rayv1.RayCluster {
	v2 := rayv1.AutoscalerVersionV2
	return &rayv1.RayCluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: rayv1.RayClusterSpec{
			RayVersion:              "2.52.0",
			EnableInTreeAutoscaling: ptr(true),
			AutoscalerOptions:       &rayv1.AutoscalerOptions{Version: &v2},
			HeadGroupSpec: rayv1.HeadGroupSpec{
				RayStartParams: map[string]string{"num-cpus": "0"},
				Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{
					{Name: "ray-head", Image: "rayproject/ray:2.52.0", Resources: res("1")}}}},
			},
			WorkerGroupSpecs: []rayv1.WorkerGroupSpec{{
				GroupName: "cpu", Replicas: ptr(replicas), MinReplicas: ptr(int32(0)), MaxReplicas: ptr(maxReplicas),
				IdleTimeoutSeconds: ptr(idleSeconds), RayStartParams: map[string]string{},
				Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{
					{Name: "ray-worker", Image: "rayproject/ray:2.52.0", Resources: res("1")}}}},
			}},
		},
	}
}

func create(t *testing.T, obj client.Object) {
	t.Helper()
	if err := cl.Create(context.Background(), obj); err != nil {
		t.Fatal(err)
	}
}

func get(t *testing.T, ns, name string) *rayv1.RayCluster {
	t.Helper()
	rc := &rayv1.RayCluster{}
	if err := cl.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, rc); err != nil {
		t.Fatal(err)
	}
	return rc
}

func replicas(rc *rayv1.RayCluster) int32 {
	if r := rc.Spec.WorkerGroupSpecs[0].Replicas; r != nil {
		return *r
	}
	return 0
}

// workers lists the names of the cluster's worker pods that are not
// terminating, and whether they all run.
func workers(t *testing.T, ns, name string) (names []string, allRunning bool) {
	t.Helper()
	pl := &corev1.PodList{}
	if err := cl.List(context.Background(), pl, client.InNamespace(ns), client.MatchingLabels{
		rayv1.RayClusterLabelKey: name, rayv1.RayNodeTypeLabelKey: string(rayv1.WorkerNode)}); err != nil {
		t.Fatal(err)
	}
	allRunning = true
	for _, p := range pl.Items {
		if p.DeletionTimestamp != nil {
			continue
		}
		names = append(names, p.Name)
		if p.Status.Phase != corev1.PodRunning {
			allRunning = false
		}
	}
	sort.Strings(names)
	return names, allRunning
}

func dash(t *testing.T, ns, name string) *dashboard.Client {
	t.Helper()
	var url string
	eventually(t, 90*time.Second, "the head of "+name, func() (bool, string) {
		var ok bool
		url, ok = sim.DashboardURL(ns, name)
		return ok, "no head yet"
	})
	c, err := dashboard.New(url)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// submit submits a played-out job reserving one CPU for its entrypoint for d.
func submit(t *testing.T, c *dashboard.Client, d time.Duration) string {
	t.Helper()
	id, err := c.SubmitJob(context.Background(), dashboard.SubmitJobRequest{
		Entrypoint:            "python train.py",
		RuntimeEnv:            map[string]any{"env_vars": map[string]string{"RAYDAR_SANDBOX_DURATION": fmt.Sprintf("%ds", int(d.Seconds()))}},
		EntrypointReservation: dashboard.EntrypointReservation{EntrypointNumCPUs: 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// groupsManagers are the field managers of the worker groups (an atomic
// list in the CRD's schema: whoever wrote it last owns all of it).
func groupsManagers(rc *rayv1.RayCluster) []string {
	var out []string
	for _, mf := range rc.ManagedFields {
		if mf.FieldsV1 != nil && strings.Contains(string(mf.FieldsV1.Raw), `"f:workerGroupSpecs"`) {
			out = append(out, mf.Manager)
		}
	}
	return out
}

// Three jobs each reserving a CPU, on a group of 1-CPU workers with
// maxReplicas 2: the autoscaler grows the group to 2 and no further, and
// the job that does not fit stays PENDING, its demand reported infeasible.
func TestDemandScalesUpToMaxAndNoFurther(t *testing.T) {
	needSandbox(t)
	ns := namespace(t, "scale-up")
	create(t, cluster(ns, "grow", 0, 2, 600))
	c := dash(t, ns, "grow")
	for range 3 {
		submit(t, c, 10*time.Minute)
	}
	eventually(t, 2*time.Minute, "2 running workers", func() (bool, string) {
		names, running := workers(t, ns, "grow")
		return len(names) == 2 && running, fmt.Sprintf("workers %v (all running: %v), replicas %d", names, running, replicas(get(t, ns, "grow")))
	})
	// Several more rounds: the third job's demand is still there, the group
	// is at max, and nothing more is asked for.
	var st autoscaler.Status
	eventually(t, time.Minute, "a decision at max with the third job's demand infeasible", func() (bool, string) {
		st, _ = sim.AutoscalerStatus(ns, "grow")
		return st.State == autoscaler.StateRunning && len(st.Decision.Infeasible) == 1 && len(st.Decision.Launch) == 0, fmt.Sprintf("%+v", st)
	})
	start := st.At
	eventually(t, time.Minute, "five more rounds", func() (bool, string) {
		st, _ = sim.AutoscalerStatus(ns, "grow")
		return st.At.After(start.Add(time.Second)), fmt.Sprintf("%+v", st)
	})
	rc := get(t, ns, "grow")
	if got := replicas(rc); got != 2 {
		t.Errorf("replicas = %d, want 2 (maxReplicas)", got)
	}
	if names, _ := workers(t, ns, "grow"); len(names) != 2 {
		t.Errorf("workers = %v, want 2", names)
	}
	if m := groupsManagers(rc); !slices.Equal(m, []string{history.AutoscalerManager}) {
		t.Errorf("workerGroupSpecs managed by %v, want %q (Ray's autoscaler) alone", m, history.AutoscalerManager)
	}
	jobs, err := c.ListJobs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var states []string
	for _, j := range jobs {
		states = append(states, string(j.Status))
	}
	sort.Strings(states)
	if want := []string{"PENDING", "RUNNING", "RUNNING"}; !slices.Equal(states, want) {
		t.Errorf("job states %v, want %v", states, want)
	}
}

// Three workers, one busy with a job: after the group's idleTimeoutSeconds
// the autoscaler names the idle ones in workersToDelete, lowering replicas
// in the same patch; exactly those pods are deleted (none replaced), the
// busy one stays, and the lists are cleared once their pods are gone.
func TestIdleWorkersGoThroughWorkersToDelete(t *testing.T) {
	needSandbox(t)
	ns := namespace(t, "scale-down")
	rec := record(t, ns, "shrink")
	create(t, cluster(ns, "shrink", 3, 3, 5))
	// The job is submitted as soon as the head answers, well within the
	// idle timeout of the first worker up, which it then keeps busy.
	c := dash(t, ns, "shrink")
	submit(t, c, 10*time.Minute)

	seen := map[string]bool{}
	eventually(t, 3*time.Minute, "one worker left and workersToDelete cleared", func() (bool, string) {
		names, _ := workers(t, ns, "shrink")
		for _, n := range names {
			seen[n] = true
		}
		rc := get(t, ns, "shrink")
		w := rc.Spec.WorkerGroupSpecs[0].ScaleStrategy.WorkersToDelete
		return len(names) == 1 && replicas(rc) == 1 && len(w) == 0 && len(rec.named()) == 2,
			fmt.Sprintf("workers %v, replicas %d, workersToDelete %v, named so far %v", names, replicas(rc), w, rec.named())
	})
	lists, with := rec.snapshot()
	named := rec.named()
	kept, _ := workers(t, ns, "shrink")
	if len(seen) != 3 {
		t.Errorf("worker pods seen %v, want the 3 of replicas 3 (none replaced)", seen)
	}
	for n := range named {
		if !seen[n] || slices.Contains(kept, n) {
			t.Errorf("workersToDelete named %s: not one of the idle workers (seen %v, kept %v)", n, seen, kept)
		}
	}
	for n := range seen {
		if !named[n] && !slices.Contains(kept, n) {
			t.Errorf("worker %s went without being named in workersToDelete", n)
		}
	}
	// Each list came with replicas lowered by its length: 3 → 1 in one
	// patch, or one worker at a time.
	left := int32(3)
	for i, l := range lists {
		left -= int32(len(l))
		if with[i] != left {
			t.Errorf("workersToDelete %v written with replicas %d, want %d", l, with[i], left)
		}
	}
	jobs, err := c.ListJobs(context.Background())
	if err != nil || len(jobs) != 1 || jobs[0].Status != dashboard.JobRunning {
		t.Errorf("jobs = %+v (%v), want the one job RUNNING on the kept worker", jobs, err)
	}
}

// A head whose ServiceAccount may not do what Ray's autoscaler does (its
// Role, which the operator only creates when missing, was cut down to
// reading pods): the autoscaler does nothing, says Forbidden, and the
// job's demand leaves replicas alone.
func TestRBACRefusedDoesNothing(t *testing.T) {
	needSandbox(t)
	ns := namespace(t, "scale-refused")
	create(t, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bare"}})
	create(t, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "stuck"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get"}}}})
	create(t, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "stuck"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "bare", Namespace: ns}},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "stuck"}})
	rc := cluster(ns, "stuck", 0, 2, 600)
	rc.Spec.HeadGroupSpec.Template.Spec.ServiceAccountName = "bare"
	create(t, rc)
	c := dash(t, ns, "stuck")
	submit(t, c, 10*time.Minute)
	var st autoscaler.Status
	eventually(t, time.Minute, "the autoscaler refused", func() (bool, string) {
		st, _ = sim.AutoscalerStatus(ns, "stuck")
		return st.State == autoscaler.StateForbidden, fmt.Sprintf("%+v", st)
	})
	if !strings.Contains(st.Message, "may not patch rayclusters.ray.io, list pods") {
		t.Errorf("message %q does not name what is refused (patch rayclusters, list pods)", st.Message)
	}
	from := st.At
	eventually(t, time.Minute, "more refused rounds", func() (bool, string) {
		st, _ = sim.AutoscalerStatus(ns, "stuck")
		return st.At.After(from.Add(time.Second)) && st.State == autoscaler.StateForbidden, fmt.Sprintf("%+v", st)
	})
	if got := replicas(get(t, ns, "stuck")); got != 0 {
		t.Errorf("replicas = %d, want 0: the refused autoscaler writes nothing", got)
	}
	if names, _ := workers(t, ns, "stuck"); len(names) != 0 {
		t.Errorf("workers %v, want none", names)
	}
}

// "8 GPUs for 30 s, then nothing", at sandbox scale: a job whose four
// one-GPU tasks run 20 s each on a group of one-GPU workers (max 4, idle
// timeout 2 s). The group grows from zero to 4 and no more, with no pod
// replaced (the pace, one pod first as Ray's launcher grows a group from
// zero, is TestUpscalingSpeed's); when the tasks are done the idle workers
// go through workersToDelete, back to 0, while the job still runs.
func TestTasksScaleUpThenIdleScaleDown(t *testing.T) {
	needSandbox(t)
	ns := namespace(t, "scale-tasks")
	rc := cluster(ns, "burst", 0, 4, 2)
	g := &rc.Spec.WorkerGroupSpecs[0]
	g.GroupName = "gpu"
	g.Template.Spec.Containers[0].Resources.Limits["nvidia.com/gpu"] = resource.MustParse("1")
	g.Template.Spec.Containers[0].Resources.Requests["nvidia.com/gpu"] = resource.MustParse("1")
	create(t, rc)
	c := dash(t, ns, "burst")
	id, err := c.SubmitJob(context.Background(), dashboard.SubmitJobRequest{Entrypoint: "python burst.py", Metadata: map[string]string{
		"raydar.io/sandbox-tasks":    `[{"count": 4, "resources": {"GPU": 1}, "seconds": 20}]`,
		"raydar.io/sandbox-duration": "600",
	}})
	if err != nil {
		t.Fatal(err)
	}
	rec := record(t, ns, "burst")
	peak := int32(0)
	seen := map[string]bool{}
	observe := func() *rayv1.RayCluster {
		rc := get(t, ns, "burst")
		peak = max(peak, replicas(rc))
		names, _ := workers(t, ns, "burst")
		for _, n := range names {
			seen[n] = true
		}
		return rc
	}
	eventually(t, 3*time.Minute, "4 running GPU workers", func() (bool, string) {
		rc := observe()
		names, running := workers(t, ns, "burst")
		return len(names) == 4 && running, fmt.Sprintf("replicas %d, workers %v", replicas(rc), names)
	})
	eventually(t, 3*time.Minute, "the workers gone after their tasks", func() (bool, string) {
		rc := observe()
		names, _ := workers(t, ns, "burst")
		return replicas(rc) == 0 && len(names) == 0, fmt.Sprintf("replicas %d, workers %v, workersToDelete %v", replicas(rc), names, rc.Spec.WorkerGroupSpecs[0].ScaleStrategy.WorkersToDelete)
	})
	if peak != 4 {
		t.Errorf("replicas peaked at %d, want 4 (maxReplicas, what the tasks need)", peak)
	}
	if len(seen) != 4 {
		t.Errorf("worker pods seen %v, want 4: none replaced, none extra", seen)
	}
	named := rec.named()
	for n := range seen {
		if !named[n] {
			t.Errorf("worker %s went without being named in workersToDelete (named: %v)", n, named)
		}
	}
	info, err := c.GetJobInfo(context.Background(), id)
	if err != nil || info.Status != dashboard.JobRunning {
		t.Errorf("job %+v (%v), want still RUNNING: only its tasks ended", info, err)
	}
}
