package controller

import (
	"context"
	"sync"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// LeaderStatus says who reconciles: raydar processes elect one leader on a
// Lease; the others keep their caches warm and only observe.
type LeaderStatus struct {
	// Enabled is false when leader election is off (this process always
	// reconciles).
	Enabled bool
	// Identity is this process's identity in the election.
	Identity string
	// Holder is the identity currently holding the Lease ("" when nobody
	// holds it or it has not been read yet).
	Holder string
	// IsLeader is true while this process holds the Lease and reconciles.
	IsLeader bool
	// Lease is the Lease, "namespace/name".
	Lease string
	// RenewTime is the holder's last renewal; LeaseDuration how long the
	// Lease is valid after it.
	RenewTime     time.Time
	LeaseDuration time.Duration
	// ObservedAt is when this process last read the Lease.
	ObservedAt time.Time
	// LastError is the last error reading or writing the Lease ("" after a
	// success), e.g. no permission to write Leases in the namespace.
	LastError string
}

// Expired reports whether the holder's lease has run out at time now.
func (s LeaderStatus) Expired(now time.Time) bool {
	return s.Holder == "" || (!s.RenewTime.IsZero() && now.After(s.RenewTime.Add(s.LeaseDuration)))
}

// observingLock wraps the Lease lock the leader elector uses and remembers
// the last record it read or wrote. Every candidate reads the Lease each
// retry period, so this costs no extra request.
type observingLock struct {
	resourcelock.Interface

	mu       sync.Mutex
	rec      resourcelock.LeaderElectionRecord
	observed time.Time
	lastErr  string
}

func (l *observingLock) note(r *resourcelock.LeaderElectionRecord, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil {
		// NotFound on Get is the normal first step of an election.
		if !apierrors.IsNotFound(err) {
			l.lastErr = err.Error()
		}
		return
	}
	l.lastErr = ""
	if r != nil {
		l.rec = *r
		l.observed = time.Now()
	}
}

func (l *observingLock) Get(ctx context.Context) (*resourcelock.LeaderElectionRecord, []byte, error) {
	r, raw, err := l.Interface.Get(ctx)
	l.note(r, err)
	return r, raw, err
}

func (l *observingLock) Create(ctx context.Context, r resourcelock.LeaderElectionRecord) error {
	err := l.Interface.Create(ctx, r)
	l.note(&r, err)
	return err
}

func (l *observingLock) Update(ctx context.Context, r resourcelock.LeaderElectionRecord) error {
	err := l.Interface.Update(ctx, r)
	l.note(&r, err)
	return err
}

func (l *observingLock) snapshot() (resourcelock.LeaderElectionRecord, time.Time, string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.rec, l.observed, l.lastErr
}

// releasedLease is the manager's logger when it releases its Lease on a
// stop: controller-runtime's OnStoppedLeading reports that release as a
// loss ("leader election lost", pkg/manager/internal.go:632-641, v0.25),
// which the manager, already stopping, logs as an error on every quit
// ("error received after stop sequence was engaged", :537). This says what
// happened instead, at info level; every other line passes through.
type releasedLease struct{ logr.LogSink }

const (
	stopSequenceMsg   = "error received after stop sequence was engaged"
	leaderElectionErr = "leader election lost"
)

func (s releasedLease) Error(err error, msg string, kv ...any) {
	if msg == stopSequenceMsg && err != nil && err.Error() == leaderElectionErr {
		if s.LogSink.Enabled(0) {
			s.LogSink.Info(0, "released the leader election Lease", kv...)
		}
		return
	}
	s.LogSink.Error(err, msg, kv...)
}

func (s releasedLease) WithName(name string) logr.LogSink {
	return releasedLease{s.LogSink.WithName(name)}
}

func (s releasedLease) WithValues(kv ...any) logr.LogSink {
	return releasedLease{s.LogSink.WithValues(kv...)}
}

// quietRelease wraps l (a zero Logger stays as it is) with releasedLease.
func quietRelease(l logr.Logger) logr.Logger {
	if l.GetSink() == nil {
		return l
	}
	return logr.New(releasedLease{l.GetSink()})
}
