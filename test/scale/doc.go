// Package scale replays KubeRay's own scalability scenarios on the
// sandbox's control plane and measures three contenders on each, one after
// another, each on a fresh plane of the same shape: the raw ceiling (the
// same pods created by a plain client, no operator), raydar's operator
// (the raydar-operator binary, as the image runs it) and KubeRay's
// (bin/k8s/kuberay-operator, v1.6.2, built by `make tools`).
//
// The scenarios (docs/benchmarks.md, "Issue 47"):
//   - BenchmarkPerfTestRayClusters: KubeRay's benchmark/perf-tests
//     N-raycluster tests (their RayCluster template, 10 or 100
//     namespaces, created at 100 per second); all ready, per-cluster p50
//     and p99, operator CPU, peak RSS (KubeRay's memory benchmark's
//     measure), writes per cluster.
//   - BenchmarkScaleUp: kuberay#3907, 100 clusters scaled from 0 to 100
//     workers at once; time to the last pod created and Running, each
//     cluster's creation span.
//   - BenchmarkFairness: kuberay#3909, one cluster scaled 0 → 1,000
//     workers while 99 others each get one worker: how long the 99 wait.
//   - BenchmarkRayJobs: kuberay#2646 and the perf-tests' N-rayjob tests, N
//     RayJobs created at 100 per second; time until each job runs, and a
//     RayCluster created in the middle: its wait.
//
// clusterloader2 is not used (it cannot be installed here): the harness
// creates the same objects at the same rate and measures the same steps.
// Sizes come from the environment (RAYDAR_SCALE_SIZES and the like, see
// each benchmark); `make bench` runs the smallest, `make bench-scale` the
// issue's.
package scale
