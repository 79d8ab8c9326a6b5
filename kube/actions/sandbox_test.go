package actions_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/raydar/raydar/controller"
	"github.com/raydar/raydar/kube/actions"
	"github.com/raydar/raydar/kube/sandbox"
	"github.com/raydar/raydar/kube/sandbox/sandboxtest"
	"github.com/raydar/raydar/rayapi/crds"
	"github.com/raydar/raydar/rayapi/kinds"
	"github.com/raydar/raydar/rayapi/scheme"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// The apply paths on a real API server: one sandbox (etcd and
// kube-apiserver with the ray.io CRDs; no scheduler, no controllers) for the
// package, started in TestMain unless -short. No reconciler runs: these
// tests check what the actions write (the spec, the Event, the audit line)
// and what the API server answers (409 on a stale resourceVersion, 403).

var (
	sb *sandbox.Sandbox
	cl client.WithWatch
)

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run())
	}
	sandboxtest.MustExclusive()
	ctrllog.SetLogger(logr.Discard())
	opts := sandbox.Options{CRDs: [][]byte{crds.YAML()}, StartTimeout: 5 * time.Minute}
	if os.Getenv("RAYDAR_TEST_LOG") != "" {
		opts.Logf = func(f string, a ...any) { fmt.Fprintf(os.Stderr, "sandbox: "+f+"\n", a...) }
	}
	s, err := sandbox.Start(context.Background(), opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "kube/actions tests: starting the sandbox:", err)
		os.Exit(1)
	}
	sb = s
	if cl, err = client.NewWithWatch(s.Config, client.Options{Scheme: scheme.New()}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		_ = s.Stop()
		os.Exit(1)
	}
	code := m.Run()
	if err := s.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stopping the sandbox:", err)
	}
	os.Exit(code)
}

// testCtx is generous: the machines these tests run on are small and busy.
func testCtx(t *testing.T) context.Context {
	t.Helper()
	if sb == nil {
		t.Skip("integration test: needs the sandbox control plane (skipped with -short)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func newNamespace(t *testing.T, ctx context.Context) string {
	t.Helper()
	name := "t-" + strings.ToLower(utilrand.String(6))
	if err := cl.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cl.Delete(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	})
	return name
}

// sandboxActions returns Actions on c (the admin client when nil) that
// record real Events and audit into a temporary file.
func sandboxActions(t *testing.T, c client.Client, opts actions.Options) (*actions.Actions, string) {
	t.Helper()
	if c == nil {
		c = cl
	}
	if opts.Actor == "" {
		opts.Actor = "alice"
	}
	opts.Context = "sandbox"
	opts.AuditLogPath = filepath.Join(t.TempDir(), "audit.log")
	a, err := actions.New(c, opts)
	if err != nil {
		t.Fatal(err)
	}
	return a, opts.AuditLogPath
}

// create creates objects (UIDs and resourceVersions are the server's).
func create(t *testing.T, ctx context.Context, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		o.SetUID("")
		o.SetResourceVersion("")
		if err := cl.Create(ctx, o); err != nil {
			t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
		}
	}
}

// auditEvents lists the Events raydar's actions recorded in ns.
func auditEvents(t *testing.T, ctx context.Context, ns string) []eventsv1.Event {
	t.Helper()
	var l eventsv1.EventList
	if err := cl.List(ctx, &l, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var out []eventsv1.Event
	for _, e := range l.Items {
		if e.ReportingController == rayv1.AuditEventSource {
			out = append(out, e)
		}
	}
	return out
}

func getCluster(t *testing.T, ctx context.Context, ns, name string) *rayv1.RayCluster {
	t.Helper()
	rc := &rayv1.RayCluster{}
	if err := cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, rc); err != nil {
		t.Fatal(err)
	}
	return rc
}

