// Package history owns raydar's own record of what happened to the Ray
// objects it watched, kept after Kubernetes has dropped its Events (one
// hour): a compact timeline per RayCluster, RayJob, RayService and
// RayCronJob of replica changes and who made them, pods created, deleted,
// evicted, OOM-killed or restarted, condition and state changes and job
// status changes.
//
// It is this machine's record, since raydar first ran here, not the
// cluster's: each raydar process (the TUI, `raydar operator`) records what
// its cache saw while it ran, into its own state directory.
//
// Observe -> decide -> act, as everywhere in raydar:
//
//   - author.go: who last wrote an object's spec, read from its
//     managedFields before the caches strip them ([Authors.Keep], one line
//     per cache), and the writer classified ([Classify]: the Ray
//     autoscaler, a person through raydar, raydar's reconciler, kubectl,
//     another client).
//   - diff.go, diffpod.go: the pure step, an old and a new object to
//     timeline entries ([Diff], [DiffPod]), table-tested.
//   - store.go: the embedded, bounded store (bbolt) under the state
//     directory: per-object and total bounds, oldest dropped; one writer
//     process at a time, a second one falls back to memory and says so.
//   - recorder.go: informer handlers that diff and hand entries to one
//     writer goroutine through a bounded channel (never blocking the
//     informer; drops counted).
//   - format.go: an entry in words, for `raydar history` and the TUI.
//
// The package is linked by the operator binary: it imports no tui,
// controller, cmd or kube/sandbox, only rayapi and client libraries.
package history
