package rayservice

// decide, the clusters' roles: which cluster serves, which is being
// prepared, which retire, whether the spec asks for a new one, and the
// in-place updates of those kept. Pure, like decide.

import (
	"sort"

	"github.com/raydar/raydar/controller/kit"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// classifyClusters sorts the live clusters into their roles: the active
// one (activeCluster); those with a delete-after annotation retire; the
// newest of the others is pending, and older ones, superseded before they
// served, go. The serving cluster is never deleted: a delete-after
// annotation on it (a switch that did not finish, or was undone) goes.
func (d *deciding) classifyClusters() {
	var live []*rayv1.RayCluster
	for _, c := range d.o.Clusters {
		if c.DeletionTimestamp == nil {
			live = append(live, c)
		}
	}
	d.active = activeCluster(d.o, live, d.incr)
	d.newActive = d.active
	var candidates []*rayv1.RayCluster
	for _, c := range live {
		if c == d.active {
			continue
		}
		if at, ok := deleteAfter(c); ok {
			d.retiring = append(d.retiring, retiree{c, at})
		} else {
			candidates = append(candidates, c)
		}
	}
	sort.Slice(candidates, func(i, j int) bool { return newerCluster(candidates[i], candidates[j]) })
	if len(candidates) > 0 {
		d.pending = candidates[0]
		for _, c := range candidates[1:] {
			d.p.DeleteClusters = append(d.p.DeleteClusters, deletion{c, "superseded by RayCluster " + d.pending.Name + " before it served"})
		}
	}
	if d.active != nil {
		if _, ok := deleteAfter(d.active); ok {
			d.p.Annotate = append(d.p.Annotate, annotation{d.active, map[string]*string{DeleteAfterKey: nil}})
		}
	}
}

// activeCluster finds the serving cluster: the one the serve Service
// selects, else the one the head Service selects, else the one the status
// names — if it still exists. Services are the record of the switch, so a
// restart picks up where the last process left.
//
// With an incremental upgrade there is no RayService serve Service (a
// leftover of another strategy says nothing): the head Service decides.
func activeCluster(o *observed, live []*rayv1.RayCluster, incr bool) *rayv1.RayCluster {
	find := func(name string) *rayv1.RayCluster {
		if name == "" {
			return nil
		}
		for _, c := range live {
			if c.Name == name {
				return c
			}
		}
		return nil
	}
	if s := o.ServeService; s != nil && ownedBy(s, o.Service) && !incr {
		if c := find(s.Spec.Selector[rayv1.RayClusterLabelKey]); c != nil {
			return c
		}
	}
	if s := o.HeadService; s != nil && ownedBy(s, o.Service) {
		if c := find(s.Spec.Selector[rayv1.RayClusterLabelKey]); c != nil {
			return c
		}
	}
	return find(o.Service.Status.ActiveServiceStatus.RayClusterName)
}

// newerCluster orders clusters newest first (creation time, then name).
func newerCluster(a, b *rayv1.RayCluster) bool {
	ta, tb := a.CreationTimestamp.Time, b.CreationTimestamp.Time
	if !ta.Equal(tb) {
		return ta.After(tb)
	}
	return a.Name > b.Name
}

// needNewCluster reports whether the spec asks for a new cluster: none
// serves yet, or rayClusterConfig no longer matches the active one and the
// upgrade strategy replaces clusters. A change the strategy skips is said
// in an Event, once per generation.
func (d *deciding) needNewCluster() bool {
	rs := d.rs
	if d.active == nil {
		return true
	}
	if d.matchesSpec(d.active) {
		return false
	}
	why := upgradeSkipped(rs, d.incr)
	if why == "" {
		return true
	}
	if rs.Generation != rs.Status.ObservedGeneration {
		d.p.eventf(corev1.EventTypeNormal, reasonUpgradeSkipped, "Upgrade",
			"rayClusterConfig changed but %s: RayCluster %s keeps running unchanged", why, d.active.Name)
	}
	return false
}

// upgradeSkipped says why a changed rayClusterConfig brings no new cluster
// ("": it does): upgradeStrategy None, or NewClusterWithIncrementalUpgrade
// with its feature gate off, with which KubeRay v1.6.2 does no
// zero-downtime upgrade either (rayservice_controller.go:637-665
// isZeroDowntimeUpgradeEnabled).
func upgradeSkipped(rs *rayv1.RayService, incr bool) string {
	switch upgrade := rs.Spec.EffectiveUpgradeType(); {
	case upgrade == rayv1.NewClusterWithIncrementalUpgrade && !incr:
		return "upgradeStrategy is NewClusterWithIncrementalUpgrade and the feature gate RayServiceIncrementalUpgrade is off"
	case upgrade == rayv1.None:
		return "upgradeStrategy is None"
	}
	return ""
}

// settlePending keeps the pending cluster, drops it, or makes one, given
// whether the spec asks for a new cluster (needNew). A pending cluster
// that no longer matches the spec, or is no longer needed, goes — unless
// an incremental upgrade already routes traffic to it: raydar does not
// roll back.
func (d *deciding) settlePending(needNew bool) {
	if pending := d.pending; pending != nil {
		carries := d.incr && d.active != nil && ptr.Deref(statusFieldsOf(d.rs.Status, pending).TrafficRoutedPercent, 0) > 0
		switch {
		case carries && (!needNew || !d.matchesSpec(pending)):
			// KubeRay v1.6.2 rolls the traffic back step by step
			// (rayservice_controller.go:2049-2089 reconcileRollbackState);
			// raydar does not: the split stays as it is.
			d.p.eventf(corev1.EventTypeWarning, reasonRollbackUnsupported, "Upgrade",
				"rayClusterConfig no longer matches RayCluster %s, which already serves part of the traffic: raydar does not roll an incremental upgrade back; the traffic split stays until rayClusterConfig matches %s again",
				pending.Name, pending.Name)
			return
		case !needNew && d.active != nil:
			why := "rayClusterConfig matches the active RayCluster " + d.active.Name + " again"
			if !d.matchesSpec(d.active) {
				why = "upgradeStrategy is None"
			}
			d.p.DeleteClusters = append(d.p.DeleteClusters, deletion{pending, why})
			d.pending = nil
		case !d.matchesSpec(pending):
			d.p.DeleteClusters = append(d.p.DeleteClusters, deletion{pending, "rayClusterConfig changed again before it served"})
			d.pending = nil
		}
	}
	if needNew && d.pending == nil {
		d.createPending()
	}
}

// createPending makes the new cluster of the spec the pending one: the
// first cluster, or the one that will replace the active cluster.
func (d *deciding) createPending() {
	rs, active := d.rs, d.active
	name := kit.RayServiceClusterName(rs.Name, d.o.NewSuffix())
	c := buildCluster(rs, name)
	if d.incr && active != nil {
		// The new cluster of an incremental upgrade starts without
		// worker replicas, so that it grows with its target_capacity
		// from minReplicas (rayservice_controller.go:1279-1288).
		for i := range c.Spec.WorkerGroupSpecs {
			c.Spec.WorkerGroupSpecs[i].Replicas = nil
		}
	}
	why := "initial cluster"
	if active != nil {
		why = "rayClusterConfig changed; RayCluster " + active.Name + " keeps serving until it is ready"
	}
	d.p.eventf(corev1.EventTypeNormal, rayv1.EventCreatedRayCluster, "Create", "Creating RayCluster %s (%s)", name, why)
	d.p.CreateCluster = c
	d.pending = c
	d.view(c).New = true
}

// updateInPlace plans the in-place changes (appended worker groups,
// replica changes) of the active and pending clusters built from the
// spec's rayClusterConfig.
func (d *deciding) updateInPlace() {
	for _, c := range []*rayv1.RayCluster{d.active, d.pending} {
		if c == nil || d.view(c).New || !d.matchesSpec(c) {
			continue
		}
		if upd, what := inPlaceUpdate(c, d.rs); upd != nil {
			d.p.UpdateClusters = append(d.p.UpdateClusters, clusterUpdate{upd, what})
		}
	}
}