func TestSandboxScale(t *testing.T) {
	ctx := testCtx(t)
	ns := newNamespace(t, ctx)
	create(t, ctx, cluster(ns, "rc", group("cpu", 1, 2, 5), group("gpu", 0, 0, 2)))
	a, audit := sandboxActions(t, nil, actions.Options{})

	r, err := a.ScaleGroup(ctx, ns, "rc", "cpu", actions.ScaleRequest{Replicas: 6, Max: ptr.To[int32](6)})
	if err != nil {
		t.Fatal(err)
	}
	rc := getCluster(t, ctx, ns, "rc")
	cpu, _ := rc.Spec.WorkerGroup("cpu")
	gpu, _ := rc.Spec.WorkerGroup("gpu")
	if *cpu.Replicas != 6 || *cpu.MaxReplicas != 6 || *cpu.MinReplicas != 1 || *gpu.Replicas != 0 {
		t.Fatalf("cpu %+v gpu %+v", cpu, gpu)
	}
	if p := r.Plan.(*actions.ScalePlan); p.PodsToCreate != 4 || r.Attempts != 1 {
		t.Fatalf("plan %+v attempts %d", *p, r.Attempts)
	}

	evs := auditEvents(t, ctx, ns)
	if len(evs) != 1 {
		t.Fatalf("events %+v", evs)
	}
	ev := evs[0]
	if ev.Reason != actions.ReasonScaledWorkerGroup || ev.Action != "Scale" || ev.Type != corev1.EventTypeNormal ||
		ev.Regarding.UID != rc.UID || ev.Regarding.Kind != rayv1.KindRayCluster ||
		ev.Note != "Scaled worker group cpu from 2 to 6 replicas, maxReplicas 5 to 6, by alice (context sandbox) from raydar" {
		t.Fatalf("event %+v", ev)
	}
	// kubectl describe shows events through core/v1: the source is raydar.
	var core corev1.EventList
	if err := cl.List(ctx, &core, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(core.Items) != 1 || core.Items[0].ReportingController != rayv1.AuditEventSource || core.Items[0].InvolvedObject.Name != "rc" {
		t.Fatalf("core/v1 events %+v", core.Items)
	}

	lines := readAudit(t, audit)
	if len(lines) != 1 || lines[0].Outcome != actions.OutcomeApplied || lines[0].Actor != "alice" || lines[0].Context != "sandbox" ||
		lines[0].Action != actions.ActionScale || lines[0].Object != (actions.ObjectRef{Kind: kinds.RayCluster, Namespace: ns, Name: "rc"}) ||
		!strings.Contains(string(lines[0].Details), `"podsToCreate":4`) {
		t.Fatalf("audit %+v", lines)
	}

	// Bad input writes nothing.
	if _, err := a.ScaleGroup(ctx, ns, "rc", "cpu", actions.ScaleRequest{Replicas: 7}); !errors.Is(err, actions.ErrInvalid) {
		t.Fatalf("err %v", err)
	}
	if after := getCluster(t, ctx, ns, "rc"); after.ResourceVersion != rc.ResourceVersion {
		t.Fatal("a rejected scale wrote the cluster")
	}
}

// TestSandboxConflictRetry races a concurrent update between the action's
// read and its write: the API server refuses the stale write with 409, the
// action re-reads, re-plans and writes once more, and both changes survive.
func TestSandboxConflictRetry(t *testing.T) {
	ctx := testCtx(t)
	ns := newNamespace(t, ctx)
	create(t, ctx, cluster(ns, "rc", group("cpu", 1, 2, 5)))
	patches, conflicts := 0, 0
	racing := interceptor.NewClient(cl, interceptor.Funcs{
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, p client.Patch, o ...client.PatchOption) error {
			patches++
			if patches == 1 {
				other := getCluster(t, ctx, ns, "rc")
				other.Labels = map[string]string{"touched": "yes"}
				other.Spec.WorkerGroupSpecs[0].MinReplicas = ptr.To[int32](2)
				if err := cl.Update(ctx, other); err != nil {
					return fmt.Errorf("the concurrent update failed: %w", err)
				}
			}
			err := c.Patch(ctx, obj, p, o...)
			if apierrors.IsConflict(err) {
				conflicts++
			}
			return err
		},
	})
	a, _ := sandboxActions(t, racing, actions.Options{})
	r, err := a.ScaleGroup(ctx, ns, "rc", "cpu", actions.ScaleRequest{Replicas: 4})
	if err != nil {
		t.Fatal(err)
	}
	if r.Attempts != 2 || patches != 2 || conflicts != 1 {
		t.Fatalf("attempts %d patches %d conflicts %d", r.Attempts, patches, conflicts)
	}
	rc := getCluster(t, ctx, ns, "rc")
	g, _ := rc.Spec.WorkerGroup("cpu")
	if rc.Labels["touched"] != "yes" || *g.MinReplicas != 2 || *g.Replicas != 4 {
		t.Fatalf("labels %v group %+v", rc.Labels, g)
	}
	if p := r.Plan.(*actions.ScalePlan); p.Current.Min != 2 {
		t.Fatalf("the applied plan was not re-made from the fresh read: %+v", *p)
	}
	if evs := auditEvents(t, ctx, ns); len(evs) != 1 {
		t.Fatalf("events %+v", evs)
	}
}

