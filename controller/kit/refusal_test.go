package kit_test

import (
	"testing"

	"github.com/raydar/raydar/controller/kit"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestRefusalSaidOnceThroughTheCondition(t *testing.T) {
	errs := field.ErrorList{field.Invalid(field.NewPath("spec", "x"), 1, "bad")}
	msg, ev := kit.Refusal(nil, "Ready", "ValidationFailed", errs, "InvalidSpec", "nothing is created")
	if msg != `spec.x: Invalid value: 1: bad` || ev == nil || ev.Type != "Warning" || ev.Reason != "InvalidSpec" ||
		ev.Message != "Invalid spec, nothing is created until it is fixed: "+msg {
		t.Fatalf("first refusal: %q %+v", msg, ev)
	}
	said := []metav1.Condition{{Type: "Ready", Reason: "ValidationFailed", Message: msg}}
	if _, ev := kit.Refusal(said, "Ready", "ValidationFailed", errs, "InvalidSpec", "nothing is created"); ev != nil {
		t.Fatal("a refusal the condition already says is said again")
	}
	other := field.ErrorList{field.Invalid(field.NewPath("spec", "y"), 2, "bad")}
	if _, ev := kit.Refusal(said, "Ready", "ValidationFailed", other, "InvalidSpec", "nothing is created"); ev == nil {
		t.Fatal("a new refusal is not said")
	}
	otherReason := []metav1.Condition{{Type: "Ready", Reason: "Other", Message: msg}}
	if _, ev := kit.Refusal(otherReason, "Ready", "ValidationFailed", errs, "InvalidSpec", "nothing is created"); ev == nil {
		t.Fatal("a condition of another reason stood for the refusal")
	}
}
