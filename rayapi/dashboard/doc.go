// Package dashboard owns raydar's client for the Ray dashboard HTTP API on a
// Ray head node (port 8265): the Jobs API (submit, info, list, stop, delete,
// logs), the Serve REST API (declarative deploy and status), the health
// endpoints (GCS health on the dashboard, /-/healthz on the Serve proxy),
// the version, and Ray's view of capacity ([Client.Capacity]: what `ray
// status` prints, from /api/v0/nodes, /api/cluster_status,
// /api/v0/actors/summarize and /api/jobs/; wire shapes and the Ray source
// they were checked against in capacity_wire.go), Ray's log files
// ([Client.ListLogs], [Client.ReadLog], [Client.StreamLog]: the state API's
// /api/v0/logs endpoints, wire and Ray source in logs_wire.go), with the Go
// types of each answer and the paths (paths.go).
// These types are the wire's one definition: the sandbox's simulated Ray
// head (kube/sandbox/rayhead) serves them too.
//
// The wire format follows Ray (and KubeRay's dashboard client): the same
// paths, JSON field names, status strings and the x-ray-authorization
// header. The package imports no Kubernetes code: the caller picks the
// transport, either a base URL (the head Service DNS name, a port-forward or a
// sandbox address) via [New], or the Kubernetes API server's service proxy via
// [NewServiceProxy] with an *http.Client the caller built from its rest.Config
// (rest.HTTPClientFor).
//
// Errors are typed for errors.Is / errors.As: [ErrNotFound],
// [ErrSubmissionIDInUse], [ErrUnavailable], [ErrUnauthorized],
// [ErrBadRequest]; every non-2xx answer is also an [*HTTPError] carrying
// the status code and body.
package dashboard