func TestSandboxDeleteWorkers(t *testing.T) {
	ctx := testCtx(t)
	ns := newNamespace(t, ctx)
	rc := cluster(ns, "rc", group("cpu", 1, 3, 5), group("gpu", 0, 1, 2))
	pods := []corev1.Pod{
		rayPod(ns, "rc", "", "rc-head"),
		rayPod(ns, "rc", "cpu", "rc-cpu-a"), rayPod(ns, "rc", "cpu", "rc-cpu-b"), rayPod(ns, "rc", "cpu", "rc-cpu-c"),
		rayPod(ns, "rc", "gpu", "rc-gpu-a"),
	}
	create(t, ctx, rc)
	for i := range pods {
		create(t, ctx, &pods[i])
	}
	a, audit := sandboxActions(t, nil, actions.Options{})

	// The head is refused and nothing is written.
	if _, err := a.DeleteWorkers(ctx, ns, "rc", actions.DeleteWorkersRequest{Pods: []string{"rc-cpu-a", "rc-head"}}); !errors.Is(err, actions.ErrInvalid) ||
		!strings.Contains(err.Error(), "pod rc-head is the head of RayCluster rc") {
		t.Fatalf("err %v", err)
	}
	if _, err := a.DeleteWorkers(ctx, ns, "rc", actions.DeleteWorkersRequest{Pods: []string{"rc-cpu-zz"}}); err == nil ||
		!strings.Contains(err.Error(), "pod rc-cpu-zz not found in namespace "+ns) {
		t.Fatalf("err %v", err)
	}

	p, err := a.PreviewDeleteWorkers(ctx, ns, "rc", actions.DeleteWorkersRequest{Pods: []string{"rc-cpu-c", "rc-gpu-a", "rc-cpu-a"}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.Pods, []string{"rc-cpu-a", "rc-cpu-c", "rc-gpu-a"}) {
		t.Fatalf("preview %+v", *p)
	}
	r, err := a.DeleteWorkers(ctx, ns, "rc", actions.DeleteWorkersRequest{Pods: []string{"rc-cpu-c", "rc-gpu-a", "rc-cpu-a"}})
	if err != nil {
		t.Fatal(err)
	}
	got := getCluster(t, ctx, ns, "rc")
	cpu, _ := got.Spec.WorkerGroup("cpu")
	gpu, _ := got.Spec.WorkerGroup("gpu")
	if *cpu.Replicas != 1 || *cpu.MinReplicas != 1 || !slices.Equal(cpu.ScaleStrategy.WorkersToDelete, []string{"rc-cpu-a", "rc-cpu-c"}) {
		t.Fatalf("cpu %+v", cpu)
	}
	if *gpu.Replicas != 0 || !slices.Equal(gpu.ScaleStrategy.WorkersToDelete, []string{"rc-gpu-a"}) {
		t.Fatalf("gpu %+v", gpu)
	}
	if !equalJSON(t, r.Plan, p) {
		t.Fatalf("applied plan %+v differs from the preview %+v", r.Plan, *p)
	}
	// The pods themselves are the reconciler's to delete.
	var left corev1.PodList
	if err := cl.List(ctx, &left, client.InNamespace(ns)); err != nil || len(left.Items) != len(pods) {
		t.Fatalf("pods %d, %v", len(left.Items), err)
	}
	evs := auditEvents(t, ctx, ns)
	if len(evs) != 1 || evs[0].Reason != actions.ReasonDeletedWorkers ||
		!strings.Contains(evs[0].Note, "2 worker pods of group cpu (rc-cpu-a, rc-cpu-c; replicas 3 to 1) and 1 worker pod of group gpu (rc-gpu-a; replicas 1 to 0)") {
		t.Fatalf("events %+v", evs)
	}
	lines := readAudit(t, audit)
	if len(lines) != 3 || lines[0].Outcome != actions.OutcomeRejected || lines[1].Outcome != actions.OutcomeRejected || lines[2].Outcome != actions.OutcomeApplied {
		t.Fatalf("audit %+v", lines)
	}

	// Asking again for a pod already listed is refused: it would lower replicas twice.
	if _, err := a.DeleteWorkers(ctx, ns, "rc", actions.DeleteWorkersRequest{Pods: []string{"rc-cpu-a"}}); err == nil ||
		!strings.Contains(err.Error(), "already listed in scaleStrategy.workersToDelete") {
		t.Fatalf("err %v", err)
	}
}

func TestSandboxStopJob(t *testing.T) {
	ctx := testCtx(t)
	ns := newNamespace(t, ctx)
	running, done := rayJob(ns, "running", true), rayJob(ns, "done", true)
	create(t, ctx, running, done)
	setJobStatus := func(j *rayv1.RayJob, st rayv1.RayJobStatus) {
		j.Status = st
		if err := cl.Status().Update(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	setJobStatus(running, rayv1.RayJobStatus{JobId: "running-1", RayClusterName: "running-rc",
		JobStatus: rayv1.JobStatusRunning, JobDeploymentStatus: rayv1.JobDeploymentStatusRunning})
	setJobStatus(done, rayv1.RayJobStatus{JobId: "done-1", RayClusterName: "done-rc",
		JobStatus: rayv1.JobStatusSucceeded, JobDeploymentStatus: rayv1.JobDeploymentStatusComplete})
	a, _ := sandboxActions(t, nil, actions.Options{})

	before := time.Now().UTC().Truncate(time.Second)
	r, err := a.StopJob(ctx, ns, "running")
	if err != nil {
		t.Fatal(err)
	}
	var j rayv1.RayJob
	if err := cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: "running"}, &j); err != nil {
		t.Fatal(err)
	}
	v := j.Annotations[rayv1.StopRequestedAnnotationKey]
	at, perr := time.Parse(time.RFC3339, strings.TrimPrefix(v, "alice@"))
	if !strings.HasPrefix(v, "alice@") || perr != nil || at.Before(before) || at.After(time.Now()) {
		t.Fatalf("annotation %q", v)
	}
	if p := r.Plan.(*actions.StopJobPlan); p.Annotation != rayv1.StopRequestedAnnotationKey+"="+v || p.Cluster != "running-rc" {
		t.Fatalf("plan %+v", *p)
	}
	if evs := auditEvents(t, ctx, ns); len(evs) != 1 || evs[0].Reason != actions.ReasonStopRequested || evs[0].Regarding.Name != "running" {
		t.Fatalf("events %+v", evs)
	}

	_, err = a.StopJob(ctx, ns, "done")
	if !errors.Is(err, actions.ErrInvalid) || !strings.Contains(err.Error(), "RayJob "+ns+"/done has already finished (job status SUCCEEDED") {
		t.Fatalf("err %v", err)
	}
	if err := cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: "done"}, &j); err != nil || j.Annotations[rayv1.StopRequestedAnnotationKey] != "" {
		t.Fatalf("finished job annotated: %v %v", j.Annotations, err)
	}
}

