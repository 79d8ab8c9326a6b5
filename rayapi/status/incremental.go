package status

import (
	"fmt"
	"math"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/utils/ptr"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// Incremental is where a RayService's NewClusterWithIncrementalUpgrade
// stands, read from its spec and status alone: the old (active) cluster
// and the new (pending) one, the share of traffic the HTTPRoute gives
// each (status trafficRoutedPercent) and Serve's target_capacity of each
// (status targetCapacity), and what moves next.
//
// The steps follow KubeRay v1.6.2 (ray-operator/controllers/ray/
// rayservice_controller.go): traffic moves by stepSizePercent once
// intervalSeconds have passed since lastTrafficMigratedTime of the
// cluster it moves to, up to that cluster's target capacity
// (calculateTrafficRoutedPercent, :754-812); when it has reached it, the
// target capacities move by maxSurgePercent on the next reconcile, the new
// cluster's up while both sum to 100 or less, else the old one's down
// (reconcileServeTargetCapacity, :1498-1587). A rollback
// (RollbackInProgress) runs the same steps towards the old cluster.
type Incremental struct {
	// Old is the active cluster, New the pending one.
	Old, New Share
	// RollingBack: the RollbackInProgress condition is true; traffic
	// moves back to Old.
	RollingBack bool
	// Step is stepSizePercent, Surge maxSurgePercent (KubeRay's default
	// 100 when unset), Interval intervalSeconds; Step nil or Interval
	// unknown (-1) when clusterUpgradeOptions does not set them.
	Step     *int32
	Surge    int32
	Interval time.Duration
	// Since is lastTrafficMigratedTime of the cluster traffic moves to
	// (New, or Old while rolling back); zero before its first step.
	Since time.Time
}

// Share is one cluster's part of an incremental upgrade.
type Share struct {
	Cluster string
	// Traffic is status trafficRoutedPercent, Capacity status
	// targetCapacity; nil until the reconciler wrote them.
	Traffic, Capacity *int32
}

// IncrementalUpgrade is the RayService's incremental upgrade when one is
// in progress: spec.upgradeStrategy.type is
// NewClusterWithIncrementalUpgrade and the status names both an active
// and a pending cluster. false otherwise (no upgrade, another strategy, or
// the service's first cluster, which starts at 100%).
func IncrementalUpgrade(s *rayv1.RayService) (Incremental, bool) {
	us := s.Spec.UpgradeStrategy
	st := &s.Status
	if us == nil || us.Type == nil || *us.Type != rayv1.NewClusterWithIncrementalUpgrade ||
		st.ActiveServiceStatus.RayClusterName == "" || st.PendingServiceStatus.RayClusterName == "" {
		return Incremental{}, false
	}
	share := func(ss *rayv1.RayServiceStatus) Share {
		return Share{Cluster: ss.RayClusterName, Traffic: ss.TrafficRoutedPercent, Capacity: ss.TargetCapacity}
	}
	u := Incremental{Old: share(&st.ActiveServiceStatus), New: share(&st.PendingServiceStatus),
		RollingBack: meta.IsStatusConditionTrue(st.Conditions, string(rayv1.RollbackInProgress)),
		Surge:       100, Interval: -1}
	if o := us.ClusterUpgradeOptions; o != nil {
		u.Step = o.StepSizePercent
		u.Surge = ptr.Deref(o.MaxSurgePercent, 100)
		if o.IntervalSeconds != nil {
			u.Interval = time.Duration(*o.IntervalSeconds) * time.Second
		}
	}
	to := st.PendingServiceStatus.LastTrafficMigratedTime
	if u.RollingBack {
		to = st.ActiveServiceStatus.LastTrafficMigratedTime
	}
	if to != nil {
		u.Since = to.Time
	}
	return u, true
}

// The values KubeRay reads when a field is not written yet
// (calculateTrafficRoutedPercent, reconcileServeTargetCapacity): the old
// cluster has all the traffic and all the capacity, the new one none.
func (u Incremental) oldTraffic() int32  { return ptr.Deref(u.Old.Traffic, 100) }
func (u Incremental) newTraffic() int32  { return ptr.Deref(u.New.Traffic, 0) }
func (u Incremental) oldCapacity() int32 { return ptr.Deref(u.Old.Capacity, 100) }
func (u Incremental) newCapacity() int32 { return ptr.Deref(u.New.Capacity, 0) }

// Split is the traffic split, old cluster's first, in one field (a
// column of raydar get's table): "30%->70%"; None for a share not written
// yet.
func (u Incremental) Split() string {
	return Percent(u.Old.Traffic) + "->" + Percent(u.New.Traffic)
}

// Percent is "70%", or None for nil.
func Percent(p *int32) string {
	if p == nil {
		return None
	}
	return fmt.Sprintf("%d%%", *p)
}

// TrafficMoves reports whether traffic is what moves next (the cluster
// traffic moves to is below its target capacity), rather than a target
// capacity.
func (u Incremental) TrafficMoves() bool {
	if u.RollingBack {
		return u.oldTraffic() != u.oldCapacity()
	}
	return u.newTraffic() != u.newCapacity()
}

// NextStep is when traffic moves next by Step: lastTrafficMigratedTime
// plus intervalSeconds, or the zero time when it may move at once (no
// step yet). ok is false when traffic is not what moves next
// (TrafficMoves) or the options do not say the interval.
func (u Incremental) NextStep() (at time.Time, ok bool) {
	if !u.TrafficMoves() || u.Interval < 0 {
		return time.Time{}, false
	}
	if u.Since.IsZero() {
		return time.Time{}, true
	}
	return u.Since.Add(u.Interval), true
}

// Next says what moves next: "next step +10% in 12s" (or "due" once the
// interval has passed: the reconciler moves it on its next pass, unless
// something holds the upgrade, which `raydar why` names), the target
// capacity that changes once traffic has reached it ("next: new cluster's
// target capacity to 100%"), or "complete" when the new cluster has all
// the traffic and the old one no capacity left.
func (u Incremental) Next(now time.Time) string {
	if !u.RollingBack && u.newTraffic() == 100 && u.newCapacity() == 100 && u.oldCapacity() == 0 ||
		u.RollingBack && u.oldTraffic() == 100 && u.oldCapacity() == 100 && u.newCapacity() == 0 {
		return "complete"
	}
	if u.TrafficMoves() {
		step := "next step"
		if u.Step != nil {
			step += fmt.Sprintf(" +%d%%", *u.Step)
		}
		at, ok := u.NextStep()
		switch {
		case !ok:
			return step
		case at.IsZero() || !at.After(now):
			return step + " due"
		}
		return step + " in " + Countdown(at.Sub(now))
	}
	sum := u.oldCapacity() + u.newCapacity()
	if u.RollingBack {
		if sum > 100 {
			return fmt.Sprintf("next: new cluster's target capacity to %d%%", max(0, u.newCapacity()-u.Surge))
		}
		return fmt.Sprintf("next: old cluster's target capacity to %d%%", min(100, u.oldCapacity()+u.Surge))
	}
	if sum > 100 {
		return fmt.Sprintf("next: old cluster's target capacity to %d%%", max(0, u.oldCapacity()-u.Surge))
	}
	return fmt.Sprintf("next: new cluster's target capacity to %d%%", min(100, u.newCapacity()+u.Surge))
}

// Words is the whole upgrade in one line, as the RayService page says it:
// "rc-old 30% (capacity 100%) -> rc-new 70% (capacity 70%), next step
// +10% in 12s"; "rolling back: " first during a rollback.
func (u Incremental) Words(now time.Time) string {
	s := fmt.Sprintf("%s %s (capacity %s) -> %s %s (capacity %s), %s",
		u.Old.Cluster, Percent(u.Old.Traffic), Percent(u.Old.Capacity),
		u.New.Cluster, Percent(u.New.Traffic), Percent(u.New.Capacity), u.Next(now))
	if u.RollingBack {
		s = "rolling back: " + s
	}
	return s
}

// Traffic is a RayService's TRAFFIC cell: the split of an incremental
// upgrade in progress ("30%->70%"), None otherwise.
func Traffic(s *rayv1.RayService) string {
	if u, ok := IncrementalUpgrade(s); ok {
		return u.Split()
	}
	return None
}

// Countdown is a wait in words: whole seconds, rounded up, under two
// minutes ("12s"), else as ages read ("5m").
func Countdown(d time.Duration) string {
	if d < 2*time.Minute {
		return fmt.Sprintf("%ds", int64(math.Ceil(d.Seconds())))
	}
	return duration.HumanDuration(d)
}
