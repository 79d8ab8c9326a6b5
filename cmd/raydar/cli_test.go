package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/raydar/raydar/kube/actions"
	"github.com/raydar/raydar/rayapi/kinds"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// Tests of scale, delete-workers, stop, suspend and resume (get: get_test.go).

// withTerminal makes the commands treat stdin as a terminal.
func withTerminal(t *testing.T) {
	t.Helper()
	old := stdinIsTerminal
	stdinIsTerminal = func(io.Reader) bool { return true }
	t.Cleanup(func() { stdinIsTerminal = old })
}

func template(name string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: name, Image: "rayproject/ray:2.52.0"}}}}
}

func testCluster(ns, name string) *rayv1.RayCluster {
	return &rayv1.RayCluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: rayv1.RayClusterSpec{
			RayVersion:    "2.52.0",
			HeadGroupSpec: rayv1.HeadGroupSpec{Template: template("ray-head")},
			WorkerGroupSpecs: []rayv1.WorkerGroupSpec{
				{GroupName: "cpu", MinReplicas: ptr.To[int32](1), Replicas: ptr.To[int32](2), MaxReplicas: ptr.To[int32](5), Template: template("ray-worker")},
				{GroupName: "gpu", MinReplicas: ptr.To[int32](0), Replicas: ptr.To[int32](1), MaxReplicas: ptr.To[int32](2), Template: template("ray-worker")},
			},
		},
	}
}

func testJob(ns, name string, shutdown bool) *rayv1.RayJob {
	return &rayv1.RayJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: rayv1.RayJobSpec{Entrypoint: "python job.py", ShutdownAfterJobFinishes: shutdown,
			RayClusterSpec: &testCluster(ns, name).Spec},
	}
}

func testService(ns, name string) *rayv1.RayService {
	return &rayv1.RayService{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: rayv1.RayServiceSpec{RayClusterSpec: testCluster(ns, name).Spec}}
}

// testPod is a Ray pod of cluster c (the head when group is ""), Running on
// node with ip, ready as told.
func testPod(t *testing.T, ctx context.Context, ns, c, group, name, ip string, ready bool) *corev1.Pod {
	t.Helper()
	typ, grp := rayv1.WorkerNode, group
	if group == "" {
		typ, grp = rayv1.HeadNode, rayv1.RayNodeHeadGroupLabelValue
	}
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{
			rayv1.RayClusterLabelKey: c, rayv1.RayNodeTypeLabelKey: string(typ), rayv1.RayNodeGroupLabelKey: grp,
			rayv1.RayNodeLabelKey: rayv1.RayNodeLabelValue,
		}},
		Spec: corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "ray", Image: "rayproject/ray:2.52.0"}}},
	}
	create(t, ctx, p)
	p.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip,
		ContainerStatuses: []corev1.ContainerStatus{{Name: "ray", Ready: ready, Image: "rayproject/ray:2.52.0", ImageID: "x"}}}
	if err := cl.Status().Update(ctx, p); err != nil {
		t.Fatal(err)
	}
	return p
}

func create(t *testing.T, ctx context.Context, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := cl.Create(ctx, o); err != nil {
			t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
		}
	}
}

func getCluster(t *testing.T, ctx context.Context, ns, name string) *rayv1.RayCluster {
	t.Helper()
	rc := &rayv1.RayCluster{}
	if err := cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, rc); err != nil {
		t.Fatal(err)
	}
	return rc
}

func replicasOf(t *testing.T, ctx context.Context, ns, name, group string) int32 {
	t.Helper()
	g, ok := getCluster(t, ctx, ns, name).Spec.WorkerGroup(group)
	if !ok {
		t.Fatalf("no group %s", group)
	}
	return *g.Replicas
}

// resultJSON is a mutation's -o json output.
type resultJSON struct {
	Actor   string            `json:"actor"`
	Context string            `json:"context"`
	Action  actions.Action    `json:"action"`
	Object  actions.ObjectRef `json:"object"`
	Plan    map[string]any    `json:"plan"`
	Outcome actions.Outcome   `json:"outcome"`
	Error   string            `json:"error"`
}

func decodeResult(t *testing.T, out string) resultJSON {
	t.Helper()
	var r resultJSON
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("stdout is not a JSON result: %v\n%s", err, out)
	}
	return r
}