func TestSandboxSuspendResume(t *testing.T) {
	ctx := testCtx(t)
	ns := newNamespace(t, ctx)
	create(t, ctx, cluster(ns, "rc", group("cpu", 0, 1, 2)), rayJob(ns, "keep", false), rayJob(ns, "job", true), rayService(ns, "svc"))
	a, _ := sandboxActions(t, nil, actions.Options{})

	// A RayJob without shutdownAfterJobFinishes cannot be suspended: the rule's path and words.
	_, err := a.Suspend(ctx, kinds.RayJob, ns, "keep")
	if !errors.Is(err, actions.ErrInvalid) || !strings.Contains(err.Error(),
		"RayJob "+ns+"/keep cannot be suspended; spec.suspend: Forbidden: a RayJob can be suspended only with shutdownAfterJobFinishes: true") {
		t.Fatalf("err %v", err)
	}

	for _, tc := range []struct {
		kind actions.Kind
		name string
		obj  client.Object
		get  func(client.Object) bool
	}{
		{kinds.RayCluster, "rc", &rayv1.RayCluster{}, func(o client.Object) bool { return o.(*rayv1.RayCluster).Spec.IsSuspended() }},
		{kinds.RayJob, "job", &rayv1.RayJob{}, func(o client.Object) bool { return o.(*rayv1.RayJob).Spec.Suspend }},
		{kinds.RayService, "svc", &rayv1.RayService{}, func(o client.Object) bool { return o.(*rayv1.RayService).Spec.Suspend }},
	} {
		suspended := func() bool {
			if err := cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: tc.name}, tc.obj); err != nil {
				t.Fatal(err)
			}
			return tc.get(tc.obj)
		}
		if _, err := a.Suspend(ctx, tc.kind, ns, tc.name); err != nil || !suspended() {
			t.Fatalf("suspend %s: %v", tc.kind, err)
		}
		r, err := a.Suspend(ctx, tc.kind, ns, tc.name)
		if err != nil || r.Outcome != actions.OutcomeUnchanged {
			t.Fatalf("suspend %s again: %v %+v", tc.kind, err, r)
		}
		if _, err := a.Resume(ctx, tc.kind, ns, tc.name); err != nil || suspended() {
			t.Fatalf("resume %s: %v", tc.kind, err)
		}
	}
	var reasons []string
	for _, e := range auditEvents(t, ctx, ns) {
		reasons = append(reasons, e.Regarding.Kind+"/"+e.Reason)
	}
	slices.Sort(reasons)
	want := []string{"RayCluster/Resumed", "RayCluster/Suspended", "RayJob/Resumed", "RayJob/Suspended", "RayService/Resumed", "RayService/Suspended"}
	if !slices.Equal(reasons, want) {
		t.Fatalf("events %q, want %q", reasons, want)
	}
}

