package gauges

import "time"

// Point is one value of a series at a time.
type Point struct {
	T time.Time
	V float64
}

// ring is a fixed-capacity history of points: the oldest is overwritten.
type ring struct {
	buf   []Point
	start int
	n     int
}

func newRing(capacity int) *ring { return &ring{buf: make([]Point, capacity)} }

func (r *ring) add(p Point) {
	if len(r.buf) == 0 {
		return
	}
	if r.n < len(r.buf) {
		r.buf[(r.start+r.n)%len(r.buf)] = p
		r.n++
		return
	}
	r.buf[r.start] = p
	r.start = (r.start + 1) % len(r.buf)
}

// points returns the points after since (zero: all), oldest first, in a
// new slice.
func (r *ring) points(since time.Time) []Point {
	out := make([]Point, 0, r.n)
	for i := 0; i < r.n; i++ {
		p := r.buf[(r.start+i)%len(r.buf)]
		if !p.T.Before(since) {
			out = append(out, p)
		}
	}
	return out
}

func (r *ring) last() (Point, bool) {
	if r.n == 0 {
		return Point{}, false
	}
	return r.buf[(r.start+r.n-1)%len(r.buf)], true
}
