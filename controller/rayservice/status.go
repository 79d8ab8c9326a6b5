package rayservice

// The RayService's status, computed in one place (computeStatus), and the
// rules that keep it quiet: what counts as a change worth a write
// (statusMaterialEqual), what must be written at once (statusUrgent),
// and what is only carried along (the copies of the clusters' statuses).

import (
	"context"
	"time"

	"github.com/raydar/raydar/controller/kit"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/rayapi/dashboard"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// statusBase is the RayService's current status, deep-copied, as the
// starting point of the new one.
func statusBase(rs *rayv1.RayService) rayv1.RayServiceStatuses {
	st := *rs.Status.DeepCopy()
	st.ObservedGeneration = rs.Generation
	return st
}

// status is the status after the plan, from st. With an incremental
// upgrade the serve endpoints are those of the active and pending
// clusters' own serve Services (rayservice_controller.go:514-538), and the
// clusters' incremental fields are decide's.
func (d *deciding) status(st rayv1.RayServiceStatuses) rayv1.RayServiceStatuses {
	if !d.incr {
		return computeStatus(d.o, st, d.newActive, d.pending, d.views)
	}
	o := *d.o
	o.ServeEndpoints, o.pendingServes = 0, true
	for _, c := range []*rayv1.RayCluster{d.newActive, d.pending} {
		if c != nil {
			o.ServeEndpoints += d.o.Incremental.ClusterEndpoints[c.Name]
		}
	}
	out := computeStatus(&o, st, d.newActive, d.pending, d.views)
	d.fields.Active.apply(&out.ActiveServiceStatus)
	d.fields.Pending.apply(&out.PendingServiceStatus)
	return out
}

// computeStatus is the status after the plan: active is the cluster
// serving after it (nil: none yet), pending the one being prepared.
func computeStatus(o *observed, st rayv1.RayServiceStatuses, active, pending *rayv1.RayCluster, views map[string]*clusterView) rayv1.RayServiceStatuses {
	rs := o.Service
	st.ObservedGeneration = rs.Generation
	st.ActiveServiceStatus = clusterStatus(o, active, views)
	st.PendingServiceStatus = clusterStatus(o, pending, views)
	st.NumServeEndpoints = 0
	if active != nil || o.pendingServes {
		st.NumServeEndpoints = o.ServeEndpoints
	}

	phase := func(c *rayv1.RayCluster) servePhase {
		if v := views[c.Name]; v != nil && v.Phase.Message != "" {
			return v.Phase
		}
		return servePhase{Message: "waiting for the head pod of RayCluster " + c.Name}
	}
	// Ready and UpgradeInProgress follow KubeRay v1.7.0's
	// calculateConditions (rayservice_controller.go): both start
	// Initializing on a RayService without conditions; Ready turns True
	// with serve endpoints and ZeroServeEndpoints when they go, and is
	// otherwise left as it is (Initializing, InitializingTimeout,
	// ValidationFailed, ZeroServeEndpoints); UpgradeInProgress says which
	// clusters exist, except that without an active cluster an
	// initializing (or timed-out) RayService keeps its reason. raydar's
	// messages say more than KubeRay's.
	if len(st.Conditions) == 0 {
		meta.SetStatusCondition(&st.Conditions, newCondition(rs, rayv1.RayServiceReady, false, rayv1.RayServiceInitializing, "RayService is initializing", o.Now))
		meta.SetStatusCondition(&st.Conditions, newCondition(rs, rayv1.UpgradeInProgress, false, rayv1.RayServiceInitializing, "RayService is initializing", o.Now))
	}
	ready := meta.FindStatusCondition(st.Conditions, string(rayv1.RayServiceReady))
	switch {
	case active != nil && st.NumServeEndpoints > 0:
		meta.SetStatusCondition(&st.Conditions, newCondition(rs, rayv1.RayServiceReady, true, rayv1.NonZeroServeEndpoints, "the serve Service routes to RayCluster "+active.Name, o.Now))
	case pending != nil && st.NumServeEndpoints > 0:
		meta.SetStatusCondition(&st.Conditions, newCondition(rs, rayv1.RayServiceReady, true, rayv1.NonZeroServeEndpoints, "the serve Service of RayCluster "+pending.Name+" has ready endpoints", o.Now))
	case ready != nil && ready.Status == metav1.ConditionTrue:
		msg := "the serve Service " + kit.RayServiceServeServiceName(rs) + " has no ready endpoints"
		if active != nil {
			if ph := phase(active); ph.Failed {
				msg += ": " + ph.Message
			}
		}
		meta.SetStatusCondition(&st.Conditions, newCondition(rs, rayv1.RayServiceReady, false, rayv1.ZeroServeEndpoints, msg, o.Now))
	case ready != nil && ready.Reason == string(rayv1.RayServiceInitializing):
		// Still initializing: only the message follows the progress.
		switch {
		case pending != nil:
			ready.Message = kit.Truncate(phase(pending).Message, 1000)
		case active != nil:
			ready.Message = kit.Truncate(phase(active).Message, 1000)
		}
	}
	switch {
	case active != nil && pending != nil:
		msg := "RayCluster " + pending.Name + " is being prepared to replace RayCluster " + active.Name
		if ph := phase(pending); ph.Failed {
			msg += ": " + ph.Message
		}
		meta.SetStatusCondition(&st.Conditions, newCondition(rs, rayv1.UpgradeInProgress, true, rayv1.BothActivePendingClustersExist, msg, o.Now))
	case active != nil:
		meta.SetStatusCondition(&st.Conditions, newCondition(rs, rayv1.UpgradeInProgress, false, rayv1.NoPendingCluster, "Active Ray cluster exists and no pending Ray cluster", o.Now))
	default:
		c := meta.FindStatusCondition(st.Conditions, string(rayv1.UpgradeInProgress))
		if c == nil || (c.Reason != string(rayv1.RayServiceInitializing) && c.Reason != string(rayv1.RayServiceInitializingTimeout)) {
			u := newCondition(rs, rayv1.UpgradeInProgress, false, rayv1.NoActiveCluster,
				"No active Ray cluster exists, and the RayService is not initializing.", o.Now)
			u.Status = metav1.ConditionUnknown
			meta.SetStatusCondition(&st.Conditions, u)
		}
	}
	st.ServiceStatus = rayv1.NotRunning
	if rayv1.IsConditionTrue(st.Conditions, string(rayv1.RayServiceReady)) {
		st.ServiceStatus = rayv1.Running
	}
	return st
}

// clusterStatus describes one cluster: its applications as the dashboard
// last showed them — kept from the previous status while the dashboard
// does not answer, so a refused connection changes nothing — and a copy of
// the cluster's status.
func clusterStatus(o *observed, c *rayv1.RayCluster, views map[string]*clusterView) rayv1.RayServiceStatus {
	if c == nil {
		return rayv1.RayServiceStatus{}
	}
	out := rayv1.RayServiceStatus{RayClusterName: c.Name, RayClusterStatus: *c.Status.DeepCopy()}
	prev := o.Service.Status
	for _, s := range []rayv1.RayServiceStatus{prev.ActiveServiceStatus, prev.PendingServiceStatus} {
		if s.RayClusterName == c.Name {
			out.Applications = s.Applications
			out.TargetCapacity = s.TargetCapacity
			out.TrafficRoutedPercent = s.TrafficRoutedPercent
			out.LastTrafficMigratedTime = s.LastTrafficMigratedTime
		}
	}
	if v := views[c.Name]; v != nil && v.Probe != nil && v.Probe.OK {
		out.Applications = appStatuses(v.Probe.Apps)
	}
	return out
}

// appStatuses converts the dashboard's applications to the status form.
func appStatuses(apps map[string]dashboard.ServeApplication) map[string]rayv1.AppStatus {
	if len(apps) == 0 {
		return nil
	}
	out := make(map[string]rayv1.AppStatus, len(apps))
	for name, a := range apps {
		s := rayv1.AppStatus{Status: string(a.Status), Message: kit.Truncate(a.Message, 2000)}
		if len(a.Deployments) > 0 {
			s.Deployments = make(map[string]rayv1.ServeDeploymentStatus, len(a.Deployments))
			for dn, d := range a.Deployments {
				s.Deployments[dn] = rayv1.ServeDeploymentStatus{Status: string(d.Status), Message: kit.Truncate(d.Message, 1000)}
			}
		}
		out[name] = s
	}
	return out
}

// withoutCarried drops what is only carried along: lastUpdateTime and the
// copies of the clusters' statuses (those change at every step of a
// cluster's bring-up; they are written with the next real change, or after
// a quiet period, never on their own at once).
func withoutCarried(s rayv1.RayServiceStatuses) rayv1.RayServiceStatuses {
	s.LastUpdateTime = nil
	s.ActiveServiceStatus.RayClusterStatus = rayv1.RayClusterStatus{}
	s.PendingServiceStatus.RayClusterStatus = rayv1.RayClusterStatus{}
	return s
}

// statusMaterialEqual compares two statuses, ignoring what is carried.
func statusMaterialEqual(a, b rayv1.RayServiceStatuses) bool {
	return equality.Semantic.DeepEqual(withoutCarried(a), withoutCarried(b))
}

// statusEqual compares two statuses, ignoring only lastUpdateTime and the
// clusters' lastUpdateTime.
func statusEqual(a, b rayv1.RayServiceStatuses) bool {
	a.LastUpdateTime, b.LastUpdateTime = nil, nil
	a.ActiveServiceStatus.RayClusterStatus.LastUpdateTime = nil
	b.ActiveServiceStatus.RayClusterStatus.LastUpdateTime = nil
	a.PendingServiceStatus.RayClusterStatus.LastUpdateTime = nil
	b.PendingServiceStatus.RayClusterStatus.LastUpdateTime = nil
	return equality.Semantic.DeepEqual(a, b)
}

// statusUrgent reports whether a change must be written at once rather
// than coalesced: a new generation was observed, a condition's status
// changed (Ready, UpgradeInProgress, suspend), the spec was found invalid,
// traffic moved to another cluster or (incremental upgrade) changed its
// split or a target_capacity — those fields are the upgrade's memory,
// read back at the next step — or an application failed. Messages,
// application progress and endpoint counts that move while a cluster comes
// up are coalesced.
func statusUrgent(old, cur rayv1.RayServiceStatuses) bool {
	if old.ObservedGeneration != cur.ObservedGeneration {
		return true
	}
	types := map[string]bool{}
	for _, c := range old.Conditions {
		types[c.Type] = true
	}
	for _, c := range cur.Conditions {
		types[c.Type] = true
	}
	for t := range types {
		if kit.CondStatus(old.Conditions, t) != kit.CondStatus(cur.Conditions, t) {
			return true
		}
	}
	if c := meta.FindStatusCondition(cur.Conditions, string(rayv1.RayServiceReady)); c != nil && c.Reason == string(rayv1.RayServiceValidationFailed) {
		if o := meta.FindStatusCondition(old.Conditions, string(rayv1.RayServiceReady)); o == nil || o.Message != c.Message {
			return true
		}
	}
	if old.ActiveServiceStatus.RayClusterName != "" && old.ActiveServiceStatus.RayClusterName != cur.ActiveServiceStatus.RayClusterName {
		return true
	}
	incr := func(o, c rayv1.RayServiceStatus) bool {
		return !equality.Semantic.DeepEqual(o.TargetCapacity, c.TargetCapacity) || !equality.Semantic.DeepEqual(o.TrafficRoutedPercent, c.TrafficRoutedPercent) ||
			!equality.Semantic.DeepEqual(o.LastTrafficMigratedTime, c.LastTrafficMigratedTime)
	}
	if incr(old.ActiveServiceStatus, cur.ActiveServiceStatus) || incr(old.PendingServiceStatus, cur.PendingServiceStatus) {
		return true
	}
	newlyFailed := func(o, c rayv1.RayServiceStatus) bool {
		for name, a := range c.Applications {
			if !rayv1.IsServeApplicationFailed(a.Status) {
				continue
			}
			if o.RayClusterName != c.RayClusterName || o.Applications[name].Status != a.Status || o.Applications[name].Message != a.Message {
				return true
			}
		}
		return false
	}
	return newlyFailed(old.ActiveServiceStatus, cur.ActiveServiceStatus) || newlyFailed(old.PendingServiceStatus, cur.PendingServiceStatus)
}

// carriedClass is the StatusWriter's clock of changes of what is only
// carried (the clusters' status copies).
const carriedClass = "carried"

// statusChange classifies the change from old to cur for the kit's
// StatusWriter: urgent changes go at once; other material changes are held
// for up to coalesce (negative: at once); changes of what is only carried
// are held for carriedRefresh.
func statusChange(old, cur rayv1.RayServiceStatuses, urgent bool, coalesce, carriedRefresh time.Duration) kit.StatusChange {
	switch {
	case statusEqual(old, cur):
		return kit.StatusChange{Unchanged: true}
	case statusMaterialEqual(old, cur):
		return kit.StatusChange{Hold: carriedRefresh, Class: carriedClass}
	case urgent:
		return kit.StatusChange{}
	}
	return kit.StatusChange{Hold: coalesce}
}

// writeStatus writes the status, when statusChange says so, through the
// kit's StatusWriter (with the patch shaped by statusPatch). It returns
// when a held change is due.
func (r *reconciler) writeStatus(ctx context.Context, rs *rayv1.RayService, status rayv1.RayServiceStatuses, urgent bool, now time.Time) (time.Duration, error) {
	obj := rs.DeepCopy()
	t := metav1.NewTime(now)
	status.LastUpdateTime = &t
	obj.Status = status
	ch := statusChange(rs.Status, status, urgent, r.coalesce, r.carriedRefresh)
	return r.status.Write(ctx, rs, obj, ch, now, func(orig, obj client.Object) (client.Patch, error) {
		return statusPatch(orig.(*rayv1.RayService), obj.(*rayv1.RayService))
	})
}

// newCondition builds a RayService condition for meta.SetStatusCondition,
// with now as its transition time (kept by SetStatusCondition unless the
// status changes).
func newCondition(rs *rayv1.RayService, t rayv1.RayServiceConditionType, status bool, reason rayv1.RayServiceConditionReason, msg string, now time.Time) metav1.Condition {
	s := metav1.ConditionFalse
	if status {
		s = metav1.ConditionTrue
	}
	return metav1.Condition{Type: string(t), Status: s, Reason: string(reason), Message: kit.Truncate(msg, 1000), ObservedGeneration: rs.Generation, LastTransitionTime: metav1.NewTime(now)}
}
