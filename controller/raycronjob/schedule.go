package raycronjob

import (
	"fmt"
	"time"

	"github.com/robfig/cron/v3"
)

// maxCountedTicks bounds the count of missed ticks: beyond it Decide says
// "more than" instead of walking every tick (a per-minute schedule missed
// for a year has half a million).
const maxCountedTicks = 100_000

// lookbacks are the windows, from now backwards, in which dueTicks looks
// for the latest tick once there are too many to walk from the start.
var lookbacks = []time.Duration{
	time.Minute, time.Hour, 24 * time.Hour, 32 * 24 * time.Hour, 367 * 24 * time.Hour, 9 * 367 * 24 * time.Hour,
}

// due is what the schedule owes between the last tick and now.
type due struct {
	// Latest is the latest tick in (after, now]; zero when none is due.
	Latest time.Time
	// Skipped counts the ticks in (after, Latest): missed and not created.
	Skipped int
	// MoreThan is true when Skipped is only a lower bound (maxCountedTicks).
	MoreThan bool
}

// dueTicks finds the latest tick in (after, now] and counts the earlier
// ones there. robfig/cron has no Prev, so it walks forward from after; past
// maxCountedTicks it looks back from now instead.
func dueTicks(s cron.Schedule, after, now time.Time) due {
	t := s.Next(after)
	if t.IsZero() || t.After(now) {
		return due{}
	}
	if cd, ok := s.(cron.ConstantDelaySchedule); ok {
		// @every: ticks at after (to the second) + k*delay.
		base := after.Truncate(time.Second)
		k := int64(now.Sub(base) / cd.Delay)
		return due{Latest: base.Add(time.Duration(k) * cd.Delay), Skipped: int(k - 1)}
	}
	for n := 0; n < maxCountedTicks; n++ {
		next := s.Next(t)
		if next.IsZero() || next.After(now) {
			return due{Latest: t, Skipped: n}
		}
		t = next
	}
	for _, back := range lookbacks {
		start := now.Add(-back)
		if start.Before(t) {
			start = t
		}
		u := s.Next(start)
		if u.IsZero() || u.After(now) {
			continue
		}
		for next := s.Next(u); !next.IsZero() && !next.After(now); next = s.Next(u) {
			u = next
		}
		return due{Latest: u, Skipped: maxCountedTicks, MoreThan: true}
	}
	return due{Latest: t, Skipped: maxCountedTicks, MoreThan: true}
}

// skippedTicks says how many missed ticks a due skipped, for an Event.
func skippedTicks(d due) string {
	switch {
	case d.MoreThan:
		return fmt.Sprintf("more than %d missed ticks", d.Skipped)
	case d.Skipped == 1:
		return "1 missed tick"
	}
	return fmt.Sprintf("%d missed ticks", d.Skipped)
}
