package history

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/rayapi/kinds"
	"github.com/raydar/raydar/rayapi/status"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// RefOf names a Ray object; ok is false for other types.
func RefOf(obj client.Object) (Ref, bool) {
	k, ok := kinds.Of(obj)
	if !ok || !k.IsRay() {
		return Ref{}, false
	}
	return Ref{Kind: k.Kind, Namespace: obj.GetNamespace(), Name: obj.GetName(), UID: obj.GetUID()}, true
}

// Diff is what changed from old to new of one Ray object (RayCluster,
// RayJob, RayService, RayCronJob), as timeline entries stamped now. old nil
// is a creation, new nil a deletion (old is then the last state known).
// w says who wrote new's spec (Authors.At); changes of the spec carry it.
// Pure.
func Diff(old, new client.Object, w Written, now time.Time) []Entry {
	d := differ{now: now, w: w}
	switch {
	case old == nil && new == nil:
		return nil
	case old == nil:
		ref, ok := RefOf(new)
		if !ok {
			return nil
		}
		d.ref = ref
		d.add(Entry{What: WhatCreated, To: kinds.StatusOf(new), Author: w.Spec})
		return d.out
	case new == nil:
		ref, ok := RefOf(old)
		if !ok {
			return nil
		}
		d.ref = ref
		d.add(Entry{What: WhatDeleted, From: kinds.StatusOf(old)})
		return d.out
	}
	ref, ok := RefOf(new)
	if !ok {
		return nil
	}
	d.ref = ref
	switch n := new.(type) {
	case *rayv1.RayCluster:
		o, ok := old.(*rayv1.RayCluster)
		if !ok {
			return nil
		}
		d.cluster(o, n)
	case *rayv1.RayJob:
		o, ok := old.(*rayv1.RayJob)
		if !ok {
			return nil
		}
		d.job(o, n)
	case *rayv1.RayService:
		o, ok := old.(*rayv1.RayService)
		if !ok {
			return nil
		}
		d.service(o, n)
	case *rayv1.RayCronJob:
		o, ok := old.(*rayv1.RayCronJob)
		if !ok {
			return nil
		}
		d.cronJob(o, n)
	}
	return d.out
}

type differ struct {
	now time.Time
	ref Ref
	w   Written
	out []Entry
}

func (d *differ) add(e Entry) {
	e.Time, e.Ref = d.now, d.ref
	e.Message = truncate(e.Message, MaxMessage)
	d.out = append(d.out, e)
}

// scaleAuthor is the writer of a RayCluster's worker groups, else of its spec.
func (d *differ) scaleAuthor() *Author {
	if d.w.Scale != nil {
		return d.w.Scale
	}
	return d.w.Spec
}

func (d *differ) cluster(o, n *rayv1.RayCluster) {
	og := map[string]*rayv1.WorkerGroupSpec{}
	for i := range o.Spec.WorkerGroupSpecs {
		og[o.Spec.WorkerGroupSpecs[i].GroupName] = &o.Spec.WorkerGroupSpecs[i]
	}
	seen := map[string]bool{}
	for i := range n.Spec.WorkerGroupSpecs {
		ng := &n.Spec.WorkerGroupSpecs[i]
		seen[ng.GroupName] = true
		g, ok := og[ng.GroupName]
		if !ok {
			d.add(Entry{What: WhatGroupAdded, Subject: ng.GroupName, To: replicas(ng.Replicas), Author: d.scaleAuthor()})
			continue
		}
		if a, b := ptr.Deref(g.Replicas, 0), ptr.Deref(ng.Replicas, 0); a != b || (g.Replicas == nil) != (ng.Replicas == nil) {
			d.add(Entry{What: WhatReplicas, Subject: ng.GroupName, From: replicas(g.Replicas), To: replicas(ng.Replicas), Author: d.scaleAuthor()})
		}
		if added := newNames(g.ScaleStrategy.WorkersToDelete, ng.ScaleStrategy.WorkersToDelete); len(added) > 0 {
			d.add(Entry{What: WhatWorkersToDelete, Subject: ng.GroupName, To: strings.Join(added, ", "), Author: d.scaleAuthor()})
		}
		if g.IsSuspended() != ng.IsSuspended() {
			d.add(Entry{What: WhatSuspend, Subject: ng.GroupName, From: strconv.FormatBool(g.IsSuspended()), To: strconv.FormatBool(ng.IsSuspended()), Author: d.scaleAuthor()})
		}
	}
	for _, g := range o.Spec.WorkerGroupSpecs {
		if !seen[g.GroupName] {
			d.add(Entry{What: WhatGroupRemoved, Subject: g.GroupName, From: replicas(g.Replicas), Author: d.scaleAuthor()})
		}
	}
	if a, b := o.Spec.IsSuspended(), n.Spec.IsSuspended(); a != b {
		d.add(Entry{What: WhatSuspend, From: strconv.FormatBool(a), To: strconv.FormatBool(b), Author: d.w.Spec})
	}
	d.state(status.Cluster(o), status.Cluster(n), n.Status.Reason)
	d.conditions(o.Status.Conditions, n.Status.Conditions)
}