func wantErrorContaining(t *testing.T, r cliResult, want string) {
	t.Helper()
	if r.err == nil || !strings.Contains(r.err.Error(), want) {
		t.Fatalf("error %v; want one containing %q (stdout %q stderr %q)", r.err, want, r.stdout, r.stderr)
	}
}

// TestBadInput: every sub-command refuses malformed input before it talks
// to a cluster, with a message that says what is wrong.
func TestBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"scale", "rc"}, "scale needs CLUSTER and GROUP (got 1 arguments)"},
		{[]string{"scale", "rc", "cpu"}, "--replicas is required"},
		{[]string{"scale", "rc", "cpu", "--replicas", "abc"}, `--replicas: "abc" is not a whole number`},
		{[]string{"scale", "rc", "cpu", "--replicas", "2.5"}, `--replicas: "2.5" is not a whole number`},
		{[]string{"scale", "rc", "cpu", "--replicas", "-1"}, "--replicas: -1 is negative; enter 0 or more"},
		{[]string{"scale", "rc", "cpu", "--replicas", ""}, "--replicas: enter a whole number"},
		{[]string{"scale", "rc", "cpu", "--replicas", "3", "--max", "many"}, `--max: "many" is not a whole number`},
		{[]string{"scale", "rc", "cpu", "--replicas", "3", "--min", "-2"}, "--min: -2 is negative"},
		{[]string{"scale", "rc", "cpu", "--replicas", "3", "-o", "xml"}, `unknown output format "xml": use table, json or yaml`},
		{[]string{"scale", "rc", "cpu", "--replicas", "3", "-A"}, "-A/--all-namespaces only works with get"},
		{[]string{"delete-workers", "rc"}, "delete-workers needs CLUSTER and at least one POD"},
		{[]string{"stop"}, "stop needs exactly one JOB (got 0 arguments)"},
		{[]string{"stop", "a", "b"}, "stop needs exactly one JOB (got 2 arguments)"},
		{[]string{"suspend", "rc"}, "suspend needs KIND and NAME"},
		{[]string{"resume", "pod", "x"}, `unknown kind "pod": use raycluster (rc), rayjob (rj), rayservice (rs) or raycronjob (rcj)`},
		{[]string{"get"}, "get needs a resource"},
		{[]string{"get", "nodes"}, `unknown resource "nodes": use clusters, jobs, services, cronjobs or workers`},
		{[]string{"get", "clusters", "-o", "wide"}, `unknown output format "wide"`},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			r := raydar(t, "", tc.args...)
			wantErrorContaining(t, r, tc.want)
			if r.stdout != "" {
				t.Fatalf("stdout %q", r.stdout)
			}
		})
	}
}

