package headsim

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crfake "sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/raydar/raydar/kube/raydash"
	"github.com/raydar/raydar/kube/sandbox"
	"github.com/raydar/raydar/rayapi/dashboard"
	"github.com/raydar/raydar/rayapi/scheme"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

const ns = "ns"

func headPod(name, cluster string, uid types.UID, ready bool) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: uid, Labels: map[string]string{
			rayv1.RayNodeTypeLabelKey: string(rayv1.HeadNode), rayv1.RayClusterLabelKey: cluster,
		}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "ray-head", Image: "rayproject/ray"}}},
	}
	setReady(p, ready)
	return p
}

func setReady(p *corev1.Pod, ready bool) {
	p.Status = corev1.PodStatus{Phase: corev1.PodPending}
	if ready {
		p.Status.Phase = corev1.PodRunning
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	}
}

// eventually polls cond every 20 ms for up to 20 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

type phaseCall struct {
	ns, name string
	phase    corev1.PodPhase
}

type env struct {
	cs     *k8sfake.Clientset
	cl     client.Client
	sim    *Sim
	mu     sync.Mutex
	phases []phaseCall
}

func start(t *testing.T, k8sObjs []runtime.Object, rayObjs ...client.Object) *env {
	t.Helper()
	e := &env{}
	e.cs = k8sfake.NewClientset(k8sObjs...)
	e.cl = crfake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(rayObjs...).Build()
	sim, err := Start(context.Background(), Options{
		Clientset: e.cs, Client: e.cl, PollInterval: 20 * time.Millisecond,
		SetPodPhase: func(_ context.Context, ns, name string, phase corev1.PodPhase) error {
			e.mu.Lock()
			e.phases = append(e.phases, phaseCall{ns, name, phase})
			e.mu.Unlock()
			return nil
		},
		Logf: t.Logf,
	})
	if err != nil {
		t.Fatal(err)
	}
	e.sim = sim
	t.Cleanup(func() {
		if err := sim.Close(); err != nil {
			t.Error(err)
		}
	})
	return e
}

func (e *env) phaseCalls() []phaseCall {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]phaseCall(nil), e.phases...)
}

