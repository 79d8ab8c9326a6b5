package dashboard

// The wire's fixed names: the paths of the dashboard API (port 8265) and of
// the Serve proxy (port 8000), and the auth header. The client sends to
// them, and the sandbox's simulated head (kube/sandbox/rayhead) serves
// them, so both speak one wire.
const (
	// GCSHealthPath answers 200 with HealthyBody while the GCS is healthy.
	GCSHealthPath = "/api/gcs_healthz"
	// VersionPath answers a VersionInfo.
	VersionPath = "/api/version"
	// JobsPath is the Jobs API: POST submits, GET lists; JobsPath+<id>
	// (GET, DELETE), JobsPath+<id>/stop (POST) and JobsPath+<id>/logs (GET).
	JobsPath = "/api/jobs/"
	// ServeApplicationsPath is the Serve REST API: PUT deploys a
	// declarative config, GET answers ServeDetails, DELETE shuts Serve down.
	ServeApplicationsPath = "/api/serve/applications/"
	// ClusterStatusPath answers the autoscaler's status
	// (RestResponse[ClusterStatusData]).
	ClusterStatusPath = "/api/cluster_status"
	// StateNodesPath is the state API's node list
	// (RestResponse[StateData[ListAPIResponse[NodeState]]]).
	StateNodesPath = "/api/v0/nodes"
	// ActorsSummaryPath is the state API's actor summary
	// (RestResponse[StateData[SummaryAPIResponse[ActorSummaries]]]).
	ActorsSummaryPath = "/api/v0/actors/summarize"

	// ProxyHealthPath is the Serve proxy's health endpoint (port 8000).
	ProxyHealthPath = "/-/healthz"
	// ProxyRoutesPath is the Serve proxy's route table (ServeRoutes).
	ProxyRoutesPath = "/-/routes"

	// HealthyBody is what a healthy GCS or proxy answers.
	HealthyBody = "success"
	// AuthHeader carries the Ray auth token, as "Bearer <token>".
	AuthHeader = "x-ray-authorization"
)
