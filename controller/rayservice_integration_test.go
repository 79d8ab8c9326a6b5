package controller

import (
	"context"
	"fmt"
	"maps"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/raydar/raydar/controller/internal/fixture"
	"github.com/raydar/raydar/controller/kit"
	"github.com/raydar/raydar/controller/rayservice"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/kube/raydash"
	"github.com/raydar/raydar/kube/sandbox"
	"github.com/raydar/raydar/kube/sandbox/headsim"
	"github.com/raydar/raydar/rayapi/dashboard"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// Integration tests of the RayService reconciler on the package's sandbox:
// the RayCluster reconciler brings clusters up on kwok's fake nodes, the
// simulated Ray heads (kube/sandbox/headsim) answer the dashboard and the
// Serve proxy of each Ready head pod, and kube-controller-manager's
// EndpointSlice controller fills the serve Service's endpoints.

// rsLong is how long an integration wait may take on a small, busy machine.
const rsLong = 3 * time.Minute

const rsITServeConfig = `applications:
  - name: fruit
    import_path: fruit.deployment_graph
    route_prefix: /fruit
`

// rsHarness is one test's namespace, simulated heads and operator.
type rsHarness struct {
	t   *testing.T
	ns  string
	sim *headsim.Sim
	op  *runningOperator
	// statusWrites counts the operator's writes of RayService statuses
	// (PUT or PATCH of …/rayservices/<name>/status), by RayService name.
	mu           sync.Mutex
	statusWrites map[string]int
}

func newRSHarness(t *testing.T) *rsHarness {
	t.Helper()
	needSandbox(t)
	// As newRJHarness: each RayService test has its own namespace, simulated
	// heads and operator, and mostly waits on Serve's and the upgrade's
	// timers, so they run beside each other.
	t.Parallel()
	h := &rsHarness{t: t, ns: newNamespace(t), statusWrites: map[string]int{}}
	sim, err := headsim.Start(context.Background(), headsim.Options{Config: sb.Config, Namespace: h.ns, SetPodPhase: sb.SetPodPhase})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	h.sim = sim
	h.start()
	return h
}

// start starts an operator with the RayService reconciler (a fresh process's
// worth of memory: nothing carries over from a stopped one).
func (h *rsHarness) start() {
	t := h.t
	t.Helper()
	prefix := "/apis/ray.io/v1/namespaces/" + h.ns + "/rayservices/"
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
	op, err := New(cfg, Options{DisableLeaderElection: true, Namespaces: []string{h.ns}, IgnoreOtherOperators: true,
		SkipControllerNameValidation: true, StatusCoalesceWindow: 200 * time.Millisecond, Logger: testLogger(),
		Dashboards: res, ServeProxyChecker: rayservice.ServeProxyCheckerFromAddressBook(h.sim)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &runningOperator{Operator: op, cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- op.Start(ctx) }()
	t.Cleanup(r.stop)
	h.op = r
}

func (h *rsHarness) writes(name string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.statusWrites[name]
}

// rayService is a RayService of 1 head and 1 worker serving rsITServeConfig.
func (h *rsHarness) rayService(name string, delay int32) *rayv1.RayService {
	rs := &rayv1.RayService{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: h.ns},
		Spec: rayv1.RayServiceSpec{
			ServeConfigV2:                  rsITServeConfig,
			RayClusterDeletionDelaySeconds: fixture.Ptr(delay),
			RayClusterSpec:                 testCluster(h.ns, "unused", 1).Spec,
		},
	}
	if err := cl.Create(context.Background(), rs); err != nil {
		h.t.Fatal(err)
	}
	return rs
}

func (h *rsHarness) get(name string) *rayv1.RayService {
	h.t.Helper()
	rs := &rayv1.RayService{}
	if err := cl.Get(context.Background(), client.ObjectKey{Namespace: h.ns, Name: name}, rs); err != nil {
		h.t.Fatal(err)
	}
	return rs
}

// update applies f to a fresh copy, retrying conflicts.
func (h *rsHarness) update(name string, f func(*rayv1.RayService)) {
	h.t.Helper()
	for range 10 {
		rs := h.get(name)
		f(rs)
		err := cl.Update(context.Background(), rs)
		if err == nil {
			return
		}
		if !apierrors.IsConflict(err) {
			h.t.Fatal(err)
		}
	}
	h.t.Fatal("too many conflicts updating", name)
}

// clusters lists the RayService's RayClusters live, terminating ones excluded.
func (h *rsHarness) clusters(name string) []rayv1.RayCluster {
	h.t.Helper()
	list := &rayv1.RayClusterList{}
	if err := cl.List(context.Background(), list, client.InNamespace(h.ns), client.MatchingLabels{rayv1.RayOriginatedFromCRNameLabelKey: name}); err != nil {
		h.t.Fatal(err)
	}
	var out []rayv1.RayCluster
	for _, c := range list.Items {
		if c.DeletionTimestamp == nil {
			out = append(out, c)
		}
	}
	return out
}

func rsSummary(rs *rayv1.RayService) string {
	st := rs.Status
	var conds []string
	for _, c := range st.Conditions {
		conds = append(conds, fmt.Sprintf("%s=%s(%s: %s)", c.Type, c.Status, c.Reason, c.Message))
	}
	apps := func(s rayv1.RayServiceStatus) string {
		var out []string
		for n, a := range s.Applications {
			out = append(out, n+"="+a.Status)
		}
		sort.Strings(out)
		return s.RayClusterName + "[" + strings.Join(out, ",") + "]"
	}
	return fmt.Sprintf("gen=%d/%d active=%s pending=%s endpoints=%d %s", st.ObservedGeneration, rs.Generation,
		apps(st.ActiveServiceStatus), apps(st.PendingServiceStatus), st.NumServeEndpoints, strings.Join(conds, " "))
}

// waitServing waits until the RayService is Ready, serves from an active
// cluster whose applications all run, has no pending cluster, and has seen
// its latest generation.
func (h *rsHarness) waitServing(name string, timeout time.Duration) *rayv1.RayService {
	h.t.Helper()
	var rs *rayv1.RayService
	eventually(h.t, timeout, name+" serving", func() (bool, string) {
		rs = h.get(name)
		st := rs.Status
		ok := st.ObservedGeneration == rs.Generation && rayv1.IsConditionTrue(st.Conditions, string(rayv1.RayServiceReady)) &&
			st.ActiveServiceStatus.RayClusterName != "" && st.PendingServiceStatus.RayClusterName == "" &&
			len(st.ActiveServiceStatus.Applications) > 0 && st.NumServeEndpoints > 0
		for _, a := range st.ActiveServiceStatus.Applications {
			ok = ok && a.Status == rayv1.ApplicationStatusRunning
		}
		return ok, rsSummary(rs)
	})
	return rs
}

func (h *rsHarness) serveService(name string) *corev1.Service {
	h.t.Helper()
	svc, err := kc.CoreV1().Services(h.ns).Get(context.Background(), name+"-serve-svc", metav1.GetOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	return svc
}

// servePuts counts the Serve submissions a cluster's dashboard received.
func (h *rsHarness) servePuts(cluster string) int {
	return h.sim.Calls(h.ns, cluster, "PUT", "/api/serve/applications/")
}

// checkStatusWrites waits for the status to settle after a bring-up and
// checks the number of writes against the target (≤ 5).
func (h *rsHarness) checkStatusWrites(name string) {
	h.t.Helper()
	// Anything still held (coalesced) or trailing is due within a few
	// seconds; count it too.
	time.Sleep(3 * time.Second)
	n := h.writes(name)
	h.t.Logf("status writes for the bring-up of RayService %s: %d", name, n)
	if n > 5 {
		h.t.Errorf("%d status writes for one bring-up, want at most 5", n)
	}
	if n == 0 {
		h.t.Error("no status write counted: the counter is broken")
	}
}

func TestIntegrationRayServiceBringUp(t *testing.T) {
	h := newRSHarness(t)
	h.rayService("svc", 60)
	rs := h.waitServing("svc", rsLong)
	active := rs.Status.ActiveServiceStatus.RayClusterName

	if !strings.HasPrefix(active, "svc-") || len(active) != len("svc-")+5 {
		t.Errorf("cluster name %q, want svc-<5 random>", active)
	}
	rc := getRC(t, h.ns, active)
	if rc.Labels[rayv1.RayOriginatedFromCRNameLabelKey] != "svc" || rc.Labels[rayv1.RayOriginatedFromCRDLabelKey] != "RayService" {
		t.Errorf("cluster labels %v", rc.Labels)
	}
	if len(rc.OwnerReferences) != 1 || rc.OwnerReferences[0].Kind != "RayService" {
		t.Errorf("cluster owner %+v", rc.OwnerReferences)
	}
	if rc.Annotations[rayservice.ServeConfigHashKey] == "" {
		t.Error("no serve config hash recorded on the cluster")
	}
	app := rs.Status.ActiveServiceStatus.Applications["fruit"]
	if app.Status != rayv1.ApplicationStatusRunning || len(app.Deployments) == 0 {
		t.Errorf("application status %+v", app)
	}
	if rs.Status.ServiceStatus != rayv1.Running {
		t.Errorf("serviceStatus %q", rs.Status.ServiceStatus)
	}

	svc := h.serveService("svc")
	if svc.Spec.Selector[rayv1.RayClusterLabelKey] != active || svc.Spec.Selector[rayv1.RayClusterServingServiceLabelKey] != "true" {
		t.Errorf("serve Service selector %v", svc.Spec.Selector)
	}
	head, err := kc.CoreV1().Services(h.ns).Get(context.Background(), "svc-head-svc", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if head.Spec.Selector[rayv1.RayClusterLabelKey] != active || head.Spec.Selector[rayv1.RayNodeTypeLabelKey] != "head" {
		t.Errorf("head Service selector %v", head.Spec.Selector)
	}
	// KubeRay's labels on both (so raydar sees the Services KubeRay made,
	// which carry no ray.io/cluster, and makes the same).
	if want := map[string]string{rayv1.RayOriginatedFromCRNameLabelKey: "svc", rayv1.RayOriginatedFromCRDLabelKey: "RayService",
		rayv1.RayNodeTypeLabelKey: "head", rayv1.RayIDLabelKey: "svc-head"}; !maps.Equal(head.Labels, want) {
		t.Errorf("head Service labels %v, want %v", head.Labels, want)
	}
	if want := map[string]string{rayv1.RayOriginatedFromCRNameLabelKey: "svc", rayv1.RayOriginatedFromCRDLabelKey: "RayService",
		rayv1.RayClusterServingServiceLabelKey: "svc-serve"}; !maps.Equal(svc.Labels, want) {
		t.Errorf("serve Service labels %v, want %v", svc.Labels, want)
	}
	heads, _ := clusterPods(t, h.ns, active)
	if len(heads) != 1 || heads[0].Labels[rayv1.RayClusterServingServiceLabelKey] != "true" {
		t.Errorf("head pod serve label: %v", heads)
	}
	if got := h.servePuts(active); got != 1 {
		t.Errorf("%d Serve submissions, want 1", got)
	}
	h.checkStatusWrites("svc")
}

func TestIntegrationRayServiceQuietWhileDashboardRefuses(t *testing.T) {
	h := newRSHarness(t)
	h.rayService("svc", 60)
	var cluster string
	eventually(t, rsLong, "the first RayCluster", func() (bool, string) {
		cs := h.clusters("svc")
		if len(cs) == 1 {
			cluster = cs[0].Name
		}
		return cluster != "", fmt.Sprint(len(cs))
	})
	// The dashboard refuses connections from before the head is Ready
	// until well past the grace period after which it is reported.
	if err := h.sim.SetRefuse(h.ns, cluster, true); err != nil {
		t.Fatal(err)
	}
	eventually(t, rsLong, "the head pod Running and Ready", func() (bool, string) {
		heads, _ := clusterPods(t, h.ns, cluster)
		return len(heads) == 1 && kit.IsRunningAndReady(&heads[0]), fmt.Sprint(len(heads))
	})
	time.Sleep(10 * time.Second)
	if m := meta.FindStatusCondition(h.get("svc").Status.Conditions, string(rayv1.RayServiceReady)); m == nil || !strings.Contains(m.Message, "not answering") {
		t.Errorf("Ready while the dashboard refuses: %+v", m)
	}
	if n := h.servePuts(cluster); n != 0 {
		t.Errorf("%d submissions reached a refusing dashboard", n)
	}
	if err := h.sim.SetRefuse(h.ns, cluster, false); err != nil {
		t.Fatal(err)
	}
	h.waitServing("svc", rsLong)
	h.checkStatusWrites("svc")
}

func TestIntegrationRayServiceConfigChange(t *testing.T) {
	h := newRSHarness(t)
	h.rayService("svc", 60)
	active := h.waitServing("svc", rsLong).Status.ActiveServiceStatus.RayClusterName

	h.update("svc", func(rs *rayv1.RayService) {
		rs.Spec.ServeConfigV2 = rsITServeConfig + `  - name: veg
    import_path: veg.deployment_graph
    route_prefix: /veg
`
	})
	eventually(t, rsLong, "application veg RUNNING on the same cluster", func() (bool, string) {
		rs := h.get("svc")
		st := rs.Status.ActiveServiceStatus
		return st.RayClusterName == active && st.Applications["veg"].Status == rayv1.ApplicationStatusRunning &&
			st.Applications["fruit"].Status == rayv1.ApplicationStatusRunning, rsSummary(rs)
	})
	if cs := h.clusters("svc"); len(cs) != 1 || cs[0].Name != active {
		t.Errorf("clusters after a config change: %v", cs)
	}
	if got := h.servePuts(active); got != 2 {
		t.Errorf("%d Serve submissions, want 2 (bring-up and change)", got)
	}

	// More replicas and a worker group appended at the end: applied to the
	// same cluster in place.
	h.update("svc", func(rs *rayv1.RayService) {
		spec := &rs.Spec.RayClusterSpec
		spec.WorkerGroupSpecs[0].Replicas = fixture.Ptr(int32(2))
		extra := *spec.WorkerGroupSpecs[0].DeepCopy()
		extra.GroupName, extra.Replicas = "extra", fixture.Ptr(int32(1))
		spec.WorkerGroupSpecs = append(spec.WorkerGroupSpecs, extra)
	})
	eventually(t, rsLong, "replicas and the appended group applied in place", func() (bool, string) {
		rc := getRC(t, h.ns, active)
		_, workers := clusterPods(t, h.ns, active)
		groups := len(rc.Spec.WorkerGroupSpecs)
		return groups == 2 && *rc.Spec.WorkerGroupSpecs[0].Replicas == 2 && len(workers) == 3,
			fmt.Sprintf("%d groups, %d workers", groups, len(workers))
	})
	if cs := h.clusters("svc"); len(cs) != 1 || cs[0].Name != active {
		t.Errorf("clusters after an in-place change: %d", len(cs))
	}

	// The head restarts (its pod is replaced) and loses the applications:
	// they are submitted again.
	heads, _ := clusterPods(t, h.ns, active)
	if err := kc.CoreV1().Pods(h.ns).Delete(context.Background(), heads[0].Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, rsLong, "the applications re-submitted to the new head", func() (bool, string) {
		rs := h.get("svc")
		return h.servePuts(active) == 3 && rayv1.IsConditionTrue(rs.Status.Conditions, string(rayv1.RayServiceReady)) &&
			rs.Status.ActiveServiceStatus.Applications["veg"].Status == rayv1.ApplicationStatusRunning, fmt.Sprintf("puts=%d %s", h.servePuts(active), rsSummary(rs))
	})
}

// zeroDowntime watches the serve Service and checks, at every change of it
// and every 50 ms, that it selects exactly one cluster and that this cluster
// has at least one Running, Ready pod labelled ray.io/serve=true (read live).
type zeroDowntime struct {
	mu         sync.Mutex
	violations []string
	selected   []string // clusters selected, in order
	checks     atomic.Int32
	stop       func()
	done       chan struct{}
}

func watchZeroDowntime(t *testing.T, ns, svcName string) *zeroDowntime {
	ctx, cancel := context.WithCancel(context.Background())
	z := &zeroDowntime{stop: cancel, done: make(chan struct{})}
	w, err := cl.Watch(ctx, &corev1.ServiceList{}, client.InNamespace(ns))
	if err != nil {
		t.Fatal(err)
	}
	check := func(why string) {
		svc := &corev1.Service{}
		if err := cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: svcName}, svc); err != nil {
			if ctx.Err() == nil {
				z.note(why + ": reading the serve Service: " + err.Error())
			}
			return
		}
		sel := svc.Spec.Selector[rayv1.RayClusterLabelKey]
		z.mu.Lock()
		if len(z.selected) == 0 || z.selected[len(z.selected)-1] != sel {
			z.selected = append(z.selected, sel)
		}
		z.mu.Unlock()
		if sel == "" || svc.Spec.Selector[rayv1.RayClusterServingServiceLabelKey] != "true" {
			z.note(fmt.Sprintf("%s: selector %v does not name one cluster's serving pods", why, svc.Spec.Selector))
			return
		}
		pods := &corev1.PodList{}
		if err := cl.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels(svc.Spec.Selector)); err != nil {
			if ctx.Err() == nil {
				z.note(why + ": listing pods: " + err.Error())
			}
			return
		}
		ready := 0
		for i := range pods.Items {
			if kit.IsRunningAndReady(&pods.Items[i]) {
				ready++
			}
		}
		if ready == 0 {
			z.note(fmt.Sprintf("%s: the serve Service selects cluster %s, which has no ready serving pod", why, sel))
		}
		z.checks.Add(1)
	}
	go func() {
		defer close(z.done)
		defer w.Stop()
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-w.ResultChan():
				if !ok {
					return
				}
				if s, isSvc := ev.Object.(*corev1.Service); isSvc && s.Name == svcName && ev.Type != watch.Bookmark {
					check("watch " + string(ev.Type))
				}
			case <-tick.C:
				check("tick")
			}
		}
	}()
	return z
}

