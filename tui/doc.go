// Package tui owns raydar's terminal UI: a k9s-style shell (header,
// key hints, title bar, breadcrumbs, flash line, `:` command mode with
// aliases and completion, `/` filter, `?` help) around live views of
// RayClusters, RayJobs, RayServices, RayCronJobs and Ray pods, and detail
// views of a cluster, a job, a service and a cronjob (its schedule in
// words, next run, and the RayJobs it created with why a failed one
// failed).
//
// Data flows one way: a Feed (kube/watch.Source, fed by the shared informer
// cache) hands batches of deltas to Update, which applies them to a
// watch.Store and to the views' tables; View only reads. Every call that can
// block (job logs, context switches, actions) runs inside a tea.Cmd with the
// busy indicator on.
//
// Rooms: the TUI is split into packages that import downward only, so Go
// refuses a back-reference (kube/layers_test.go checks the order):
//
//	keys, styles, table   the key map, the styles, the virtualised table
//	format, diagnose      the words (status, ages, the describer); the WHY cache
//	host                  the page plumbing: Env (a session) and its Host (the
//	                      App: show a dialog, push a page), Page and Base,
//	                      Target, Dialog, the messages, Session and its sources
//	widgets               text and log views, the confirm, scale and forward
//	                      dialogs, the Why and Ray blocks
//	registry              the registry of kinds as a mechanism: an Entry and
//	                      its typed Def, the shared columns, the list page
//	                      every kind's list is, the child index; Kinds, the
//	                      lookups (host.Kinds for pages and actions)
//	pages/...             one package per page: each kind's (cluster, job,
//	                      service, cronjob, pod) holds its registry entry
//	                      beside its detail page; describe, logs, raylogs,
//	                      forwards, gpus (:gpus, the idle GPUs)
//	actions               raydar's actions (ByName)
//	tui                   the App: stack, keys, prompt, render, the list of
//	                      the kinds' entries (kinds.go), and the public
//	                      names (api.go)
//
// Kinds: a kind's registry entry (tui/registry's Entry, filled in by its
// page package's Entry()) holds its list and detail views, its `:` aliases
// and title (from its descriptor in rayapi/kinds), its help line, the
// actions each of its views offers, its store (watch) kind, whether
// suspend/resume and delete apply, and its typed Def: the list columns
// (header, width, cell, sort key), the drill-down, the describe fields and
// the children it counts (a RayCronJob's RayJobs by their
// ray.io/cronjob-name label, counted from store changes, never per frame).
// Nothing else in the TUI switches over kinds; the App reads the registry,
// pages and actions ask it through host.Kinds (a page opens another kind's
// page with host.Kinds.Open, never by importing that kind's package). Adding a kind takes one page
// package under pages (its views, Entry() and detail page embedding
// host.Base), listed in kinds() (kinds.go) and, for a public name of its
// views, in api.go. Outside tui it needs its descriptor (rayapi/kinds:
// its title, every name the `:` prompt and -c take, spec.suspend; its
// watch.Kind and kube/actions' Kind follow from it); an action of its own (a
// RayCronJob's trigger) is one more Action in DefaultActions, named in the
// entry's ListActions/DetailActions.
//
// Diagnosis (tui/diagnose, widgets/whyblock.go): the causes rayapi/why names for
// every RayCluster, RayJob and RayService are cached per UID and computed
// when the object, its pods, their Events, the nodes (in what scheduling
// reads of them), who reconciles (Session.Role) or the open cluster's Ray
// capacity change — never per frame. The lists' WHY column is projected
// from the cache (a change of causes re-projects that row); the detail
// pages put a Why block on top (one line per cause, most decisive first,
// evidence and fix beneath while space allows; nothing when healthy). The
// cluster detail shows Ray's own view of capacity (Session.Capacity, read
// on ticks for that cluster only) and feeds it to the diagnosis. For the
// clusters with enableInTreeAutoscaling that the page on top shows
// (host.ClustersShower: the RayCluster list's rows on screen, the cluster,
// job and service pages' clusters), whether the head's ServiceAccount may
// do what Ray's autoscaler does is asked as `raydar why` asks it
// (Session.Review, two SubjectAccessReviews in a command, once a minute;
// diagnose.PollAccess), so AutoscalerForbidden shows before the sidecar
// crashes.
//
// Pages (host.Page) embed host.Base, which gives the defaults (no table,
// nothing to open, no namespace scope, no store changes), so a page writes
// its model, keys, size, view and target and overrides only what it does.
// A page or an action opens a dialog or pushes a page through its Env's
// Host (the one way dialogs open); a command that builds one later returns
// a ShowDialogMsg or host.PushMsg, which the App hands to the same Host.
//
// Fleet view (Options.Fleet, app_fleet.go; raydar --context a,b): each
// context is a member with a host.Env of its own (store, session,
// diagnoses, history), fed by its own Feed, so none waits on another. The
// App's Env is then the fleet's (host.Env.Fleet): its lists merge the
// members' stores (registry.ListPage: a CONTEXT column, row IDs keyed by
// member and UID), and a page opened from a row, an action on one, gets the
// row's member Env; the App gives every page the changes of its own
// context only (envOf) and a fleet list each member's (host.FleetPage).
// `:ctx NAME` shows one member, `:ctx all` the fleet; the header shows each
// member's state (Session.Health, Synced) and a lost member's rows read
// stale.
//
// Extension points: Backend (context switching), JobLogs (Ray dashboard),
// Session.Role (reconciler role), Options.Actions (per-view actions with a
// Dangerous flag for --readonly; issue 7), Dialog (modal components opened
// by actions), host.Host (what a page or an action asks of the App).
//
// DefaultActions are raydar's actions (issue 7): scale a worker group (s),
// delete marked workers (ctrl+d in the cluster detail), stop a RayJob (x),
// trigger a RayCronJob now (t), suspend/resume (z), delete (ctrl+d),
// edit in $KUBE_EDITOR (e: the editor gets the terminal through
// host.ExecMsg), describe (d) and follow a pod's logs (l). c and C copy
// a name, a row or a describe page's YAML with OSC 52 (app_copy.go). The mutating ones open a dialog whose focus starts away from
// Confirm, validate what is typed with kube/actions' Plan functions, and
// apply through kube/actions (the choke point: read-only gate, Events,
// audit log) in a command with the busy indicator on. Their dependencies
// per connection are ActionDeps (Session.Deps after a context switch).
package tui
