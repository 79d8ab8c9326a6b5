package status

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

var upgradeNow = time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)

// midUpgrade is a RayService 30% -> 70% into an incremental upgrade
// (step 10% every 60s, surge 70%): the new cluster at target capacity
// 70%, its last step 48s ago.
func midUpgrade() *rayv1.RayService {
	return &rayv1.RayService{
		Spec: rayv1.RayServiceSpec{UpgradeStrategy: &rayv1.RayServiceUpgradeStrategy{
			Type: ptr.To(rayv1.NewClusterWithIncrementalUpgrade),
			ClusterUpgradeOptions: &rayv1.ClusterUpgradeOptions{MaxSurgePercent: ptr.To(int32(70)),
				StepSizePercent: ptr.To(int32(10)), IntervalSeconds: ptr.To(int32(60)), GatewayClassName: "raydar-sandbox"}}},
		Status: rayv1.RayServiceStatuses{
			Conditions: []metav1.Condition{cond(rayv1.UpgradeInProgress, metav1.ConditionTrue, "BothActivePendingClustersExist")},
			ActiveServiceStatus: rayv1.RayServiceStatus{RayClusterName: "svc-old",
				TrafficRoutedPercent: ptr.To(int32(30)), TargetCapacity: ptr.To(int32(100)),
				LastTrafficMigratedTime: ptr.To(metav1.NewTime(upgradeNow.Add(-48 * time.Second)))},
			PendingServiceStatus: rayv1.RayServiceStatus{RayClusterName: "svc-new",
				TrafficRoutedPercent: ptr.To(int32(60)), TargetCapacity: ptr.To(int32(70)),
				LastTrafficMigratedTime: ptr.To(metav1.NewTime(upgradeNow.Add(-48 * time.Second)))},
		},
	}
}

func TestIncrementalUpgradeWords(t *testing.T) {
	tests := []struct {
		name          string
		edit          func(s *rayv1.RayService)
		now           time.Time
		split, words  string
		traffic, none bool
	}{
		{name: "traffic steps: the countdown from the new cluster's last step", edit: func(s *rayv1.RayService) {},
			split: "30%->60%", words: "svc-old 30% (capacity 100%) -> svc-new 60% (capacity 70%), next step +10% in 12s"},
		{name: "the countdown ticks with the clock", edit: func(s *rayv1.RayService) {}, now: upgradeNow.Add(11*time.Second + time.Millisecond),
			split: "30%->60%", words: "svc-old 30% (capacity 100%) -> svc-new 60% (capacity 70%), next step +10% in 1s"},
		{name: "the interval has passed: due", edit: func(s *rayv1.RayService) {}, now: upgradeNow.Add(time.Minute),
			split: "30%->60%", words: "svc-old 30% (capacity 100%) -> svc-new 60% (capacity 70%), next step +10% due"},
		{name: "no step yet: due at once", edit: func(s *rayv1.RayService) {
			s.Status.PendingServiceStatus.LastTrafficMigratedTime = nil
			s.Status.PendingServiceStatus.TrafficRoutedPercent = ptr.To(int32(0))
			s.Status.ActiveServiceStatus.TrafficRoutedPercent = ptr.To(int32(100))
		}, split: "100%->0%", words: "svc-old 100% (capacity 100%) -> svc-new 0% (capacity 70%), next step +10% due"},
		{name: "traffic at the new cluster's capacity, sum over 100: the old cluster's capacity goes down", edit: func(s *rayv1.RayService) {
			s.Status.PendingServiceStatus.TrafficRoutedPercent = ptr.To(int32(70))
		}, split: "30%->70%", words: "svc-old 30% (capacity 100%) -> svc-new 70% (capacity 70%), next: old cluster's target capacity to 30%"},
		{name: "traffic at the new cluster's capacity, sum 100: the new cluster's capacity goes up", edit: func(s *rayv1.RayService) {
			s.Status.PendingServiceStatus.TrafficRoutedPercent = ptr.To(int32(70))
			s.Status.ActiveServiceStatus.TargetCapacity = ptr.To(int32(30))
		}, split: "30%->70%", words: "svc-old 30% (capacity 30%) -> svc-new 70% (capacity 70%), next: new cluster's target capacity to 100%"},
		{name: "all moved", edit: func(s *rayv1.RayService) {
			s.Status.PendingServiceStatus.TrafficRoutedPercent, s.Status.PendingServiceStatus.TargetCapacity = ptr.To(int32(100)), ptr.To(int32(100))
			s.Status.ActiveServiceStatus.TrafficRoutedPercent, s.Status.ActiveServiceStatus.TargetCapacity = ptr.To(int32(0)), ptr.To(int32(0))
		}, split: "0%->100%", words: "svc-old 0% (capacity 0%) -> svc-new 100% (capacity 100%), complete"},
		{name: "rolling back: counts from the old cluster's last step", edit: func(s *rayv1.RayService) {
			s.Status.Conditions = append(s.Status.Conditions, cond(rayv1.RollbackInProgress, metav1.ConditionTrue, "GoalClusterChanged"))
			s.Status.ActiveServiceStatus.LastTrafficMigratedTime = ptr.To(metav1.NewTime(upgradeNow.Add(-30 * time.Second)))
		}, split: "30%->60%", words: "rolling back: svc-old 30% (capacity 100%) -> svc-new 60% (capacity 70%), next step +10% in 30s"},
		{name: "nothing written yet", edit: func(s *rayv1.RayService) {
			s.Status.ActiveServiceStatus = rayv1.RayServiceStatus{RayClusterName: "svc-old"}
			s.Status.PendingServiceStatus = rayv1.RayServiceStatus{RayClusterName: "svc-new"}
		}, split: "-->-", words: "svc-old - (capacity -) -> svc-new - (capacity -), next: new cluster's target capacity to 70%"},
		{name: "NewCluster strategy: no split", edit: func(s *rayv1.RayService) {
			s.Spec.UpgradeStrategy.Type = ptr.To(rayv1.NewCluster)
		}, none: true},
		{name: "no pending cluster: no upgrade", edit: func(s *rayv1.RayService) {
			s.Status.PendingServiceStatus = rayv1.RayServiceStatus{}
		}, none: true},
		{name: "the first cluster (no active one): no upgrade", edit: func(s *rayv1.RayService) {
			s.Status.ActiveServiceStatus = rayv1.RayServiceStatus{}
		}, none: true},
		{name: "no upgrade strategy", edit: func(s *rayv1.RayService) { s.Spec.UpgradeStrategy = nil }, none: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := midUpgrade()
			tt.edit(s)
			now := tt.now
			if now.IsZero() {
				now = upgradeNow
			}
			u, ok := IncrementalUpgrade(s)
			if tt.none {
				if ok || Traffic(s) != None {
					t.Fatalf("an upgrade %+v, TRAFFIC %q; want none", u, Traffic(s))
				}
				return
			}
			if !ok {
				t.Fatal("no incremental upgrade")
			}
			if got := Traffic(s); got != tt.split {
				t.Errorf("TRAFFIC %q, want %q", got, tt.split)
			}
			if got := u.Words(now); got != tt.words {
				t.Errorf("words\n %q, want\n %q", got, tt.words)
			}
		})
	}
}

func TestCountdown(t *testing.T) {
	for d, want := range map[time.Duration]string{
		12 * time.Second:                  "12s",
		11*time.Second + time.Millisecond: "12s",
		119 * time.Second:                 "119s",
		5 * time.Minute:                   "5m",
	} {
		if got := Countdown(d); got != want {
			t.Errorf("Countdown(%s) = %q, want %q", d, got, want)
		}
	}
}