func (z *zeroDowntime) note(s string) {
	z.mu.Lock()
	z.violations = append(z.violations, s)
	z.mu.Unlock()
}

func (z *zeroDowntime) finish(t *testing.T) []string {
	t.Helper()
	z.stop()
	<-z.done
	z.mu.Lock()
	defer z.mu.Unlock()
	if len(z.violations) > 0 {
		t.Errorf("%d zero-downtime violations, first: %v", len(z.violations), z.violations[:min(5, len(z.violations))])
	}
	t.Logf("zero downtime: %d checks, clusters selected in turn: %v", z.checks.Load(), z.selected)
	return z.selected
}

func TestIntegrationRayServiceUpgradeZeroDowntime(t *testing.T) {
	h := newRSHarness(t)
	h.rayService("svc", 4)
	oldCluster := h.waitServing("svc", rsLong).Status.ActiveServiceStatus.RayClusterName
	z := watchZeroDowntime(t, h.ns, "svc-serve-svc")

	h.update("svc", func(rs *rayv1.RayService) {
		for _, c := range []*corev1.Container{&rs.Spec.RayClusterSpec.HeadGroupSpec.Template.Spec.Containers[0],
			&rs.Spec.RayClusterSpec.WorkerGroupSpecs[0].Template.Spec.Containers[0]} {
			c.Image = "rayproject/ray:2.53.0"
		}
	})
	eventually(t, rsLong, "UpgradeInProgress with a pending cluster", func() (bool, string) {
		rs := h.get("svc")
		return rayv1.IsConditionTrue(rs.Status.Conditions, string(rayv1.UpgradeInProgress)) &&
			rs.Status.PendingServiceStatus.RayClusterName != "", rsSummary(rs)
	})
	rs := h.waitServing("svc", rsLong)
	newCluster := rs.Status.ActiveServiceStatus.RayClusterName
	if newCluster == oldCluster {
		t.Fatalf("still served by %s", oldCluster)
	}
	switched := time.Now()
	if got := getRC(t, h.ns, newCluster).Spec.HeadGroupSpec.Template.Spec.Containers[0].Image; got != "rayproject/ray:2.53.0" {
		t.Errorf("new cluster image %s", got)
	}
	old := getRC(t, h.ns, oldCluster)
	if old.Annotations[rayservice.DeleteAfterKey] == "" {
		t.Errorf("old cluster has no %s annotation: %v", rayservice.DeleteAfterKey, old.Annotations)
	}
	// The old cluster stays for the delay (4 s), then goes.
	eventually(t, rsLong, "the old cluster deleted", func() (bool, string) {
		rc := &rayv1.RayCluster{}
		err := cl.Get(context.Background(), client.ObjectKey{Namespace: h.ns, Name: oldCluster}, rc)
		return apierrors.IsNotFound(err) || rc.DeletionTimestamp != nil, fmt.Sprint(err)
	})
	if waited := time.Since(switched); waited < 2*time.Second {
		t.Errorf("old cluster deleted %s after the switch was seen, before its 4 s delay", waited)
	}
	time.Sleep(time.Second)
	if sel := z.finish(t); len(sel) != 2 || sel[0] != oldCluster || sel[1] != newCluster {
		t.Errorf("serve Service selected %v, want %s then %s", sel, oldCluster, newCluster)
	}
	if cs := h.clusters("svc"); len(cs) != 1 || cs[0].Name != newCluster {
		t.Errorf("clusters left: %d", len(cs))
	}
}

