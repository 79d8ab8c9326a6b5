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
		setStopCondition(&legacy.Status, stopMessage(r, ""), r.Confirmed, r.Deletion, fixture.T0)
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

// The record is JSON in the annotation; the words of earlier raydars (in
// the annotation, or in the condition alone) still read, with their detail.
func TestStopRecordEncodings(t *testing.T) {
	for _, tc := range []struct {
		name, annotation, condition string
		condStatus                  metav1.ConditionStatus
		want                        StopRecord
		wantDetail                  string
		ok                          bool
	}{
		{name: "json, request", annotation: `{"jobId":"rj-1","request":"a@1","confirmed":true,"detail":"the dashboard is stopping it"}`,
			want: StopRecord{JobID: "rj-1", Request: "a@1", Confirmed: true}, wantDetail: "the dashboard is stopping it", ok: true},
		{name: "json, deletion", annotation: `{"jobId":"rj-1","deletion":true,"confirmed":true}`,
			want: StopRecord{JobID: "rj-1", Deletion: true, Confirmed: true}, ok: true},
		{name: "json, pending", annotation: `{"jobId":"rj-1","request":"a@1","confirmed":false,"detail":"refused"}`,
			want: StopRecord{JobID: "rj-1", Request: "a@1"}, wantDetail: "refused", ok: true},
		{name: "json without a job", annotation: `{"request":"a@1","confirmed":true}`},
		{name: "broken json", annotation: `{"jobId":"rj-1",`},
		{name: "words of an earlier raydar in the annotation", annotation: `Stop of Ray job "rj-1" for request "a \"b\"" confirmed: it had already ended`,
			want: StopRecord{JobID: "rj-1", Request: `a "b"`, Confirmed: true}, wantDetail: "it had already ended", ok: true},
		{name: "earlier words, deletion, pending", annotation: `Stop of Ray job "rj-1" on deletion not confirmed yet`,
			want: StopRecord{JobID: "rj-1", Deletion: true}, ok: true},
		{name: "other words", annotation: `stopped by hand`},
		{name: "earlier words, unquoted id", annotation: `Stop of Ray job rj-1 on deletion confirmed`},
		{name: "the condition alone", condition: `Stop of Ray job "rj-1" on deletion confirmed: x`, condStatus: metav1.ConditionTrue,
			want: StopRecord{JobID: "rj-1", Deletion: true, Confirmed: true}, wantDetail: "x", ok: true},
		{name: "a condition that contradicts its words", condition: `Stop of Ray job "rj-1" on deletion confirmed`, condStatus: metav1.ConditionFalse},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := &rayv1.RayJob{}
			if tc.annotation != "" {
				j.Annotations = map[string]string{rayv1.JobStopRecordAnnotationKey: tc.annotation}
			}
			if tc.condition != "" {
				j.Status.Conditions = []metav1.Condition{{Type: rayv1.JobStopConditionType, Status: tc.condStatus, Message: tc.condition}}
			}
			got, detail, ok := readStopRecord(j)
			if ok != tc.ok || got != tc.want || detail != tc.wantDetail {
				t.Fatalf("got %+v %q %v, want %+v %q %v", got, detail, ok, tc.want, tc.wantDetail, tc.ok)
			}
		})
	}
	// What SetStopRecord writes: JSON in the annotation, words in the condition.
	j := &rayv1.RayJob{}
	SetStopRecord(j, StopRecord{JobID: "rj-1", Request: "a@1", Confirmed: true}, "done", fixture.T0)
	if v := j.Annotations[rayv1.JobStopRecordAnnotationKey]; v != `{"jobId":"rj-1","request":"a@1","confirmed":true,"detail":"done"}` {
		t.Fatal(v)
	}
	if c := j.Status.Conditions; len(c) != 1 || c[0].Message != `Stop of Ray job "rj-1" for request "a@1" confirmed: done` || c[0].Status != metav1.ConditionTrue {
		t.Fatalf("%+v", c)
	}
}
