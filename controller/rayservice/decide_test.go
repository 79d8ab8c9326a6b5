package rayservice

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/raydar/raydar/controller/internal/fixture"
	"github.com/raydar/raydar/controller/kit"
	"github.com/raydar/raydar/controller/raycluster"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/raydar/raydar/rayapi/dashboard"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

const testServeConfig = `applications:
  - name: app1
    import_path: fruit.deployment_graph
    route_prefix: /fruit
`

// testService is a valid RayService with one worker group and one app.
func testService() *rayv1.RayService {
	return &rayv1.RayService{
		ObjectMeta: metav1.ObjectMeta{Name: "svc", Namespace: "ns", UID: "rs-uid", Generation: 1, ResourceVersion: "1"},
		Spec: rayv1.RayServiceSpec{
			ServeConfigV2:                  testServeConfig,
			RayClusterDeletionDelaySeconds: fixture.Ptr(int32(60)),
			RayClusterSpec: rayv1.RayClusterSpec{
				RayVersion: "2.52.0",
				HeadGroupSpec: rayv1.HeadGroupSpec{
					RayStartParams: map[string]string{},
					Template:       corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{fixture.RayContainer("2", "4Gi")}}},
				},
				WorkerGroupSpecs: []rayv1.WorkerGroupSpec{fixture.Group("g", 1)},
			},
		},
	}
}

// testEnv builds observations step by step.
type testEnv struct {
	t *testing.T
	o *observed
}

func newEnv(t *testing.T, rs *rayv1.RayService) *testEnv {
	return &testEnv{t: t, o: &observed{
		Service: rs, Pods: map[string][]*corev1.Pod{}, Probes: map[string]*serveProbe{}, Submissions: map[string]*submission{},
		Now: fixture.T0, NewSuffix: func() string { return "abcde" }, Config: defaultConfig(),
	}}
}

// cluster adds a cluster built from the RayService's current spec.
func (e *testEnv) cluster(suffix string, age time.Duration) *rayv1.RayCluster {
	rc := buildCluster(e.o.Service, kit.RayServiceClusterName(e.o.Service.Name, suffix))
	rc.UID = types.UID(rc.Name + "-uid")
	rc.ResourceVersion = "10"
	rc.CreationTimestamp = metav1.NewTime(fixture.T0.Add(-age))
	e.o.Clusters = append(e.o.Clusters, rc)
	return rc
}

// pods adds a Running+Ready head pod and one worker with the given serve labels.
func (e *testEnv) pods(rc *rayv1.RayCluster, headServe, workerServe string, ready bool) {
	mk := func(name string, nodeType rayv1.RayNodeType, serve string) *corev1.Pod {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID(name + "-uid"), ResourceVersion: "5",
				CreationTimestamp: metav1.NewTime(fixture.T0.Add(-time.Minute)),
				Labels: map[string]string{rayv1.RayClusterLabelKey: rc.Name, rayv1.RayNodeTypeLabelKey: string(nodeType),
					rayv1.RayClusterServingServiceLabelKey: serve},
				OwnerReferences: []metav1.OwnerReference{kit.OwnerRef(rc)}},
			Status: corev1.PodStatus{Phase: corev1.PodPending},
		}
		if ready {
			p.Status.Phase = corev1.PodRunning
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
		}
		return p
	}
	e.o.Pods[rc.Name] = []*corev1.Pod{mk(rc.Name+"-head-x", rayv1.HeadNode, headServe), mk(rc.Name+"-g-worker-y", rayv1.WorkerNode, workerServe)}
}

// probe records a dashboard answer with apps in the given status, and
// healthy proxies on all pods when proxies is true.
func (e *testEnv) probe(rc *rayv1.RayCluster, status dashboard.AppStatus, proxies bool) *serveProbe {
	pr := &serveProbe{At: fixture.T0, OK: true, Apps: map[string]dashboard.ServeApplication{}}
	if status != "" {
		pr.Apps["app1"] = dashboard.ServeApplication{Name: "app1", Status: status,
			Deployments: map[string]dashboard.ServeDeployment{"Fruit": {Name: "Fruit", Status: dashboard.DeploymentHealthy}}}
		if status == dashboard.AppDeployFailed {
			pr.Apps["app1"] = dashboard.ServeApplication{Name: "app1", Status: status, Message: "ModuleNotFoundError: No module named 'fruit'"}
		}
	}
	if proxies {
		pr.Proxies = map[string]proxyHealth{}
		for _, p := range e.o.Pods[rc.Name] {
			pr.Proxies[p.Name] = proxyHealth{Healthy: true}
		}
	}
	e.o.Probes[rc.Name] = pr
	return pr
}

// submitted marks a cluster as running the RayService's current config.
func (e *testEnv) submitted(rc *rayv1.RayCluster) {
	cfg, err := parseServeConfig(e.o.Service.Spec.ServeConfigV2)
	if err != nil {
		e.t.Fatal(err)
	}
	rc.Annotations[ServeConfigHashKey] = cfg.Hash
}

// services adds the head and serve Services selecting rc.
func (e *testEnv) services(rc *rayv1.RayCluster) {
	e.o.HeadService = buildHeadService(e.o.Service, rc, raycluster.DefaultBuildConfig())
	e.o.ServeService = buildServeService(e.o.Service, rc)
	e.o.HeadService.UID, e.o.ServeService.UID = "head-svc-uid", "serve-svc-uid"
	e.o.HeadService.ResourceVersion, e.o.ServeService.ResourceVersion = "3", "3"
	e.o.Service.Status.ActiveServiceStatus.RayClusterName = rc.Name
}

func condOf(st rayv1.RayServiceStatuses, t rayv1.RayServiceConditionType) metav1.Condition {
	if c := kit.FindCondition(st.Conditions, string(t)); c != nil {
		return *c
	}
	return metav1.Condition{}
}

func eventReasons(p *plan) []string {
	var out []string
	for _, e := range p.Events {
		out = append(out, e.Reason)
	}
	return out
}

func deletedNames(p *plan) []string {
	var out []string
	for _, d := range p.DeleteClusters {
		out = append(out, d.Cluster.Name)
	}
	return out
}