func TestSandboxDelete(t *testing.T) {
	ctx := testCtx(t)
	ns := newNamespace(t, ctx)
	svc := rayService(ns, "svc")
	create(t, ctx, svc)
	rc := cluster(ns, "svc-raycluster-a", group("serve", 1, 1, 3))
	ownedBy(rc, rayv1.KindRayService, svc.Name, svc.UID)
	create(t, ctx, rc)
	head := rayPod(ns, rc.Name, "", "svc-raycluster-a-head")
	ownedBy(&head, rayv1.KindRayCluster, rc.Name, rc.UID)
	headSvc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "svc-raycluster-a-head-svc"},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "dashboard", Port: 8265}}},
	}
	ownedBy(headSvc, rayv1.KindRayCluster, rc.Name, rc.UID)
	create(t, ctx, &head, headSvc, cluster(ns, "alone", group("g", 0, 1, 1)))
	a, _ := sandboxActions(t, nil, actions.Options{})

	p, err := a.PreviewDelete(ctx, kinds.RayService, ns, "svc")
	if err != nil {
		t.Fatal(err)
	}
	want := []actions.Dependent{
		{Kind: "RayCluster", Name: "svc-raycluster-a", Owner: "RayService svc"},
		{Kind: "Service", Name: "svc-raycluster-a-head-svc", Owner: "RayCluster svc-raycluster-a"},
		{Kind: "Pod", Name: "svc-raycluster-a-head", Owner: "RayCluster svc-raycluster-a"},
	}
	if !slices.Equal(p.Dependents, want) || len(p.Warnings) != 0 {
		t.Fatalf("preview %+v", *p)
	}
	r, err := a.Delete(ctx, kinds.RayService, ns, "svc")
	if err != nil {
		t.Fatal(err)
	}
	if !equalJSON(t, r.Plan, p) {
		t.Fatalf("applied plan %+v", r.Plan)
	}
	if err := cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: "svc"}, &rayv1.RayService{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the RayService is still there: %v", err)
	}
	evs := auditEvents(t, ctx, ns)
	if len(evs) != 1 || evs[0].Reason != actions.ReasonDeleted || evs[0].Regarding.Name != "svc" ||
		!strings.HasPrefix(evs[0].Note, "Deleted; the garbage collector deletes 1 raycluster, 1 service, 1 pod, by alice") {
		t.Fatalf("events %+v", evs)
	}
	if _, err := a.Delete(ctx, kinds.RayService, ns, "svc"); !apierrors.IsNotFound(err) || !strings.Contains(err.Error(), `rayservice "svc" not found in namespace `+ns) {
		t.Fatalf("err %v", err)
	}
}

