package schedule

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

func TestDescribe(t *testing.T) {
	berlin := ptr.To("Europe/Berlin")
	for _, tt := range []struct {
		schedule string
		tz       *string
		want     string
	}{
		{"* * * * *", berlin, "every minute"},
		{"*/15 * * * *", nil, "every 15 minutes"},
		{"30 * * * *", berlin, "at minute 30 of every hour"},
		{"@hourly", nil, "at minute 0 of every hour"},
		{"0 */6 * * *", berlin, "at minute 0 of every 6 hours Europe/Berlin"},
		{"0 2 * * *", berlin, "every day at 02:00 Europe/Berlin"},
		{"0 2 * * *", nil, "every day at 02:00 in the operator's time zone"},
		{"  0   2 * * * ", berlin, "every day at 02:00 Europe/Berlin"},
		{"45 21 * * *", ptr.To("Asia/Taipei"), "every day at 21:45 Asia/Taipei"},
		{"0 9,17 * * *", berlin, "every day at 09:00 and 17:00 Europe/Berlin"},
		{"0 9 * * 1-5", berlin, "every Monday to Friday at 09:00 Europe/Berlin"},
		{"0 9 * * MON,wed,5", berlin, "every Monday, Wednesday and Friday at 09:00 Europe/Berlin"},
		{"5 0 * * 0", berlin, "every Sunday at 00:05 Europe/Berlin"},
		{"0 3 1 * *", berlin, "on day 1 of every month at 03:00 Europe/Berlin"},
		{"0 0 25 12 *", berlin, "every year on 25 December at 00:00 Europe/Berlin"},
		{"0 0 1 jan *", berlin, "every year on 1 January at 00:00 Europe/Berlin"},
		{"@daily", berlin, "every day at 00:00 Europe/Berlin"},
		{"@midnight", berlin, "every day at 00:00 Europe/Berlin"},
		{"@weekly", berlin, "every Sunday at 00:00 Europe/Berlin"},
		{"@monthly", berlin, "on day 1 of every month at 00:00 Europe/Berlin"},
		{"@yearly", berlin, "every year on 1 January at 00:00 Europe/Berlin"},
		{"@every 90m", berlin, "every 1h30m0s"},
		{"0-30/10 8-18 * * *", berlin, `cron "0-30/10 8-18 * * *" Europe/Berlin`},
		{"0 9 1 * 1", nil, `cron "0 9 1 * 1" in the operator's time zone`},
		{"invalid cron string", berlin, `spec.schedule: Invalid value: "invalid cron string": not a cron schedule: expected exactly 5 fields, found 3: [invalid cron string]`},
		{"0 2 * * *", ptr.To("Mars/Olympus_Mons"), `spec.timeZone: Invalid value: "Mars/Olympus_Mons": must be an IANA time zone name such as Europe/Berlin: unknown time zone Mars/Olympus_Mons`},
	} {
		if got := Describe(&rayv1.RayCronJobSpec{Schedule: tt.schedule, TimeZone: tt.tz}); got != tt.want {
			t.Errorf("Describe(%q, %v) = %q, want %q", tt.schedule, ptr.Deref(tt.tz, "<unset>"), got, tt.want)
		}
	}
}

func TestNextRun(t *testing.T) {
	t0 := utc(2024, 1, 1, 0, 0, 0)
	now := t0.Add(2*time.Minute + 10*time.Second)
	for _, tt := range []struct {
		name     string
		schedule string
		tz       *string
		last     time.Time
		suspend  bool
		want     time.Time // zero: none
	}{
		{"next tick after now", "*/5 * * * *", nil, t0, false, t0.Add(5 * time.Minute)},
		{"a due tick not created yet is overdue", "* * * * *", nil, t0, false, t0.Add(time.Minute)},
		{"in the time zone: 02:00 Berlin is 01:00 UTC", "0 2 * * *", ptr.To("Europe/Berlin"), t0, false, utc(2024, 1, 1, 1, 0, 0)},
		{"without a time zone: the operator's (UTC here)", "0 9 * * *", nil, t0, false, utc(2024, 1, 1, 9, 0, 0)},
		{"suspended: none", "*/5 * * * *", nil, t0, true, time.Time{}},
		{"invalid: none", "61 * * * *", nil, t0, false, time.Time{}},
		{"never fires: none", "0 0 30 2 *", nil, t0, false, time.Time{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cj := cronJob(tt.schedule, tt.tz, t0.Add(-time.Hour), tt.last)
			cj.Spec.Suspend = ptr.To(tt.suspend)
			got, ok := NextRun(cj, now, time.UTC)
			if ok != !tt.want.IsZero() || !got.Equal(tt.want) {
				t.Errorf("NextRun = %s, %v; want %s", got, ok, tt.want)
			}
		})
	}
}

func utc(y int, mo time.Month, d, h, mi, s int) time.Time {
	return time.Date(y, mo, d, h, mi, s, 0, time.UTC)
}

// cronJob is a RayCronJob created at created, last scheduled at last
// (zero: never).
func cronJob(schedule string, tz *string, created, last time.Time) *rayv1.RayCronJob {
	cj := &rayv1.RayCronJob{
		ObjectMeta: metav1.ObjectMeta{Name: "report", Namespace: "ml", CreationTimestamp: metav1.NewTime(created)},
		Spec:       rayv1.RayCronJobSpec{Schedule: schedule, TimeZone: tz},
	}
	if !last.IsZero() {
		cj.Status.LastScheduleTime = &metav1.Time{Time: last}
	}
	return cj
}
