package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/raydar/raydar/controller/internal/fixture"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/raydar/raydar/kube/sandbox/gatewaysim"
	"github.com/raydar/raydar/rayapi/dashboard"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

var (
	gatewayOnce sync.Once
	gatewayErr  error
)

// installGatewayAPI installs the Gateway API's standard CRDs (the tools
// dir's crds/gateway-api.yaml, hack/build-tools.sh gateway-crds) into the
// shared sandbox, once, and starts the simulated Gateway controller for
// the test.
func installGatewayAPI(t *testing.T) {
	t.Helper()
	needSandbox(t)
	gatewayOnce.Do(func() {
		crds, err := gatewaysim.CRDs(sb.ToolsDir)
		if err != nil {
			gatewayErr = err
			return
		}
		gatewayErr = sb.InstallCRDs(context.Background(), crds...)
	})
	if gatewayErr != nil {
		t.Fatalf("installing the Gateway API's CRDs: %v", gatewayErr)
	}
	sim, err := gatewaysim.Start(context.Background(), gatewaysim.Options{Config: sb.Config, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sim.Close)
}

// routeSplit is an HTTPRoute's backends and weights, "a=50,b=50".
func routeSplit(rt *gwv1.HTTPRoute) string {
	if len(rt.Spec.Rules) == 0 {
		return ""
	}
	var out []string
	for _, b := range rt.Spec.Rules[0].BackendRefs {
		out = append(out, fmt.Sprintf("%s=%d", b.Name, ptr.Deref(b.Weight, 1)))
	}
	return strings.Join(out, ",")
}

// A RayService upgraded with NewClusterWithIncrementalUpgrade on the
// sandbox (simulated heads and Gateway controller): its Gateway and
// HTTPRoute route to the first cluster; after a spec change the HTTPRoute,
// watched through the API, moves the traffic to the new cluster in steps of
// stepSizePercent, no sooner than intervalSeconds apart, the clusters'
// Serve target_capacity following; it ends on the new cluster with 100%
// and the old one deleted.
func TestIntegrationRayServiceIncrementalUpgrade(t *testing.T) {
	installGatewayAPI(t)
	h := newRSHarness(t)
	const interval = 3
	inc := rayv1.NewClusterWithIncrementalUpgrade
	rs := &rayv1.RayService{}
	rs.Name, rs.Namespace = "svc", h.ns
	rs.Spec = rayv1.RayServiceSpec{
		ServeConfigV2:                  rsITServeConfig,
		RayClusterDeletionDelaySeconds: fixture.Ptr(int32(2)),
		RayClusterSpec:                 testCluster(h.ns, "unused", 1).Spec,
		UpgradeStrategy: &rayv1.RayServiceUpgradeStrategy{Type: &inc, ClusterUpgradeOptions: &rayv1.ClusterUpgradeOptions{
			GatewayClassName: gatewaysim.ClassName, StepSizePercent: ptr.To(int32(50)), IntervalSeconds: ptr.To(int32(interval)), MaxSurgePercent: ptr.To(int32(50))}},
	}
	rs.Spec.RayClusterSpec.EnableInTreeAutoscaling = ptr.To(true)
	if err := cl.Create(context.Background(), rs); err != nil {
		t.Fatal(err)
	}
	oldCluster := h.waitServing("svc", rsLong).Status.ActiveServiceStatus.RayClusterName

	// The Gateway and the route to the one cluster.
	gw := &gwv1.Gateway{}
	eventually(t, rsLong, "the Gateway programmed and the route to the first cluster", func() (bool, string) {
		if err := cl.Get(context.Background(), client.ObjectKey{Namespace: h.ns, Name: "svc-gateway"}, gw); err != nil {
			return false, err.Error()
		}
		rt := &gwv1.HTTPRoute{}
		if err := cl.Get(context.Background(), client.ObjectKey{Namespace: h.ns, Name: "svc-httproute"}, rt); err != nil {
			return false, err.Error()
		}
		st := h.get("svc").Status.ActiveServiceStatus
		return len(gw.Status.Addresses) == 1 && routeSplit(rt) == oldCluster+"-serve-svc=100" && ptr.Deref(st.TrafficRoutedPercent, -1) == 100,
			fmt.Sprintf("gateway %+v route %s status %+v", gw.Status.Conditions, routeSplit(rt), st)
	})
	if gw.Spec.GatewayClassName != gatewaysim.ClassName || len(gw.Spec.Listeners) != 1 || gw.Spec.Listeners[0].Port != 80 ||
		len(gw.OwnerReferences) != 1 || gw.OwnerReferences[0].Kind != "RayService" {
		t.Errorf("Gateway %+v", gw)
	}
	if _, err := kc.CoreV1().Services(h.ns).Get(context.Background(), "svc-serve-svc", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("a RayService serve Service with an incremental upgrade: %v", err)
	}

	// Watch the route's splits from here on.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w, err := cl.Watch(ctx, &gwv1.HTTPRouteList{}, client.InNamespace(h.ns))
	if err != nil {
		t.Fatal(err)
	}
	type seen struct {
		split string
		at    time.Time
	}
	var (
		mu     sync.Mutex
		splits []seen
	)
	go func() {
		for ev := range w.ResultChan() {
			if rt, ok := ev.Object.(*gwv1.HTTPRoute); ok && ev.Type != watch.Bookmark && rt.Name == "svc-httproute" {
				mu.Lock()
				if s := routeSplit(rt); len(splits) == 0 || splits[len(splits)-1].split != s {
					splits = append(splits, seen{s, time.Now()})
				}
				mu.Unlock()
			}
		}
	}()

	h.update("svc", func(rs *rayv1.RayService) {
		for _, c := range []*corev1.Container{&rs.Spec.RayClusterSpec.HeadGroupSpec.Template.Spec.Containers[0],
			&rs.Spec.RayClusterSpec.WorkerGroupSpecs[0].Template.Spec.Containers[0]} {
			c.Image = "rayproject/ray:2.53.0"
		}
	})
	var newCluster string
	eventually(t, 2*rsLong, "the upgrade to end on the new cluster", func() (bool, string) {
		rs := h.get("svc")
		st := rs.Status
		if st.PendingServiceStatus.RayClusterName != "" {
			newCluster = st.PendingServiceStatus.RayClusterName
		}
		mu.Lock()
		last := ""
		if len(splits) > 0 {
			last = splits[len(splits)-1].split
		}
		mu.Unlock()
		return newCluster != "" && st.ActiveServiceStatus.RayClusterName == newCluster && st.PendingServiceStatus.RayClusterName == "" &&
				last == newCluster+"-serve-svc=100" && ptr.Deref(st.ActiveServiceStatus.TargetCapacity, -1) == 100 &&
				ptr.Deref(st.ActiveServiceStatus.TrafficRoutedPercent, -1) == 100,
			fmt.Sprintf("%s tc=%v traffic=%v route %s", rsSummary(rs), ptr.Deref(st.ActiveServiceStatus.TargetCapacity, -1),
				ptr.Deref(st.ActiveServiceStatus.TrafficRoutedPercent, -1), last)
	})
	mu.Lock()
	got := append([]seen(nil), splits...)
	mu.Unlock()
	var trail []string
	for _, s := range got {
		trail = append(trail, s.split)
	}
	t.Logf("HTTPRoute splits: %v", trail)
	o, n := oldCluster+"-serve-svc", newCluster+"-serve-svc"
	want := []string{o + "=100," + n + "=0", o + "=50," + n + "=50", o + "=0," + n + "=100", n + "=100"}
	if len(trail) < len(want) || strings.Join(trail[len(trail)-len(want):], " ") != strings.Join(want, " ") {
		t.Fatalf("HTTPRoute splits %v, want (ending with) %v", trail, want)
	}
	steps := got[len(got)-len(want):]
	// The traffic moved by the step no sooner than intervalSeconds apart
	// (less a little: the watch sees each write after the controller made it).
	if d := steps[2].at.Sub(steps[1].at); d < interval*time.Second-500*time.Millisecond {
		t.Errorf("the second step came %s after the first, before intervalSeconds (%ds)", d, interval)
	}
	// The old cluster goes after the deletion delay.
	eventually(t, rsLong, "the old cluster deleted", func() (bool, string) {
		rc := &rayv1.RayCluster{}
		err := cl.Get(context.Background(), client.ObjectKey{Namespace: h.ns, Name: oldCluster}, rc)
		return apierrors.IsNotFound(err) || rc.DeletionTimestamp != nil, fmt.Sprint(err)
	})
	// The new cluster's (simulated) dashboard reports Serve's
	// target_capacity 100, as submitted.
	url, ok := h.sim.DashboardURL(h.ns, newCluster)
	if !ok {
		t.Fatalf("no dashboard for %s", newCluster)
	}
	resp, err := http.Get(url + dashboard.ServeApplicationsPath)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var details dashboard.ServeDetails
	if err := json.NewDecoder(resp.Body).Decode(&details); err != nil {
		t.Fatal(err)
	}
	if details.TargetCapacity == nil || *details.TargetCapacity != 100 {
		t.Errorf("new cluster's Serve target_capacity %v, want 100", details.TargetCapacity)
	}
}
