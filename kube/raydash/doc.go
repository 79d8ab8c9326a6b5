// Package raydash owns how raydar reaches the Ray dashboard of a RayCluster,
// and the translation of a RayJob into the dashboard's job submission.
//
// One interface, [Resolver], hands out a [dashboard.Client] for a cluster.
// [New] picks the way automatically:
//
//   - the sandbox's address book, when one is given ([AddressBook]; the
//     simulated heads of kube/sandbox/headsim implement it);
//   - the head Service's cluster DNS name, when raydar runs in a pod
//     (KUBERNETES_SERVICE_HOST is set);
//   - the Kubernetes API server's service proxy otherwise (a laptop or a
//     bastion: the common case for the TUI), with the credentials of the
//     rest.Config.
//
// When the cluster's authOptions mode is token, the client carries the Ray
// auth token read from the cluster's Secret (authOptions.secretName, else
// the Secret named after the cluster), key auth_token. With Kubernetes token
// auth (authOptions.enableK8sTokenAuth) there is no Secret: the dashboard
// reviews the caller's own Kubernetes token, so the client carries the
// rest.Config's bearer token (Options.KubernetesToken), the identity of
// which needs the verb ray:write on the RayCluster.
//
// [CapacityPoller] keeps Ray's view of the capacity of the clusters the
// user looks at (dashboard.Client.Capacity), polled in the background at a
// bounded rate, its nodes mapped to pods by IP and its demand split into
// pending and infeasible by the worker groups' per-pod resources
// ([GroupResources], [NodeTypes]); Get never blocks.
//
// [RayLogs] reaches the Ray log files of a cluster's nodes (list, tail,
// follow) through the same clients; [NodeForPod] maps a pod to its Ray node
// by IP (with the node ID from Ray's capacity view when known), and
// [ExplainRayJob] / [ExplainRayService] name the file that explains a
// failure (the runtime env setup log of a PENDING job, the driver log of a
// failed one, the Serve controller log of a deploy failure).
//
// [SubmitRequest] turns a RayJob's spec into the POST /api/jobs/ body, the
// one translation used by the HTTPMode submission, by the sandbox's stand-in
// for the K8sJobMode submitter, and by anything else that submits.
package raydash
