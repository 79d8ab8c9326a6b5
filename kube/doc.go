// Package kube owns raydar's side of a Kubernetes cluster, between the API
// types below it (rayapi: ray.io/v1, the one scheme rayapi/scheme, the Ray
// dashboard client rayapi/dashboard) and the programs above it (controller,
// tui, cmd). This package itself holds the connection: kubectl-compatible
// flags (--kubeconfig, --context, -n, -A) and the rest.Config and identity
// resolved from them ([Flags], [Target]). Clients are built with
// rayapi/scheme's scheme.New(); kube keeps no scheme of its own.
//
// Sub-packages, each owning one concern:
//
//   - kube/actions: the one choke point of every change raydar makes on a
//     person's behalf (scale, delete workers, stop a RayJob, suspend,
//     resume, delete), shared by the TUI and the CLI: a pure plan, one
//     conflict-checked write, an Event and an audit line.
//   - kube/edit: `e` and `raydar edit`: a ray.io object's YAML in the
//     person's editor ($KUBE_EDITOR), applied as kubectl edit applies it
//     (errors and conflicts reopen the file with them on top), through
//     kube/actions.
//   - kube/gauges: Ray's own gauges (CPU, memory, each GPU, the object
//     store, Serve) read off the Ray pods on screen through the API
//     server's pod proxy (or the sandbox's address book), parsed by
//     rayapi/raymetrics, with a bounded 15-minute history per cluster and
//     each GPU's idle clock (the TUI's use columns and :gpus, `raydar top`).
//   - kube/history: this machine's record of what happened to the Ray
//     objects (replica changes and their authors from managedFields,
//     pods, states), kept in a bounded bbolt file under the state
//     directory by the TUI and `raydar operator` (`raydar history`).
//   - kube/inspect: what rayapi/why needs to diagnose one RayCluster,
//     RayJob or RayService, read from the API server for `raydar why`
//     (the object, pods, Events, nodes, the leader Lease, submitter logs).
//   - kube/internal/wanted: the scheduling kube/gauges' Poller and
//     kube/raydash's CapacityPoller share: poll each key someone wants at
//     most every Interval, a bounded number at once, and forget the keys
//     nobody asked for.
//   - kube/raydash: how raydar reaches a RayCluster's Ray dashboard (the
//     sandbox's address book, the head Service's DNS name or the API
//     server's service proxy, with the cluster's auth token), and the
//     translation of a RayJob into a job submission; kube/raydash/addrbook
//     is the address book of Ray heads on loopback (the sandbox's simulated
//     heads), which the production operator reads, so it is outside the
//     sandbox tree.
//   - kube/redact: what of an object never reaches a screen or a log
//     (Secret data, literal passwords and tokens, their last-applied copies).
//   - kube/watch: the TUI's watch: informer handlers on the Ray kinds, Ray
//     pods and their Events, batched into deltas, and the Store the views
//     read.
//   - kube/sandbox/...: the local cluster behind `raydar sandbox`,
//     `raydar demo`, the integration tests and the benchmarks, a product
//     feature rather than a test helper: kube/sandbox (a real control plane
//     on loopback, kwok nodes), kube/sandbox/rayhead (one simulated Ray
//     head: dashboard API and Serve proxy, speaking rayapi/dashboard's own
//     wire types), kube/sandbox/headsim (a simulated head for every Ready
//     head pod, and stand-ins for the RayJob submitters, which write where
//     they answer into kube/raydash/addrbook's book for other raydar
//     processes), kube/sandbox/refusable (the HTTP server a head answers
//     on, which can refuse connections and listen again) and
//     kube/sandbox/seed (the demo's objects and the loop that keeps them
//     moving).
//
// Layers: no package under kube imports controller, tui or cmd, and rayapi
// imports nothing of kube (layers_test.go checks it with `go list -deps`).
// What two layers share lives in rayapi. The sandbox is walled: no package
// but cmd/raydar (its sandbox and demo commands), the sandbox's own and
// the tests under test/ may link kube/sandbox/... (layers_test.go too), so
// raydar-operator, the reconcilers and the TUI ship no simulator.
package kube
