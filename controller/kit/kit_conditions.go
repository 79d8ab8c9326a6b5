package kit

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
}

func FindCondition(conds []metav1.Condition, t string) *metav1.Condition {
	for i := range conds {
		if conds[i].Type == t {
			return &conds[i]
		}
	}
	return nil
}

// setCondition sets c, keeping the old transition time unless the status
// changed, so that unchanged conditions never cause a write.
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

func CondStatus(conds []metav1.Condition, t string) metav1.ConditionStatus {
	if c := FindCondition(conds, t); c != nil {
		return c.Status
	}
	return ""
}
