// Package admission measures what creating a RayCluster costs the API
// server under raydar's CRD and under KubeRay's (v1.6.2), with no operator
// running: BenchmarkAdmission installs one CRD set, times N creates of
// KubeRay's ray-cluster.sample.yaml by 8 parallel clients, swaps the CRD,
// and so on, interleaved so that the machine's load drifts equally on both.
// docs/benchmarks.md ("Issue 27: what a RayCluster create costs the API
// server") records the figures.
package admission
