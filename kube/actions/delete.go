package actions

import (
	"context"
	"fmt"
	"slices"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// Related are the objects of a namespace that may be owned, directly or
// through others, by the object being deleted. PlanDelete follows owner
// references (what the garbage collector deletes), not labels.
type Related struct {
	// RayJobs matter only for a RayCronJob (the one kind that owns them).
	RayJobs     []rayv1.RayJob
	RayClusters []rayv1.RayCluster
	Pods        []corev1.Pod
	Services    []corev1.Service
	Jobs        []batchv1.Job
}

// Dependent is an object that goes with the deleted one.
type Dependent struct {
	Kind string `json:"kind"`
	Name string `json:"name"`
	// Owner is "<Kind> <name>" of the owner it goes with.
	Owner string `json:"owner"`
}

// DeletePlan is the preview of Delete.
type DeletePlan struct {
	Kind      Kind      `json:"kind"`
	Namespace string    `json:"namespace"`
	Name      string    `json:"name"`
	UID       types.UID `json:"uid"`
	// Dependents are the objects the garbage collector deletes with it,
	// RayJobs first, then RayClusters, Jobs, Services and Pods, each sorted
	// by name.
	Dependents []Dependent `json:"dependents"`
	// Finalizers delay the deletion until their controllers are done.
	Finalizers []string `json:"finalizers,omitempty"`
	Warnings   []string `json:"warnings,omitempty"`
}

// Counts returns how many dependents of each kind go ("Pod" → 5).
func (p *DeletePlan) Counts() map[string]int {
	out := map[string]int{}
	for _, d := range p.Dependents {
		out[d.Kind]++
	}
	return out
}

// Lines implements Plan.
func (p *DeletePlan) Lines() []string {
	l := []string{fmt.Sprintf("delete %s %s/%s", p.Kind, p.Namespace, p.Name)}
	if len(p.Dependents) == 0 {
		l = append(l, "nothing else goes with it (no owned objects found)")
	} else {
		l = append(l, "also deleted: "+p.dependentSummary())
		for _, d := range p.Dependents {
			l = append(l, fmt.Sprintf("  %s %s (owned by %s)", d.Kind, d.Name, d.Owner))
		}
	}
	if len(p.Finalizers) > 0 {
		l = append(l, "finalizers run first: "+strings.Join(p.Finalizers, ", "))
	}
	return appendWarnings(l, p.Warnings)
}

// dependentSummary counts the dependents by kind: "1 raycluster, 3 pods".
func (p *DeletePlan) dependentSummary() string {
	counts := p.Counts()
	var parts []string
	for _, k := range dependentOrder {
		if n := counts[k]; n > 0 {
			parts = append(parts, plural(n, strings.ToLower(k)))
		}
	}
	return strings.Join(parts, ", ")
}

var dependentOrder = []string{rayv1.KindRayJob, rayv1.KindRayCluster, "Job", "Service", "Pod"}

// PlanDelete previews deleting obj (a RayCluster, RayJob, RayService or
// RayCronJob): every object of related whose owner references lead to it.
// Pure.
func PlanDelete(obj client.Object, related Related) (*DeletePlan, error) {
	kind, err := kindOf(obj)
	if err != nil {
		return nil, err
	}
	p := &DeletePlan{Kind: kind, Namespace: obj.GetNamespace(), Name: obj.GetName(), UID: obj.GetUID(),
		Finalizers: slices.Clone(obj.GetFinalizers()), Dependents: []Dependent{}}
	if obj.GetDeletionTimestamp() != nil {
		return nil, invalidf("%s %s/%s is already being deleted", kind, p.Namespace, p.Name)
	}
	type node struct {
		kind string
		obj  metav1.Object
	}
	var all []node
	for i := range related.RayJobs {
		all = append(all, node{rayv1.KindRayJob, &related.RayJobs[i]})
	}
	for i := range related.RayClusters {
		all = append(all, node{rayv1.KindRayCluster, &related.RayClusters[i]})
	}
	for i := range related.Jobs {
		all = append(all, node{"Job", &related.Jobs[i]})
	}
	for i := range related.Services {
		all = append(all, node{"Service", &related.Services[i]})
	}
	for i := range related.Pods {
		all = append(all, node{"Pod", &related.Pods[i]})
	}
	// Breadth-first over owner references from obj.
	going := map[types.UID]string{obj.GetUID(): kind.Kind + " " + obj.GetName()}
	for changed := true; changed; {
		changed = false
		for _, n := range all {
			if _, done := going[n.obj.GetUID()]; done || n.obj.GetNamespace() != p.Namespace {
				continue
			}
			for _, ref := range n.obj.GetOwnerReferences() {
				if owner, ok := going[ref.UID]; ok {
					going[n.obj.GetUID()] = n.kind + " " + n.obj.GetName()
					p.Dependents = append(p.Dependents, Dependent{Kind: n.kind, Name: n.obj.GetName(), Owner: owner})
					changed = true
					break
				}
			}
		}
	}
	slices.SortFunc(p.Dependents, func(a, b Dependent) int {
		if c := slices.Index(dependentOrder, a.Kind) - slices.Index(dependentOrder, b.Kind); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	if j, ok := obj.(*rayv1.RayJob); ok && j.Spec.UsesClusterSelector() {
		p.Warnings = append(p.Warnings, "the job runs on RayCluster "+j.Spec.SelectedClusterName()+" (clusterSelector), which it does not own: that cluster stays")
	}
	if j, ok := obj.(*rayv1.RayJob); ok {
		if owner := ownerOfKind(j.OwnerReferences, rayv1.KindRayCronJob); owner != "" {
			p.Warnings = append(p.Warnings, "this job was created by "+owner+", whose schedule goes on; suspend or delete the "+owner+" to stop new runs")
		}
	}
	if rc, ok := obj.(*rayv1.RayCluster); ok {
		if owner := ownerOfKind(rc.OwnerReferences, rayv1.KindRayJob, rayv1.KindRayService); owner != "" {
			p.Warnings = append(p.Warnings, "this cluster belongs to "+owner+", whose controller may create a new one")
		}
	}
	return p, nil
}

// PreviewDelete reads the object and the namespace's RayClusters, Ray pods,
// Services and Jobs (and, for a RayCronJob, its RayJobs) and returns
// PlanDelete's preview. A list the user may
// not read becomes a warning, not an error: the preview is then incomplete
// and says so.
func (a *Actions) PreviewDelete(ctx context.Context, kind Kind, ns, name string) (*DeletePlan, error) {
	obj, err := a.getObject(ctx, kind, ns, name)
	if err != nil {
		return nil, err
	}
	p, _, err := a.planDelete(ctx, obj)
	return p, err
}

func (a *Actions) planDelete(ctx context.Context, obj client.Object) (*DeletePlan, Related, error) {
	ns := obj.GetNamespace()
	var rel Related
	var warnings []string
	list := func(l client.ObjectList, resource string, opts ...client.ListOption) {
		if err := a.c.List(ctx, l, append(opts, client.InNamespace(ns))...); err != nil {
			warnings = append(warnings, "the list of what else goes is incomplete: "+a.apiErr(err, "list", resource, ns, "").Error())
		}
	}
	if cj, ok := obj.(*rayv1.RayCronJob); ok {
		var rjs rayv1.RayJobList
		list(&rjs, rayv1.ResourceRayJobs, client.MatchingLabelsSelector{Selector: rayv1.CronJobRayJobSelector(cj.Name)})
		rel.RayJobs = rjs.Items
	}
	var rcs rayv1.RayClusterList
	var svcs corev1.ServiceList
	var jobs batchv1.JobList
	var rayPods corev1.PodList
	list(&rcs, rayv1.ResourceRayClusters)
	list(&svcs, "services")
	list(&jobs, "jobs")
	hasCluster, _ := labels.NewRequirement(rayv1.RayClusterLabelKey, selection.Exists, nil)
	list(&rayPods, "pods", client.MatchingLabelsSelector{Selector: labels.NewSelector().Add(*hasCluster)})
	rel.RayClusters, rel.Services, rel.Jobs, rel.Pods = rcs.Items, svcs.Items, jobs.Items, rayPods.Items
	// Pods of Jobs (the submitter) carry the job-name label, not ray.io/cluster.
	if len(jobs.Items) > 0 {
		names := make([]string, 0, len(jobs.Items))
		for i := range jobs.Items {
			names = append(names, jobs.Items[i].Name)
		}
		if req, err := labels.NewRequirement(batchv1.JobNameLabel, selection.In, names); err == nil {
			var jobPods corev1.PodList
			list(&jobPods, "pods", client.MatchingLabelsSelector{Selector: labels.NewSelector().Add(*req)})
			rel.Pods = append(rel.Pods, jobPods.Items...)
		}
	}
	p, err := PlanDelete(obj, rel)
	if err != nil {
		return nil, rel, err
	}
	p.Warnings = append(p.Warnings, warnings...)
	return p, rel, nil
}

// Delete deletes a RayCluster, RayJob, RayService or RayCronJob with
// preconditions on its UID and resourceVersion (so it fails if the object
// changed since it was planned, and is re-planned from a fresh read), background
// propagation: the garbage collector deletes what PlanDelete lists. Event
// reason Deleted.
func (a *Actions) Delete(ctx context.Context, kind Kind, ns, name string) (*Result, error) {
	ref := ObjectRef{Kind: kind, Namespace: ns, Name: name}
	return a.runWrite(ctx, ActionDelete, ref, func(r *Result) (*change, error) {
		obj, err := a.getObject(ctx, kind, ns, name)
		if err != nil {
			return nil, err
		}
		p, _, err := a.planDelete(ctx, obj)
		if err != nil {
			return nil, err
		}
		r.Plan = p
		uid, rv := obj.GetUID(), obj.GetResourceVersion()
		err = a.c.Delete(ctx, obj,
			client.Preconditions{UID: &uid, ResourceVersion: &rv},
			client.PropagationPolicy(metav1.DeletePropagationBackground))
		if err != nil {
			return nil, a.apiErr(err, "delete", resourceOf(kind), ns, name)
		}
		what := "Deleted"
		if len(p.Dependents) > 0 {
			what += "; the garbage collector deletes " + p.dependentSummary()
		}
		return &change{obj: obj, reason: ReasonDeleted, verb: "Delete", what: what}, nil
	})
}
