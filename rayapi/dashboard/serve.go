package dashboard

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"sigs.k8s.io/yaml"
)

// AppStatus is a Serve application's status (ApplicationStatus).
type AppStatus string

// Serve application statuses.
const (
	AppNotStarted   AppStatus = "NOT_STARTED"
	AppDeploying    AppStatus = "DEPLOYING"
	AppRunning      AppStatus = "RUNNING"
	AppDeployFailed AppStatus = "DEPLOY_FAILED"
	AppDeleting     AppStatus = "DELETING"
	AppUnhealthy    AppStatus = "UNHEALTHY"
)

// DeploymentStatus is a Serve deployment's status (DeploymentStatus).
type DeploymentStatus string

// Serve deployment statuses. Newer Ray versions also report UPSCALING and
// DOWNSCALING while the autoscaler changes the replica count.
const (
	DeploymentUpdating    DeploymentStatus = "UPDATING"
	DeploymentHealthy     DeploymentStatus = "HEALTHY"
	DeploymentUnhealthy   DeploymentStatus = "UNHEALTHY"
	DeploymentUpscaling   DeploymentStatus = "UPSCALING"
	DeploymentDownscaling DeploymentStatus = "DOWNSCALING"
)

// Serve deploy modes in ServeDetails.DeployMode.
const (
	DeployModeUnset    = "UNSET"
	DeployModeMultiApp = "MULTI_APP"
)

// ServeDetails is the answer to GET /api/serve/applications/ (Ray's
// ServeInstanceDetails). Before Serve has been started Applications is empty.
type ServeDetails struct {
	ControllerInfo ServeActorDetails           `json:"controller_info"`
	ProxyLocation  string                      `json:"proxy_location,omitempty"`
	HTTPOptions    map[string]any              `json:"http_options,omitempty"`
	Proxies        map[string]ServeProxy       `json:"proxies,omitempty"`
	DeployMode     string                      `json:"deploy_mode,omitempty"`
	Applications   map[string]ServeApplication `json:"applications"`
	TargetCapacity *float64                    `json:"target_capacity,omitempty"`
}

// ServeActorDetails is where a Serve actor runs (Ray's ServeActorDetails):
// the controller (ServeDetails.ControllerInfo) and, with a status, each
// proxy. Before Serve has started the controller's is empty ({}).
type ServeActorDetails struct {
	NodeID         string `json:"node_id,omitempty"`
	NodeIP         string `json:"node_ip,omitempty"`
	NodeInstanceID string `json:"node_instance_id,omitempty"`
	ActorID        string `json:"actor_id,omitempty"`
	ActorName      string `json:"actor_name,omitempty"`
	WorkerID       string `json:"worker_id,omitempty"`
	LogFilePath    string `json:"log_file_path,omitempty"`
}

// ServeProxy is one Serve HTTP proxy actor (one per node; Ray's
// ProxyDetails).
type ServeProxy struct {
	ServeActorDetails
	Status string `json:"status"` // STARTING, HEALTHY, UNHEALTHY, DRAINING, DRAINED
}

// ServeRoutes is the Serve proxy's answer to GET /-/routes (ProxyRoutesPath):
// route prefix -> application name, for the applications that are RUNNING.
type ServeRoutes map[string]string

// ServeApplication is one application's status.
type ServeApplication struct {
	Name              string    `json:"name"`
	RoutePrefix       string    `json:"route_prefix,omitempty"`
	DocsPath          string    `json:"docs_path,omitempty"`
	Status            AppStatus `json:"status"`
	Message           string    `json:"message"`
	LastDeployedTimeS float64   `json:"last_deployed_time_s,omitempty"`
	// DeployedAppConfig is the application's part of the last config
	// deployed, as JSON.
	DeployedAppConfig json.RawMessage            `json:"deployed_app_config,omitempty"`
	Source            string                     `json:"source,omitempty"` // "declarative" or "imperative"
	Deployments       map[string]ServeDeployment `json:"deployments"`
}

