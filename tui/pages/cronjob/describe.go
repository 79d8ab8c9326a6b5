package cronjob

import (
	"fmt"

	"github.com/raydar/raydar/kube/redact"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/tui/format"
)

// describeFields is the RayCronJob's part of its describe page.
func describeFields(d *format.Describer, x *rayv1.RayCronJob) {
	d.Field("Status", format.CronStatus(x))
	d.Field("Schedule", x.Spec.Schedule)
	d.Field("In words", format.CronWords(x))
	tz := format.None
	if x.Spec.TimeZone != nil {
		tz = *x.Spec.TimeZone
	}
	d.Field("Time zone", tz)
	d.Field("Suspend", fmt.Sprint(x.Spec.IsSuspended()))
	d.Field("Last schedule", format.MetaAge(d.Now, x.Status.LastScheduleTime))
	d.Field("Next run", format.CronNextRun(x, d.Now))
	d.Field("Entrypoint", format.OrNone(redact.Flags(x.Spec.JobTemplate.Entrypoint)))
	d.Conds(x.Status.Conditions)
}
