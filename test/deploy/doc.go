// Package deploy tests what `kubectl apply -k config/default` puts in a
// cluster and what the image built by hack/image runs. It has no code of
// its own, only tests:
//
//   - config/default rendered with kustomize's library (krusty, as
//     `kubectl apply -k` renders it): the objects, the Deployment's pod
//     and container security contexts, resources and probes on the health
//     port, the RBAC binding the operator's ServiceAccount, rules equal to
//     the controller-gen output in config/rbac/role.yaml, and the
//     `kustomize edit set image` step;
//   - the rendered objects applied server-side to a sandbox (kube/sandbox),
//     the pod template admitted by the API server's PodSecurity
//     "restricted" level;
//   - the image's root filesystem (from hack/image's tarball) run as the
//     Deployment would run it: chrooted, as user 65532, with the
//     Deployment's args and env, a ServiceAccount token from the
//     TokenRequest API in the in-cluster locations, two replicas: both
//     answer their probes, one becomes leader and reconciles a RayCluster
//     and a RayCronJob's time zone (the image has no zoneinfo).
//   - the Helm charts, rendered by bin/k8s/helm (`helm template`): KubeRay
//     v1.7.0's own (testdata/kuberay-operator-v1.7.0, unchanged: its git
//     tree hash is checked) with raydar's image, and raydar's
//     (config/helm/raydar-operator: `helm lint --strict`, RBAC equal to
//     config/rbac, CRDs to rayapi/crds/bases, unknown values refused), each
//     with its defaults and with every option on (testdata/*-all-values.yaml);
//     applied to the sandbox with a pod of the Deployment's template, and
//     raydar-operator run on this host with the Deployment's command line,
//     env and mounted config file, as its ServiceAccount, with the pod's
//     namespace file: it answers the rendered probes, leads on a Lease in
//     the release namespace, and brings a RayCluster, a RayJob and a
//     RayService to ready (simulated heads and gang scheduler).
//
// kwok marks pods Running whatever their image, so the sandbox says
// nothing about the image running in a kubelet; the last test runs it on
// this host instead.
package deploy