func TestIntegrationRayServiceRestart(t *testing.T) {
	h := newRSHarness(t)
	h.rayService("svc", 12)
	oldCluster := h.waitServing("svc", rsLong).Status.ActiveServiceStatus.RayClusterName

	// A restart of raydar re-submits nothing: the hash on the cluster and
	// the applications on the dashboard say the config runs.
	// The new process has decided at least once when the dashboard has
	// seen two of its Serve reads (a pass reads, then submits if it must;
	// passes of one object do not overlap).
	reads := func() int { return h.sim.Calls(h.ns, oldCluster, "GET", dashboard.ServeApplicationsPath) }
	h.op.stop()
	before := reads()
	h.start()
	eventually(t, rsLong, "two Serve reads by the restarted raydar", func() (bool, string) {
		return reads() >= before+2, fmt.Sprintf("%d reads since the restart", reads()-before)
	})
	if got := h.servePuts(oldCluster); got != 1 {
		t.Errorf("%d Serve submissions after a restart, want still 1", got)
	}

	// Upgrade, then restart raydar while the old cluster waits out its
	// 12 s delay: the new process deletes it on time, not at once and not
	// never.
	h.update("svc", func(rs *rayv1.RayService) {
		rs.Spec.RayClusterSpec.HeadGroupSpec.Template.Spec.Containers[0].Image = "rayproject/ray:2.53.0"
	})
	var deadline time.Time
	eventually(t, rsLong, "the switch to a new cluster", func() (bool, string) {
		rc := getRC(t, h.ns, oldCluster)
		v := rc.Annotations[rayservice.DeleteAfterKey]
		if v == "" {
			return false, rsSummary(h.get("svc"))
		}
		var err error
		deadline, err = time.Parse(time.RFC3339, v)
		return err == nil, v
	})
	h.op.stop()
	time.Sleep(time.Second)
	h.start()
	consistently(t, time.Until(deadline.Add(-time.Second)), "the old cluster kept until its deadline", func() (bool, string) {
		rc := getRC(t, h.ns, oldCluster)
		return rc.DeletionTimestamp == nil, "deleted early"
	})
	eventually(t, 30*time.Second, "the old cluster deleted after its deadline", func() (bool, string) {
		rc := &rayv1.RayCluster{}
		err := cl.Get(context.Background(), client.ObjectKey{Namespace: h.ns, Name: oldCluster}, rc)
		return apierrors.IsNotFound(err) || rc.DeletionTimestamp != nil, fmt.Sprint(err)
	})
	if late := time.Since(deadline); late > 15*time.Second {
		t.Errorf("deleted %s after its deadline", late)
	}
	h.waitServing("svc", rsLong)
}