func TestRayServiceDecideBringUp(t *testing.T) {
	t.Run("new RayService creates its first cluster and says so", func(t *testing.T) {
		e := newEnv(t, testService())
		p := decide(e.o)
		rc := p.CreateCluster
		if rc == nil || rc.Name != "svc-abcde" {
			t.Fatalf("CreateCluster = %v, want svc-abcde", rc)
		}
		if rc.Labels[rayv1.RayOriginatedFromCRNameLabelKey] != "svc" || rc.Labels[rayv1.RayOriginatedFromCRDLabelKey] != "RayService" {
			t.Errorf("labels = %v", rc.Labels)
		}
		if len(rc.OwnerReferences) != 1 || rc.OwnerReferences[0].UID != "rs-uid" || !*rc.OwnerReferences[0].Controller {
			t.Errorf("owner = %+v", rc.OwnerReferences)
		}
		// KubeRay keeps the spec as written: the serve labels are the pod
		// builder's (TestBuildPodRayServiceServeLabel).
		if !equality.Semantic.DeepEqual(rc.Spec.HeadGroupSpec.Template, e.o.Service.Spec.RayClusterSpec.HeadGroupSpec.Template) ||
			!equality.Semantic.DeepEqual(rc.Spec.WorkerGroupSpecs[0].Template, e.o.Service.Spec.RayClusterSpec.WorkerGroupSpecs[0].Template) {
			t.Errorf("pod templates changed: head %v worker %v", rc.Spec.HeadGroupSpec.Template.Labels, rc.Spec.WorkerGroupSpecs[0].Template.Labels)
		}
		if !strings.HasPrefix(rc.Annotations[rayv1.HashWithoutReplicasAndWorkersToDeleteKey], hashPrefix) || rc.Annotations[rayv1.NumWorkerGroupsKey] != "1" {
			t.Errorf("annotations = %v", rc.Annotations)
		}
		if len(p.Submit) != 0 || len(p.CreateServices) != 0 {
			t.Errorf("submitted or created Services before the head is ready: %+v", p)
		}
		st := p.Status
		if st.PendingServiceStatus.RayClusterName != "svc-abcde" || st.ActiveServiceStatus.RayClusterName != "" || st.ObservedGeneration != 1 {
			t.Errorf("status = %+v", st)
		}
		if c := condOf(st, rayv1.RayServiceReady); c.Status != metav1.ConditionFalse || c.Reason != string(rayv1.RayServiceInitializing) {
			t.Errorf("Ready = %+v", c)
		}
		if c := condOf(st, rayv1.UpgradeInProgress); c.Status != metav1.ConditionFalse || c.Reason != string(rayv1.RayServiceInitializing) {
			t.Errorf("UpgradeInProgress = %+v", c)
		}
		if !p.Urgent {
			t.Error("first status is not urgent")
		}
	})

	t.Run("nothing is submitted before the head pod is Running and Ready", func(t *testing.T) {
		e := newEnv(t, testService())
		rc := e.cluster("aaaaa", time.Minute)
		e.pods(rc, "false", "true", false)
		p := decide(e.o)
		if p.CreateCluster != nil || len(p.Submit) != 0 || len(p.PodLabels) != 0 {
			t.Fatalf("plan = %+v", p)
		}
		if m := condOf(p.Status, rayv1.RayServiceReady).Message; !strings.Contains(m, "head pod") {
			t.Errorf("Ready message = %q", m)
		}
	})

	t.Run("head ready and no applications: first submission", func(t *testing.T) {
		e := newEnv(t, testService())
		rc := e.cluster("aaaaa", time.Minute)
		e.pods(rc, "false", "true", true)
		e.probe(rc, "", false)
		p := decide(e.o)
		if len(p.Submit) != 1 || p.Submit[0].Cluster.Name != rc.Name || p.Submit[0].Why != "first submission" {
			t.Fatalf("Submit = %+v", p.Submit)
		}
		if got := string(p.Submit[0].Config.JSON); !strings.Contains(got, `"import_path":"fruit.deployment_graph"`) {
			t.Errorf("config JSON = %s", got)
		}
		if p.RequeueAfter == 0 || p.RequeueAfter > time.Second {
			t.Errorf("RequeueAfter = %v, want a quick look after the submission", p.RequeueAfter)
		}
	})

	t.Run("applications RUNNING and proxy healthy: label, switch and create the Services", func(t *testing.T) {
		e := newEnv(t, testService())
		rc := e.cluster("aaaaa", time.Minute)
		e.pods(rc, "false", "true", true)
		e.submitted(rc)
		e.probe(rc, dashboard.AppDeploying, false)
		e.o.Service.Status = decide(e.o).Status // as written while deploying
		e.probe(rc, dashboard.AppRunning, true)
		p := decide(e.o)
		if len(p.Submit) != 0 {
			t.Errorf("re-submitted an accepted config: %+v", p.Submit)
		}
		if len(p.PodLabels) != 1 || p.PodLabels[0].Pod.Name != rc.Name+"-head-x" || p.PodLabels[0].Value != "true" {
			t.Fatalf("PodLabels = %+v", p.PodLabels)
		}
		if len(p.CreateServices) != 2 {
			t.Fatalf("CreateServices = %d", len(p.CreateServices))
		}
		for _, s := range p.CreateServices {
			if s.Spec.Selector[rayv1.RayClusterLabelKey] != rc.Name {
				t.Errorf("%s selector = %v", s.Name, s.Spec.Selector)
			}
		}
		serve := p.CreateServices[1]
		if serve.Name != "svc-serve-svc" || serve.Spec.Selector[rayv1.RayClusterServingServiceLabelKey] != "true" || serve.Spec.Ports[0].Port != 8000 {
			t.Errorf("serve Service = %+v", serve)
		}
		if p.CreateServices[0].Name != "svc-head-svc" {
			t.Errorf("head Service name = %s", p.CreateServices[0].Name)
		}
		st := p.Status
		if st.ActiveServiceStatus.RayClusterName != rc.Name || st.PendingServiceStatus.RayClusterName != "" {
			t.Errorf("active/pending = %q/%q", st.ActiveServiceStatus.RayClusterName, st.PendingServiceStatus.RayClusterName)
		}
		if a := st.ActiveServiceStatus.Applications["app1"]; a.Status != "RUNNING" || a.Deployments["Fruit"].Status != "HEALTHY" {
			t.Errorf("applications = %+v", st.ActiveServiceStatus.Applications)
		}
		// No endpoints yet: not Ready, still Initializing (KubeRay says
		// ZeroServeEndpoints only once Ready was True), and that is not
		// worth a write of its own.
		if c := condOf(st, rayv1.RayServiceReady); c.Status != metav1.ConditionFalse || c.Reason != string(rayv1.RayServiceInitializing) {
			t.Errorf("Ready = %+v", c)
		}
		if c := condOf(st, rayv1.UpgradeInProgress); c.Status != metav1.ConditionFalse || c.Reason != string(rayv1.NoPendingCluster) {
			t.Errorf("UpgradeInProgress = %+v", c)
		}
		if p.Urgent {
			t.Error("switch to the first cluster without endpoints was urgent; it should be coalesced with Ready")
		}
	})

	t.Run("endpoints make it Ready", func(t *testing.T) {
		e := newEnv(t, testService())
		rc := e.cluster("aaaaa", time.Minute)
		e.pods(rc, "true", "true", true)
		e.submitted(rc)
		e.probe(rc, dashboard.AppRunning, true)
		e.services(rc)
		e.o.ServeEndpoints = 2
		p := decide(e.o)
		if len(p.CreateServices)+len(p.UpdateServices)+len(p.PodLabels)+len(p.Submit) != 0 || p.CreateCluster != nil {
			t.Fatalf("steady state plans writes: %+v", p)
		}
		st := p.Status
		if c := condOf(st, rayv1.RayServiceReady); c.Status != metav1.ConditionTrue || c.Reason != string(rayv1.NonZeroServeEndpoints) {
			t.Errorf("Ready = %+v", c)
		}
		if st.NumServeEndpoints != 2 || st.ServiceStatus != rayv1.Running {
			t.Errorf("numServeEndpoints %d serviceStatus %q", st.NumServeEndpoints, st.ServiceStatus)
		}
		if !p.Urgent {
			t.Error("becoming Ready is urgent")
		}
		if p.RequeueAfter != e.o.Config.SteadyPoll {
			t.Errorf("steady RequeueAfter = %v, want the steady poll %v", p.RequeueAfter, e.o.Config.SteadyPoll)
		}
	})
}

