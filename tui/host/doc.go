// Package host is the page plumbing of the TUI: what a page and an action
// talk to. Env is one session (styles, keys, clock, store, diagnoses,
// history, the session's sources and context) and its Host, the App as
// pages and actions reach it: ShowDialog and Push, within the Update that
// runs them (the one way dialogs open; a command that builds one later
// returns a ShowDialogMsg or PushMsg, which the App hands to the same
// Host). Page is a view on the stack, Base its defaults; the optional
// interfaces (Initer, Closer, Receiver, Ticker, CmdApplier, Searcher,
// CapacityPoller, HistoryPage, FleetPage) are what a page may add. In a
// fleet view (several contexts) each context is an Env of its own and the
// App's Env holds them (Env.Fleet): a page built with a context's Env
// (Base.Env) gets that context's changes and runs its actions there.
// Target, Action,
// Dialog, ResultMsg, WarnMsg and the views no kind owns (a kind's are its
// page package's) are shared by pages, actions and the App; Kinds is what
// they ask of the registry of kinds (tui/registry).
// The Session and its sources (Feed, JobLogs, PodLogs, RayLogSource,
// CapacitySource, HistorySource, Forwarder, Backend, Health) are how the App is
// wired to a connection. host imports no other room of the TUI but format
// and diagnose (and keys, styles, table).
package host