func TestHeadFollowsPodReadiness(t *testing.T) {
	ctx := context.Background()
	e := start(t, nil)
	pods := e.cs.CoreV1().Pods(ns)
	p := headPod("rc-head-x", "rc", "uid-1", false)
	if _, err := pods.Create(ctx, p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Not Ready: no dashboard. A Ready head of another cluster, made after
	// it, shows the simulator has seen the pods; then rc's is polled for a
	// while, never there.
	if _, err := pods.Create(ctx, headPod("other-head-x", "other", "uid-2", true), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the other cluster's dashboard", func() bool { _, ok := e.sim.DashboardURL(ns, "other"); return ok })
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if _, ok := e.sim.DashboardURL(ns, "rc"); ok {
			t.Fatal("dashboard before the head pod is Ready")
		}
	}
	if err := pods.Delete(ctx, "other-head-x", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the other cluster's dashboard gone", func() bool { _, ok := e.sim.DashboardURL(ns, "other"); return !ok })

	setReady(p, true)
	if _, err := pods.UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	var url string
	eventually(t, "the dashboard", func() bool { u, ok := e.sim.DashboardURL(ns, "rc"); url = u; return ok })
	dc, _ := dashboard.New(url)
	if _, err := dc.GetJobInfo(ctx, "nope"); !errors.Is(err, dashboard.ErrNotFound) {
		t.Fatalf("GetJobInfo: %v", err)
	}
	if _, err := dc.SubmitJob(ctx, dashboard.SubmitJobRequest{Entrypoint: "sleep 60", SubmissionID: "j1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := dc.StopJob(ctx, "j1"); err != nil {
		t.Fatal(err)
	}
	if n := e.sim.Calls(ns, "rc", "POST", "/api/jobs/j1/stop"); n != 1 {
		t.Fatalf("%d stop calls counted, want 1 (%v)", n, e.sim.AllCalls(ns, "rc"))
	}
	if e.sim.Head(ns, "rc") == nil || len(e.sim.Clusters()) != 1 {
		t.Fatal("Head/Clusters")
	}

	// Refuse and accept again.
	if err := e.sim.SetRefuse(ns, "rc", true); err != nil {
		t.Fatal(err)
	}
	if _, err := dc.GetJobInfo(ctx, "j1"); !errors.Is(err, dashboard.ErrUnavailable) {
		t.Fatalf("refusing: %v", err)
	}
	if err := e.sim.SetRefuse(ns, "rc", false); err != nil {
		t.Fatal(err)
	}
	if _, err := dc.GetJobInfo(ctx, "j1"); err != nil {
		t.Fatalf("accepting again: %v", err)
	}

	// Not ready any more: connections refused, the head is gone.
	setReady(p, false)
	if _, err := pods.UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the dashboard to go", func() bool { _, ok := e.sim.DashboardURL(ns, "rc"); return !ok })
	if _, err := dc.GetJobInfo(ctx, "j1"); !errors.Is(err, dashboard.ErrUnavailable) {
		t.Fatalf("after the head went: %v", err)
	}

	// A new pod (new UID) gets a fresh head that knows no jobs; the
	// counts go on.
	if err := pods.Delete(ctx, p.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := pods.Create(ctx, headPod("rc-head-y", "rc", "uid-2", true), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the new dashboard", func() bool { u, ok := e.sim.DashboardURL(ns, "rc"); url = u; return ok })
	dc, _ = dashboard.New(url)
	if _, err := dc.GetJobInfo(ctx, "j1"); !errors.Is(err, dashboard.ErrNotFound) {
		t.Fatalf("new head knows the old job: %v", err)
	}
	if n := e.sim.Calls(ns, "rc", "POST", "/api/jobs/j1/stop"); n != 1 {
		t.Fatalf("counts lost: %d", n)
	}
}

func TestRefuseBeforeTheHeadStarts(t *testing.T) {
	ctx := context.Background()
	e := start(t, nil)
	if err := e.sim.SetRefuse(ns, "rc", true); err != nil {
		t.Fatal(err)
	}
	if _, err := e.cs.CoreV1().Pods(ns).Create(ctx, headPod("h", "rc", "u", true), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var url string
	eventually(t, "the dashboard", func() bool { u, ok := e.sim.DashboardURL(ns, "rc"); url = u; return ok })
	dc, _ := dashboard.New(url)
	if _, err := dc.GetJobInfo(ctx, "x"); !errors.Is(err, dashboard.ErrUnavailable) {
		t.Fatalf("refusing: %v", err)
	}
}

func TestTokenFromTheClusterSecret(t *testing.T) {
	ctx := context.Background()
	rc := &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "rc"},
		Spec: rayv1.RayClusterSpec{AuthOptions: &rayv1.AuthOptions{Mode: rayv1.AuthModeToken}}}
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "rc"}, Data: map[string][]byte{"auth_token": []byte("tok")}}
	e := start(t, []runtime.Object{sec, headPod("h", "rc", "u", true)}, rc)
	var url string
	eventually(t, "the dashboard", func() bool { u, ok := e.sim.DashboardURL(ns, "rc"); url = u; return ok })
	dc, _ := dashboard.New(url)
	if _, err := dc.ListJobs(ctx); !errors.Is(err, dashboard.ErrUnauthorized) {
		t.Fatalf("without token: %v", err)
	}
	dc, _ = dashboard.New(url, dashboard.WithToken("tok"))
	if _, err := dc.ListJobs(ctx); err != nil {
		t.Fatalf("with token: %v", err)
	}
}

func TestCloseStopsRunningJobs(t *testing.T) {
	ctx := context.Background()
	e := start(t, []runtime.Object{headPod("h", "rc", "u", true)})
	var url string
	eventually(t, "the dashboard", func() bool { u, ok := e.sim.DashboardURL(ns, "rc"); url = u; return ok })
	dc, _ := dashboard.New(url)
	if _, err := dc.SubmitJob(ctx, dashboard.SubmitJobRequest{Entrypoint: "sleep 600", SubmissionID: "long"}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the job to run", func() bool {
		info, err := dc.GetJobInfo(ctx, "long")
		return err == nil && info.Status == dashboard.JobRunning
	})
	h := e.sim.Head(ns, "rc")
	begin := time.Now()
	if err := e.sim.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(begin); d > 10*time.Second {
		t.Fatalf("Close took %s", d)
	}
	// The head is closed: a second Close is a no-op, Start fails.
	if err := h.Start(""); err == nil {
		t.Fatal("head still usable after Close")
	}
	if _, ok := e.sim.DashboardURL(ns, "rc"); ok {
		t.Fatal("address still in the book")
	}
}

func TestNodesFollowReadyPods(t *testing.T) {
	ctx := context.Background()
	rc := &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "rc"}, Spec: rayv1.RayClusterSpec{
		HeadGroupSpec: rayv1.HeadGroupSpec{RayStartParams: map[string]string{"num-cpus": "1"},
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "ray-head"}}}}},
		WorkerGroupSpecs: []rayv1.WorkerGroupSpec{{GroupName: "gpu", RayStartParams: map[string]string{},
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "ray-worker",
				Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{
					corev1.ResourceCPU: resource.MustParse("4"), "nvidia.com/gpu": resource.MustParse("2")}}}}}}}},
	}}
	e := start(t, nil, rc)
	pods := e.cs.CoreV1().Pods(ns)
	hp := headPod("rc-head-x", "rc", "uid-h", true)
	hp.Status.PodIP = "10.1.0.1"
	wp := headPod("rc-gpu-worker-a", "rc", "uid-w", false)
	wp.Labels[rayv1.RayNodeTypeLabelKey] = string(rayv1.WorkerNode)
	wp.Labels[rayv1.RayNodeGroupLabelKey] = "gpu"
	for _, p := range []*corev1.Pod{hp, wp} {
		if _, err := pods.Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var c *dashboard.Client
	eventually(t, "the head", func() bool {
		u, ok := e.sim.DashboardURL(ns, "rc")
		if ok {
			c, _ = dashboard.New(u, dashboard.WithTimeout(20*time.Second))
		}
		return ok
	})
	capNow := func() *dashboard.Capacity {
		got, err := c.Capacity(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	eventually(t, "one node: the Ready head", func() bool {
		got := capNow()
		return len(got.Nodes) == 1 && got.Nodes[0].IP == "10.1.0.1" && got.Total["CPU"] == 1
	})
	id, err := c.SubmitJob(ctx, dashboard.SubmitJobRequest{Entrypoint: "python train.py",
		EntrypointReservation: dashboard.EntrypointReservation{EntrypointNumGPUs: 2}})
	if err != nil {
		t.Fatal(err)
	}
	got := capNow()
	if len(got.Pending) != 1 || got.Pending[0].Shape["GPU"] != 2 {
		t.Fatalf("want {GPU: 2} demanded while the GPU worker is not Ready; got %+v", got.Pending)
	}
	if got.SplitInfeasible(raydash.NodeTypes(rc)); len(got.Pending) != 1 || len(got.Infeasible) != 0 {
		t.Errorf("the gpu group offers 2 GPUs a pod: the demand is pending, not infeasible; got %+v / %+v", got.Pending, got.Infeasible)
	}
	if info, _ := c.GetJobInfo(ctx, id); info.Status != dashboard.JobPending {
		t.Errorf("job %s, want PENDING", info.Status)
	}

	wp.Status.PodIP = "10.1.0.2"
	setReady(wp, true)
	wp.Status.PodIP = "10.1.0.2"
	if _, err := pods.UpdateStatus(ctx, wp, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the GPU worker's node and the job running", func() bool {
		got := capNow()
		info, _ := c.GetJobInfo(ctx, id)
		return len(got.Nodes) == 2 && got.Nodes[1].IP == "10.1.0.2" && got.Total["GPU"] == 2 && len(got.Pending) == 0 &&
			info.Status == dashboard.JobRunning
	})
}

// A head knows its own node from its first answer: a job reserving a CPU
// that the cluster has no node for, submitted the moment the head is
// reachable, waits PENDING (the autoscaler's demand), as on Ray. Before,
// the nodes were sent after the head was published, and a job submitted in
// between was placed on resources the head did not know yet (RUNNING).
func TestTheHeadKnowsItsNodeWhenItFirstAnswers(t *testing.T) {
	ctx := context.Background()
	rc := &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "rc"}, Spec: rayv1.RayClusterSpec{
		HeadGroupSpec: rayv1.HeadGroupSpec{RayStartParams: map[string]string{"num-cpus": "0"},
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "ray-head"}}}}},
	}}
	e := start(t, nil, rc)
	// No node updates from pod events: what the head knows when it first
	// answers is what starting it told it (the race, made certain).
	e.sim.nodesQ.ShutDown()
	hp := headPod("rc-head-x", "rc", "uid-h", true)
	hp.Status.PodIP = "10.1.0.1"
	if _, err := e.cs.CoreV1().Pods(ns).Create(ctx, hp, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var u string
	eventually(t, "the head", func() bool {
		var ok bool
		u, ok = e.sim.DashboardURL(ns, "rc")
		return ok
	})
	c, err := dashboard.New(u, dashboard.WithTimeout(20*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Capacity(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Nodes) != 1 || got.Nodes[0].IP != "10.1.0.1" {
		t.Fatalf("the head's first answer knows nodes %+v, want its own (10.1.0.1)", got.Nodes)
	}
	id, err := c.SubmitJob(ctx, dashboard.SubmitJobRequest{Entrypoint: "python train.py",
		EntrypointReservation: dashboard.EntrypointReservation{EntrypointNumCPUs: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if info, _ := c.GetJobInfo(ctx, id); info.Status != dashboard.JobPending {
		t.Errorf("job %s on a head of 0 CPUs and no workers, want PENDING", info.Status)
	}
}

// A head pod held Running but not Ready (sandbox.NotReadyAnnotation) has a
// dashboard that answers 503 and counts each request; once Ready, the head
// answers and the count stays.
func TestEarlyDashboardCountsRequestsBeforeReady(t *testing.T) {
	ctx := context.Background()
	e := start(t, nil)
	pods := e.cs.CoreV1().Pods(ns)
	p := headPod("early-head-x", "early", "uid-3", false)
	p.Annotations = map[string]string{sandbox.NotReadyAnnotation: "true"}
	p.Status.Phase = corev1.PodRunning
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "ray-head", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}
	if _, err := pods.Create(ctx, p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var url string
	eventually(t, "the early dashboard", func() bool { u, ok := e.sim.DashboardURL(ns, "early"); url = u; return ok })
	dc, _ := dashboard.New(url)
	if _, err := dc.GetJobInfo(ctx, "j"); err == nil || errors.Is(err, dashboard.ErrNotFound) {
		t.Fatalf("GetJobInfo before Ready: %v, want the 503", err)
	}
	if n := e.sim.RequestsBeforeReady(ns, "early"); n != 1 {
		t.Fatalf("%d requests before Ready counted, want 1 (%v)", n, e.sim.AllCalls(ns, "early"))
	}
	setReady(p, true)
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "ray-head", Ready: true, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}
	if _, err := pods.UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the head's dashboard", func() bool {
		u, ok := e.sim.DashboardURL(ns, "early")
		return ok && u != url && e.sim.Head(ns, "early") != nil
	})
	u, _ := e.sim.DashboardURL(ns, "early")
	dc, _ = dashboard.New(u)
	if _, err := dc.GetJobInfo(ctx, "j"); !errors.Is(err, dashboard.ErrNotFound) {
		t.Fatalf("GetJobInfo once Ready: %v", err)
	}
	if n := e.sim.RequestsBeforeReady(ns, "early"); n != 1 {
		t.Errorf("%d requests before Ready after it, want still 1", n)
	}
}
