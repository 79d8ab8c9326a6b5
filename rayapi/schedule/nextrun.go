package schedule

import (
	"time"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// Earliest is the time after which the next tick is due: the last tick
// that has a RayJob (status.lastScheduleTime), else the creation time (the
// first tick is the first one after the RayCronJob was created), else now
// for an object that never passed an API server. As KubeRay v1.7.0.
func Earliest(cj *rayv1.RayCronJob, now time.Time) time.Time {
	switch {
	case cj.Status.LastScheduleTime != nil:
		return cj.Status.LastScheduleTime.Time
	case !cj.CreationTimestamp.IsZero():
		return cj.CreationTimestamp.Time
	}
	return now
}

// NextRun is when the RayCronJob's next RayJob is due: a tick already due
// but not created yet (it is overdue: at or before now), else the first
// tick after now. ok is false while the RayCronJob is invalid or suspended,
// or when its schedule never fires again (30 February). local is the
// operator's time zone, for a RayCronJob without spec.timeZone.
func NextRun(cj *rayv1.RayCronJob, now time.Time, local *time.Location) (t time.Time, ok bool) {
	if cj.Spec.IsSuspended() {
		return time.Time{}, false
	}
	s, errs := rayv1.ParseCronSchedule(&cj.Spec, OrLocal(local))
	if len(errs) > 0 {
		return time.Time{}, false
	}
	if d := s.Next(Earliest(cj, now)); !d.IsZero() && !d.After(now) {
		return d, true
	}
	t = s.Next(now)
	return t, !t.IsZero()
}

// OrLocal is l, or time.Local when l is nil (a RayCronJob without
// spec.timeZone runs in the operator's time zone).
func OrLocal(l *time.Location) *time.Location {
	if l == nil {
		return time.Local
	}
	return l
}