func TestRayServiceDecideServe(t *testing.T) {
	t.Run("head restarted and lost the applications: re-submit", func(t *testing.T) {
		e := newEnv(t, testService())
		rc := e.cluster("aaaaa", time.Minute)
		e.pods(rc, "true", "true", true)
		e.submitted(rc)
		e.services(rc)
		e.probe(rc, "", false)
		p := decide(e.o)
		if len(p.Submit) != 1 || !strings.Contains(p.Submit[0].Why, "lost applications app1") {
			t.Fatalf("Submit = %+v", p.Submit)
		}
	})

	t.Run("applications missing right after our own submission: wait, do not re-submit", func(t *testing.T) {
		e := newEnv(t, testService())
		rc := e.cluster("aaaaa", time.Minute)
		e.pods(rc, "false", "true", true)
		e.submitted(rc)
		e.probe(rc, "", false)
		e.o.Submissions[rc.Name] = &submission{Hash: rc.Annotations[ServeConfigHashKey], At: fixture.T0.Add(-time.Second)}
		if p := decide(e.o); len(p.Submit) != 0 {
			t.Fatalf("Submit = %+v", p.Submit)
		}
	})

	t.Run("after a restart: hash recorded and applications live, nothing is re-submitted", func(t *testing.T) {
		e := newEnv(t, testService())
		rc := e.cluster("aaaaa", time.Minute)
		e.pods(rc, "true", "true", true)
		e.submitted(rc)
		e.services(rc)
		e.probe(rc, dashboard.AppRunning, true)
		if p := decide(e.o); len(p.Submit) != 0 {
			t.Fatalf("Submit = %+v", p.Submit)
		}
	})

	t.Run("serveConfigV2 change alone is submitted to the active cluster, no new cluster", func(t *testing.T) {
		e := newEnv(t, testService())
		rc := e.cluster("aaaaa", time.Minute)
		e.pods(rc, "true", "true", true)
		e.submitted(rc)
		e.services(rc)
		e.probe(rc, dashboard.AppRunning, true)
		e.o.Service.Spec.ServeConfigV2 = strings.Replace(testServeConfig, "/fruit", "/fruits", 1)
		e.o.Service.Generation = 2
		p := decide(e.o)
		if p.CreateCluster != nil || len(p.DeleteClusters) != 0 {
			t.Fatalf("config change touched clusters: %+v", p)
		}
		if len(p.Submit) != 1 || p.Submit[0].Cluster.Name != rc.Name || p.Submit[0].Why != "serveConfigV2 changed" {
			t.Fatalf("Submit = %+v", p.Submit)
		}
	})

	t.Run("formatting-only change of serveConfigV2 is not a change", func(t *testing.T) {
		e := newEnv(t, testService())
		rc := e.cluster("aaaaa", time.Minute)
		e.pods(rc, "true", "true", true)
		e.submitted(rc)
		e.services(rc)
		e.probe(rc, dashboard.AppRunning, true)
		e.o.Service.Spec.ServeConfigV2 = "# comment\napplications:\n- {name: app1, route_prefix: /fruit, import_path: fruit.deployment_graph}\n"
		if p := decide(e.o); len(p.Submit) != 0 {
			t.Fatalf("Submit = %+v", p.Submit)
		}
	})

	t.Run("DEPLOY_FAILED surfaces with its message and never switches traffic", func(t *testing.T) {
		e := newEnv(t, testService())
		rc := e.cluster("aaaaa", time.Minute)
		e.pods(rc, "false", "true", true)
		e.submitted(rc)
		e.probe(rc, dashboard.AppDeployFailed, true)
		p := decide(e.o)
		if len(p.CreateServices) != 0 {
			t.Fatal("switched to a cluster whose application failed")
		}
		a := p.Status.PendingServiceStatus.Applications["app1"]
		if a.Status != rayv1.ApplicationStatusDeployFailed || !strings.Contains(a.Message, "ModuleNotFoundError") {
			t.Errorf("app status = %+v", a)
		}
		if m := condOf(p.Status, rayv1.RayServiceReady).Message; !strings.Contains(m, "DEPLOY_FAILED") {
			t.Errorf("Ready message = %q", m)
		}
		e.o.Service.Status.ObservedGeneration = 1
		e.o.Service.Status.PendingServiceStatus.RayClusterName = rc.Name
		if !statusUrgent(e.o.Service.Status, p.Status) {
			t.Error("a failed application is urgent")
		}
	})

	t.Run("rejected submission waits out its back-off and says why", func(t *testing.T) {
		e := newEnv(t, testService())
		rc := e.cluster("aaaaa", time.Minute)
		e.pods(rc, "false", "true", true)
		e.probe(rc, "", false)
		cfg, _ := parseServeConfig(testServeConfig)
		e.o.Submissions[rc.Name] = &submission{Hash: cfg.Hash, At: fixture.T0.Add(-time.Second), Err: "400 Bad Request: 1 validation error", Attempts: 1}
		p := decide(e.o)
		if len(p.Submit) != 0 {
			t.Fatalf("re-submitted within the back-off: %+v", p.Submit)
		}
		if m := condOf(p.Status, rayv1.RayServiceReady).Message; !strings.Contains(m, "rejected serveConfigV2: 400") {
			t.Errorf("Ready message = %q", m)
		}
		if p.RequeueAfter != time.Second {
			t.Errorf("RequeueAfter = %v, want the rest of the 2 s back-off", p.RequeueAfter)
		}
		e.o.Now = fixture.T0.Add(5 * time.Second)
		if p := decide(e.o); len(p.Submit) != 1 {
			t.Fatalf("no retry after the back-off")
		}
	})

	t.Run("dashboard refusing: old application statuses are kept; reported only after the grace period", func(t *testing.T) {
		e := newEnv(t, testService())
		rc := e.cluster("aaaaa", time.Minute)
		e.pods(rc, "false", "true", true)
		e.submitted(rc)
		e.o.Service.Status.PendingServiceStatus = rayv1.RayServiceStatus{RayClusterName: rc.Name,
			Applications: map[string]rayv1.AppStatus{"app1": {Status: "DEPLOYING"}}}
		e.o.Probes[rc.Name] = &serveProbe{At: fixture.T0, Err: "connection refused", FailingSince: fixture.T0.Add(-2 * time.Second)}
		p := decide(e.o)
		if len(p.Submit) != 0 {
			t.Fatal("submitted to a dashboard that refuses")
		}
		if a := p.Status.PendingServiceStatus.Applications["app1"]; a.Status != "DEPLOYING" {
			t.Errorf("applications = %+v", p.Status.PendingServiceStatus.Applications)
		}
		if m := condOf(p.Status, rayv1.RayServiceReady).Message; strings.Contains(m, "not answering") {
			t.Errorf("reported before the grace period: %q", m)
		}
		if p.RequeueAfter != time.Second {
			t.Errorf("RequeueAfter = %v", p.RequeueAfter)
		}
		e.o.Probes[rc.Name].FailingSince = fixture.T0.Add(-6 * time.Second)
		if m := condOf(decide(e.o).Status, rayv1.RayServiceReady).Message; !strings.Contains(m, "not answering") {
			t.Errorf("Ready message after the grace period = %q", m)
		}
	})

	t.Run("excludeHeadPodFromServeSvc keeps the head out", func(t *testing.T) {
		rs := testService()
		rs.Spec.ExcludeHeadPodFromServeSvc = true
		e := newEnv(t, rs)
		rc := e.cluster("aaaaa", time.Minute)
		e.pods(rc, "true", "false", true)
		e.submitted(rc)
		e.probe(rc, dashboard.AppRunning, true)
		p := decide(e.o)
		got := map[string]string{}
		for _, l := range p.PodLabels {
			got[l.Pod.Name] = l.Value
		}
		if got[rc.Name+"-head-x"] != "false" || got[rc.Name+"-g-worker-y"] != "true" {
			t.Fatalf("labels = %v", got)
		}
	})

	t.Run("a proxy that stops answering loses its serve label", func(t *testing.T) {
		e := newEnv(t, testService())
		rc := e.cluster("aaaaa", time.Minute)
		e.pods(rc, "true", "true", true)
		e.submitted(rc)
		e.services(rc)
		pr := e.probe(rc, dashboard.AppRunning, true)
		pr.Proxies[rc.Name+"-g-worker-y"] = proxyHealth{Err: "connection refused"}
		p := decide(e.o)
		if len(p.PodLabels) != 1 || p.PodLabels[0].Pod.Name != rc.Name+"-g-worker-y" || p.PodLabels[0].Value != "false" {
			t.Fatalf("PodLabels = %+v", p.PodLabels)
		}
	})
}

