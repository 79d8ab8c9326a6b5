package host

// ForwardsView is the forwards page (:forwards, :pf).
const ForwardsView ViewKind = "forwards"

// The Ray log views.
const (
	// RayLogsView lists the Ray log files of one node of a cluster (L).
	RayLogsView ViewKind = "raylogs"
	// RayLogView follows one Ray log file (enter on a file; E from a job
	// or service).
	RayLogView ViewKind = "raylog"
)
