package actions

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/rayapi/kinds"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// ScaleRequest is the new size of a worker group. Min and Max, when set,
// change minReplicas and maxReplicas in the same write; otherwise Replicas
// must lie within the current bounds.
type ScaleRequest struct {
	Replicas int32  `json:"replicas"`
	Min      *int32 `json:"minReplicas,omitempty"`
	Max      *int32 `json:"maxReplicas,omitempty"`
}

// GroupSize is a worker group's minReplicas, replicas and maxReplicas as
// written in the spec (unset min is 0, unset max is MaxInt32, unset replicas 0).
type GroupSize struct {
	Min      int32 `json:"minReplicas"`
	Replicas int32 `json:"replicas"`
	Max      int32 `json:"maxReplicas"`
}

func sizeOf(g *rayv1.WorkerGroupSpec) GroupSize {
	return GroupSize{Min: g.Min(), Replicas: ptr.Deref(g.Replicas, 0), Max: g.Max()}
}

// String is "min N / replicas N / max N".
func (s GroupSize) String() string {
	return fmt.Sprintf("min %d / replicas %d / max %s", s.Min, s.Replicas, bound(s.Max))
}

// ScalePlan is the preview of ScaleGroup.
type ScalePlan struct {
	Namespace  string    `json:"namespace"`
	Cluster    string    `json:"cluster"`
	Group      string    `json:"group"`
	NumOfHosts int32     `json:"numOfHosts"`
	Current    GroupSize `json:"current"`
	New        GroupSize `json:"new"`
	// CurrentPods and NewPods are the group's desired pods (replicas
	// clamped to the bounds × numOfHosts; 0 while suspended).
	CurrentPods int32 `json:"currentPods"`
	NewPods     int32 `json:"newPods"`
	// PodsToCreate and PodsToDelete are the difference, as the reconciler
	// will act on it.
	PodsToCreate int32 `json:"podsToCreate"`
	PodsToDelete int32 `json:"podsToDelete"`
	// Autoscaling is true when the in-tree autoscaler is on: it owns scaling.
	Autoscaling bool `json:"autoscaling"`
	// Unchanged is true when the spec already says this; nothing is written.
	Unchanged bool     `json:"unchanged,omitempty"`
	Warnings  []string `json:"warnings,omitempty"`
}

// Lines implements Plan.
func (p *ScalePlan) Lines() []string {
	l := []string{fmt.Sprintf("RayCluster %s/%s, worker group %s", p.Namespace, p.Cluster, p.Group)}
	if p.NumOfHosts > 1 {
		l = append(l, fmt.Sprintf("each replica is %d pods (numOfHosts)", p.NumOfHosts))
	}
	l = append(l, "current: "+p.Current.String(), "new:     "+p.New.String())
	switch {
	case p.Unchanged:
		l = append(l, "no change: the spec already says this")
	case p.PodsToCreate > 0:
		l = append(l, fmt.Sprintf("effect: %s will be created (%d → %d)", plural(int(p.PodsToCreate), "pod"), p.CurrentPods, p.NewPods))
	case p.PodsToDelete > 0:
		l = append(l, fmt.Sprintf("effect: %s will be deleted (%d → %d)", plural(int(p.PodsToDelete), "pod"), p.CurrentPods, p.NewPods))
	default:
		l = append(l, fmt.Sprintf("effect: no pods created or deleted (%d desired)", p.NewPods))
	}
	return appendWarnings(l, p.Warnings)
}

func appendWarnings(l, warnings []string) []string {
	for _, w := range warnings {
		l = append(l, "warning: "+w)
	}
	return l
}

// autoscalerWarning is shown by every plan that changes the size of an
// autoscaled cluster.
const autoscalerWarning = "in-tree autoscaling is on: the autoscaler owns scaling and may change replicas again"

// PlanScale validates req against rc's worker group and previews the effect.
// Pure: rc is not modified.
//
// Rules: replicas, min and max are whole numbers >= 0; replicas must lie
// within [min, max], where min and max are the group's unless req changes
// them too; min <= max; and the changed cluster must pass
// rayv1.ValidateRayCluster (rules the cluster broke before do not count).
func PlanScale(rc *rayv1.RayCluster, group string, req ScaleRequest) (*ScalePlan, error) {
	p, _, err := planScale(rc, group, req)
	return p, err
}

// scaled returns a copy of rc with the request applied, or why not.
func scaled(rc *rayv1.RayCluster, group string, req ScaleRequest) (*rayv1.RayCluster, error) {
	g, ok := rc.Spec.WorkerGroup(group)
	if !ok {
		return nil, unknownGroup(rc, group)
	}
	cur := sizeOf(g)
	next := GroupSize{Min: ptr.Deref(req.Min, cur.Min), Replicas: req.Replicas, Max: ptr.Deref(req.Max, cur.Max)}
	switch {
	case next.Replicas < 0:
		return nil, invalidf("replicas: %d is negative; enter 0 or more", next.Replicas)
	case next.Min < 0:
		return nil, invalidf("minReplicas: %d is negative; enter 0 or more", next.Min)
	case next.Max < 0:
		return nil, invalidf("maxReplicas: %d is negative; enter 0 or more", next.Max)
	case next.Min > next.Max:
		return nil, invalidf("minReplicas %d is above maxReplicas %s", next.Min, bound(next.Max))
	case next.Replicas > next.Max && req.Max == nil:
		return nil, invalidf("replicas %d is above maxReplicas %s of group %s; raise maxReplicas too (--max)", next.Replicas, bound(next.Max), group)
	case next.Replicas > next.Max:
		return nil, invalidf("replicas %d is above the new maxReplicas %s", next.Replicas, bound(next.Max))
	case next.Replicas < next.Min && req.Min == nil:
		return nil, invalidf("replicas %d is below minReplicas %d of group %s; lower minReplicas too (--min)", next.Replicas, next.Min, group)
	case next.Replicas < next.Min:
		return nil, invalidf("replicas %d is below the new minReplicas %d", next.Replicas, next.Min)
	}
	out := rc.DeepCopy()
	ng, _ := out.Spec.WorkerGroup(group)
	ng.Replicas = ptr.To(next.Replicas)
	if req.Min != nil {
		ng.MinReplicas = ptr.To(*req.Min)
	}
	if req.Max != nil {
		ng.MaxReplicas = ptr.To(*req.Max)
	}
	if errs := introduced(rayv1.ValidateRayCluster(rc), rayv1.ValidateRayCluster(out)); len(errs) > 0 {
		return nil, &InvalidError{Reason: "the scaled cluster would be invalid", Fields: errs}
	}
	return out, nil
}