func TestScale(t *testing.T) {
	ctx := needSandbox(t)
	ns := newNamespace(t, ctx)
	create(t, ctx, testCluster(ns, "rc"))
	audit := auditLog(t)

	// JSON: the plan and the outcome.
	r := raydar(t, "", "-n", ns, "scale", "rc", "cpu", "--replicas", "4", "--yes", "-o", "json")
	if r.err != nil {
		t.Fatalf("%v\n%s", r.err, r.stderr)
	}
	res := decodeResult(t, r.stdout)
	if res.Outcome != actions.OutcomeApplied || res.Action != actions.ActionScale || res.Actor != "raydar-sandbox-admin" ||
		res.Context != "raydar-sandbox" || res.Object != (actions.ObjectRef{Kind: kinds.RayCluster, Namespace: ns, Name: "rc"}) ||
		res.Plan["podsToCreate"] != 2.0 || res.Plan["new"].(map[string]any)["replicas"] != 4.0 {
		t.Fatalf("result %+v", res)
	}
	if n := replicasOf(t, ctx, ns, "rc", "cpu"); n != 4 {
		t.Fatalf("replicas %d", n)
	}

	// YAML.
	r = raydar(t, "", "-n", ns, "scale", "rc", "cpu", "--replicas", "6", "--max", "6", "--yes", "-o", "yaml")
	if r.err != nil {
		t.Fatal(r.err)
	}
	var y resultJSON
	if err := yaml.Unmarshal([]byte(r.stdout), &y); err != nil || y.Outcome != actions.OutcomeApplied ||
		y.Plan["new"].(map[string]any)["maxReplicas"] != 6.0 {
		t.Fatalf("yaml %v %+v\n%s", err, y, r.stdout)
	}

	// Table: the context (nothing was previewed), the plan's lines and the
	// outcome.
	r = raydar(t, "", "-n", ns, "scale", "rc", "cpu", "--replicas", "5", "--yes")
	if r.err != nil {
		t.Fatal(r.err)
	}
	if first, _, _ := strings.Cut(r.stdout, "\n"); first != "context: "+sb.ContextName {
		t.Fatalf("with --yes the first line is %q, want the context:\n%s", first, r.stdout)
	}
	for _, want := range []string{
		"RayCluster " + ns + "/rc, worker group cpu",
		"current: min 1 / replicas 6 / max 6",
		"new:     min 1 / replicas 5 / max 6",
		"effect: 1 pod will be deleted (6 → 5)",
		"scale raycluster " + ns + "/rc: applied",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Fatalf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}

	// Out of bounds: refused, nothing written; -o json still says why.
	r = raydar(t, "", "-n", ns, "scale", "rc", "cpu", "--replicas", "7", "--yes", "-o", "json")
	wantErrorContaining(t, r, "replicas 7 is above maxReplicas 6 of group cpu; raise maxReplicas too (--max)")
	if res := decodeResult(t, r.stdout); res.Outcome != actions.OutcomeRejected || !strings.Contains(res.Error, "above maxReplicas") {
		t.Fatalf("result %+v", res)
	}
	r = raydar(t, "", "-n", ns, "scale", "rc", "tpu", "--replicas", "1", "--yes")
	wantErrorContaining(t, r, `RayCluster `+ns+`/rc has no worker group "tpu" (groups: cpu, gpu)`)
	r = raydar(t, "", "-n", ns, "scale", "nope", "cpu", "--replicas", "1", "--yes")
	wantErrorContaining(t, r, `raycluster "nope" not found in namespace `+ns)
	if n := replicasOf(t, ctx, ns, "rc", "cpu"); n != 5 {
		t.Fatalf("replicas %d", n)
	}

	// Every attempt is in the audit log.
	var outcomes []string
	for _, l := range readLines(t, audit) {
		var rec struct {
			Outcome string `json:"outcome"`
			Actor   string `json:"actor"`
		}
		if err := json.Unmarshal([]byte(l), &rec); err != nil || rec.Actor != "raydar-sandbox-admin" {
			t.Fatalf("audit line %q: %v", l, err)
		}
		outcomes = append(outcomes, rec.Outcome)
	}
	if want := []string{"applied", "applied", "applied", "rejected", "rejected", "failed"}; !slices.Equal(outcomes, want) {
		t.Fatalf("audit outcomes %q, want %q", outcomes, want)
	}
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out
}

// TestConfirmation: without --yes a terminal gets the preview and y/N
// (default No); anything else is refused.
func TestConfirmation(t *testing.T) {
	ctx := needSandbox(t)
	ns := newNamespace(t, ctx)
	create(t, ctx, testCluster(ns, "rc"))
	args := []string{"-n", ns, "scale", "rc", "cpu", "--replicas", "4"}

	r := raydar(t, "y\n", args...)
	wantErrorContaining(t, r, "scale: confirmation needed but stdin is not a terminal; pass --yes to confirm")
	if n := replicasOf(t, ctx, ns, "rc", "cpu"); n != 2 {
		t.Fatalf("replicas %d", n)
	}

	withTerminal(t)
	for _, answer := range []string{"\n", "n\n", "no\n", "", "maybe\n"} {
		r = raydar(t, answer, args...)
		if !errors.Is(r.err, errCancelled) {
			t.Fatalf("answer %q: error %v", answer, r.err)
		}
		if !strings.Contains(r.stderr, "effect: 2 pods will be created (2 → 4)") ||
			!strings.Contains(r.stderr, "Scale worker group cpu of RayCluster rc to 4 replicas? [y/N] ") || r.stdout != "" {
			t.Fatalf("answer %q: stdout %q stderr %q", answer, r.stdout, r.stderr)
		}
		if n := replicasOf(t, ctx, ns, "rc", "cpu"); n != 2 {
			t.Fatalf("answer %q changed replicas to %d", answer, n)
		}
	}

	r = raydar(t, "Y\n", args...)
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.stdout != "scale raycluster "+ns+"/rc: applied\n" {
		t.Fatalf("stdout %q", r.stdout)
	}
	if n := replicasOf(t, ctx, ns, "rc", "cpu"); n != 4 {
		t.Fatalf("replicas %d", n)
	}

	// A bad request fails at the preview, before asking.
	r = raydar(t, "y\n", "-n", ns, "scale", "rc", "cpu", "--replicas", "0")
	wantErrorContaining(t, r, "replicas 0 is below minReplicas 1 of group cpu; lower minReplicas too (--min)")
	if strings.Contains(r.stderr, "[y/N]") {
		t.Fatalf("asked for a refused request: %q", r.stderr)
	}
}