func (d *differ) job(o, n *rayv1.RayJob) {
	if o.Spec.Suspend != n.Spec.Suspend {
		d.add(Entry{What: WhatSuspend, From: strconv.FormatBool(o.Spec.Suspend), To: strconv.FormatBool(n.Spec.Suspend), Author: d.w.Spec})
	}
	if a, b := status.Job(o), status.Job(n); a != b {
		d.add(Entry{What: WhatJobStatus, From: a, To: b, Reason: string(n.Status.Reason), Message: n.Status.Message})
	}
	if a, b := status.JobDeployment(o), status.JobDeployment(n); a != b {
		d.add(Entry{What: WhatDeploymentStatus, From: a, To: b, Reason: string(n.Status.Reason), Message: n.Status.Message})
	}
	d.conditions(o.Status.Conditions, n.Status.Conditions)
}

func (d *differ) service(o, n *rayv1.RayService) {
	if a, b := o.Spec.Suspend, n.Spec.Suspend; a != b {
		d.add(Entry{What: WhatSuspend, From: strconv.FormatBool(a), To: strconv.FormatBool(b), Author: d.w.Spec})
	}
	d.state(status.Service(o), status.Service(n), "")
	d.conditions(o.Status.Conditions, n.Status.Conditions)
}

func (d *differ) cronJob(o, n *rayv1.RayCronJob) {
	if a, b := o.Spec.IsSuspended(), n.Spec.IsSuspended(); a != b {
		d.add(Entry{What: WhatSuspend, From: strconv.FormatBool(a), To: strconv.FormatBool(b), Author: d.w.Spec})
	}
	d.state(status.CronJob(o), status.CronJob(n), "")
}

func (d *differ) state(a, b, reason string) {
	if a != b {
		d.add(Entry{What: WhatState, From: a, To: b, Reason: reason})
	}
}

// conditions records each condition whose status or reason changed (a
// message alone changing is not a change), appeared or went away.
func (d *differ) conditions(o, n []metav1.Condition) {
	for _, c := range n {
		i := slices.IndexFunc(o, func(x metav1.Condition) bool { return x.Type == c.Type })
		switch {
		case i < 0:
			d.add(Entry{What: WhatCondition, Subject: c.Type, To: condWord(c), Reason: c.Reason, Message: c.Message})
		case o[i].Status != c.Status || o[i].Reason != c.Reason:
			d.add(Entry{What: WhatCondition, Subject: c.Type, From: condWord(o[i]), To: condWord(c), Reason: c.Reason, Message: c.Message})
		}
	}
	for _, c := range o {
		if !slices.ContainsFunc(n, func(x metav1.Condition) bool { return x.Type == c.Type }) {
			d.add(Entry{What: WhatCondition, Subject: c.Type, From: condWord(c), To: "gone"})
		}
	}
}

// condWord is "True", or "False (Reason)".
func condWord(c metav1.Condition) string {
	if c.Reason == "" {
		return string(c.Status)
	}
	return fmt.Sprintf("%s (%s)", c.Status, c.Reason)
}

func replicas(p *int32) string {
	if p == nil {
		return "unset"
	}
	return strconv.Itoa(int(*p))
}

// newNames are the names in b that a does not have.
func newNames(a, b []string) []string {
	var out []string
	for _, s := range b {
		if !slices.Contains(a, s) {
			out = append(out, s)
		}
	}
	return out
}
