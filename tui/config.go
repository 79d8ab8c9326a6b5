package tui

import (
	"time"

	"github.com/raydar/raydar/kube/watch"
	"github.com/raydar/raydar/tui/keys"
	"github.com/raydar/raydar/tui/styles"
)

// Options configure the TUI. The zero value works: an empty store, no live
// feed, default keys, colours, the wall clock.
type Options struct {
	// Session is the initial connection (context name, server, feed, role,
	// job logs).
	Session Session
	// Fleet are the contexts of a fleet view (raydar --context a,b,
	// --all-contexts): with two or more, the lists show the objects of
	// all of them with a CONTEXT column, each fed and diagnosed on its own,
	// and Session and Store are not used (with one, it is that one's
	// Session and Store). `:ctx NAME` shows one of them,
	// `:ctx all` every one again (app_fleet.go).
	Fleet []FleetMember
	// Backend switches contexts (:ctx); nil disables switching.
	Backend Backend
	// Store is the initial store; nil starts empty. Tests fill it directly.
	Store *watch.Store
	// Keys is the key map; nil means keys.Default(). Load the user's with
	// keys.LoadDefault().
	Keys *keys.KeyMap
	// NoColor draws without colour and with ASCII glyphs (--no-color,
	// NO_COLOR); it wins over Styles. Pass ProgramOptions(opts) to
	// tea.NewProgram as well.
	NoColor bool
	// Styles are the colours: a built-in skin with the user's skin.yaml
	// (styles.LoadDefault); nil means styles.Default().
	Styles *styles.Styles
	// ReadOnly hides Dangerous actions (--readonly).
	ReadOnly bool
	// Actions are the per-view actions (issue 7); see Action.
	Actions map[ViewKind][]Action
	// StartView is the first view (default, and for a view that is not a
	// list: ClustersView).
	StartView ViewKind
	// Now is the clock; nil means time.Now. Tests pin it.
	Now func() time.Time
	// Tick is how often ages, the role and flash expiry refresh (default 1s).
	Tick time.Duration
	// ResizeDebounce delays applying a terminal resize while the size keeps
	// changing (default 50ms). The first size applies at once.
	ResizeDebounce time.Duration
	// NoClipboard says why c and C cannot reach the terminal's clipboard
	// (e.g. "the output is not a terminal"); they then show the text
	// instead. "": they write OSC 52 (app_copy.go).
	NoClipboard string
	// Logf receives diagnostics (write them to a file; never the screen).
	Logf func(format string, args ...any)
}

// Session is one connection as the TUI sees it.
