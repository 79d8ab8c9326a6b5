// Package conformance owns raydar's differential test against KubeRay: the
// real KubeRay operator (v1.6.2, KubeRayVersion, built by `make tools` into
// bin/k8s; run with KubeRay v1.7.0's default feature gates plus RayCronJob)
// and raydar's reconcile loop reconcile the same manifests side by side on
// one sandbox, each in namespaces of its own, and everything each creates
// is normalised and diffed. v1.6.2 is the newest KubeRay a fresh machine
// can build from the Go module proxy (v1.7.0's module zip is refused by the
// proxy, v1.5.2 fails the checksum database lookup); where v1.7.0 differs,
// raydar follows v1.7.0 and intended.yaml says so.
//
// The corpus is every sample KubeRay ships in its Go module
// (config/samples, read from the module cache at test time, never copied)
// plus raydar's own manifests in testdata/ for the fields the samples leave
// out. For each manifest the suite waits until both sides settle and their
// differences are exactly the intended ones listed in intended.yaml (each
// with the reason a KubeRay user would accept; docs/kuberay-compatibility.md
// describes them). An unlisted difference fails the suite, and so does a
// listed one that no longer occurs. A manifest listed as pending as a
// whole (raydar refuses what KubeRay runs) is compared at every poll but
// does not hold the wait: it is reported when the others have settled.
//
// What is compared (normalize.go): pods (command and args verbatim, env
// with its order, ports, probes, resources, volumes and mounts, init
// containers in order,
// labels, annotations, service account, restart policy), Services,
// ServiceAccounts, Roles, RoleBindings, Secrets (values by length), Jobs,
// Ingresses (the submitter Job's command verbatim), and the
// RayCluster/RayJob/RayService/RayCronJob objects themselves (labels,
// annotations, finalizers, status, including the copies of a cluster's
// status a RayJob or RayService holds). Random name suffixes, UIDs,
// resource versions, timestamps, IPs, node names and the namespace are
// normalised away first; a RayCronJob's RayJobs (random names in v1.6.2,
// the tick's minute in v1.7.0) are named by the tick they were made for,
// a second one for the same tick as its duplicate (cronTicks).
//
// KubeRay reaches the simulated Ray heads (kube/sandbox/headsim) through
// proxy.go: its HTTP clients use Go's default transport, which honours
// HTTP_PROXY, so in-cluster names like
// http://<svc>.<ns>.svc.cluster.local:8265 are answered by the head that
// headsim runs for that cluster, the same head raydar talks to.
package conformance
