package rayservice

import (
	"strings"
	"testing"
	"time"

	"github.com/raydar/raydar/controller/internal/fixture"
	"github.com/raydar/raydar/controller/kit"
	"github.com/raydar/raydar/controller/raycluster"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
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
	if c := meta.FindStatusCondition(st.Conditions, string(t)); c != nil {
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
		if got := eventReasons(p); len(got) != 1 || got[0] != rayv1.EventInvalidRayServiceSpec {
			t.Errorf("events = %v", got)
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
