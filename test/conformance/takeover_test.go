package conformance

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

var (
	rayClusters = schema.GroupVersionResource{Group: "ray.io", Version: "v1", Resource: "rayclusters"}
	rayJobs     = schema.GroupVersionResource{Group: "ray.io", Version: "v1", Resource: "rayjobs"}
	rayServices = schema.GroupVersionResource{Group: "ray.io", Version: "v1", Resource: "rayservices"}
)

// takeoverTimeout bounds each wait of the takeover tests: generous, for a
// loaded 2-core machine.
const takeoverTimeout = 4 * time.Minute

// TestTakeoverFromKubeRay: objects created and settled by KubeRay, KubeRay
// stopped, raydar started. No pod is deleted or recreated, Services are
// kept and still select what they did, the running RayJob is followed to
// its end and the RayService takes a serve config change in place.
func TestTakeoverFromKubeRay(t *testing.T) {
	if env == nil {
		t.Skip("needs the sandbox and KubeRay's operator (skipped with -short)")
	}
	ns := takeoverFromKubeRay
	env.applyTakeoverObjects(t, ns)
	env.waitSettled(t, ns)
	before := env.record(t, ns)
	for _, cmd := range env.kuberay[:1] {
		stopKubeRay(cmd) // the first KubeRay watches this namespace; TestConformance is done with it
	}
	if _, err := env.startRaydar([]string{ns}, true); err != nil {
		t.Fatal(err)
	}
	env.checkCarriesOn(t, ns, before)
}

// TestTakeoverFromRaydar is the reverse: raydar creates and settles, is
// stopped, and KubeRay takes over.
func TestTakeoverFromRaydar(t *testing.T) {
	if env == nil {
		t.Skip("needs the sandbox and KubeRay's operator (skipped with -short)")
	}
	ns := takeoverFromRaydar
	env.applyTakeoverObjects(t, ns)
	env.waitSettled(t, ns)
	before := env.record(t, ns)
	env.raydar[0]() // the suite's raydar watches this namespace; TestConformance is done with it
	if _, err := env.startKubeRay([]string{ns}); err != nil {
		t.Fatal(err)
	}
	env.checkCarriesOn(t, ns, before)
}

func (s *suite) applyTakeoverObjects(t *testing.T, ns string) {
	t.Helper()
	ms, err := LoadDir("takeover", "takeover/")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		for _, o := range m.Objects {
			obj := o.DeepCopy()
			obj.SetNamespace(ns)
			gvr := map[string]schema.GroupVersionResource{"RayCluster": rayClusters, "RayJob": rayJobs, "RayService": rayServices}[obj.GetKind()]
			if _, err := s.dyn.Resource(gvr).Namespace(ns).Create(context.Background(), obj, metav1.CreateOptions{}); err != nil {
				t.Fatalf("%s: %v", m.Name, err)
			}
		}
	}
}

// waitSettled waits for the cluster ready, the job running and the service
// ready.
func (s *suite) waitSettled(t *testing.T, ns string) {
	t.Helper()
	s.waitFor(t, "RayCluster keep ready", func(ctx context.Context) (bool, error) {
		return s.field(ctx, rayClusters, ns, "keep", "status", "state") == "ready", nil
	})
	s.waitFor(t, "RayJob long RUNNING", func(ctx context.Context) (bool, error) {
		return s.field(ctx, rayJobs, ns, "long", "status", "jobStatus") == "RUNNING", nil
	})
	s.waitFor(t, "RayService serve Ready", func(ctx context.Context) (bool, error) {
		return s.serviceReady(ctx, ns), nil
	})
}

// snapshotBefore is what must survive the takeover.
type snapshotBefore struct {
	pods       map[string]types.UID // name -> UID
	services   map[string]string    // name -> UID and selector
	jobCluster string
	jobID      string
	svcCluster string
}

func (s *suite) record(t *testing.T, ns string) snapshotBefore {
	t.Helper()
	ctx := context.Background()
	b := snapshotBefore{pods: map[string]types.UID{}, services: map[string]string{}}
	pods, err := s.kc.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: rayv1.RayNodeTypeLabelKey})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		b.pods[p.Name] = p.UID
	}
	svcs, err := s.kc.CoreV1().Services(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, sv := range svcs.Items {
		b.services[sv.Name] = serviceIdentity(&sv)
	}
	b.jobCluster = s.field(ctx, rayJobs, ns, "long", "status", "rayClusterName")
	b.jobID = s.field(ctx, rayJobs, ns, "long", "status", "jobId")
	b.svcCluster = s.field(ctx, rayServices, ns, "serve", "status", "activeServiceStatus", "rayClusterName")
	if len(b.pods) == 0 || b.jobCluster == "" || b.svcCluster == "" {
		t.Fatalf("nothing to take over: pods %v, job cluster %q, service cluster %q", b.pods, b.jobCluster, b.svcCluster)
	}
	return b
}

func serviceIdentity(sv *corev1.Service) string {
	keys := make([]string, 0, len(sv.Spec.Selector))
	for k, v := range sv.Spec.Selector {
		keys = append(keys, k+"="+v)
	}
	sort.Strings(keys)
	return string(sv.UID) + " selector " + strings.Join(keys, ",")
}

