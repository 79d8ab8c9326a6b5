// Package privilege holds raydar's least-privilege tests, on one sandbox
// whose API server authorizes with RBAC and writes an audit log
// (kube/sandbox Options.Audit):
//
//   - the operator runs as the ServiceAccount config/default creates, with a
//     TokenRequest token and the RBAC of config/rbac, through a RayCluster's
//     life (up, scaled, workers deleted, suspended, deleted), a RayJob to
//     completion and a RayService to Ready; the audit log shows no
//     forbidden request and none outside config/rbac's rules;
//   - a person with only the view ClusterRole runs `raydar get` for every
//     kind, and every mutating command is refused with the missing
//     permission in words, changing nothing;
//   - a --readonly TUI session through every view and action key makes no
//     mutating request (counted in the audit log).
//
// The tests need the control-plane binaries (make tools) and are skipped
// with -short.
package privilege
