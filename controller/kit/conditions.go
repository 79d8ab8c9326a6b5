package kit

// Conditions are apimachinery's: meta.SetStatusCondition,
// meta.FindStatusCondition, meta.RemoveStatusCondition
// (k8s.io/apimachinery/pkg/api/meta), as KubeRay writes them. Pass the
// condition with LastTransitionTime set to the pass's clock
// (metav1.NewTime(now)): SetStatusCondition keeps the old transition time
// unless the status changes, and copies reason, message and
// observedGeneration, so an unchanged condition never causes a write.

import (
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
