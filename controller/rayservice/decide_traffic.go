package rayservice

// decide, traffic: the switch to a ready pending cluster at once (step by
// step with an incremental upgrade: incremental.go), the Services that
// route to the active cluster, and the deletion of the clusters traffic
// left. Pure, like decide.

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// switchTraffic switches all the traffic at once (upgrades other than
// incremental, and the first cluster of an incremental one) when the
// pending cluster is ready and would have serving pods: never from a
// cluster that serves to one that does not.
func (d *deciding) switchTraffic() {
	active, pending := d.active, d.pending
	vp := d.view(pending)
	if vp == nil || vp.New || (d.incr && active != nil) {
		return
	}
	activeServing := 0
	if active != nil {
		activeServing = d.view(active).Serving
	}
	if !vp.Ready || (vp.Serving == 0 && activeServing > 0) {
		return
	}
	if active != nil {
		d.p.eventf(corev1.EventTypeNormal, reasonTrafficSwitched, "Switch",
			"Traffic switched from RayCluster %s to RayCluster %s; %s is deleted after %s",
			active.Name, pending.Name, active.Name, deletionDelay(d.rs))
	} else {
		d.p.eventf(corev1.EventTypeNormal, reasonTrafficSwitched, "Switch",
			"RayCluster %s is ready: the Services now route to it", pending.Name)
	}
	d.switchTo(pending)
}

// switchTo makes the pending cluster c the one that serves after the
// plan, with its incremental status fields; no cluster is pending any
// more. The one that served, if any, retires: its delete-after annotation
// says it goes after rayClusterDeletionDelaySeconds.
func (d *deciding) switchTo(c *rayv1.RayCluster) {
	from := d.newActive
	d.newActive, d.pending = c, nil
	d.fields = incrementalFields{Active: d.fields.Pending}
	if from == nil {
		return
	}
	at := d.o.Now.Add(deletionDelay(d.rs))
	stamp := at.UTC().Format(time.RFC3339)
	d.p.Annotate = dropAnnotate(d.p.Annotate, from)
	d.p.Annotate = append(d.p.Annotate, annotation{from, map[string]*string{DeleteAfterKey: &stamp}})
	d.retiring = append(d.retiring, retiree{from, at})
}

// dropAnnotate removes planned annotation changes of a cluster.
func dropAnnotate(list []annotation, c *rayv1.RayCluster) []annotation {
	out := list[:0]
	for _, a := range list {
		if a.Cluster.Name != c.Name {
			out = append(out, a)
		}
	}
	return out
}

// decideServices makes the Services follow the active cluster: the head
// Service and, except with an incremental upgrade, the serve Service (an
// incremental upgrade has none: the per-cluster ones serve,
// common/service.go:185-189).
func (d *deciding) decideServices() {
	c := d.newActive
	if c == nil {
		return
	}
	planService(d.p, d.o.HeadService, buildHeadService(d.rs, c, d.o.Config.Build), d.rs.UID, "this RayService")
	if !d.incr {
		planService(d.p, d.o.ServeService, buildServeService(d.rs, c), d.rs.UID, "this RayService")
	}
}

// planService creates want when have is absent, else updates have to it
// where they differ. A Service of that name whose controller is not
// ownerUID is left alone, said in a Warning naming owner.
func planService(p *plan, have, want *corev1.Service, ownerUID types.UID, owner string) {
	switch {
	case have == nil:
		p.CreateServices = append(p.CreateServices, want)
	case !controlledBy(have, ownerUID):
		p.eventf(corev1.EventTypeWarning, rayv1.EventUpdatedService, "Update",
			"Service %s exists and is not owned by %s; raydar leaves it alone", have.Name, owner)
	default:
		if upd := serviceUpdate(have, want); upd != nil {
			p.UpdateServices = append(p.UpdateServices, upd)
		}
	}
}

// deleteRetired deletes the retiring clusters whose time came (with a
// delay of 0, in the pass that switched away from them: act switches the
// Services before it deletes anything) and comes back for the others.
func (d *deciding) deleteRetired() {
	now := d.o.Now
	for _, r := range d.retiring {
		if now.Before(r.At) {
			d.p.requeue(r.At.Sub(now))
			continue
		}
		d.p.DeleteClusters = append(d.p.DeleteClusters, deletion{r.C,
			fmt.Sprintf("rayClusterDeletionDelaySeconds (%ds) elapsed since traffic left it", d.rs.Spec.DeletionDelaySeconds())})
	}
}
