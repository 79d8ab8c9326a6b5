// Package headsim owns the sandbox's stand-in for what Ray containers would
// do in a real cluster. kwok runs no containers, so:
//
//   - Heads: it watches Ray head pods (label ray.io/node-type=head). While
//     one becomes Running and Ready, a simulated Ray head (kube/sandbox/rayhead)
//     answers for its cluster on a loopback port, recorded in an address book
//     ([Sim.DashboardURL], which implements kube/raydash's AddressBook). Before
//     that, and once the pod stops running, goes, or its Ray container (the
//     first) stops running, connections to that address are refused and the
//     head's jobs are stopped. A pod that is only not Ready keeps its head
//     (an exited SidecarMode submitter; the head Service publishes
//     not-ready addresses). Heads are keyed by
//     pod UID: a replaced head pod gets a fresh head, as a restarted Ray head
//     without GCS fault tolerance forgets its jobs.
//   - Nodes: it watches every pod of a RayCluster and tells the cluster's
//     head its Ray nodes, one per pod whose Ray container runs (Running and
//     Ready, or only not Ready as a head whose sidecar exited) at the pod's IP, with
//     the resources the pod's group gives it (kube/raydash GroupResources),
//     when the head starts (before it first answers) and on every pod event
//     after; so jobs and Serve replicas wait for Ready pods
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
//     and, once a submitter pod runs, runs what the pod's first container
//     says (script.go): its command and args, with the env the kubelet would
//     give it (podenv.go), a bash or sh -c line interpreted by
//     mvdan.cc/sh's shell, whose `ray job …` commands are read as Ray's CLI
//     reads them (kube/sandbox/raycli) and done against the simulated head
//     the address leads to (address.go: a Service, a pod or Service IP;
//     127.0.0.1 is the submitter pod itself), and whose python GCS health
//     check asks that head. Nothing is taken from the RayJob's spec: the
//     head gets what the command line says. When the line exits, the pod
//     ends Succeeded (status 0) or Failed (anything else, or something the
//     stand-in cannot do as a real pod would: another program, a file on
//     the pod's disk) through Options.SetPodPhase, and the Job controller
//     goes on as it would (a retried pod runs the line again). The
//     container's output is kept ([Sim.SubmitterLog]) and its end logged.
//   - SidecarMode: when a head pod with a ray-job-submitter container becomes
//     Ready, it runs that container's command line the same way, in the head
//     pod's network (127.0.0.1 and localhost at the dashboard port are the
//     head). Its end shows in the head pod's status as the kubelet shows it
//     in a restartPolicy Never pod: that container terminated with its exit
//     code, the head running on, not Ready (Options.EndContainer, kwok's
//     raydar-container-exited stage); closing the head stops it.
//   - Autoscaler: with Options.Autoscaler, every head of a RayCluster with
//     enableInTreeAutoscaling: true gets Ray's autoscaler beside it
//     (kube/sandbox/autoscaler), fed by the head's demand and idle times
//     and stopped with the head; [Sim.AutoscalerStatus] tells what it did
//     last.
//
// Close stops every stand-in submitter and closes every head, which stops
// (TERM, then KILL) every job subprocess: nothing outlives the Sim.
package headsim
