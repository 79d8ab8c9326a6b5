// Package bench measures raydar's operator against KubeRay's on one plane:
// BenchmarkVersusKubeRay brings up the same RayClusters with the raw
// ceiling (the same pods created directly), the raydar-operator binary and
// KubeRay's operator binary (bin/k8s/kuberay-operator, built by `make
// tools`), interleaved on one sandbox with the API server's audit log on,
// and prints all-ready times, requests per cluster, operator CPU and peak
// RSS, and their ratios. docs/benchmarks.md ("Reconcile") records them.
package bench
