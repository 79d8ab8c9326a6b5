// Package gauges owns reading Ray's own gauges off the Ray pods raydar
// shows: each pod's metrics export port (the container port named
// "metrics", which KubeRay and raydar's operator declare on the Ray
// container, 8080 by default: kuberay v1.7.0
// ray-operator/controllers/ray/common/pod.go:289-293), read through the API
// server's pod proxy (GET /api/v1/namespaces/NS/pods/NAME:PORT/proxy/metrics)
// or, in the sandbox, through the address book of simulated heads
// ([PodProxy], [BookFetcher]); parsed by rayapi/raymetrics and matched to
// the pod by Ray's "ip" label equal to the pod's IP.
//
// [ScrapeCluster] reads one cluster's pods once (the head first: a 403
// there ends the round, so a user without pods/proxy costs one refused
// request, not one per pod); `raydar top` calls it. A [Poller] keeps the
// clusters someone looks at (Get marks a cluster as wanted, as
// kube/raydash's CapacityPoller does) scraped every Interval off the
// caller's goroutine, at most Concurrency requests at once, each response
// capped (raymetrics.DefaultMaxBytes); a cluster whose proxy was forbidden
// is not asked again for ForbiddenBackoff. It keeps, per cluster, a
// fixed-size history (a ring per series: CPU %, GPU %, object store bytes,
// Serve requests per second, p50 and p99 latency; 15 minutes at the
// interval) and, per GPU, how long it has been below the idle threshold
// and the GPU-hours spent so, from what this process observed.
//
// What is not known is said with a [Reason], never as 0: "metrics port
// absent", "proxy forbidden", "not yet reporting", "pod not running",
// "unreachable".
//
// Read-only: every request is a GET.
package gauges
