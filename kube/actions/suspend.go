package actions

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// SuspendPlan is the preview of Suspend and Resume.
type SuspendPlan struct {
	Kind      Kind   `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Suspend is the new value of spec.suspend.
	Suspend bool `json:"suspend"`
	// Unchanged is true when spec.suspend already has that value.
	Unchanged bool `json:"unchanged,omitempty"`
	// Effect says what the controller will do.
	Effect   string   `json:"effect"`
	Warnings []string `json:"warnings,omitempty"`
}

// Lines implements Plan.
func (p *SuspendPlan) Lines() []string {
	verb := "resume"
	if p.Suspend {
		verb = "suspend"
	}
	l := []string{fmt.Sprintf("%s %s %s/%s (spec.suspend: %t)", verb, p.Kind, p.Namespace, p.Name, p.Suspend)}
	if p.Unchanged {
		l = append(l, fmt.Sprintf("no change: spec.suspend is already %t", p.Suspend))
	} else {
		l = append(l, "effect: "+p.Effect)
	}
	return appendWarnings(l, p.Warnings)
}

// PlanSuspend validates setting spec.suspend of a RayCluster, RayJob,
// RayService or RayCronJob to suspend and previews it. Pure. A change that breaks a rule
// of rayv1 validation is refused with the rule's field path and message
// (e.g. a RayJob can be suspended only with shutdownAfterJobFinishes).
func PlanSuspend(obj client.Object, suspend bool) (*SuspendPlan, error) {
	p, _, err := planSuspend(obj, suspend)
	return p, err
}

func planSuspend(obj client.Object, suspend bool) (*SuspendPlan, client.Object, error) {
	kind, err := kindOf(obj)
	if err != nil {
		return nil, nil, err
	}
	p := &SuspendPlan{Kind: kind, Namespace: obj.GetNamespace(), Name: obj.GetName(), Suspend: suspend}
	if obj.GetDeletionTimestamp() != nil {
		return nil, nil, invalidf("%s %s/%s is being deleted", kind, p.Namespace, p.Name)
	}
	p.Unchanged = kind.Suspend.Suspended(obj) == suspend
	out := kind.Suspend.With(obj, suspend).(client.Object)
	before, after := kind.Suspend.Validate(obj), kind.Suspend.Validate(out)
	// What it does is the descriptor's; what to beware of, raydar's.
	p.Effect = kind.Suspend.Effect(out, suspend)
	switch o := obj.(type) {
	case *rayv1.RayCluster:
		if owner := ownerOfKind(o.OwnerReferences, rayv1.KindRayJob, rayv1.KindRayService); owner != "" {
			p.Warnings = append(p.Warnings, "this cluster belongs to "+owner+", whose controller may undo the change; suspend the "+owner+" instead")
		}
		if suspend && o.Spec.IsAutoscalingEnabled() {
			p.Warnings = append(p.Warnings, "in-tree autoscaling is on: the autoscaler stops with the head pod")
		}
	case *rayv1.RayJob:
		if suspend && (o.IsTerminal() || o.Status.JobStatus.IsTerminal()) {
			return nil, nil, invalidf("RayJob %s/%s has already finished (deployment status %s): there is nothing to suspend",
				o.Namespace, o.Name, orDash(string(o.Status.JobDeploymentStatus)))
		}
	}
	if errs := introduced(before, after); len(errs) > 0 {
		verb := "resumed"
		if suspend {
			verb = "suspended"
		}
		return nil, nil, &InvalidError{Reason: fmt.Sprintf("%s %s/%s cannot be %s", kind, p.Namespace, p.Name, verb), Fields: errs}
	}
	return p, out, nil
}

// ownerOfKind names the first owner of one of the kinds: "RayJob x".
func ownerOfKind(refs []metav1.OwnerReference, kinds ...string) string {
	for _, r := range refs {
		for _, k := range kinds {
			if r.Kind == k && r.APIVersion == rayv1.GroupVersion.String() {
				return r.Kind + " " + r.Name
			}
		}
	}
	return ""
}

// PreviewSuspend reads the object and returns PlanSuspend's preview.
func (a *Actions) PreviewSuspend(ctx context.Context, kind Kind, ns, name string, suspend bool) (*SuspendPlan, error) {
	obj, err := a.getObject(ctx, kind, ns, name)
	if err != nil {
		return nil, err
	}
	return PlanSuspend(obj, suspend)
}

// Suspend sets spec.suspend of a RayCluster, RayJob, RayService or
// RayCronJob to true
// in one optimistic-locked patch. Event reason Suspended.
func (a *Actions) Suspend(ctx context.Context, kind Kind, ns, name string) (*Result, error) {
	return a.setSuspend(ctx, kind, ns, name, true)
}

// Resume sets spec.suspend to false. Event reason Resumed.
func (a *Actions) Resume(ctx context.Context, kind Kind, ns, name string) (*Result, error) {
	return a.setSuspend(ctx, kind, ns, name, false)
}

func (a *Actions) setSuspend(ctx context.Context, kind Kind, ns, name string, suspend bool) (*Result, error) {
	action, reason, verb, what := ActionResume, ReasonResumed, "Resume", "Resumed (spec.suspend: false)"
	if suspend {
		action, reason, verb, what = ActionSuspend, ReasonSuspended, "Suspend", "Suspended (spec.suspend: true)"
	}
	ref := ObjectRef{Kind: kind, Namespace: ns, Name: name}
	return a.runWrite(ctx, action, ref, func(r *Result) (*change, error) {
		obj, err := a.getObject(ctx, kind, ns, name)
		if err != nil {
			return nil, err
		}
		p, out, err := planSuspend(obj, suspend)
		if err != nil {
			return nil, err
		}
		r.Plan = p
		if p.Unchanged {
			return nil, nil
		}
		if err := a.patch(ctx, ref, out, obj); err != nil {
			return nil, err
		}
		return &change{obj: out, reason: reason, verb: verb, what: what}, nil
	})
}

func (a *Actions) getObject(ctx context.Context, kind Kind, ns, name string) (client.Object, error) {
	if err := checkKind(kind); err != nil {
		return nil, err
	}
	obj := kind.New()
	if err := a.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, obj); err != nil {
		return nil, a.apiErr(err, "get", resourceOf(kind), ns, name)
	}
	return obj, nil
}