// ServeDeployment is one deployment's status inside an application.
type ServeDeployment struct {
	Name              string           `json:"name"`
	Status            DeploymentStatus `json:"status"`
	StatusTrigger     string           `json:"status_trigger,omitempty"`
	Message           string           `json:"message"`
	RoutePrefix       string           `json:"route_prefix,omitempty"`
	TargetNumReplicas int              `json:"target_num_replicas,omitempty"`
	Replicas          []ServeReplica   `json:"replicas,omitempty"`
}

// ServeReplica is one replica actor of a deployment.
type ServeReplica struct {
	ReplicaID string `json:"replica_id"`
	State     string `json:"state"` // STARTING, UPDATING, RECOVERING, RUNNING, STOPPING
	NodeIP    string `json:"node_ip,omitempty"`
	PID       int    `json:"pid,omitempty"`
	ActorName string `json:"actor_name,omitempty"`
}

// ServeConfigV2ToJSON converts a RayService's serveConfigV2 (YAML of Ray's
// ServeDeploySchema: applications, http_options, proxy_location, …) to the
// JSON DeployApplications sends. The document must be a mapping.
func ServeConfigV2ToJSON(serveConfigV2 string) ([]byte, error) {
	if strings.TrimSpace(serveConfigV2) == "" {
		return nil, errors.New("dashboard: serveConfigV2 is empty")
	}
	data, err := yaml.YAMLToJSON([]byte(serveConfigV2))
	if err != nil {
		return nil, fmt.Errorf("dashboard: serveConfigV2 is not valid YAML: %w", err)
	}
	if err := checkJSONObject(data); err != nil {
		return nil, fmt.Errorf("dashboard: serveConfigV2: %w", err)
	}
	return data, nil
}

func checkJSONObject(data []byte) error {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil || obj == nil {
		return errors.New("the document must be a mapping (ServeDeploySchema)")
	}
	return nil
}

// DeployApplications sends a declarative Serve config (ServeDeploySchema as
// JSON, see ServeConfigV2ToJSON) with PUT /api/serve/applications/. Ray
// answers 2xx once it has accepted the config; deployment is asynchronous,
// so poll GetServeApplications. A config that fails Ray's schema validation
// gives ErrBadRequest.
func (c *Client) DeployApplications(ctx context.Context, configJSON []byte) error {
	if err := checkJSONObject(configJSON); err != nil {
		return fmt.Errorf("dashboard: DeployApplications: %w", err)
	}
	_, err := c.call(ctx, http.MethodPut, ServeApplicationsPath, nil, bytes.Clone(configJSON))
	return err
}

// DeployServeConfigV2 is ServeConfigV2ToJSON followed by DeployApplications.
func (c *Client) DeployServeConfigV2(ctx context.Context, serveConfigV2 string) error {
	data, err := ServeConfigV2ToJSON(serveConfigV2)
	if err != nil {
		return err
	}
	return c.DeployApplications(ctx, data)
}

// GetServeApplications returns the status of the declaratively deployed Serve
// applications (GET /api/serve/applications/?api_type=declarative).
func (c *Client) GetServeApplications(ctx context.Context) (*ServeDetails, error) {
	var d ServeDetails
	q := url.Values{"api_type": {"declarative"}}
	if err := c.callJSON(ctx, http.MethodGet, ServeApplicationsPath, q, nil, &d); err != nil {
		return nil, err
	}
	if d.Applications == nil {
		d.Applications = map[string]ServeApplication{}
	}
	return &d, nil
}

// DeleteServeApplications shuts Serve down, deleting every application
// (DELETE /api/serve/applications/).
func (c *Client) DeleteServeApplications(ctx context.Context) error {
	_, err := c.call(ctx, http.MethodDelete, ServeApplicationsPath, nil, nil)
	return err
}