func TestIntegrationRayServiceDeployFailed(t *testing.T) {
	h := newRSHarness(t)
	rs := &rayv1.RayService{
		ObjectMeta: metav1.ObjectMeta{Name: "bad", Namespace: h.ns},
		Spec: rayv1.RayServiceSpec{
			ServeConfigV2:  "applications:\n  - name: broken\n    import_path: failing.app\n    route_prefix: /b\n",
			RayClusterSpec: testCluster(h.ns, "unused", 1).Spec,
		},
	}
	if err := cl.Create(context.Background(), rs); err != nil {
		t.Fatal(err)
	}
	eventually(t, rsLong, "DEPLOY_FAILED in the status", func() (bool, string) {
		rs := h.get("bad")
		a := rs.Status.PendingServiceStatus.Applications["broken"]
		ready := meta.FindStatusCondition(rs.Status.Conditions, string(rayv1.RayServiceReady))
		return a.Status == rayv1.ApplicationStatusDeployFailed && strings.Contains(a.Message, "ModuleNotFoundError") &&
			ready != nil && ready.Status == metav1.ConditionFalse && strings.Contains(ready.Message, "DEPLOY_FAILED"), rsSummary(rs)
	})
	if _, err := kc.CoreV1().Services(h.ns).Get(context.Background(), "bad-serve-svc", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("serve Service for a failed config: %v", err)
	}
}

