package kit_test

import (
	"strings"
	"testing"

	"github.com/raydar/raydar/controller/kit"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
)

func drain(rec *events.FakeRecorder) []string {
	var out []string
	for {
		select {
		case e := <-rec.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

func TestEventsOnce(t *testing.T) {
	rec := events.NewFakeRecorder(10)
	ev := kit.NewEvents(rec)
	obj := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "u"}}
	warn := kit.Event{Type: corev1.EventTypeWarning, Reason: "Refused", Action: "Validate", Message: "no"}

	if !ev.EmitOnce(obj, "k", warn) || ev.EmitOnce(obj, "k", warn) {
		t.Fatal("the same message under one key is told once")
	}
	other := warn
	other.Message = "still no, otherwise"
	if !ev.EmitOnce(obj, "k", other) {
		t.Fatal("a new message is told")
	}
	if !ev.EmitOnce(obj, "k2", other) {
		t.Fatal("keys are independent")
	}
	ev.Unsay(obj.UID, "k")
	if !ev.EmitOnce(obj, "k", other) {
		t.Fatal("after Unsay the message is told again")
	}
	ev.Forget(obj.UID)
	if !ev.Once(obj.UID, "k2", "Refused\x00still no, otherwise") {
		t.Fatal("Forget kept what was told")
	}
	got := drain(rec)
	if len(got) != 4 || !strings.Contains(got[0], "Warning Refused no") {
		t.Fatalf("events %q", got)
	}

	long := kit.Event{Type: corev1.EventTypeNormal, Reason: "Long", Message: strings.Repeat("x", 2000)}
	ev.Emit(obj, nil, long)
	if e := drain(rec); len(e) != 1 || len(e[0]) > kit.MaxEventMessage+len("Normal Long ") {
		t.Fatalf("long message not truncated: %d", len(e[0]))
	}
}

// An Event with Once set is emitted the first time for its value only,
// whichever reconciler emits it (a plan that repeats a Warning every pass).
func TestEmitHonoursOnce(t *testing.T) {
	rec := events.NewFakeRecorder(10)
	ev := kit.NewEvents(rec)
	obj := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "u"}}
	e := kit.Event{Type: corev1.EventTypeWarning, Reason: "DashboardUnreachable", Message: "for 10s", Once: "outage since t1"}
	ev.Emit(obj, nil, e)
	e.Message = "for 20s"
	ev.Emit(obj, nil, e)
	e.Once, e.Message = "outage since t2", "for 10s"
	ev.Emit(obj, nil, e)
	if got := drain(rec); len(got) != 2 || !strings.Contains(got[0], "for 10s") || !strings.Contains(got[1], "for 10s") {
		t.Fatalf("events %q: want one per outage", got)
	}
}
