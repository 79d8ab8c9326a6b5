// Package kuberneteswas tests KubeRay's KubernetesWAS feature gate
// (controller/batchscheduler/kuberneteswas) on the control plane that
// serves its API: a Kubernetes 1.36 sandbox (kube/sandbox Kubernetes136,
// built by `make tools`) with scheduling.k8s.io/v1alpha2, the
// GenericWorkload and GangScheduling gates, and its kube-scheduler doing
// the gang scheduling. raydar's operator runs in-process with
// --feature-gates KubernetesWAS=true. It has no code of its own, only
// tests; KubeRay v1.6.2 (the conformance oracle) predates the gate, so the
// behaviour follows v1.7.0's source, cited in the package under test.
package kuberneteswas
