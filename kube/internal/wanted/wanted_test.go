package wanted

import (
	"cmp"
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// polls is the state the tests keep per key: how many polls recorded.
type polls struct{ n int }

// clock is a fake time the tests move by hand.
type clock struct{ now time.Time }

func (c *clock) Now() time.Time { return c.now }

func newTest(t *testing.T, o Options[string, polls]) (*Scheduler[string, polls], *clock) {
	t.Helper()
	c := &clock{now: time.Unix(1000, 0)}
	o.Interval, o.Forget, o.Now = cmp.Or(o.Interval, 5*time.Second), 30*time.Second, c.Now
	if o.Poll == nil {
		o.Poll = func(context.Context, string) func(*polls) { return func(v *polls) { v.n++ } }
	}
	s := New(o)
	t.Cleanup(s.Close)
	return s, c
}

// recorded is the number of polls recorded for key (and marks it wanted).
func recorded(s *Scheduler[string, polls], key string) int {
	var n int
	s.Want(key, func(v *polls) { n = v.n })
	return n
}

func inFlight(s *Scheduler[string, polls]) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, e := range s.keys {
		if e.inFlight {
			n++
		}
	}
	return n
}

func TestPollsAWantedKeyOncePerInterval(t *testing.T) {
	s, c := newTest(t, Options[string, polls]{})
	round := func() int {
		s.StartDue()
		s.Wait()
		return recorded(s, "a")
	}
	if n := recorded(s, "a"); n != 0 {
		t.Fatalf("%d polls before any round", n)
	}
	if n := round(); n != 1 {
		t.Fatalf("first round: %d polls, want 1", n)
	}
	c.now = c.now.Add(5*time.Second - time.Nanosecond)
	if n := round(); n != 1 {
		t.Errorf("before the interval: %d polls, want still 1", n)
	}
	c.now = c.now.Add(time.Nanosecond)
	if n := round(); n != 2 {
		t.Errorf("at the interval: %d polls, want 2", n)
	}
}

func TestHoldSkipsAKey(t *testing.T) {
	var until time.Time
	s, c := newTest(t, Options[string, polls]{Hold: func(_ *polls, now time.Time) bool { return now.Before(until) }})
	until = c.now.Add(10 * time.Second) // within Forget
	recorded(s, "a")
	s.StartDue()
	s.Wait()
	if n := recorded(s, "a"); n != 0 {
		t.Errorf("held: %d polls, want 0", n)
	}
	c.now = until
	s.StartDue()
	s.Wait()
	if n := recorded(s, "a"); n != 1 {
		t.Errorf("hold over: %d polls, want 1", n)
	}
}

func TestConcurrencyBoundsThePollsInFlight(t *testing.T) {
	release := make(chan struct{})
	var in, most atomic.Int32
	s, _ := newTest(t, Options[string, polls]{Concurrency: 2, Poll: func(ctx context.Context, _ string) func(*polls) {
		n := in.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		select {
		case <-release:
		case <-ctx.Done(): // a failed test's Close
		}
		in.Add(-1)
		return func(v *polls) { v.n++ }
	}})
	for _, k := range []string{"a", "b", "c"} {
		recorded(s, k)
	}
	<-s.kick // the new keys' wake-up
	s.StartDue()
	if n := inFlight(s); n != 2 {
		t.Fatalf("%d polls started with 2 slots and 3 keys due, want 2", n)
	}
	release <- struct{}{}
	<-s.kick // the finished poll frees its slot and wakes the loop
	s.StartDue()
	if n := inFlight(s); n != 2 {
		t.Errorf("%d polls in flight after one ended, want the third started (2)", n)
	}
	release <- struct{}{}
	release <- struct{}{}
	s.Wait()
	for _, k := range []string{"a", "b", "c"} {
		if n := recorded(s, k); n != 1 {
			t.Errorf("%s: %d polls, want 1", k, n)
		}
	}
	if m := most.Load(); m > 2 {
		t.Errorf("%d polls at once, want at most 2", m)
	}
}

func TestForgetsAKeyNobodyWants(t *testing.T) {
	release, aDone := make(chan struct{}), make(chan struct{})
	s, c := newTest(t, Options[string, polls]{Interval: time.Hour, Poll: func(ctx context.Context, k string) func(*polls) {
		if k == "slow" {
			select {
			case <-release:
			case <-ctx.Done(): // a failed test's Close
			}
		}
		return func(v *polls) {
			if v.n++; k == "a" {
				close(aDone)
			}
		}
	}})
	recorded(s, "a")
	recorded(s, "slow")
	s.StartDue()
	<-aDone
	c.now = c.now.Add(30 * time.Second)
	recorded(s, "b") // wanted now; a and slow were wanted 30 s ago
	s.StartDue()
	if n := s.Len(); n != 3 {
		t.Fatalf("%d keys after Forget exactly, want 3", n)
	}
	c.now = c.now.Add(time.Nanosecond)
	s.StartDue()
	if n := s.Len(); n != 2 {
		t.Errorf("%d keys past Forget with one poll in flight, want 2 (b and slow)", n)
	}
	release <- struct{}{}
	s.Wait()
	s.StartDue()
	if n := s.Len(); n != 1 {
		t.Errorf("%d keys once the slow poll ended, want 1 (b)", n)
	}
	if n := recorded(s, "a"); n != 0 {
		t.Errorf("a forgotten key wanted again: %d polls kept, want its state dropped (0)", n)
	}
}

func TestCloseCancelsAndWaitsForThePollsInFlight(t *testing.T) {
	started := make(chan struct{})
	var returned atomic.Bool
	s, _ := newTest(t, Options[string, polls]{Poll: func(ctx context.Context, _ string) func(*polls) {
		close(started)
		<-ctx.Done()
		returned.Store(true)
		return func(v *polls) { v.n++ }
	}})
	s.Start()
	recorded(s, "a") // wakes the loop, which starts the poll
	<-started
	s.Close()
	if !returned.Load() {
		t.Error("Close returned before the poll in flight")
	}
	if n := recorded(s, "a"); n != 0 {
		t.Errorf("a poll cancelled by Close was recorded (%d)", n)
	}
	if s.Want("b", func(*polls) { t.Error("read called for a new key after Close") }) {
		t.Error("Want of a new key after Close: want false")
	}
	s.StartDue()
	s.Wait()
	if n := s.Len(); n != 1 {
		t.Errorf("%d keys after Close and StartDue, want a's only", n)
	}
}
