// Package controller owns raydar's reconcile loop for KubeRay's ray.io/v1
// kinds, replacing KubeRay's operator: one controller-runtime manager (one
// shared informer cache, which the TUI reads too), leader election among
// raydar processes (leader.go), the detection of another operator (KubeRay)
// in the cluster, and one Options for all four kinds (operator.go: New puts
// what all kinds share in kit.Shared, kinds gives each kind its own
// options).
//
// Each kind has its own package, with the same shape (observe -> decide, a
// pure function to a plan -> act in ordered steps, idempotent writes), the
// same file names, and the same registration: reconciler.go's
// Registration returns a kit.Kind (what it watches and owns, its indexes
// and side cache, its Options over its defaults, its reconciler's
// constructor), and kit.Setup turns every kind's into a controller on the
// one manager:
//
//   - controller/raycluster: RayCluster (pods, Services, RBAC, auth Secret,
//     Ingress, GCS fault-tolerance clean-up, status, Events);
//   - controller/rayjob: RayJob (its RayCluster, submitter Job, dashboard
//     submission and the exactly-once stop);
//   - controller/rayservice: RayService (its clusters, zero-downtime
//     upgrades, head and serve Services, Serve applications);
//   - controller/raycronjob: RayCronJob (a RayJob per schedule tick, made
//     once across restarts; the schedule's words and next run).
//
// controller/kit is what all four share, each mechanism once: the setup of
// each kind's controller (kit.Setup), the Reconcile prologue and 409
// handling (kit.Loop), read-your-writes
// (kit.Expectations), the status writer with coalescing
// (kit.StatusWriter), say-once Events (kit.Events), refusals, the
// other-operator gate, names of children, predicates; its doc.go is the
// map.
// Import direction: controller -> controller/<kind> -> controller/kit ->
// rayapi; controller/features (KubeRay's feature gates, the --feature-gates
// parser) imports nothing of raydar, and reaches every kind through
// Options.FeatureGates and kit.Shared.Features. rayjob and rayservice import raycluster for the pieces of a
// cluster they build the same way (the head Service, pods, the refusals of
// unsupported cluster fields).
//
// # Running it
//
// Embedded, inside the TUI process:
//
//	op, done, err := controller.StartInBackground(ctx, cfg, controller.Options{LeaderElectionNamespace: ns, Identity: user})
//	op.Cache()         // the shared informer cache (RayClusters, Ray pods, Ray Services)
//	op.Leader()        // LeaderStatus: who holds the Lease, whether this process leads, Lease errors
//	op.OtherOperator() // a KubeRay operator found in the cluster, and what raydar does about it
//	op.Unmanaged()     // RayClusters left alone, and why
//	<-done             // nil when ctx ends; an error if leadership is lost
//
// Headless: `raydar operator` (cmd/raydar/operator.go) with the manifests and
// least-privilege RBAC in config/.
package controller