func TestRayServiceDecideUpgrade(t *testing.T) {
	// serving sets up an active cluster that serves, with Services.
	serving := func(t *testing.T) (*testEnv, *rayv1.RayCluster) {
		e := newEnv(t, testService())
		rc := e.cluster("aaaaa", time.Hour)
		e.pods(rc, "true", "true", true)
		e.submitted(rc)
		e.services(rc)
		e.probe(rc, dashboard.AppRunning, true)
		e.probe(rc, dashboard.AppRunning, true).Active = true
		e.o.ServeEndpoints = 2
		e.o.Service.Status = decide(e.o).Status
		e.o.Service.Generation = 2
		return e, rc
	}

	t.Run("cluster spec change creates a pending cluster, the active keeps serving", func(t *testing.T) {
		e, active := serving(t)
		e.o.Service.Spec.RayClusterSpec.HeadGroupSpec.Template.Spec.Containers[0].Image = "rayproject/ray:2.53.0"
		p := decide(e.o)
		if p.CreateCluster == nil || p.CreateCluster.Name != "svc-abcde" {
			t.Fatalf("CreateCluster = %v", p.CreateCluster)
		}
		if len(p.Submit)+len(p.UpdateServices)+len(p.DeleteClusters)+len(p.UpdateClusters) != 0 {
			t.Fatalf("touched the active cluster: %+v", p)
		}
		st := p.Status
		if st.ActiveServiceStatus.RayClusterName != active.Name || st.PendingServiceStatus.RayClusterName != "svc-abcde" {
			t.Errorf("active/pending = %q/%q", st.ActiveServiceStatus.RayClusterName, st.PendingServiceStatus.RayClusterName)
		}
		if c := condOf(st, rayv1.UpgradeInProgress); c.Status != metav1.ConditionTrue || c.Reason != string(rayv1.BothActivePendingClustersExist) {
			t.Errorf("UpgradeInProgress = %+v", c)
		}
		if c := condOf(st, rayv1.RayServiceReady); c.Status != metav1.ConditionTrue {
			t.Errorf("Ready during the upgrade = %+v", c)
		}
		if !p.Urgent {
			t.Error("not urgent")
		}
	})

	for _, tc := range []struct {
		name   string
		change func(*rayv1.RayClusterSpec)
		want   []string
	}{
		{"replicas change applies in place", func(s *rayv1.RayClusterSpec) { s.WorkerGroupSpecs[0].Replicas = fixture.Ptr(int32(3)) }, []string{"replicas of group g"}},
		{"max change applies in place", func(s *rayv1.RayClusterSpec) { s.WorkerGroupSpecs[0].MaxReplicas = fixture.Ptr(int32(20)) }, []string{"replicas of group g"}},
		{"appended worker group applies in place", func(s *rayv1.RayClusterSpec) {
			s.WorkerGroupSpecs = append(s.WorkerGroupSpecs, fixture.Group("extra", 2))
		}, []string{"added worker group extra"}},
		{"workersToDelete is ignored", func(s *rayv1.RayClusterSpec) { s.WorkerGroupSpecs[0].ScaleStrategy.WorkersToDelete = []string{"x"} }, nil},
		{"tolerations are ignored", func(s *rayv1.RayClusterSpec) {
			s.HeadGroupSpec.Template.Spec.Tolerations = []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists}}
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, active := serving(t)
			tc.change(&e.o.Service.Spec.RayClusterSpec)
			p := decide(e.o)
			if p.CreateCluster != nil {
				t.Fatalf("created a new cluster")
			}
			if tc.want == nil {
				if len(p.UpdateClusters) != 0 {
					t.Fatalf("UpdateClusters = %+v", p.UpdateClusters)
				}
				return
			}
			if len(p.UpdateClusters) != 1 || p.UpdateClusters[0].Cluster.Name != active.Name || strings.Join(p.UpdateClusters[0].What, ",") != strings.Join(tc.want, ",") {
				t.Fatalf("UpdateClusters = %+v", p.UpdateClusters)
			}
			upd := p.UpdateClusters[0].Cluster
			if n := len(e.o.Service.Spec.RayClusterSpec.WorkerGroupSpecs); len(upd.Spec.WorkerGroupSpecs) != n || upd.Annotations[rayv1.NumWorkerGroupsKey] != strconv.Itoa(n) {
				t.Errorf("groups %d, annotation %s", len(upd.Spec.WorkerGroupSpecs), upd.Annotations[rayv1.NumWorkerGroupsKey])
			}
			last := upd.Spec.WorkerGroupSpecs[len(upd.Spec.WorkerGroupSpecs)-1]
			groups := e.o.Service.Spec.RayClusterSpec.WorkerGroupSpecs
			if want := groups[len(groups)-1]; !equality.Semantic.DeepEqual(last, want) {
				t.Errorf("added worker group %+v, want the RayService's as written %+v", last, want)
			}
			// Applied once: the cluster with the update matches and needs nothing more.
			e.o.Clusters[0] = upd
			if p := decide(e.o); len(p.UpdateClusters) != 0 || p.CreateCluster != nil {
				t.Errorf("second pass: %+v", p)
			}
		})
	}

	t.Run("autoscaler-changed replicas are left alone while the RayService's stay the same", func(t *testing.T) {
		e, active := serving(t)
		active.Spec.WorkerGroupSpecs[0].Replicas = fixture.Ptr(int32(7))
		if p := decide(e.o); len(p.UpdateClusters) != 0 {
			t.Fatalf("UpdateClusters = %+v", p.UpdateClusters)
		}
	})

	t.Run("upgradeStrategy None never creates a new cluster", func(t *testing.T) {
		e, _ := serving(t)
		none := rayv1.None
		e.o.Service.Spec.UpgradeStrategy = &rayv1.RayServiceUpgradeStrategy{Type: &none}
		e.o.Service.Spec.RayClusterSpec.HeadGroupSpec.Template.Spec.Containers[0].Image = "rayproject/ray:2.53.0"
		p := decide(e.o)
		if p.CreateCluster != nil || len(p.UpdateClusters) != 0 {
			t.Fatalf("plan = %+v", p)
		}
		if got := eventReasons(p); len(got) != 1 || got[0] != reasonUpgradeSkipped {
			t.Errorf("events = %v", got)
		}
	})

	t.Run("NewClusterWithIncrementalUpgrade is refused: no upgrade starts, the active cluster keeps serving", func(t *testing.T) {
		e, _ := serving(t)
		inc := rayv1.NewClusterWithIncrementalUpgrade
		e.o.Service.Spec.RayClusterSpec.EnableInTreeAutoscaling = fixture.Ptr(true)
		e.o.Service.Spec.UpgradeStrategy = &rayv1.RayServiceUpgradeStrategy{Type: &inc, ClusterUpgradeOptions: &rayv1.ClusterUpgradeOptions{
			StepSizePercent: fixture.Ptr(int32(10)), IntervalSeconds: fixture.Ptr(int32(30)), GatewayClassName: "istio"}}
		p := decide(e.o)
		if p.CreateCluster != nil || len(p.DeleteClusters) != 0 || len(p.UpdateClusters) != 0 || len(p.UpdateServices) != 0 ||
			len(p.DeleteServices) != 0 || len(p.Submit) != 0 {
			t.Fatalf("a refused upgrade changed something: %+v", p)
		}
		if got := eventReasons(p); len(got) != 1 || got[0] != "InvalidRayServiceSpec" {
			t.Errorf("events = %v", got)
		}
		c := kit.FindCondition(p.Status.Conditions, string(rayv1.RayServiceReady))
		if c == nil || c.Reason != string(rayv1.RayServiceValidationFailed) || !strings.Contains(c.Message, "spec.upgradeStrategy.type") {
			t.Errorf("Ready %+v", c)
		}
	})

	// upgrading: the active cluster serves, the pending one has the new spec.
	upgrading := func(t *testing.T) (*testEnv, *rayv1.RayCluster, *rayv1.RayCluster) {
		e, active := serving(t)
		e.o.Service.Spec.RayClusterSpec.HeadGroupSpec.Template.Spec.Containers[0].Image = "rayproject/ray:2.53.0"
		pending := e.cluster("bbbbb", time.Minute)
		e.o.Service.Status = decide(e.o).Status
		return e, active, pending
	}

	t.Run("pending cluster running the config with a healthy proxy: traffic switches, old one retires", func(t *testing.T) {
		e, active, pending := upgrading(t)
		e.pods(pending, "false", "true", true)
		e.submitted(pending)
		e.probe(pending, dashboard.AppRunning, true)
		p := decide(e.o)
		if len(p.UpdateServices) != 2 {
			t.Fatalf("UpdateServices = %d", len(p.UpdateServices))
		}
		for _, s := range p.UpdateServices {
			if s.Spec.Selector[rayv1.RayClusterLabelKey] != pending.Name {
				t.Errorf("%s selector = %v", s.Name, s.Spec.Selector)
			}
			// KubeRay's labels: the selector, not a label, names the cluster.
			if _, has := s.Labels[rayv1.RayClusterLabelKey]; has || s.Labels[rayv1.RayOriginatedFromCRNameLabelKey] != "svc" {
				t.Errorf("%s labels = %v", s.Name, s.Labels)
			}
		}
		if len(p.PodLabels) != 1 || p.PodLabels[0].Pod.Name != pending.Name+"-head-x" || p.PodLabels[0].Value != "true" {
			t.Errorf("PodLabels = %+v", p.PodLabels)
		}
		if len(p.Annotate) != 1 || p.Annotate[0].Cluster.Name != active.Name || *p.Annotate[0].Set[DeleteAfterKey] != fixture.T0.Add(time.Minute).Format(time.RFC3339) {
			t.Fatalf("Annotate = %+v", p.Annotate)
		}
		if len(p.DeleteClusters) != 0 {
			t.Fatalf("deleted at once: %v", deletedNames(p))
		}
		if p.RequeueAfter != time.Minute && p.RequeueAfter > time.Minute {
			t.Errorf("RequeueAfter = %v", p.RequeueAfter)
		}
		st := p.Status
		if st.ActiveServiceStatus.RayClusterName != pending.Name || st.PendingServiceStatus.RayClusterName != "" {
			t.Errorf("active/pending = %q/%q", st.ActiveServiceStatus.RayClusterName, st.PendingServiceStatus.RayClusterName)
		}
		if c := condOf(st, rayv1.UpgradeInProgress); c.Status != metav1.ConditionFalse || c.Reason != string(rayv1.NoPendingCluster) {
			t.Errorf("UpgradeInProgress = %+v", c)
		}
		if !p.Urgent {
			t.Error("switch not urgent")
		}
	})

	t.Run("no switch to a cluster without a serving pod while the active serves", func(t *testing.T) {
		e, _, pending := upgrading(t)
		e.pods(pending, "false", "false", true)
		e.submitted(pending)
		e.probe(pending, dashboard.AppRunning, false)
		p := decide(e.o)
		if len(p.UpdateServices) != 0 || len(p.Annotate) != 0 {
			t.Fatalf("switched: %+v", p)
		}
		if p.RequeueAfter > time.Second {
			t.Errorf("RequeueAfter = %v; a pending cluster without a healthy proxy is watched closely", p.RequeueAfter)
		}
	})

	t.Run("delay 0 deletes the old cluster in the same pass, after the switch", func(t *testing.T) {
		e, active, pending := upgrading(t)
		e.o.Service.Spec.RayClusterDeletionDelaySeconds = fixture.Ptr(int32(0))
		e.pods(pending, "false", "true", true)
		e.submitted(pending)
		e.probe(pending, dashboard.AppRunning, true)
		p := decide(e.o)
		if len(p.UpdateServices) != 2 || len(p.DeleteClusters) != 1 || p.DeleteClusters[0].Cluster.Name != active.Name {
			t.Fatalf("plan: services %d, deleted %v", len(p.UpdateServices), deletedNames(p))
		}
	})

	t.Run("config changed again during the upgrade: the pending cluster gets the new config", func(t *testing.T) {
		e, active, pending := upgrading(t)
		e.pods(pending, "false", "true", true)
		e.submitted(pending)
		e.probe(pending, dashboard.AppRunning, true)
		e.o.Service.Spec.ServeConfigV2 = strings.Replace(testServeConfig, "/fruit", "/fruits", 1)
		p := decide(e.o)
		if len(p.Submit) != 1 || p.Submit[0].Cluster.Name != pending.Name {
			t.Fatalf("Submit = %+v", p.Submit)
		}
		if len(p.UpdateServices) != 0 {
			t.Fatal("switched before the new config runs")
		}
		_ = active
	})

	t.Run("spec changed again before the pending cluster served: it is replaced", func(t *testing.T) {
		e, _, pending := upgrading(t)
		e.o.Service.Spec.RayClusterSpec.HeadGroupSpec.Template.Spec.Containers[0].Image = "rayproject/ray:2.54.0"
		p := decide(e.o)
		if got := deletedNames(p); len(got) != 1 || got[0] != pending.Name {
			t.Fatalf("deleted %v", got)
		}
		if p.CreateCluster == nil {
			t.Fatal("no replacement")
		}
	})

	t.Run("spec reverted during the upgrade: the pending cluster goes", func(t *testing.T) {
		e, _, pending := upgrading(t)
		e.o.Service.Spec.RayClusterSpec.HeadGroupSpec.Template.Spec.Containers[0].Image = "rayproject/ray:2.52.0"
		p := decide(e.o)
		if got := deletedNames(p); len(got) != 1 || got[0] != pending.Name || p.CreateCluster != nil {
			t.Fatalf("deleted %v, created %v", got, p.CreateCluster)
		}
	})

	t.Run("retiring cluster is deleted at its deadline, not before", func(t *testing.T) {
		e, active := serving(t)
		old := e.cluster("zzzzz", 2*time.Hour)
		at := fixture.T0.Add(5 * time.Second).Format(time.RFC3339)
		old.Annotations[DeleteAfterKey] = at
		p := decide(e.o)
		if len(p.DeleteClusters) != 0 {
			t.Fatalf("deleted early: %v", deletedNames(p))
		}
		if p.RequeueAfter != 5*time.Second {
			t.Errorf("RequeueAfter = %v, want the deadline", p.RequeueAfter)
		}
		if p.Status.PendingServiceStatus.RayClusterName != "" || p.Status.ActiveServiceStatus.RayClusterName != active.Name {
			t.Errorf("retiring cluster shows as pending: %+v", p.Status)
		}
		e.o.Now = fixture.T0.Add(6 * time.Second)
		if got := deletedNames(decide(e.o)); len(got) != 1 || got[0] != old.Name {
			t.Fatalf("deleted %v", got)
		}
	})

	t.Run("the serving cluster is never deleted, a stale delete-after is dropped", func(t *testing.T) {
		e, active := serving(t)
		active.Annotations[DeleteAfterKey] = fixture.T0.Add(-time.Minute).Format(time.RFC3339)
		p := decide(e.o)
		if len(p.DeleteClusters) != 0 {
			t.Fatalf("deleted the active cluster")
		}
		if len(p.Annotate) != 1 || p.Annotate[0].Set[DeleteAfterKey] != nil {
			t.Fatalf("Annotate = %+v", p.Annotate)
		}
	})

	t.Run("superseded clusters that never served are deleted at once", func(t *testing.T) {
		e, active := serving(t)
		e.o.Service.Spec.RayClusterSpec.HeadGroupSpec.Template.Spec.Containers[0].Image = "rayproject/ray:2.53.0"
		older := e.cluster("ooooo", 10*time.Minute)
		newer := e.cluster("nnnnn", time.Minute)
		p := decide(e.o)
		if got := deletedNames(p); len(got) != 1 || got[0] != older.Name {
			t.Fatalf("deleted %v", got)
		}
		if p.Status.PendingServiceStatus.RayClusterName != newer.Name || p.Status.ActiveServiceStatus.RayClusterName != active.Name {
			t.Errorf("status = %+v", p.Status)
		}
	})
}

