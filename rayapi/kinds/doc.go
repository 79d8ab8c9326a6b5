// Package kinds owns the one description of every kind raydar shows and acts
// on: RayCluster, RayJob, RayService, RayCronJob and the Ray pods. A [Kind]
// says its API kind and resource, every name a user may type for it (one
// list, read by `raydar get`, `why`, `history`, `suspend`/`resume`, the
// TUI's `:` prompt and `raydar -c`), how to make an empty object and list of
// it, its word in `raydar get`, its STATUS word (rayapi/status), whether
// and how it is suspended (and what that does), whether the API server may
// lack it, and whether `raydar why` diagnoses it.
//
// The watch (kube/watch), the actions (kube/actions: a lifecycle kind is
// its descriptor), the reconcilers' registrations (controller/kit: a
// controller and its Events are named after the kind), the CLI's help
// texts and look-ups (cmd) and the TUI's registry (each kind's entry, in
// its tui/pages package) read it; what they add per kind is their own, and
// optional: the watch's name for its store index (a kind without one is
// watched and stored all the same), the actions' warnings, a reconciler,
// the CLI's table columns (without, `raydar get` prints NAME, STATUS and
// AGE), the TUI's columns and pages. Adding a kind is one more [Kind] here,
// listed in [All].
package kinds
