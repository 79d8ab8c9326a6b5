package portforward

import "time"

// Phase is where a forward is in its life.
type Phase string

const (
	// Connecting: listening locally, the first stream not yet made.
	Connecting Phase = "Connecting"
	// Up: a stream to Pod is open; local connections go through.
	Up Phase = "Up"
	// Reconnecting: the stream broke (or could not be made) Since; the
	// supervisor is trying again with back-off.
	Reconnecting Phase = "Reconnecting"
	// Stopped: ended by Stop or Close; the local ports are released.
	Stopped Phase = "Stopped"
)

// State is a forward's state at one moment; a copy, safe to keep.
type State struct {
	ID int
	// Target says what is forwarded: "cluster ns/name (head)" or "pod ns/name".
	Target string
	// Namespace, Cluster and Pod: the target; Pod is the pod forwarded to
	// now (while Up) or last (otherwise), "" before the first.
	Namespace, Cluster, Pod string
	Ports                   []Port
	// Address is the local address listened on ("127.0.0.1").
	Address string
	Phase   Phase
	// Since is when Phase began; for Reconnecting, when the stream first
	// broke (failed retries do not move it).
	Since time.Time
	// LastError is the latest reason a stream broke or could not be made,
	// kept after it comes back Up; LastErrorAt is when.
	LastError   string
	LastErrorAt time.Time
	// Reconnects counts the streams made after the first.
	Reconnects int
}

// connected is the state once a stream to pod is open.
func (s State) connected(pod string, now time.Time) State {
	if s.Phase == Up || s.Phase == Reconnecting {
		s.Reconnects++
	}
	s.Phase, s.Since, s.Pod = Up, now, pod
	return s
}

// broke is the state once a stream broke or could not be made.
func (s State) broke(err error, now time.Time) State {
	if s.Phase == Stopped {
		return s
	}
	if err != nil {
		s.LastError, s.LastErrorAt = err.Error(), now
	}
	switch s.Phase {
	case Up:
		s.Phase, s.Since = Reconnecting, now
	case Connecting:
		// The first connect failing is a reconnect too: the forward keeps
		// listening and retrying; Since stays when listening began.
		s.Phase = Reconnecting
	}
	return s
}

// stopped is the final state.
func (s State) stopped(now time.Time) State {
	if s.Phase != Stopped {
		s.Phase, s.Since = Stopped, now
	}
	return s
}

// LocalURL is the URL of a port on the local side ("http://127.0.0.1:8265").
func (s State) LocalURL(p Port) string { return "http://" + joinHostPort(s.Address, p.Local) }
