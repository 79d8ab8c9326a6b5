// Package raycluster owns raydar's reconcile loop for KubeRay's RayCluster
// (ray.io/v1), replacing KubeRay's operator: the head pod, the head Service,
// the worker pods of every group (and the headless Service of multi-host
// groups), the autoscaler's ServiceAccount, Role and RoleBinding, the auth
// Secret of token authentication (auth.go), the dashboard Ingress of
// headGroupSpec.enableIngress (ingress.go), the serve Service of
// ray.io/enable-serve-service (serve_service.go), the GCS fault-tolerance
// finalizer and its Redis clean-up Job, the RayCluster's status and its
// Events, with KubeRay v1.7.0's conditions and Event reasons. Fields raydar
// does not implement are refused, with the reason in the status and an
// Event, never silently ignored (unsupported.go). The manager, leader
// election and the other-operator detection are in package controller;
// the RayJob and RayService loops in controller/rayjob and
// controller/rayservice.
//
// # Shape
//
// client-go's sample-controller shape on controller-runtime, in three steps:
//
//   - observe (reconciler.go): read the cluster, its pods and Services from
//     the shared informer cache, with this process's not-yet-seen writes laid
//     over them (expectations.go);
//   - decide (decide.go, status.go, build.go): a pure function from what was
//     observed to a plan — pods to create and delete, Services, RBAC, the
//     clean-up Job, finalizer changes, Events and the status to write;
//   - act (reconciler.go): apply the plan, every write idempotent, and write
//     the status only when it really changed.
//
// Names and labels of every child are in names.go; the status is computed in
// one place (computeStatus). Everything created carries a controller owner
// reference to its RayCluster, so the garbage collector removes it.
//
// # Restart safety
//
// Three mechanisms make the loop safe to kill at any point:
//
//  1. Pod names are chosen by the controller (KubeRay's
//     "<cluster>-<group>-worker-" prefix plus five random characters), not by
//     the API server's generateName. The expectation "pod X is being created"
//     is therefore recorded before the request leaves, and survives a lost
//     response.
//  2. In-memory expectations, keyed by RayCluster UID and pod name (creates)
//     or pod UID (deletes), are laid over the cache until the informer shows
//     each write, so a lagging cache never causes a second pod or a second
//     deletion in place of one already going. Deletes carry a UID
//     precondition, so a same-named successor is never hit.
//  3. On uncertainty — a write whose outcome is unknown (timeout, connection
//     reset, AlreadyExists on a name we picked) — the next pass lists the
//     cluster's pods live from the API server instead of the cache.
//
// Expectations need not survive a restart: a new process starts from a
// fresh, consistent LIST that contains every write the old process
// completed, and a write in flight at the moment of death either landed
// (and is listed) or did not. Scale-downs are recomputed from the spec
// (replicas, workersToDelete), never from memory, so none is lost.
// 409 conflicts send the reconcile back to a fresh read from the API server
// (up to three times, then controller-runtime's back-off).
//
// # Economy
//
// The cache holds only RayClusters, pods labelled ray.io/node-type and
// Services labelled ray.io/cluster, without managed fields; children that
// carry KubeRay's labels instead (the headless and serve Services, the auth
// Secret) are read live once per cluster per process. Pod updates that
// change nothing the decision reads are dropped before the queue. A pass
// emits one Event per KubeRay reason (and per worker group) for what it
// created, one per reason for what it deleted, one per kind of failure. Status changes that are not urgent
// (counts and addresses while pods come up) are coalesced for up to
// Options.StatusCoalesceWindow; a change of state or of a suspend/failure
// condition is written at once.
package raycluster