// TestSandboxForbidden acts as a user who may read RayClusters but not
// change them: the API server's 403 becomes a clear message, the audit line
// records it and nothing changes.
func TestSandboxForbidden(t *testing.T) {
	ctx := testCtx(t)
	ns := newNamespace(t, ctx)
	create(t, ctx, cluster(ns, "rc", group("cpu", 0, 1, 4)))
	user := "bob-" + strings.ToLower(utilrand.String(4))
	create(t, ctx,
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "read"}, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{rayv1.GroupName}, Resources: []string{rayv1.ResourceRayClusters}, Verbs: []string{"get", "list"}},
			{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list"}},
		}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "read"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "read"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}},
	)
	cfg := rest.CopyConfig(sb.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	asUser, err := client.New(cfg, client.Options{Scheme: scheme.New()})
	if err != nil {
		t.Fatal(err)
	}
	a, audit := sandboxActions(t, asUser, actions.Options{Actor: user})

	// RBAC is cached by the authorizer: the read right may take a moment.
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err = a.ScaleGroup(ctx, ns, "rc", "cpu", actions.ScaleRequest{Replicas: 3})
		if !strings.Contains(fmt.Sprint(err), "cannot get") || time.Now().After(deadline) {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
	wantMsg := fmt.Sprintf("forbidden: user %s cannot patch rayclusters in namespace %s", user, ns)
	if !apierrors.IsForbidden(err) || !strings.HasPrefix(err.Error(), wantMsg) {
		t.Fatalf("err %v; want it to start with %q", err, wantMsg)
	}
	if g, _ := getCluster(t, ctx, ns, "rc").Spec.WorkerGroup("cpu"); *g.Replicas != 1 {
		t.Fatalf("replicas %d", *g.Replicas)
	}
	lines := readAudit(t, audit)
	last := lines[len(lines)-1]
	if last.Outcome != actions.OutcomeFailed || !strings.HasPrefix(last.Error, wantMsg) || last.Actor != user {
		t.Fatalf("audit %+v", last)
	}
	_, err = a.Delete(ctx, kinds.RayCluster, ns, "rc")
	if want := fmt.Sprintf("forbidden: user %s cannot delete rayclusters in namespace %s", user, ns); !strings.HasPrefix(fmt.Sprint(err), want) {
		t.Fatalf("err %v; want %q", err, want)
	}
}

// TestSandboxDeleteWorkersWithReconciler runs raydar's RayCluster reconciler
// on the sandbox: after DeleteWorkers exactly the named pods are gone, and
// the head and the other workers are the very same pods (same UIDs), with no
// replacement started.
func TestSandboxDeleteWorkersWithReconciler(t *testing.T) {
	ctx := testCtx(t)
	ns := newNamespace(t, ctx)
	op, err := controller.New(sb.Config, controller.Options{
		DisableLeaderElection: true, Namespaces: []string{ns}, IgnoreOtherOperators: true,
		SkipControllerNameValidation: true, Logger: logr.Discard(),
	})
	if err != nil {
		t.Fatal(err)
	}
	opCtx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- op.Start(opCtx) }()
	t.Cleanup(func() {
		stop()
		<-done
	})

	create(t, ctx, cluster(ns, "rc", group("cpu", 0, 4, 6)))
	pods := func() map[string]types.UID {
		var l corev1.PodList
		if err := cl.List(ctx, &l, client.InNamespace(ns), client.MatchingLabels{rayv1.RayClusterLabelKey: "rc"}); err != nil {
			t.Fatal(err)
		}
		out := map[string]types.UID{}
		for _, p := range l.Items {
			if p.DeletionTimestamp == nil {
				out[p.Name] = p.UID
			}
		}
		return out
	}
	workers := func(m map[string]types.UID) []string {
		var out []string
		for n := range m {
			if n != headName(t, ctx, ns) {
				out = append(out, n)
			}
		}
		slices.Sort(out)
		return out
	}
	var before map[string]types.UID
	poll(t, ctx, "the head and 4 workers", func() bool {
		before = pods()
		return len(before) == 5
	})
	ws := workers(before)
	victims, keep := []string{ws[0], ws[2]}, []string{ws[1], ws[3]}

	a, _ := sandboxActions(t, nil, actions.Options{})
	if _, err := a.DeleteWorkers(ctx, ns, "rc", actions.DeleteWorkersRequest{Pods: victims}); err != nil {
		t.Fatal(err)
	}
	poll(t, ctx, "the reconciler to act on the new generation with the victims gone", func() bool {
		rc := getCluster(t, ctx, ns, "rc")
		now := pods()
		_, v0 := now[victims[0]]
		_, v1 := now[victims[1]]
		return rc.Status.ObservedGeneration >= rc.Generation && !v0 && !v1
	})
	after := pods()
	if len(after) != 3 {
		t.Fatalf("pods after: %v", after)
	}
	for _, n := range append([]string{headName(t, ctx, ns)}, keep...) {
		if after[n] == "" || after[n] != before[n] {
			t.Fatalf("pod %s was replaced or deleted: before %v after %v", n, before, after)
		}
	}
}

func headName(t *testing.T, ctx context.Context, ns string) string {
	t.Helper()
	var l corev1.PodList
	if err := cl.List(ctx, &l, client.InNamespace(ns), client.MatchingLabels{rayv1.RayNodeTypeLabelKey: string(rayv1.HeadNode)}); err != nil {
		t.Fatal(err)
	}
	if len(l.Items) != 1 {
		return ""
	}
	return l.Items[0].Name
}

// poll checks cond every 100ms until it holds or ctx ends.
func poll(t *testing.T, ctx context.Context, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s", what)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