func TestDeleteWorkers(t *testing.T) {
	ctx := needSandbox(t)
	ns := newNamespace(t, ctx)
	rc := testCluster(ns, "rc")
	rc.Spec.WorkerGroupSpecs[0].Replicas = ptr.To[int32](3)
	create(t, ctx, rc)
	testPod(t, ctx, ns, "rc", "", "rc-head", "10.0.0.1", true)
	for _, n := range []string{"rc-cpu-a", "rc-cpu-b", "rc-cpu-c"} {
		testPod(t, ctx, ns, "rc", "cpu", n, "10.0.0.2", true)
	}
	testPod(t, ctx, ns, "rc", "gpu", "rc-gpu-a", "10.0.0.3", true)

	r := raydar(t, "", "-n", ns, "delete-workers", "rc", "rc-cpu-b", "rc-head", "--yes")
	wantErrorContaining(t, r, "pod rc-head is the head of RayCluster rc: the head cannot be deleted as a worker")
	r = raydar(t, "", "-n", ns, "delete-workers", "rc", "rc-cpu-a", "rc-cpu-b", "rc-cpu-c", "--yes")
	wantErrorContaining(t, r, "below minReplicas 1; allow lowering minReplicas too (--lower-min)")

	withTerminal(t)
	r = raydar(t, "y\n", "-n", ns, "delete-workers", "rc", "rc-cpu-c", "rc-gpu-a", "rc-cpu-a", "-o", "json")
	if r.err != nil {
		t.Fatalf("%v\n%s", r.err, r.stderr)
	}
	if !strings.Contains(r.stderr, "delete exactly these 3 worker pods and no others") ||
		!strings.Contains(r.stderr, "group cpu: rc-cpu-a, rc-cpu-c") || !strings.Contains(r.stderr, "[y/N]") {
		t.Fatalf("preview %q", r.stderr)
	}
	res := decodeResult(t, r.stdout)
	if res.Outcome != actions.OutcomeApplied || fmt.Sprint(res.Plan["pods"]) != "[rc-cpu-a rc-cpu-c rc-gpu-a]" {
		t.Fatalf("result %+v", res)
	}
	got := getCluster(t, ctx, ns, "rc")
	cpu, _ := got.Spec.WorkerGroup("cpu")
	gpu, _ := got.Spec.WorkerGroup("gpu")
	if *cpu.Replicas != 1 || !slices.Equal(cpu.ScaleStrategy.WorkersToDelete, []string{"rc-cpu-a", "rc-cpu-c"}) ||
		*gpu.Replicas != 0 || !slices.Equal(gpu.ScaleStrategy.WorkersToDelete, []string{"rc-gpu-a"}) {
		t.Fatalf("cpu %+v gpu %+v", cpu, gpu)
	}

	r = raydar(t, "", "-n", ns, "delete-workers", "rc", "rc-cpu-b", "--lower-min", "--yes")
	if r.err != nil {
		t.Fatal(r.err)
	}
	if cpu, _ := getCluster(t, ctx, ns, "rc").Spec.WorkerGroup("cpu"); *cpu.Replicas != 0 || *cpu.MinReplicas != 0 {
		t.Fatalf("cpu %+v", cpu)
	}
}

