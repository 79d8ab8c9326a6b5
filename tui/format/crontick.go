package format

import (
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/raydar/raydar/kube/watch"
	"github.com/raydar/raydar/rayapi/status"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// CronTicks keeps each RayCronJob's next tick (CronNext) so that the views
// that count down to it every second parse its schedule only when the
// object changes, not per row per frame: a tick stays the answer until the
// object's schedule, suspend, last schedule or creation time changes or
// the clock leaves the span it holds for (a future tick is reached).
type CronTicks map[types.UID]*CronTick

// CronTick is one RayCronJob's next tick, the inputs it was worked out from
// and the span of clock times it holds for: [from, until), until zero for
// no end.
type CronTick struct {
	in          cronInputs
	from, until time.Time
	At          time.Time
	OK          bool
	// Zone is the time zone the schedule runs in (CronZone), Words the
	// schedule in words (CronWords).
	Zone  *time.Location
	Words string
}

// cronInputs is what CronNext reads of a RayCronJob.
type cronInputs struct {
	schedule, tz  string
	hasTZ, paused bool
	last, created time.Time
}

func cronInputsOf(c *rayv1.RayCronJob) cronInputs {
	in := cronInputs{schedule: c.Spec.Schedule, paused: c.Spec.IsSuspended(), created: c.CreationTimestamp.Time}
	if c.Spec.TimeZone != nil {
		in.tz, in.hasTZ = *c.Spec.TimeZone, true
	}
	if c.Status.LastScheduleTime != nil {
		in.last = c.Status.LastScheduleTime.Time
	}
	return in
}

// Get is c's tick at now, worked out again only when it no longer holds.
func (x CronTicks) Get(c *rayv1.RayCronJob, now time.Time) *CronTick {
	key, in := watch.Key(c), cronInputsOf(c)
	if t := x[key]; t != nil && t.in == in && !now.Before(t.from) && (t.until.IsZero() || now.Before(t.until)) {
		return t
	}
	t := &CronTick{in: in, from: now, Zone: CronZone(c), Words: CronWords(c)}
	t.At, t.OK = CronNext(c, now)
	switch {
	case t.OK && !t.At.After(now):
		// Overdue: it stays due from its tick on.
		t.from = t.At
	case t.OK:
		// Future: it holds until it is reached.
		t.until = t.At
	}
	x[key] = t
	return t
}

// Countdown is CronNextRun from the kept tick.
func (x CronTicks) Countdown(c *rayv1.RayCronJob, now time.Time) string {
	return x.Get(c, now).Countdown(now)
}

// Countdown is CronNextRun from the tick.
func (t *CronTick) Countdown(now time.Time) string { return status.NextRun(now, t.At, t.OK) }

// CronZone is the time zone of cj's schedule (the TUI's own without
// spec.timeZone, as CronNext).
func CronZone(cj *rayv1.RayCronJob) *time.Location {
	if tz := cj.Spec.TimeZone; tz != nil {
		if l, err := time.LoadLocation(*tz); err == nil {
			return l
		}
	}
	return time.Local
}