func TestRayServiceDecideLifecycle(t *testing.T) {
	t.Run("invalid spec: nothing is touched, Ready says why", func(t *testing.T) {
		rs := testService()
		rs.Spec.RayClusterSpec.HeadGroupSpec.HeadService = &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "mine"}}
		e := newEnv(t, rs)
		p := decide(e.o)
		if p.CreateCluster != nil {
			t.Fatal("created a cluster from an invalid spec")
		}
		c := condOf(p.Status, rayv1.RayServiceReady)
		if c.Reason != string(rayv1.RayServiceValidationFailed) || !strings.Contains(c.Message, "headService") {
			t.Errorf("Ready = %+v", c)
		}
		if got := eventReasons(p); len(got) != 1 || got[0] != reasonInvalidSpec {
			t.Errorf("events = %v", got)
		}
	})

	t.Run("managed by another controller: skipped", func(t *testing.T) {
		e := newEnv(t, testService())
		e.o.SkipReason = "managed elsewhere"
		if p := decide(e.o); !p.Skip || p.CreateCluster != nil {
			t.Fatalf("plan = %+v", p)
		}
	})

	t.Run("deleted RayService: KubeRay's finalizer is removed, the garbage collector does the rest", func(t *testing.T) {
		rs := testService()
		now := metav1.NewTime(fixture.T0)
		rs.DeletionTimestamp = &now
		rs.Finalizers = []string{rayv1.RayServiceFinalizer}
		p := decide(newEnv(t, rs).o)
		if !p.Skip || !p.RemoveFinalizer {
			t.Fatalf("plan = %+v", p)
		}
	})

	t.Run("suspend deletes everything, then says Suspended; resume brings it back", func(t *testing.T) {
		e := newEnv(t, testService())
		rc := e.cluster("aaaaa", time.Hour)
		e.pods(rc, "true", "true", true)
		e.services(rc)
		e.o.Service.Spec.Suspend = true
		p := decide(e.o)
		if got := deletedNames(p); len(got) != 1 || got[0] != rc.Name || len(p.DeleteServices) != 2 {
			t.Fatalf("deleted %v and %d Services", got, len(p.DeleteServices))
		}
		if c := condOf(p.Status, rayv1.RayServiceSuspending); c.Status != metav1.ConditionTrue {
			t.Errorf("Suspending = %+v", c)
		}
		if c := condOf(p.Status, rayv1.RayServiceReady); c.Status != metav1.ConditionFalse {
			t.Errorf("Ready = %+v", c)
		}
		// Everything gone.
		e.o.Service.Status = p.Status
		e.o.Clusters, e.o.HeadService, e.o.ServeService = nil, nil, nil
		// A resume requested mid-way waits for the suspension to complete.
		e.o.Service.Spec.Suspend = false
		p = decide(e.o)
		if p.CreateCluster != nil {
			t.Fatal("resumed before the suspension completed")
		}
		if c := condOf(p.Status, rayv1.RayServiceSuspended); c.Status != metav1.ConditionTrue || c.Reason != string(rayv1.SuspendComplete) {
			t.Errorf("Suspended = %+v", c)
		}
		e.o.Service.Status = p.Status
		p = decide(e.o)
		if p.CreateCluster == nil {
			t.Fatal("no cluster on resume")
		}
		if c := condOf(p.Status, rayv1.RayServiceSuspended); c.Status != metav1.ConditionFalse || c.Reason != string(rayv1.RayServiceResumed) {
			t.Errorf("Suspended = %+v", c)
		}
		if got := eventReasons(p); !strings.Contains(strings.Join(got, ","), reasonResumed) {
			t.Errorf("events = %v", got)
		}
	})

	t.Run("a cluster KubeRay created with the same spec is adopted, not replaced", func(t *testing.T) {
		e := newEnv(t, testService())
		rc := &rayv1.RayCluster{
			ObjectMeta: metav1.ObjectMeta{Name: "svc-kuber", Namespace: "ns", UID: "k-uid", ResourceVersion: "9",
				Labels:          originLabels(e.o.Service),
				Annotations:     map[string]string{rayv1.HashWithoutReplicasAndWorkersToDeleteKey: "KUBERAYHASHBASE32", rayv1.NumWorkerGroupsKey: "1"},
				OwnerReferences: []metav1.OwnerReference{ownerRef(e.o.Service)}},
			Spec: *e.o.Service.Spec.RayClusterSpec.DeepCopy(),
		}
		e.o.Clusters = append(e.o.Clusters, rc)
		e.pods(rc, "true", "true", true)
		e.services(rc)
		p := decide(e.o)
		if p.CreateCluster != nil {
			t.Fatal("replaced a matching KubeRay cluster")
		}
		if len(p.UpdateClusters) != 1 || !strings.HasPrefix(p.UpdateClusters[0].Cluster.Annotations[rayv1.HashWithoutReplicasAndWorkersToDeleteKey], hashPrefix) {
			t.Fatalf("UpdateClusters = %+v", p.UpdateClusters)
		}
	})
}