// checkCarriesOn proves the new operator acts (a scale-up creates exactly
// one pod, the job reaches its end, a serve config change is submitted)
// and that nothing the old one made was replaced.
func (s *suite) checkCarriesOn(t *testing.T, ns string, before snapshotBefore) {
	t.Helper()
	ctx := context.Background()
	headsimPuts := func() int {
		return s.sim.Calls(ns, before.svcCluster, "PUT", "/api/serve/applications/")
	}
	putsBefore := headsimPuts()

	patch := []byte(`[{"op":"replace","path":"/spec/workerGroupSpecs/0/replicas","value":3}]`)
	if _, err := s.dyn.Resource(rayClusters).Namespace(ns).Patch(ctx, "keep", types.JSONPatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	svcPatch := []byte(`{"spec":{"serveConfigV2":"applications:\n  - name: fruit\n    import_path: fruit.deployment_graph\n    route_prefix: /fruit\n    deployments:\n      - name: MangoStand\n        num_replicas: 2\n"}}`)
	if _, err := s.dyn.Resource(rayServices).Namespace(ns).Patch(ctx, "serve", types.MergePatchType, svcPatch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}

	s.waitFor(t, "RayCluster keep scaled to 3 workers", func(ctx context.Context) (bool, error) {
		pods, err := s.kc.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: rayv1.RayClusterLabelKey + "=keep," + rayv1.RayNodeTypeLabelKey + "=worker"})
		if err != nil {
			return false, err
		}
		return len(pods.Items) == 3, nil
	})
	s.waitFor(t, "RayJob long SUCCEEDED and Complete", func(ctx context.Context) (bool, error) {
		return s.field(ctx, rayJobs, ns, "long", "status", "jobStatus") == "SUCCEEDED" &&
			s.field(ctx, rayJobs, ns, "long", "status", "jobDeploymentStatus") == "Complete", nil
	})
	s.waitFor(t, "the changed serve config submitted to the same cluster", func(ctx context.Context) (bool, error) {
		return headsimPuts() > putsBefore, nil
	})

	if got := s.field(ctx, rayJobs, ns, "long", "status", "rayClusterName"); got != before.jobCluster {
		t.Errorf("RayJob's cluster changed from %s to %s", before.jobCluster, got)
	}
	if got := s.field(ctx, rayJobs, ns, "long", "status", "jobId"); got != before.jobID {
		t.Errorf("RayJob's job ID changed from %s to %s", before.jobID, got)
	}
	if got := s.field(ctx, rayServices, ns, "serve", "status", "activeServiceStatus", "rayClusterName"); got != before.svcCluster {
		t.Errorf("RayService's active cluster changed from %s to %s", before.svcCluster, got)
	}
	if !s.serviceReady(ctx, ns) {
		t.Errorf("RayService serve is no longer Ready")
	}
	pods, err := s.kc.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: rayv1.RayNodeTypeLabelKey})
	if err != nil {
		t.Fatal(err)
	}
	now := map[string]types.UID{}
	for _, p := range pods.Items {
		now[p.Name] = p.UID
	}
	for name, uid := range before.pods {
		if now[name] != uid {
			t.Errorf("pod %s was deleted or recreated by the new operator", name)
		}
	}
	svcs, err := s.kc.CoreV1().Services(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	nowSvc := map[string]string{}
	for _, sv := range svcs.Items {
		nowSvc[sv.Name] = serviceIdentity(&sv)
	}
	for name, id := range before.services {
		if nowSvc[name] != id {
			t.Errorf("Service %s changed: was %s, now %q", name, id, nowSvc[name])
		}
	}
	// The serve Service still has ready endpoints.
	slices, err := s.kc.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=serve-serve-svc"})
	if err != nil {
		t.Fatal(err)
	}
	ready := 0
	for _, sl := range slices.Items {
		for _, ep := range sl.Endpoints {
			if ep.Conditions.Ready != nil && *ep.Conditions.Ready {
				ready++
			}
		}
	}
	if ready == 0 {
		t.Errorf("the serve Service serve-serve-svc has no ready endpoint after the takeover")
	}
}

func (s *suite) serviceReady(ctx context.Context, ns string) bool {
	u, err := s.dyn.Resource(rayServices).Namespace(ns).Get(ctx, "serve", metav1.GetOptions{})
	if err != nil {
		return false
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		cm, _ := c.(map[string]any)
		if cm["type"] == "Ready" && cm["status"] == "True" {
			return true
		}
	}
	return false
}

// field reads a string field of a Ray object; "" when absent.
func (s *suite) field(ctx context.Context, gvr schema.GroupVersionResource, ns, name string, path ...string) string {
	u, err := s.dyn.Resource(gvr).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return ""
	}
	v, _, _ := unstructured.NestedString(u.Object, path...)
	return v
}

// waitFor polls cond every second until it holds, failing the test after
// takeoverTimeout with what was awaited.
func (s *suite) waitFor(t *testing.T, what string, cond func(context.Context) (bool, error)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), takeoverTimeout)
	defer cancel()
	var last error
	err := wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		ok, err := cond(ctx)
		if err != nil {
			last = err
			return false, nil
		}
		return ok, nil
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "takeover: gave up waiting for", what)
		t.Fatalf("waiting %s for %s: %v (last error: %v)", takeoverTimeout, what, err, last)
	}
}
