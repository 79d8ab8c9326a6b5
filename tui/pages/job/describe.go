package job

import (
	"fmt"

	"github.com/raydar/raydar/kube/redact"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/rayapi/why"
	"github.com/raydar/raydar/tui/format"
)

// describeFields is the RayJob's part of its describe page.
func describeFields(d *format.Describer, x *rayv1.RayJob) {
	s, now := x.Status, d.Now
	d.Field("Job status", format.OrNone(string(s.JobStatus)))
	d.Field("Deployment", format.OrNone(string(s.JobDeploymentStatus)))
	d.Field("Cluster", format.OrNone(s.RayClusterName))
	d.Field("Job ID", format.OrNone(s.JobId))
	d.Field("Mode", format.OrNone(string(x.Spec.SubmissionMode)))
	d.Security(why.JobSecurity(x, nil))
	d.Field("Entrypoint", format.OrNone(redact.Flags(x.Spec.Entrypoint)))
	d.Field("Start", format.MetaAge(now, s.StartTime))
	d.Field("End", format.MetaAge(now, s.EndTime))
	d.Field("Duration", format.JobDuration(now, x))
	d.Field("Suspend", fmt.Sprint(x.Spec.Suspend))
	d.Field("Shutdown after", fmt.Sprint(x.Spec.ShutdownAfterJobFinishes))
	d.Field("Reason", format.OrNone(string(s.Reason)))
	d.Field("Message", format.OrNone(s.Message))
	if v := x.Annotations[rayv1.StopRequestedAnnotationKey]; v != "" {
		d.Field("Stop requested", v)
	}
	d.Conds(s.Conditions)
}
