package tui

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/raydar/raydar/kube/watch"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// incrementalFixture is the fixture with serve/fruit in the middle of a
// NewClusterWithIncrementalUpgrade (step 10% every 60s): 30% of the
// traffic on the old cluster, 70% on the new one, both at target capacity
// 100%, the last step 48s ago; the new cluster is ready, its apps
// RUNNING.
func incrementalFixture() *watch.Store {
	st := fixture()
	o, _ := st.Find(watch.RayCluster, "serve", "fruit-raycluster-fghij")
	rc := o.(*rayv1.RayCluster)
	rc.Status = mkCluster(rc.Namespace, rc.Name, 2*time.Minute, group("serve", 2, 1, 3)).Status
	st.Add(rc)
	o, _ = st.Find(watch.RayService, "serve", "fruit")
	svc := o.(*rayv1.RayService)
	svc.Status.PendingServiceStatus.Applications = svc.Status.ActiveServiceStatus.Applications
	svc.Spec.UpgradeStrategy = &rayv1.RayServiceUpgradeStrategy{Type: ptr.To(rayv1.NewClusterWithIncrementalUpgrade),
		ClusterUpgradeOptions: &rayv1.ClusterUpgradeOptions{StepSizePercent: ptr.To(int32(10)), IntervalSeconds: ptr.To(int32(60)),
			GatewayClassName: "raydar-sandbox"}}
	last := ptr.To(metav1.NewTime(fixedNow.Add(-48 * time.Second)))
	a, p := &svc.Status.ActiveServiceStatus, &svc.Status.PendingServiceStatus
	a.TrafficRoutedPercent, a.TargetCapacity, a.LastTrafficMigratedTime = ptr.To(int32(30)), ptr.To(int32(100)), last
	p.TrafficRoutedPercent, p.TargetCapacity, p.LastTrafficMigratedTime = ptr.To(int32(70)), ptr.To(int32(100)), last
	st.Add(svc)
	return st
}

// TestIncrementalUpgradeSnapshots: a RayService mid incremental upgrade
// shows its split on its page (old cluster -> new cluster, traffic and
// target capacity of each, the next step's countdown) and in the list's
// TRAFFIC column; one upgrading with NewCluster shows neither.
// `go test ./tui -run TestIncrementalUpgradeSnapshots -update` after an
// intended change.
func TestIncrementalUpgradeSnapshots(t *testing.T) {
	const split = "Traffic: fruit-raycluster-abcde 30% (capacity 100%) -> fruit-raycluster-fghij 70% (capacity 100%), next step +10% in 12s"
	t.Run("service_detail", func(t *testing.T) {
		tm, _ := start(t, Options{Store: incrementalFixture()}, 140, 32)
		typeKeys(tm, ":rs", "<enter>", "<enter>")
		screen, _ := finalScreen(t, tm)
		requireSize(t, screen, 140, 32)
		mustContain(t, screen, split, "Upgrade strategy: NewClusterWithIncrementalUpgrade")
		requireGolden(t, screen)
	})
	t.Run("service_detail_80x24", func(t *testing.T) {
		tm, _ := start(t, Options{Store: incrementalFixture()}, 80, 24)
		typeKeys(tm, ":rs", "<enter>", "<enter>")
		screen, _ := finalScreen(t, tm)
		requireSize(t, screen, 80, 24)
		mustContain(t, screen, "Traffic: fruit-raycluster-abcde 30% (capacity 100%) ->", "next step +10% in 12s")
		requireGolden(t, screen)
	})
	t.Run("services", func(t *testing.T) {
		tm, _ := start(t, Options{Store: incrementalFixture()}, 140, 12)
		typeKeys(tm, ":rs", "<enter>")
		screen, _ := finalScreen(t, tm)
		requireSize(t, screen, 140, 12)
		if !strings.Contains(screen, "TRAFFIC") || !strings.Contains(lineWith(screen, "fruit"), "30%->70%") {
			t.Fatalf("no TRAFFIC 30%%->70%% on fruit's row:\n%s", screen)
		}
		if !strings.Contains(lineWith(screen, "llm"), " - ") {
			t.Fatalf("llm, not upgrading, shows a split:\n%s", screen)
		}
		requireGolden(t, screen)
	})
	t.Run("describe", func(t *testing.T) {
		tm, _ := start(t, Options{Store: incrementalFixture(), Actions: DefaultActions(ActionDeps{})}, 160, 30)
		typeKeys(tm, ":rs", "<enter>", "d")
		screen, _ := finalScreen(t, tm)
		mustContain(t, screen, "Traffic:        fruit-raycluster-abcde 30% (capacity 100%) -> fruit-raycluster-fghij 70% (capacity 100%), next step +10% in 12s")
	})
	t.Run("NewCluster upgrade: no split", func(t *testing.T) {
		tm, _ := start(t, Options{}, 140, 32)
		typeKeys(tm, ":rs", "<enter>", "<enter>")
		screen, _ := finalScreen(t, tm)
		mustContain(t, screen, "Upgrade: in progress to fruit-raycluster-fghij")
		if strings.Contains(screen, "Traffic:") || strings.Contains(screen, "capacity") {
			t.Fatalf("a NewCluster upgrade shows a traffic split:\n%s", screen)
		}
		tm, _ = start(t, Options{Actions: DefaultActions(ActionDeps{})}, 160, 30)
		typeKeys(tm, ":rs", "<enter>", "d")
		screen, _ = finalScreen(t, tm)
		mustContain(t, screen, "Describe RayService serve/fruit", "fruit-raycluster-fghij")
		if strings.Contains(screen, "Traffic:") {
			t.Fatalf("describe of a NewCluster upgrade shows a traffic split:\n%s", screen)
		}
	})
}

