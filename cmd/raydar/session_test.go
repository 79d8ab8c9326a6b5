package main

import (
	"slices"
	"testing"
	"time"

	"github.com/raydar/raydar/kube/inspect"
	"github.com/raydar/raydar/tui/diagnose"
)

// TestLoopOffWordsAreUnderstood: a session without its loop says who
// leads in the header's words, and the diagnosis reads who reconciles
// from those words (tui/diagnose ReconcilerOf): each Lease answer must
// reach it as meant, an unreadable Lease claiming nothing.
func TestLoopOffWordsAreUnderstood(t *testing.T) {
	for _, tc := range []struct {
		l             inspect.Leadership
		known, active bool
	}{
		{inspect.LeadershipHeld, true, true},
		{inspect.LeadershipLapsed, true, false},
		{inspect.LeadershipNone, true, false},
		{inspect.LeadershipUnknown, false, false},
	} {
		role := diagnose.LoopOffRole(tc.l, "op-1_x")
		r := diagnose.ReconcilerOf(role)
		if r.Known != tc.known || r.Active != tc.active {
			t.Errorf("leadership %d: role %q reads as %+v, want known %v active %v", tc.l, role, r, tc.known, tc.active)
		}
	}
	if got := diagnose.LoopOffRole(inspect.LeadershipUnknown, ""); got != diagnose.LoopOff {
		t.Errorf("an unreadable Lease says %q, want %q", got, diagnose.LoopOff)
	}
}

// TestLeasePollBacksOff: Leases this user may not read are asked for
// less and less often (a Forbidden every 5 s is noise in the API
// server's audit log), up to a minute; an answer brings back 5 s.
func TestLeasePollBacksOff(t *testing.T) {
	w := leasePollEvery
	var got []time.Duration
	for range 6 {
		w = nextLeasePoll(w, inspect.LeadershipUnknown)
		got = append(got, w)
	}
	want := []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second, time.Minute, time.Minute, time.Minute}
	if !slices.Equal(got, want) {
		t.Errorf("waits while unreadable %v, want %v", got, want)
	}
	if w = nextLeasePoll(w, inspect.LeadershipNone); w != leasePollEvery {
		t.Errorf("after an answer the wait is %v, want %v", w, leasePollEvery)
	}
}