func TestIntegrationRayServiceSuspendResume(t *testing.T) {
	h := newRSHarness(t)
	h.rayService("svc", 60)
	h.waitServing("svc", rsLong)
	h.update("svc", func(rs *rayv1.RayService) { rs.Spec.Suspend = true })
	eventually(t, rsLong, "Suspended with nothing left", func() (bool, string) {
		rs := h.get("svc")
		_, err := kc.CoreV1().Services(h.ns).Get(context.Background(), "svc-serve-svc", metav1.GetOptions{})
		return rayv1.IsConditionTrue(rs.Status.Conditions, string(rayv1.RayServiceSuspended)) && len(h.clusters("svc")) == 0 &&
			apierrors.IsNotFound(err), rsSummary(rs)
	})
	h.update("svc", func(rs *rayv1.RayService) { rs.Spec.Suspend = false })
	rs := h.waitServing("svc", rsLong)
	if c := meta.FindStatusCondition(rs.Status.Conditions, string(rayv1.RayServiceSuspended)); c == nil || c.Status != metav1.ConditionFalse {
		t.Errorf("Suspended after resume: %+v", c)
	}
}

// A RayService whose head pod runs but is not Ready yet (its readiness
// probe has not passed) gets no call on its dashboard, which answers
// (503) and counts every request before Ready: none until the head is
// Ready, then one Serve submission.
func TestIntegrationRayServiceWaitsForAReadyHead(t *testing.T) {
	h := newRSHarness(t)
	spec := testCluster(h.ns, "unused", 1).Spec
	spec.HeadGroupSpec.Template.Annotations = map[string]string{sandbox.NotReadyAnnotation: "true"}
	rs := &rayv1.RayService{
		ObjectMeta: metav1.ObjectMeta{Name: "svc", Namespace: h.ns},
		Spec:       rayv1.RayServiceSpec{ServeConfigV2: rsITServeConfig, RayClusterSpec: spec},
	}
	if err := cl.Create(context.Background(), rs); err != nil {
		t.Fatal(err)
	}
	var cluster string
	var head corev1.Pod
	eventually(t, rsLong, "the head Running, not Ready, seen so by raydar, its dashboard answering", func() (bool, string) {
		cs := h.clusters("svc")
		if len(cs) != 1 {
			return false, fmt.Sprint(len(cs), " clusters")
		}
		cluster = cs[0].Name
		heads, _ := clusterPods(t, h.ns, cluster)
		if len(heads) != 1 || heads[0].Status.Phase != corev1.PodRunning || kit.IsRunningAndReady(&heads[0]) {
			return false, fmt.Sprint(len(heads), " heads")
		}
		head = heads[0]
		c := meta.FindStatusCondition(cs[0].Status.Conditions, string(rayv1.HeadPodReady))
		_, served := h.sim.DashboardURL(h.ns, cluster)
		return served && c != nil && c.Status == metav1.ConditionFalse, fmt.Sprintf("served %t, HeadPodReady %+v", served, c)
	})
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if n := h.sim.RequestsBeforeReady(h.ns, cluster); n != 0 {
			t.Fatalf("%d dashboard requests before the head is Ready: %v", n, h.sim.AllCalls(h.ns, cluster))
		}
	}
	// The readiness probe passes.
	p, err := kc.CoreV1().Pods(h.ns).Get(context.Background(), head.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady || c.Type == corev1.ContainersReady {
			p.Status.Conditions[i].Status, p.Status.Conditions[i].Reason = corev1.ConditionTrue, ""
		}
	}
	for i := range p.Status.ContainerStatuses {
		p.Status.ContainerStatuses[i].Ready = true
	}
	if _, err := kc.CoreV1().Pods(h.ns).UpdateStatus(context.Background(), p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.waitServing("svc", rsLong)
	if n := h.sim.RequestsBeforeReady(h.ns, cluster); n != 0 {
		t.Errorf("%d dashboard requests before the head was Ready: %v", n, h.sim.AllCalls(h.ns, cluster))
	}
	if n := h.servePuts(cluster); n != 1 {
		t.Errorf("%d Serve submissions, want 1", n)
	}
}