// TestIncrementalUpgradeCountdown: the next step's countdown moves with
// the page's clock, tick by tick, and says "due" once the interval has
// passed.
func TestIncrementalUpgradeCountdown(t *testing.T) {
	var offset atomic.Int64
	now := func() time.Time { return fixedNow.Add(time.Duration(offset.Load())) }
	tm, _ := start(t, Options{Store: incrementalFixture(), Now: now, Tick: 20 * time.Millisecond}, 140, 32)
	typeKeys(tm, ":rs", "<enter>", "<enter>")
	waitScreen(t, tm, "next step +10% in 12s")
	offset.Store(int64(5 * time.Second))
	waitScreen(t, tm, "next step +10% in 7s")
	offset.Store(int64(12 * time.Second))
	screen := waitScreen(t, tm, "next step +10% due")
	if strings.Contains(screen, " in 0s") {
		t.Fatalf("a countdown at 0:\n%s", screen)
	}
}

// gatewayAPI answers the session's Get for the Gateway API objects: from
// objs by kind/name (NotFound for the others), or err for all; it counts
// the reads.
type gatewayAPI struct {
	mu    sync.Mutex
	objs  map[string]any
	err   error
	reads int
}

func (g *gatewayAPI) get(_ context.Context, obj client.Object) (client.Object, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.reads++
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("not a Gateway API read: %T", obj)
	}
	if g.err != nil {
		return nil, g.err
	}
	o, ok := g.objs[u.GetKind()+"/"+u.GetName()]
	if !ok {
		return nil, apierrors.NewNotFound(schema.GroupResource{Group: "gateway.networking.k8s.io", Resource: strings.ToLower(u.GetKind()) + "s"}, u.GetName())
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
	if err != nil {
		return nil, err
	}
	return &unstructured.Unstructured{Object: m}, nil
}

func (g *gatewayAPI) readCount() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.reads
}

// TestIncrementalUpgradeWhy: the TUI reads the Gateway API objects of a
// RayService that upgrades incrementally, as `raydar why` does, and says
// what holds the upgrade on the service's page and in its WHY cell: a
// Gateway not Programmed (its reason quoted), no GatewayClass of that
// name, no Gateway API at all (not a failure).
func TestIncrementalUpgradeWhy(t *testing.T) {
	class := &gwv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "raydar-sandbox"}}
	gateway := &gwv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: "serve", Name: "fruit-gateway"},
		Status: gwv1.GatewayStatus{Conditions: []metav1.Condition{
			{Type: "Accepted", Status: metav1.ConditionTrue, Reason: "Accepted"},
			{Type: "Programmed", Status: metav1.ConditionFalse, Reason: "AddressNotAssigned", Message: "No addresses have been assigned to the Gateway"}}}}
	cases := []struct {
		name string
		api  *gatewayAPI
		want string
	}{
		{"gateway_not_programmed", &gatewayAPI{objs: map[string]any{"GatewayClass/raydar-sandbox": class, "Gateway/fruit-gateway": gateway}},
			"Why: Gateway fruit-gateway not programmed: AddressNotAssigned (No addresses have been assigned to the Gateway)"},
		{"no_gateway_class", &gatewayAPI{objs: map[string]any{"Gateway/fruit-gateway": gateway}},
			"Why: no GatewayClass raydar-sandbox: no Gateway API implementation serves the upgrade's Gateway"},
		{"no_gateway_api", &gatewayAPI{err: &meta.NoKindMatchError{GroupKind: schema.GroupKind{Group: "gateway.networking.k8s.io", Kind: "GatewayClass"}}},
			"Why: no Gateway API in this cluster: the incremental upgrade has no Gateway to move traffic through"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tm, _ := start(t, Options{Store: incrementalFixture(), Session: Session{Get: c.api.get}, Tick: 20 * time.Millisecond}, 140, 32)
			typeKeys(tm, ":rs", "<enter>")
			list := waitScreen(t, tm, strings.TrimPrefix(c.want, "Why: ")[:10])
			if !strings.Contains(lineWith(list, "fruit"), strings.TrimPrefix(c.want, "Why: ")[:10]) {
				t.Fatalf("fruit's WHY cell does not say it:\n%s", list)
			}
			typeKeys(tm, "<enter>")
			waitScreen(t, tm, c.want)
			screen, _ := finalScreen(t, tm)
			requireGolden(t, screen)
		})
	}
	t.Run("NewCluster services are not read", func(t *testing.T) {
		api := &gatewayAPI{}
		f := &fakeReviews{answer: func(*authorizationv1.ResourceAttributes) (bool, error) { return true, nil }}
		tm, _ := start(t, Options{Session: Session{Get: api.get, Role: f.tick}, Tick: 20 * time.Millisecond}, 140, 32)
		f.waitTicks(t, 5)
		if n := api.readCount(); n != 0 {
			t.Errorf("%d Gateway API reads for a world without incremental upgrades", n)
		}
		_ = tm.Quit()
	})
}