func TestStop(t *testing.T) {
	ctx := needSandbox(t)
	ns := newNamespace(t, ctx)
	running, done := testJob(ns, "running", true), testJob(ns, "done", true)
	create(t, ctx, running, done)
	running.Status = rayv1.RayJobStatus{JobId: "running-1", RayClusterName: "running-rc", JobStatus: rayv1.JobStatusRunning,
		JobDeploymentStatus: rayv1.JobDeploymentStatusRunning}
	done.Status = rayv1.RayJobStatus{JobId: "done-1", RayClusterName: "done-rc", JobStatus: rayv1.JobStatusFailed,
		JobDeploymentStatus: rayv1.JobDeploymentStatusFailed}
	for _, j := range []*rayv1.RayJob{running, done} {
		if err := cl.Status().Update(ctx, j); err != nil {
			t.Fatal(err)
		}
	}

	r := raydar(t, "", "-n", ns, "stop", "done", "--yes")
	wantErrorContaining(t, r, "RayJob "+ns+"/done has already finished (job status FAILED, deployment status Failed): nothing to stop")

	r = raydar(t, "", "-n", ns, "stop", "running", "--yes", "-o", "json")
	if r.err != nil {
		t.Fatal(r.err)
	}
	res := decodeResult(t, r.stdout)
	var j rayv1.RayJob
	if err := cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: "running"}, &j); err != nil {
		t.Fatal(err)
	}
	v := j.Annotations[rayv1.StopRequestedAnnotationKey]
	if !strings.HasPrefix(v, "raydar-sandbox-admin@") || res.Plan["annotation"] != rayv1.StopRequestedAnnotationKey+"="+v ||
		res.Plan["via"] != actions.StopViaAnnotation || res.Plan["cluster"] != "running-rc" {
		t.Fatalf("annotation %q result %+v", v, res)
	}

	// --direct goes through the dashboard of the job's cluster; this one does not exist.
	r = raydar(t, "", "-n", ns, "stop", "running", "--direct", "--yes", "-o", "json")
	wantErrorContaining(t, r, "stopping Ray job running-1 of RayJob "+ns+"/running through the dashboard")
	if res := decodeResult(t, r.stdout); res.Action != actions.ActionStopJobDirect || res.Outcome != actions.OutcomeFailed {
		t.Fatalf("result %+v", res)
	}
}

func TestSuspendResume(t *testing.T) {
	ctx := needSandbox(t)
	ns := newNamespace(t, ctx)
	create(t, ctx, testCluster(ns, "rc"), testJob(ns, "keep", false), testJob(ns, "job", true), testService(ns, "svc"))

	r := raydar(t, "", "-n", ns, "suspend", "rayjob", "keep", "--yes")
	wantErrorContaining(t, r, "RayJob "+ns+"/keep cannot be suspended; spec.suspend: Forbidden: a RayJob can be suspended only with shutdownAfterJobFinishes: true")

	for _, tc := range []struct {
		kind, name string
		obj        client.Object
		suspended  func() bool
	}{
		{"rc", "rc", &rayv1.RayCluster{}, nil},
		{"rj", "job", &rayv1.RayJob{}, nil},
		{"rayservice", "svc", &rayv1.RayService{}, nil},
	} {
		get := func() bool {
			if err := cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: tc.name}, tc.obj); err != nil {
				t.Fatal(err)
			}
			switch o := tc.obj.(type) {
			case *rayv1.RayCluster:
				return o.Spec.IsSuspended()
			case *rayv1.RayJob:
				return o.Spec.Suspend
			case *rayv1.RayService:
				return o.Spec.Suspend
			}
			return false
		}
		r := raydar(t, "", "-n", ns, "suspend", tc.kind, tc.name, "--yes", "-o", "json")
		if r.err != nil || !get() {
			t.Fatalf("suspend %s: %v", tc.kind, r.err)
		}
		if res := decodeResult(t, r.stdout); res.Action != actions.ActionSuspend || res.Outcome != actions.OutcomeApplied || res.Plan["suspend"] != true {
			t.Fatalf("result %+v", res)
		}
		r = raydar(t, "", "-n", ns, "resume", tc.kind, tc.name, "--yes")
		if r.err != nil || get() || !strings.Contains(r.stdout, ": applied") {
			t.Fatalf("resume %s: %v %q", tc.kind, r.err, r.stdout)
		}
		r = raydar(t, "", "-n", ns, "resume", tc.kind, tc.name, "--yes")
		if r.err != nil || !strings.Contains(r.stdout, "no change: spec.suspend is already false") || !strings.Contains(r.stdout, ": unchanged, nothing to do") {
			t.Fatalf("resume again %s: %v %q", tc.kind, r.err, r.stdout)
		}
	}
	r = raydar(t, "", "-n", ns, "suspend", "rc", "missing", "--yes")
	wantErrorContaining(t, r, `raycluster "missing" not found in namespace `+ns)
}

