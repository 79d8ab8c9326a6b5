// Package raycluster owns raydar's reconcile loop for KubeRay's RayCluster
// (ray.io/v1), replacing KubeRay's operator: the head pod, the head Service,
// the worker pods of every group (and the headless Service of multi-host
// groups), the autoscaler's ServiceAccount, Role and RoleBinding, the auth
// Secret of token authentication, the dashboard Ingress of
// headGroupSpec.enableIngress, the serve Service of
// ray.io/enable-serve-service, the GCS fault-tolerance finalizer and its
// Redis clean-up Job, the RayCluster's status and its Events, with KubeRay
// v1.7.0's conditions and Event reasons. Fields raydar does not implement
// are refused, with the reason in the status and an Event, never silently
// ignored. The manager, leader election and the one Options are in package
// controller; what the kinds share (the Reconcile prologue,
// read-your-writes, the status writer, say-once Events, the gate, the
// setup of every kind's controller: kit.Setup) in controller/kit; the RayJob and RayService loops in controller/rayjob and
// controller/rayservice, which build their clusters' head Service and pods
// with this package's BuildHeadService and BuildPod.
//
// # Shape
//
// observe → decide → act, the same in every kind package:
//
//	reconciler.go      Registration (for kit.Setup: watches, owned pods and Services, the pod index, Options) and Pass: observe, decide, act
//	observe.go         read the cluster's pods and Services from the cache, this process's unseen writes laid over them (kit.Overlay)
//	decide.go          the pure decision: observed → plan (children, pods, finalizer, Events, status); refusals; suspend; Recreate
//	decide_workers.go  worker groups: scale up and down, scaleStrategy.workersToDelete (decideGroup; per replica for multi-host, decideMultiHostGroup)
//	decide_delete.go   a deleted cluster: the GCS FT finalizer, the Redis clean-up Job, its timeout
//	build*.go          pure builders: pods (build.go, build_containers.go, build_raystart.go), Services (build_service.go), RBAC and Job (build_extra.go)
//	act.go             carry out the plan in KubeRay's order, every write idempotent, recorded in the kit's Expectations first:
//	                   act (finalizer, writes, Events, status, failures), applyWrites and its steps (writes: children, head pod, other pods)
//	status.go          the status (computeStatus, pure), what is urgent (statusChange), written through kit.StatusWriter
//	events.go          the Events of what a pass did, one per KubeRay reason (summarizeEvents, pure)
//	unsupported.go     the refusals of fields raydar does not implement
//
// and per feature, its build, decide and act side together: auth.go (token
// authentication and its Secret, or Kubernetes token auth and its projected
// ServiceAccount token), ingress.go (the dashboard Ingress),
// serve_service.go (the serve Service), networkpolicy.go (the
// NetworkPolicies of spec.networkPolicy, behind KubeRay's
// RayClusterNetworkPolicy feature gate, controller/features), mtls.go (the
// cert-manager Issuers and Certificates of spec.tlsOptions and the pods'
// TLS volume, env and init container, behind RayClusterMTLS),
// historyserver.go (the history server collector sidecar, gate
// RayClusterHistoryServer), gcs_embedded.go (the embedded rocksdb GCS
// store, its head volume and claim, gate GCSFaultToleranceEmbeddedStorage),
// gang.go (the batch scheduler's gang object, a Volcano PodGroup, and the
// pods' scheduler metadata, with --batch-scheduler; controller/batchscheduler)
// and batchscheduler.go (the Warning about batch-scheduler labels no
// configured scheduler reads).
//
// Names and labels of every child are in controller/kit/names.go.
// Everything created carries a controller owner reference to its RayCluster,
// so the garbage collector removes it.
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
//  2. The kit's Expectations, keyed by RayCluster UID and pod name (creates)
//     or pod UID (deletes), are laid over the cache until the informer shows
//     each write (kit.ChildHandler), so a lagging cache never causes a
//     second pod or a second deletion in place of one already going. Deletes
//     carry a UID precondition, so a same-named successor is never hit.
//  3. On uncertainty — a write whose outcome is unknown (timeout, connection
//     reset, AlreadyExists on a name we picked) — the next pass lists the
//     cluster's pods live from the API server instead of the cache.
//
// Expectations need not survive a restart: a new process starts from a
// fresh, consistent LIST that contains every write the old process
// completed, and a write in flight at the moment of death either landed
// (and is listed) or did not. Scale-downs are recomputed from the spec
// (replicas, workersToDelete: decide_workers.go), never from memory, so
// none is lost. 409 conflicts send the reconcile back to a fresh read from
// the API server (kit.Loop: up to three times, then controller-runtime's
// back-off).
//
// # Economy
//
// The cache holds only RayClusters, pods labelled ray.io/node-type and
// Services labelled ray.io/cluster, without managed fields; children that
// carry KubeRay's labels instead (the headless and serve Services, the auth
// Secret) are read live once per cluster per process. Pod updates that
// change nothing the decision reads are dropped before the queue. A pass
// emits one Event per KubeRay reason (and per worker group) for what it
// created, one per reason for what it deleted, one per kind of failure.
// Status changes that are not urgent (counts and addresses while pods come
// up) are coalesced for up to Options.StatusCoalesceWindow; a change of
// state or of a suspend/failure condition is written at once.
package raycluster
