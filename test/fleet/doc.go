// Package fleet owns the tests of raydar over several kube contexts at once
// (issue 25, "Every cluster at once") against real API servers: TestMain
// (main_test.go) starts two sandboxes on this machine, with the distinct
// context names `raydar sandbox` gives two state directories, and merges
// their kubeconfigs as KUBECONFIG=A:B does. The tests run the built raydar
// binary as a user would: `raydar get --context a,b` and `--all-contexts`
// list both with a CONTEXT column, a third context on a closed port, or one
// whose user may not list RayClusters, costs only its own rows (a stderr
// line, exit status 1), and `raydar scale
// --context b` writes only the second sandbox's object of a namespace/name
// both have. tui_test.go runs the TUI on both and the unreachable third in
// a tmux pane: rows of both with their context, the third's state in the
// header, no reconcile loop, and a delete on the second's row reaching it
// alone (it needs tmux, and is skipped without).
//
// The tests need the control-plane binaries (`make tools`) and are skipped
// with -short. The package has no code besides its tests.
package fleet
