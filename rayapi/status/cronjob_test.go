package status

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

func TestCronJob(t *testing.T) {
	const yes, no = metav1.ConditionTrue, metav1.ConditionFalse
	valid := func(s metav1.ConditionStatus, reason string) []metav1.Condition {
		return []metav1.Condition{cond(rayv1.RayCronJobScheduleValid, s, reason)}
	}
	tests := []struct {
		name    string
		suspend *bool
		deleted bool
		conds   []metav1.Condition
		want    string
	}{
		{"new", nil, false, nil, "scheduled"},
		{"valid condition", nil, false, valid(yes, rayv1.RayCronJobReasonValid), "scheduled"},
		{"suspend false", ptr.To(false), false, nil, "scheduled"},
		{"suspended", ptr.To(true), false, nil, "suspended"},
		{"invalid schedule wins over suspended", ptr.To(true), false, valid(no, rayv1.RayCronJobReasonInvalidSchedule), "invalid schedule"},
		{"invalid time zone", nil, false, valid(no, rayv1.RayCronJobReasonInvalidTimeZone), "invalid time zone"},
		{"invalid job template", nil, false, valid(no, rayv1.RayCronJobReasonInvalidJobTemplate), "invalid job template"},
		{"invalid name", nil, false, valid(no, rayv1.RayCronJobReasonInvalidName), "invalid name"},
		{"invalid, reason unknown", nil, false, valid(no, "SomethingElse"), "invalid"},
		{"deleting wins over everything", ptr.To(true), true, valid(no, rayv1.RayCronJobReasonInvalidSchedule), "deleting"},
	}
	for _, tt := range tests {
		c := &rayv1.RayCronJob{Spec: rayv1.RayCronJobSpec{Suspend: tt.suspend}, Status: rayv1.RayCronJobStatus{Conditions: tt.conds}}
		if tt.deleted {
			c.DeletionTimestamp = deleted
		}
		checkWord(t, tt.name, CronJob, c, tt.want)
	}
}
