// Package rayservice owns raydar's RayService reconciler: the RayService's
// RayClusters (pending and active, zero-downtime upgrades), its head and
// serve Services, the Serve applications through the dashboard, the
// readiness of Serve proxies, and its status, with KubeRay v1.7.0's
// conditions and Event reasons. The manager and the one Options of all
// kinds are in package controller; what the kinds share in controller/kit,
// used here as by the other kinds: the setup of its controller (kit.Setup
// from this package's Registration), the Reconcile prologue
// (kit.Loop), read-your-writes (kit.Expectations), the status writer with
// coalescing (kit.StatusWriter), say-once Events (kit.Events), the
// other-operator gate; conditions are meta.SetStatusCondition's.
//
// # Shape
//
// Reconcile is the kit's Loop (get, gone → forget, our own last write, the
// gate, 409 → again from a fresh read) around one Pass (reconciler.go) of
// observe → decide → act:
//
//   - observe (observe.go) reads the shared cache (clusters, pods), the
//     package's own cache of the RayServices' Services and EndpointSlices,
//     this process's writes the caches do not show yet (kit.Overlay,
//     overlayService, overlayPod) and each cluster's Serve through the
//     dashboard and the Serve proxies (proxy.go); it writes nothing;
//   - decide (decide.go, decide_clusters.go, decide_serve.go,
//     decide_traffic.go, decide_suspend.go, timeout.go, status.go,
//     build.go) is a pure function from what was observed to a
//     plan: clusters to create, update and delete, Serve submissions, pod
//     labels, cluster annotations, Services, Events, the status;
//   - act (act.go) carries the plan out in ordered steps (acting: finalizer,
//     clusters, submissions, labels, Services, deletions), every write
//     idempotent, and writes
//     the status through writeStatus (status.go: statusChange says what
//     the kit's StatusWriter writes now, holds or drops); the status patch
//     is shaped in patch.go.
//
// # Where each behaviour lives
//
//	decide's steps, in order                       decide.go (decide, deciding)
//	which cluster serves, pending, retiring       decide_clusters.go (classifyClusters, activeCluster)
//	upgrade: new cluster or not, pending kept      decide_clusters.go (needNewCluster, settlePending)
//	traffic switch, deletion delay, Services       decide_traffic.go (switchTraffic, switchTo, deleteRetired,
//	                                                 decideServices, planService)
//	incremental upgrade (Gateway, HTTPRoute,       incremental.go (stepIncremental, stepCapacity,
//	  target_capacity steps, per-cluster Services)   stepTraffic, trafficStep, capacityStep),
//	                                                 act.go (writeGateway, targetCapacities)
//	in-place updates (groups appended, replicas)   build.go (inPlaceUpdate), decide_clusters.go (updateInPlace)
//	cluster spec hashes                            build.go (clusterHash, clusterMatches)
//	serveConfigV2 submission, back-off, re-submit  decide_serve.go (serve, decideServe), act.go (submit)
//	ray.io/serve pod labels, proxy health          decide_serve.go (decideServeLabels), proxy.go
//	Serve probes and their freshness               observe.go (probe), decide_serve.go (probeInterval)
//	head and serve Services                        build.go (buildHeadService, buildServeService)
//	spec.suspend                                   decide_suspend.go
//	ray.io/initializing-timeout                    timeout.go
//	status, conditions, urgency                    status.go (computeStatus, statusUrgent)
//	status write, coalescing                       status.go (statusChange, writeStatus), patch.go
//	read-your-writes of children                   observe.go (kit.Overlay, overlayService, overlayPod), act.go
//	invalid spec, refused fields                   decide.go (refuse, kit.Refusal), unsupported.go
//	watches, Options, defaults                     reconciler.go (Registration, for kit.Setup)
//
// # Restart safety
//
// What a restart must know lives in the API server, not in memory:
//   - which cluster serves: the selector of the serve Service (with an
//     incremental upgrade, of the head Service);
//   - where an incremental upgrade is: the HTTPRoute's weights and the
//     status's targetCapacity, trafficRoutedPercent and
//     lastTrafficMigratedTime, as KubeRay keeps it (written at once);
//   - which config a cluster runs: the raydar.io/serve-config-hash
//     annotation written after the dashboard accepted it, checked against
//     the applications the dashboard shows;
//   - when an old cluster goes: its raydar.io/delete-after annotation.
//
// Memory holds only what may be lost: recent Serve probes (so a burst of
// watch events does not become a burst of dashboard calls), the back-off of
// a rejected submission, and this process's writes until the cache shows
// them (so a lagging cache never causes a second cluster or a second status
// write).
package rayservice