// Taking over a RayService from KubeRay: its Services carry KubeRay's labels
// (no ray.io/cluster) and select the cluster KubeRay made active. raydar
// adopts them (owned by the RayService's UID): no create, traffic stays on
// the cluster they select, and labels raydar used to add are not added.
func TestRayServiceDecideAdoptsKubeRayServices(t *testing.T) {
	e := newEnv(t, testService())
	old := e.cluster("kold1", 2*time.Hour)
	cur := e.cluster("kcur1", time.Hour) // newer, same spec: would win without the Services
	for _, rc := range []*rayv1.RayCluster{old, cur} {
		e.pods(rc, "true", "true", true)
		e.submitted(rc)
		e.probe(rc, dashboard.AppRunning, true)
	}
	e.services(old)
	// As KubeRay labels them.
	e.o.HeadService.Labels = map[string]string{rayv1.RayOriginatedFromCRNameLabelKey: "svc", rayv1.RayOriginatedFromCRDLabelKey: "RayService",
		rayv1.RayNodeTypeLabelKey: "head", rayv1.RayIDLabelKey: "svc-head"}
	e.o.ServeService.Labels = map[string]string{rayv1.RayOriginatedFromCRNameLabelKey: "svc", rayv1.RayOriginatedFromCRDLabelKey: "RayService",
		rayv1.RayClusterServingServiceLabelKey: "svc-serve"}
	e.o.Service.Status.ActiveServiceStatus.RayClusterName = ""
	e.o.Probes[old.Name].Active = true
	e.o.ServeEndpoints = 2

	p := decide(e.o)
	if len(p.CreateServices) != 0 {
		t.Fatalf("created %d Services over KubeRay's", len(p.CreateServices))
	}
	for _, s := range p.UpdateServices {
		if s.Spec.Selector[rayv1.RayClusterLabelKey] != old.Name {
			t.Fatalf("%s re-pointed to %v: traffic must stay where KubeRay left it", s.Name, s.Spec.Selector)
		}
	}
	if p.Status.ActiveServiceStatus.RayClusterName != old.Name {
		t.Fatalf("active = %q, want %q (the one the serve Service selects)", p.Status.ActiveServiceStatus.RayClusterName, old.Name)
	}
	for _, s := range []*corev1.Service{buildHeadService(e.o.Service, old, raycluster.DefaultBuildConfig()), buildServeService(e.o.Service, old)} {
		if upd := serviceUpdate(s, s); upd != nil {
			t.Fatal("a Service as built needs an update")
		}
		if _, has := s.Labels[rayv1.RayClusterLabelKey]; has {
			t.Fatalf("%s labelled %v", s.Name, s.Labels)
		}
	}
	// A Service an earlier raydar labelled ray.io/cluster loses the label.
	stale := buildServeService(e.o.Service, old)
	stale.Labels[rayv1.RayClusterLabelKey] = "svc-gone1"
	if upd := serviceUpdate(stale, buildServeService(e.o.Service, old)); upd == nil || upd.Labels[rayv1.RayClusterLabelKey] != "" {
		t.Fatalf("stale ray.io/cluster label kept: %+v", upd)
	}
}

