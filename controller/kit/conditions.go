package kit

// Conditions are apimachinery's: meta.SetStatusCondition,
// meta.FindStatusCondition, meta.RemoveStatusCondition
// (k8s.io/apimachinery/pkg/api/meta), as KubeRay writes them. Pass the
// condition with LastTransitionTime set to the pass's clock
// (metav1.NewTime(now)): SetStatusCondition keeps the old transition time
// unless the status changes, and copies reason, message and
// observedGeneration, so an unchanged condition never causes a write.

import (
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// CondStatus is the status of the condition of type t, "" when absent.
func CondStatus(conds []metav1.Condition, t string) metav1.ConditionStatus {
	if c := meta.FindStatusCondition(conds, t); c != nil {
		return c.Status
	}
	return ""
}

// FindCondition is meta.FindStatusCondition.
//
// Deprecated: use meta.FindStatusCondition (kept until rayjob and
// rayservice have moved off it).
func FindCondition(conds []metav1.Condition, t string) *metav1.Condition {
	return meta.FindStatusCondition(conds, t)
}

// SetCondition sets c, keeping the old transition time unless the status
// changed.
//
// Deprecated: use meta.SetStatusCondition with c.LastTransitionTime set to
// now (kept until rayjob and rayservice have moved off it). Unlike
// meta.SetStatusCondition it leaves an existing condition's
// observedGeneration alone.
func SetCondition(conds *[]metav1.Condition, c metav1.Condition, now time.Time) {
	if old := FindCondition(*conds, c.Type); old != nil {
		if old.Status != c.Status {
			old.LastTransitionTime = metav1.NewTime(now)
		}
		old.Status, old.Reason, old.Message = c.Status, c.Reason, c.Message
		return
	}
	c.LastTransitionTime = metav1.NewTime(now)
	*conds = append(*conds, c)
}

// RemoveCondition removes the condition of type t.
//
// Deprecated: use meta.RemoveStatusCondition (kept until rayjob and
// rayservice have moved off it).
func RemoveCondition(conds *[]metav1.Condition, t string) {
	out := (*conds)[:0]
	for _, c := range *conds {
		if c.Type != t {
			out = append(out, c)
		}
	}
	*conds = out
	if len(out) == 0 {
		*conds = nil
	}
}
