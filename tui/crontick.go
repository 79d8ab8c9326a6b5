package tui

import (
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/raydar/raydar/kube/watch"
	"github.com/raydar/raydar/rayapi/status"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/tui/format"
)

// cronTicks keeps each RayCronJob's next tick (cronNext) so that the views
// that count down to it every second parse its schedule only when the
// object changes, not per row per frame: a tick stays the answer until the
// object's schedule, suspend, last schedule or creation time changes or
// the clock leaves the span it holds for (a future tick is reached).
type cronTicks map[types.UID]*cronTick

// cronTick is one RayCronJob's next tick, the inputs it was worked out from
// and the span of clock times it holds for: [from, until), until zero for
// no end.
type cronTick struct {
	in          cronInputs
	from, until time.Time
	at          time.Time
	ok          bool
	// zone is the time zone the schedule runs in (cronZone), words the
	// schedule in words (cronWords).
	zone  *time.Location
	words string
}

// cronInputs is what cronNext reads of a RayCronJob.
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

// get is c's tick at now, worked out again only when it no longer holds.
func (x cronTicks) Get(c *rayv1.RayCronJob, now time.Time) *cronTick {
	key, in := watch.Key(c), cronInputsOf(c)
	if t := x[key]; t != nil && t.in == in && !now.Before(t.from) && (t.until.IsZero() || now.Before(t.until)) {
		return t
	}
	t := &cronTick{in: in, from: now, zone: cronZone(c), words: format.CronWords(c)}
	t.at, t.ok = format.CronNext(c, now)
	switch {
	case t.ok && !t.at.After(now):
		// Overdue: it stays due from its tick on.
		t.from = t.at
	case t.ok:
		// Future: it holds until it is reached.
		t.until = t.at
	}
	x[key] = t
	return t
}

// countdown is cronNextRun from the kept tick.
func (x cronTicks) countdown(c *rayv1.RayCronJob, now time.Time) string {
	return x.Get(c, now).countdown(now)
}

func (t *cronTick) countdown(now time.Time) string { return status.NextRun(now, t.at, t.ok) }