// TestReadOnly: --readonly refuses every mutation, also without --yes and
// without a terminal, and changes nothing.
func TestReadOnly(t *testing.T) {
	ctx := needSandbox(t)
	ns := newNamespace(t, ctx)
	create(t, ctx, testCluster(ns, "rc"), testJob(ns, "job", true))
	audit := auditLog(t)
	before := getCluster(t, ctx, ns, "rc").ResourceVersion
	for _, args := range [][]string{
		{"scale", "rc", "cpu", "--replicas", "3"},
		{"delete-workers", "rc", "rc-cpu-a"},
		{"stop", "job"},
		{"stop", "job", "--direct"},
		{"suspend", "rc", "rc"},
		{"resume", "rj", "job"},
	} {
		for _, extra := range [][]string{nil, {"--yes"}, {"--yes", "-o", "json"}} {
			r := raydar(t, "y\n", append(append(append([]string{"-n", ns}, args...), "--readonly"), extra...)...)
			if !errors.Is(r.err, actions.ErrReadOnly) || !strings.Contains(r.err.Error(), "read-only mode") {
				t.Fatalf("%q %q: error %v", args, extra, r.err)
			}
			if len(extra) == 3 {
				if res := decodeResult(t, r.stdout); res.Outcome != actions.OutcomeRefused {
					t.Fatalf("result %+v", res)
				}
			}
		}
	}
	if after := getCluster(t, ctx, ns, "rc").ResourceVersion; after != before {
		t.Fatal("the cluster changed in read-only mode")
	}
	if _, err := os.Stat(audit); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("audit log written in read-only mode: %v", err)
	}
}

// pollPause is the interval of a poll.
func pollPause(ctx context.Context) {
	select {
	case <-ctx.Done():
	case <-time.After(200 * time.Millisecond):
	}
}

// TestForbidden uses a kubeconfig context whose user has no rights: the
// API server's 403 reads as a sentence naming the user, verb and namespace.
func TestForbidden(t *testing.T) {
	ctx := needSandbox(t)
	ns := newNamespace(t, ctx)
	create(t, ctx, testCluster(ns, "rc"))
	kc, err := clientcmd.LoadFromFile(sb.KubeconfigPath)
	if err != nil {
		t.Fatal(err)
	}
	admin := kc.Contexts[kc.CurrentContext]
	user := *kc.AuthInfos[admin.AuthInfo]
	user.Impersonate = "carol"
	kc.AuthInfos["carol"] = &user
	kc.Contexts["carol"] = &clientcmdapi.Context{Cluster: admin.Cluster, AuthInfo: "carol", Namespace: ns}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	// carol may read RayClusters but not change them.
	create(t, ctx,
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "read"}, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{rayv1.GroupName}, Resources: []string{rayv1.ResourceRayClusters}, Verbs: []string{"get", "list"}}}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "read"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "read"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "carol"}}},
	)
	run := func() cliResult {
		cmd := newRootCmd()
		cmd.SetArgs([]string{"--kubeconfig", path, "--context", "carol", "scale", "rc", "cpu", "--replicas", "3", "--yes"})
		var out, errb strings.Builder
		cmd.SetOut(&out)
		cmd.SetErr(&errb)
		return cliResult{out.String(), errb.String(), cmd.ExecuteContext(ctx)}
	}
	r := run()
	// The authorizer learns of the new RoleBinding within moments.
	for i := 0; i < 100 && r.err != nil && strings.Contains(r.err.Error(), "cannot get"); i++ {
		pollPause(ctx)
		r = run()
	}
	wantErrorContaining(t, r, "forbidden: user carol cannot patch rayclusters in namespace "+ns)
	if n := replicasOf(t, ctx, ns, "rc", "cpu"); n != 2 {
		t.Fatalf("replicas %d", n)
	}
}
