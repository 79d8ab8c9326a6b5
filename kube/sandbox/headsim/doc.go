// Package headsim owns the sandbox's stand-in for what Ray containers would
// do in a real cluster. kwok runs no containers, so:
//
//   - Heads: it watches Ray head pods (label ray.io/node-type=head). While
//     one is Running and Ready, a simulated Ray head (kube/sandbox/rayhead)
//     answers for its cluster on a loopback port, recorded in an address book
//     ([Sim.DashboardURL], which implements kube/raydash's AddressBook). Before
//     that, and once the pod stops being ready or goes, connections to that
//     address are refused and the head's jobs are stopped. Heads are keyed by
//     pod UID: a replaced head pod gets a fresh head, as a restarted Ray head
//     without GCS fault tolerance forgets its jobs.
//   - Nodes: it watches every pod of a RayCluster and tells the cluster's
//     head its Ray nodes, one per Running and Ready pod at the pod's IP, with
//     the resources the pod's group gives it (kube/raydash GroupResources),
//     on every pod event; so jobs and Serve replicas wait for Ready pods
//     offering what they ask for, as on a real cluster. The same nodes are the
//     ones whose Ray log files the head's log API lists and serves (by node
//     ID or by pod IP, as Ray's /api/v0/logs does; kube/sandbox/rayhead
//     logs.go), so a pod's Ray logs are reachable as on a real cluster.
//   - With Options.AddressBook, the heads' addresses are also written to a
//     file (kube/raydash/addrbook) on every head start and stop, so that a
//     raydar in another process (`raydar operator` beside `raydar sandbox`)
//     reaches them.
//   - Every request to a cluster's dashboard passes a counting front, so
//     tests can assert how often something was called ([Sim.Calls]: "the stop
//     was sent exactly once"); [Sim.SetRefuse] makes a dashboard unreachable.
//   - K8sJobMode: it watches RayJob submitter batch Jobs (labels
//     ray.io/originated-from-crd=RayJob, as KubeRay and raydar label them)
//     and, once the submitter pod runs, makes the submission its command
//     would make (submit unless the submission ID is known, then follow the
//     job); when the Ray job is terminal it ends the pod Succeeded (or Failed
//     when the submission is refused) through Options.SetPodPhase, and the
//     Job controller completes the Job.
//   - SidecarMode: when a head pod with a ray-job-submitter container becomes
//     Ready, it makes that sidecar's submission to the new head.
//
// Close closes every head, which stops (TERM, then KILL) every job
// subprocess: nothing outlives the Sim.
package headsim
