package tui

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/raydar/raydar/kube/watch"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// incrementalFixture is the fixture with serve/fruit in the middle of a
// NewClusterWithIncrementalUpgrade (step 10% every 60s): 30% of the
// traffic on the old cluster, 70% on the new one, both at target capacity
// 100%, the last step 48s ago.
func incrementalFixture() *watch.Store {
	st := fixture()
	o, _ := st.Find(watch.RayService, "serve", "fruit")
	svc := o.(*rayv1.RayService)
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
	t.Run("NewCluster upgrade: no split", func(t *testing.T) {
		tm, _ := start(t, Options{}, 140, 32)
		typeKeys(tm, ":rs", "<enter>", "<enter>")
		screen, _ := finalScreen(t, tm)
		mustContain(t, screen, "Upgrade: in progress to fruit-raycluster-fghij")
		if strings.Contains(screen, "Traffic:") || strings.Contains(screen, "capacity") {
			t.Fatalf("a NewCluster upgrade shows a traffic split:\n%s", screen)
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
