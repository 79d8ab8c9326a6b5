package v1

import (
	"strings"
	"time"

	"github.com/robfig/cron/v3"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// RayCronJob spec validation (see validation.go for the entry points), and
// the one parser of a RayCronJob's schedule.

// MaxRayCronJobNameLength bounds a RayCronJob's name so that the RayJob of a
// tick, "<name>-<minutes since the epoch>" (a dash and ten digits), is a
// valid RayJob name (as KubeRay v1.7.0).
const MaxRayCronJobNameLength = MaxRayJobNameLength - 11

// ParseCronSchedule parses spec.schedule (robfig/cron's standard parser,
// KubeRay's: five fields or a descriptor) in spec.timeZone, or in local when
// the time zone is unset (KubeRay: the operator's local time zone). The
// errors name spec.schedule or spec.timeZone; the schedule is nil then.
func ParseCronSchedule(s *RayCronJobSpec, local *time.Location) (cron.Schedule, field.ErrorList) {
	var allErrs field.ErrorList
	p := field.NewPath("spec")
	loc := local
	if s.TimeZone != nil {
		tz := *s.TimeZone
		switch l, err := time.LoadLocation(tz); {
		case tz == "":
			allErrs = append(allErrs, field.Invalid(p.Child("timeZone"), tz,
				"must not be empty; leave it unset for the operator's local time zone"))
		case err != nil:
			allErrs = append(allErrs, field.Invalid(p.Child("timeZone"), tz,
				"must be an IANA time zone name such as Europe/Berlin: "+err.Error()))
		default:
			loc = l
		}
	}
	sp := p.Child("schedule")
	var sched cron.Schedule
	switch {
	case strings.TrimSpace(s.Schedule) == "":
		allErrs = append(allErrs, field.Required(sp, "a cron expression such as \"0 2 * * *\" or a descriptor such as @daily"))
	case strings.Contains(s.Schedule, "TZ"):
		allErrs = append(allErrs, field.Invalid(sp, s.Schedule,
			"must not contain TZ= or CRON_TZ=; set "+p.Child("timeZone").String()+" instead"))
	default:
		parsed, err := cron.ParseStandard(s.Schedule)
		if err != nil {
			allErrs = append(allErrs, field.Invalid(sp, s.Schedule, "not a cron schedule: "+err.Error()))
			break
		}
		sched = parsed
	}
	if len(allErrs) > 0 {
		return nil, allErrs
	}
	if spec, ok := sched.(*cron.SpecSchedule); ok && loc != nil {
		spec.Location = loc // @every schedules have no location: they count from the last tick
	}
	return sched, nil
}

func validateRayCronJobSpec(c *RayCronJob, p *field.Path) field.ErrorList {
	_, allErrs := ParseCronSchedule(&c.Spec, time.UTC)
	// The RayJob of a tick carries none of the RayCronJob's annotations.
	job := &RayJob{Spec: c.Spec.JobTemplate}
	return append(allErrs, validateRayJobSpec(job, p.Child("jobTemplate"))...)
}
