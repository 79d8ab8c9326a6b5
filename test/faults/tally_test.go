package faults

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// What the suite counts, defined here and nowhere else. Its closing line
// is tally.summary():
//
//	faults: N faults injected into raydar, M invariants about raydar checked, V violations; harness: H self-checks, F failed
//
// where:
//
//   - A fault injected into raydar (scenario.fault) is one event raydar
//     has to survive: an operator process SIGKILLed, the API server or
//     etcd restarted, the operator's connection to the API server cut, a
//     Ray head pod deleted, a dashboard refusing connections, a dashboard
//     answering 500s and slowly while a job is submitted (one fault
//     however many requests the harness failed; that number is a figure).
//   - An invariant about raydar (scenario.check) is a property of what
//     raydar did: pods == desired, no orphan, a stop sent once, no status
//     write storm, no leak, a takeover in time, no TUI write, ...
//   - A harness self-check (scenario.selfCheck) is a property of the
//     suite's own tools or of the sandbox, checked so that the invariants
//     mean something: the fault really happened (the kills, the 500s, the
//     refused connections), the audit saw raydar's requests, etcd kept its
//     data. A failed self-check fails the test, but it is not a violation
//     by raydar.
//   - A violation is an invariant about raydar that did not hold.
type suiteTally struct {
	faults, invariants, violations atomic.Int64
	selfChecks, selfFailed         atomic.Int64
	mu                             sync.Mutex
	figures                        []string
}

// figure records a measured figure for the end of the suite.
func (s *suiteTally) figure(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.figures = append(s.figures, fmt.Sprintf(format, args...))
}

// summary is the suite's closing line (without the duration).
func (s *suiteTally) summary() string {
	return fmt.Sprintf("faults: %d faults injected into raydar, %d invariants about raydar checked, %d violations; harness: %d self-checks, %d failed",
		s.faults.Load(), s.invariants.Load(), s.violations.Load(), s.selfChecks.Load(), s.selfFailed.Load())
}

// failed reports whether anything the tally counts went wrong.
func (s *suiteTally) failed() bool { return s.violations.Load() > 0 || s.selfFailed.Load() > 0 }

// fault records a fault injected into raydar.
func (s *scenario) fault(format string, args ...any) {
	tally.faults.Add(1)
	s.t.Logf("%s fault: "+format, append([]any{time.Now().Format("15:04:05.000")}, args...)...)
}

// check records one check of an invariant about raydar.
func (s *scenario) check(name string, ok bool, detail string) {
	s.t.Helper()
	tally.invariants.Add(1)
	if !ok {
		tally.violations.Add(1)
		s.t.Errorf("invariant %q violated: %s", name, detail)
	}
}

// selfCheck records one check of the harness (see suiteTally).
func (s *scenario) selfCheck(name string, ok bool, detail string) {
	s.t.Helper()
	tally.selfChecks.Add(1)
	if !ok {
		tally.selfFailed.Add(1)
		s.t.Errorf("harness self-check %q failed (the suite's tools, not raydar): %s", name, detail)
	}
}
