package kit

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Refusal is the decision (pure) for a spec raydar refuses: invalid
// (rayapi/v1 Validate*), or asking for what raydar does not implement (the
// kind's unsupported.go). msg is the message of the condition that carries
// the refusal (condType with reason condReason); ev is the Warning Event
// that says it, nil when that condition already says the same. The
// condition is the memory, so the Event is said once, across restarts too.
// what says what is held back ("nothing is created or deleted").
func Refusal(conds []metav1.Condition, condType, condReason string, errs field.ErrorList, eventReason, what string) (msg string, ev *Event) {
	msg = InvalidMessage(errs)
	if old := meta.FindStatusCondition(conds, condType); old != nil && old.Reason == condReason && old.Message == msg {
		return msg, nil
	}
	return msg, &Event{Type: corev1.EventTypeWarning, Reason: eventReason, Action: "Validate",
		Message: "Invalid spec, " + what + " until it is fixed: " + msg}
}