// The serve Service's ports, as KubeRay v1.7.0 builds them: every head
// container port named serve or serve-*, a same-named port of
// spec.serveService in its place; its type from headGroupSpec.serviceType.
func TestRayServiceServeServicePorts(t *testing.T) {
	rs := testService()
	c := &rs.Spec.RayClusterSpec.HeadGroupSpec.Template.Spec.Containers[0]
	c.Ports = []corev1.ContainerPort{{Name: "dashboard", ContainerPort: 8265}, {Name: "serve", ContainerPort: 8000}, {Name: "serve-grpc", ContainerPort: 9000}}
	rs.Spec.RayClusterSpec.HeadGroupSpec.ServiceType = corev1.ServiceTypeNodePort
	h2c := "kubernetes.io/h2c"
	rs.Spec.ServeService = &corev1.Service{Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "serve-grpc", Port: 9000, AppProtocol: &h2c}, {Name: "other", Port: 1}}}}
	rc := buildCluster(rs, "svc-abcde")
	svc := buildServeService(rs, rc)
	if len(svc.Spec.Ports) != 2 || svc.Spec.Ports[0].Name != "serve" || svc.Spec.Ports[0].Port != 8000 ||
		svc.Spec.Ports[1].Name != "serve-grpc" || svc.Spec.Ports[1].AppProtocol == nil || *svc.Spec.Ports[1].AppProtocol != h2c {
		t.Fatalf("ports %+v", svc.Spec.Ports)
	}
	if svc.Spec.Type != corev1.ServiceTypeNodePort {
		t.Fatalf("type %q, want the head group's NodePort", svc.Spec.Type)
	}
}

// The RayService's annotations reach its cluster as KubeRay copies them
// (kubectl's last-applied too), with the operator version annotation.
func TestRayServiceClusterAnnotations(t *testing.T) {
	rs := testService()
	rs.Annotations = map[string]string{corev1.LastAppliedConfigAnnotation: "{}", "team.io/x": "1"}
	rc := buildCluster(rs, "svc-abcde")
	for k, v := range map[string]string{corev1.LastAppliedConfigAnnotation: "{}", "team.io/x": "1", rayv1.KubeRayVersion: kit.KuberayVersionValue} {
		if rc.Annotations[k] != v {
			t.Fatalf("annotation %s=%q, want %q (all: %v)", k, rc.Annotations[k], v, rc.Annotations)
		}
	}
	if rs.Annotations[rayv1.KubeRayVersion] != "" {
		t.Fatal("the RayService's annotations were modified")
	}
}
