// Package raymetrics owns the reading of what a Ray node says about its own
// use, in the Prometheus text exposition its metrics export port serves
// (KubeRay's pods declare it as the container port named "metrics", 8080):
// CPU, memory, each GPU and its memory, the object store, Ray's logical
// resources, tasks and actors, and Serve's HTTP requests and latency.
//
// It is pure: [Parse] turns one response body (capped in size) into an
// [Exposition]; nothing here does I/O beyond reading that body. Parsing is
// github.com/prometheus/common/expfmt's text parser, the one Prometheus
// itself ships, not a hand-written one.
//
// Names and labels follow Ray's exporter (ray-project/ray at commit
// 00801386, python/ray/dashboard/modules/reporter/reporter_agent.py,
// METRICS_GAUGES and ReporterAgent._to_records; python/ray/dashboard/consts.py
// NODE_TAG_KEYS and GPU_TAG_KEYS; doc/source/ray-observability/reference/
// system-metrics.rst): every metric is prefixed "ray_" (the stats exporter's
// namespace="ray"); node gauges carry the node's IP in the label "ip" (the
// dashboard agent's IP, which on KubeRay is the pod's IP), "IsHeadNode",
// "RayNodeType" and the global "SessionName" and "Version"; the GPU gauges
// add "GpuIndex" and "GpuDeviceName".
//
// A node is matched to its pod by that "ip" label equal to the pod's
// status.podIP ([Exposition.Node]), never by position or name: a response
// with no node gauges for the pod's IP is "not yet reporting".
package raymetrics
