package rayjob

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/raydar/raydar/controller/internal/fixture"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

func TestRayJobStopRecordRoundTrip(t *testing.T) {
	for _, r := range []StopRecord{
		{JobID: "rj-abc", Request: "alice@2030-01-02T03:04:05Z", Confirmed: true},
		{JobID: "rj-abc", Request: `quote " and \ backslash: confirmed`, Confirmed: false},
		{JobID: `odd "id"`, Deletion: true, Confirmed: true},
	} {
		j := &rayv1.RayJob{}
		SetStopRecord(j, r, "detail with \"quotes\"", fixture.T0)
		got, ok := StopRecordOf(j)
		if !ok || got != r {
			t.Fatalf("round trip of %+v: %+v %v (%q)", r, got, ok, j.Annotations[rayv1.JobStopRecordAnnotationKey])
		}
		// The annotation is the record: a status without conditions (pruned
		// by KubeRay's CRD) loses nothing.
		j.Status.Conditions = nil
		if got, ok := StopRecordOf(j); !ok || got != r {
			t.Fatalf("without the condition: %+v %v", got, ok)
		}
		// A record of an earlier raydar, in the condition only, still reads.
		legacy := &rayv1.RayJob{}
		setStopCondition(&legacy.Status, stopRecordValue(r, ""), r.Confirmed, r.Deletion, fixture.T0)
		if got, ok := StopRecordOf(legacy); !ok || got != r {
			t.Fatalf("legacy condition: %+v %v", got, ok)
		}
	}
	// A condition written by someone else is no record.
	st := rayv1.RayJobStatus{Conditions: []metav1.Condition{{Type: rayv1.JobStopConditionType, Status: metav1.ConditionTrue, Message: "stopped"}}}
	if _, ok := StopRecordOf(&rayv1.RayJob{Status: st}); ok {
		t.Fatal("parsed a foreign condition")
	}
}
