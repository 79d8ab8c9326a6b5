package tui

import (
	"github.com/raydar/raydar/tui/pages/cluster"
	"github.com/raydar/raydar/tui/pages/cronjob"
	"github.com/raydar/raydar/tui/pages/job"
	"github.com/raydar/raydar/tui/pages/pod"
	"github.com/raydar/raydar/tui/pages/service"
	"github.com/raydar/raydar/tui/registry"
)

// kinds returns the registry of the kinds the TUI shows, in the order of
// the help's Commands: each kind's entry is its page package's
// (tui/registry says what an entry holds).
func kinds() registry.Kinds {
	return registry.Kinds{Entries: []registry.Entry{cluster.Entry(), job.Entry(), service.Entry(), cronjob.Entry(), pod.Entry()}}
}