// planScale is PlanScale that also returns the scaled copy of rc.
func planScale(rc *rayv1.RayCluster, group string, req ScaleRequest) (*ScalePlan, *rayv1.RayCluster, error) {
	out, err := scaled(rc, group, req)
	if err != nil {
		return nil, nil, err
	}
	g, _ := rc.Spec.WorkerGroup(group)
	ng, _ := out.Spec.WorkerGroup(group)
	p := &ScalePlan{
		Namespace: rc.Namespace, Cluster: rc.Name, Group: group, NumOfHosts: g.Hosts(),
		Current: sizeOf(g), New: sizeOf(ng),
		CurrentPods: g.DesiredPods(), NewPods: ng.DesiredPods(),
		Autoscaling: rc.Spec.IsAutoscalingEnabled(),
	}
	p.Unchanged = ptr.Equal(g.Replicas, ng.Replicas) && ptr.Equal(g.MinReplicas, ng.MinReplicas) && ptr.Equal(g.MaxReplicas, ng.MaxReplicas)
	if rc.Spec.IsSuspended() {
		p.Warnings = append(p.Warnings, "the cluster is suspended: no pods are created or deleted until it is resumed")
	} else if d := p.NewPods - p.CurrentPods; d > 0 {
		p.PodsToCreate = d
	} else {
		p.PodsToDelete = -d
	}
	if g.IsSuspended() {
		p.Warnings = append(p.Warnings, "worker group "+group+" is suspended: it has no pods until its suspend flag is cleared")
	}
	if p.Autoscaling && !p.Unchanged {
		p.Warnings = append(p.Warnings, autoscalerWarning)
	}
	if p.PodsToDelete > 0 && !p.Autoscaling {
		p.Warnings = append(p.Warnings, "the reconciler picks which pods go; to choose them, delete specific workers instead")
	}
	return p, out, nil
}

func unknownGroup(rc *rayv1.RayCluster, group string) error {
	names := make([]string, 0, len(rc.Spec.WorkerGroupSpecs))
	for i := range rc.Spec.WorkerGroupSpecs {
		names = append(names, rc.Spec.WorkerGroupSpecs[i].GroupName)
	}
	slices.Sort(names)
	if len(names) == 0 {
		return invalidf("RayCluster %s/%s has no worker group %q (it has no worker groups)", rc.Namespace, rc.Name, group)
	}
	return invalidf("RayCluster %s/%s has no worker group %q (groups: %s)", rc.Namespace, rc.Name, group, strings.Join(names, ", "))
}

// PreviewScale reads the RayCluster and returns PlanScale's preview.
func (a *Actions) PreviewScale(ctx context.Context, ns, cluster, group string, req ScaleRequest) (*ScalePlan, error) {
	rc, err := a.getCluster(ctx, ns, cluster)
	if err != nil {
		return nil, err
	}
	return PlanScale(rc, group, req)
}

// ScaleGroup sets a worker group's replicas (and min/max when req says so)
// in one optimistic-locked patch, re-planned from a fresh read on conflict.
// Event reason ScaledWorkerGroup.
func (a *Actions) ScaleGroup(ctx context.Context, ns, cluster, group string, req ScaleRequest) (*Result, error) {
	ref := ObjectRef{Kind: kinds.RayCluster, Namespace: ns, Name: cluster}
	return a.runWrite(ctx, ActionScale, ref, func(r *Result) (*change, error) {
		rc, err := a.getCluster(ctx, ns, cluster)
		if err != nil {
			return nil, err
		}
		p, out, err := planScale(rc, group, req)
		if err != nil {
			return nil, err
		}
		r.Plan = p
		if p.Unchanged {
			return nil, nil
		}
		if err := a.patch(ctx, ref, out, rc); err != nil {
			return nil, err
		}
		return &change{obj: out, reason: ReasonScaledWorkerGroup, verb: "Scale", what: scaleWhat(p)}, nil
	})
}

func scaleWhat(p *ScalePlan) string {
	s := fmt.Sprintf("Scaled worker group %s from %d to %d replicas", p.Group, p.Current.Replicas, p.New.Replicas)
	if p.Current.Min != p.New.Min {
		s += fmt.Sprintf(", minReplicas %d to %d", p.Current.Min, p.New.Min)
	}
	if p.Current.Max != p.New.Max {
		s += fmt.Sprintf(", maxReplicas %s to %s", bound(p.Current.Max), bound(p.New.Max))
	}
	return s
}

func (a *Actions) getCluster(ctx context.Context, ns, name string) (*rayv1.RayCluster, error) {
	rc := &rayv1.RayCluster{}
	if err := a.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, rc); err != nil {
		return nil, a.apiErr(err, "get", rayv1.ResourceRayClusters, ns, name)
	}
	return rc, nil
}
