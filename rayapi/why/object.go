package why

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// object is what the object-level causes read of a RayCluster, RayJob or
// RayService.
type object struct {
	kind      string // RayCluster, RayJob, RayService
	meta      *metav1.ObjectMeta
	managedBy *string
	// lags is true when the status does not describe the current spec:
	// no status at all, or status.observedGeneration < generation.
	lags bool
	// unwritten is true when no operator has written a status at all.
	unwritten bool
}

func (o object) subject() string { return o.kind + " " + o.meta.Namespace + "/" + o.meta.Name }

// about reports whether e is about this object.
func (o object) about(e *corev1.Event) bool {
	return e.InvolvedObject.Kind == o.kind && e.InvolvedObject.Name == o.meta.Name
}

// newObject is an object whose status was written (anything in it) and
// says it observed generation observed (0: not said): it lags when no
// status was written, or one for an older generation.
func newObject(kind string, meta *metav1.ObjectMeta, managedBy *string, written bool, observed int64) object {
	return object{kind: kind, meta: meta, managedBy: managedBy, unwritten: !written,
		lags: !written || (observed != 0 && observed < meta.Generation)}
}

// suspendedCause says that the object is suspended: by Kueue when it is in
// a Kueue queue (Kueue suspends what it has not admitted), else by the
// user.
func suspendedCause(o object) Cause {
	if q := o.meta.Labels[kueueQueueLabel]; q != "" {
		return Cause{Code: CodeSuspended, Subject: o.subject(), Rank: rankSuspended,
			Summary:  "queued by Kueue (queue " + q + ")",
			Evidence: []string{"spec.suspend is true and the label " + kueueQueueLabel + " is " + q},
			Fix:      "wait for Kueue to admit it, or look at its Workload and ClusterQueue quota (kubectl get workloads -n " + o.meta.Namespace + ")"}
	}
	return Cause{Code: CodeSuspended, Subject: o.subject(), Rank: rankSuspended,
		Summary:  "suspended (spec.suspend)",
		Evidence: []string{"spec.suspend is true"},
		Fix:      "resume it: set spec.suspend to false"}
}

// whoCauses are OtherOperator and NotReconciled: who reconciles the
// object, as far as its spec, its Events and raydar know.
func whoCauses(o object, events []*corev1.Event, r Reconciler, out []Cause) []Cause {
	if c, ok := otherOperator(o, events); ok {
		out = append(out, c)
	}
	// Only a status never written says so when raydar looked for no other
	// operator (Reconciler.OnlyRaydar): KubeRay's status may lag the
	// generation while KubeRay reconciles.
	if r.Known && !r.Active && o.lags && (!r.OnlyRaydar || o.unwritten) {
		who := r.Who
		if who == "" {
			who = "no raydar reconciler is active"
		}
		out = append(out, Cause{Code: CodeNotReconciled, Subject: o.subject(), Rank: rankNotReconciled,
			Summary:  "not reconciled: " + who,
			Evidence: []string{lagEvidence(o)},
			Fix:      "run raydar's reconcile loop for this context (raydar operator, or raydar without --readonly and --no-reconcile; with several contexts, --reconcile-contexts), or wait for its leader lease to be taken"})
	}
	return out
}

func lagEvidence(o object) string {
	if o.unwritten {
		return "no operator has written its status (generation " + itoa(o.meta.Generation) + ")"
	}
	return "its status does not describe generation " + itoa(o.meta.Generation)
}

// otherOperator: spec.managedBy names another controller, or raydar's gate
// said it leaves the object alone (its Event, not answered since by a
// Normal Event of raydar's).
func otherOperator(o object, events []*corev1.Event) (Cause, bool) {
	optedIn := o.meta.Annotations[rayv1.ManagedByRaydarAnnotationKey] == "true"
	if mb := o.managedBy; mb != nil && *mb != "" && *mb != rayv1.ManagedByRaydar &&
		(!optedIn || *mb != rayv1.MultiKueueController) {
		who := *mb
		switch who {
		case rayv1.KubeRayController:
			who = "KubeRay"
		case rayv1.MultiKueueController:
			who = "MultiKueue"
		}
		return Cause{Code: CodeOtherOperator, Subject: o.subject(), Rank: rankOtherOperator,
			Summary:  "managed by " + who + ", not raydar",
			Evidence: []string{"spec.managedBy is " + *mb},
			Fix:      "look at " + who + "'s operator; raydar does not touch objects another controller manages"}, true
	}
	var last *corev1.Event
	for _, e := range events {
		if !o.about(e) {
			continue
		}
		switch {
		case e.Reason == reasonManagedElsewhere || e.Reason == reasonOtherOperator:
			last = e
		case e.Type == corev1.EventTypeNormal && last != nil:
			last = nil // reconciled since
		}
	}
	if last == nil {
		return Cause{}, false
	}
	summary := "left to another operator"
	if last.Reason == reasonOtherOperator {
		summary = "left to the running KubeRay operator"
	}
	return Cause{Code: CodeOtherOperator, Subject: o.subject(), Rank: rankOtherOperator,
		Summary:  summary,
		Evidence: []string{last.Reason + ": " + last.Message},
		Fix:      "stop the other operator, or opt the object in to raydar with spec.managedBy: " + rayv1.ManagedByRaydar + " (or the annotation " + rayv1.ManagedByRaydarAnnotationKey + ": \"true\")"}, true
}

// onlyContext drops OtherOperator causes when they are all there is and
// the status is current: the other controller does its job, and a healthy
// object says nothing.
func onlyContext(o object, cs []Cause) []Cause {
	if o.lags {
		return cs
	}
	for _, c := range cs {
		if c.Code != CodeOtherOperator {
			return cs
		}
	}
	return nil
}
