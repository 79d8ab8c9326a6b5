package portforward

import "time"

// Backoff is a capped exponential back-off: Initial, then doubled per
// failure, never more than Max.
type Backoff struct {
	Initial time.Duration
	Max     time.Duration
}

// DefaultBackoff waits 250ms, 500ms, 1s, … up to 8s.
var DefaultBackoff = Backoff{Initial: 250 * time.Millisecond, Max: 8 * time.Second}

// Delay is the wait before attempt number failures+1, after failures
// consecutive failures (0: none, no wait).
func (b Backoff) Delay(failures int) time.Duration {
	if failures <= 0 {
		return 0
	}
	d := b.Initial
	if d <= 0 {
		d = DefaultBackoff.Initial
	}
	limit := b.Max
	if limit <= 0 {
		limit = DefaultBackoff.Max
	}
	for i := 1; i < failures; i++ {
		d *= 2
		if d >= limit {
			return limit
		}
	}
	return min(d, limit)
}

// StableAfter is how long a stream must have been up for its break to count
// as a fresh start (back-off from the beginning) rather than one more
// failure in a row.
const StableAfter = 5 * time.Second

// nextFailures is the failure count after a break: a stream that was up
// for StableAfter or more starts again from one failure; a connect that
// failed, or a stream that broke soon after, adds one.
func nextFailures(failures int, upFor time.Duration) int {
	if upFor >= StableAfter {
		return 1
	}
	return failures + 1
}
