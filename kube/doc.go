// Package kube owns the connection to a Kubernetes cluster: kubectl-compatible
// flags (--kubeconfig, --context, -n, -A), the rest.Config built from them, and
// the scheme that knows core types and ray.io/v1.
//
// Sub-packages: sandbox (a real control plane on loopback for the demo and the
// integration tests).
package kube
