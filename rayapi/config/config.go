// Package config owns raydar's model of KubeRay's operator configuration
// file, config.ray.io/v1alpha1 Configuration (what `raydar-operator
// --config FILE` reads, as KubeRay v1.7.0's `--config`): the type, field for
// field as KubeRay v1.7.0's ray-operator/apis/config/v1alpha1/
// configuration_types.go, its strict decoding (an unknown field, apiVersion
// or kind, or a file that does not parse, is refused naming it and, where it
// can be found, its line), KubeRay's defaults (defaults.go) and the checks
// KubeRay makes of the values (config_utils.go ValidateBatchSchedulerConfig,
// main.go newLogEncoder).
//
// What each field does in raydar (the mapping onto controller.Options) is the
// operator command's (cmd/internal/operatorcmd): this package knows nothing
// of the controller, so it sits in the lowest layer with the other API
// models.
//
// KubeRay decodes the file with a non-strict universal decoder: it drops a
// misspelt field silently. raydar refuses it, because a setting silently
// dropped is a setting the operator does not honour.
package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
	yamlv3 "sigs.k8s.io/yaml/goyaml.v3"
)

// The file's apiVersion and kind.
const (
	Group      = "config.ray.io"
	Version    = "v1alpha1"
	APIVersion = Group + "/" + Version
	Kind       = "Configuration"
)

// KubeRay v1.7.0's defaults (ray-operator/apis/config/v1alpha1/defaults.go:7-14),
// applied by Default to a decoded file.
const (
	DefaultMetricsAddr          = ":8080"
	DefaultProbeAddr            = ":8082"
	DefaultEnableLeaderElection = true
	DefaultReconcileConcurrency = 1
	DefaultQPS                  = float64(100)
	DefaultBurst                = 200
)

// Encoders are the values of logStdoutEncoder and logFileEncoder ("" is
// json), as KubeRay v1.7.0's main.go newLogEncoder accepts them.
var Encoders = []string{"json", "console"}

// Configuration is KubeRay v1.7.0's config.ray.io/v1alpha1 Configuration
// (configuration_types.go:17-98), field for field and with the same JSON
// names.
type Configuration struct {
	// Burst allows temporary exceeding of QPS. Default 200.
	Burst *int `json:"burst,omitempty"`
	// QPS is the maximum requests per second to the API server. Default 100.
	QPS *float64 `json:"qps,omitempty"`
	// EnableLeaderElection elects one active operator. Default true.
	EnableLeaderElection *bool `json:"enableLeaderElection,omitempty"`

	metav1.TypeMeta `json:",inline"`

	// LogStdoutEncoder is "json" or "console"; "" is json.
	LogStdoutEncoder string `json:"logStdoutEncoder,omitempty"`
	// ProbeAddr is the address of /healthz and /readyz. Default ":8082".
	ProbeAddr string `json:"probeAddr,omitempty"`
	// LogFile is a local file the log is written to as well.
	LogFile string `json:"logFile,omitempty"`
	// LogFileEncoder is "json" or "console"; "" is json.
	LogFileEncoder string `json:"logFileEncoder,omitempty"`
	// LeaderElectionNamespace holds the election's Lease; default the
	// pod's namespace.
	LeaderElectionNamespace string `json:"leaderElectionNamespace,omitempty"`
	// BatchScheduler names the batch scheduler (volcano, yunikorn,
	// kai-scheduler, scheduler-plugins).
	BatchScheduler string `json:"batchScheduler,omitempty"`
	// MetricsAddr is the address of the metrics endpoint. Default ":8080".
	MetricsAddr string `json:"metricsAddr,omitempty"`
	// WatchNamespace is a comma-separated list of namespaces; "" is all.
	WatchNamespace string `json:"watchNamespace,omitempty"`
	// WorkerSidecarContainers are added to every worker pod.
	WorkerSidecarContainers []corev1.Container `json:"workerSidecarContainers,omitempty"`
	// HeadSidecarContainers are added to every head pod.
	HeadSidecarContainers []corev1.Container `json:"headSidecarContainers,omitempty"`
	// DefaultContainerEnvs are added to every Ray container.
	DefaultContainerEnvs []corev1.EnvVar `json:"defaultContainerEnvs,omitempty"`
	// DefaultPodAnnotations are added to every Ray pod; the object's win.
	DefaultPodAnnotations map[string]string `json:"defaultPodAnnotations,omitempty"`
	// DefaultPodLabels are added to every Ray pod; the object's win.
	DefaultPodLabels map[string]string `json:"defaultPodLabels,omitempty"`
	// ReconcileConcurrency is the concurrency of each reconciler. Default 1.
	ReconcileConcurrency int `json:"reconcileConcurrency,omitempty"`
	// EnableBatchScheduler (deprecated) is batchScheduler: volcano.
	EnableBatchScheduler bool `json:"enableBatchScheduler,omitempty"`
	// UseKubernetesProxy reaches Ray heads through the API server's
	// services/proxy and pods/proxy.
	UseKubernetesProxy bool `json:"useKubernetesProxy,omitempty"`
	// DeleteRayJobAfterJobFinishes deletes a RayJob with
	// shutdownAfterJobFinishes once its job finished.
	DeleteRayJobAfterJobFinishes bool `json:"deleteRayJobAfterJobFinishes,omitempty"`
	// EnableMetrics serves the kuberay_* control plane metrics.
	EnableMetrics bool `json:"enableMetrics,omitempty"`
}

// Default fills the fields KubeRay v1.7.0's SetDefaults_Configuration
// fills (defaults.go:26-50), with its values.
func Default(c *Configuration) {
	if c.MetricsAddr == "" {
		c.MetricsAddr = DefaultMetricsAddr
	}
	if c.ProbeAddr == "" {
		c.ProbeAddr = DefaultProbeAddr
	}
	if c.EnableLeaderElection == nil {
		c.EnableLeaderElection = new(DefaultEnableLeaderElection)
	}
	if c.ReconcileConcurrency == 0 {
		c.ReconcileConcurrency = DefaultReconcileConcurrency
	}
	if c.QPS == nil {
		c.QPS = new(DefaultQPS)
	}
	if c.Burst == nil {
		c.Burst = new(DefaultBurst)
	}
}

// Load reads the file at path with Decode; errors name the file.
func Load(path string) (Configuration, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Configuration{}, fmt.Errorf("--config: %w", err)
	}
	c, err := Decode(b)
	if err != nil {
		return Configuration{}, fmt.Errorf("--config %s: %w", path, err)
	}
	return c, nil
}

// Decode reads a Configuration from YAML or JSON strictly: apiVersion must
// be config.ray.io/v1alpha1 and kind Configuration; an unknown or
// duplicated field (at any depth: a sidecar container's too) is refused
// with its path and line; then Default fills KubeRay's defaults and
// Validate checks the values.
func Decode(data []byte) (Configuration, error) {
	js, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return Configuration{}, fmt.Errorf("not a YAML or JSON document: %w", err)
	}
	if bytes.Equal(bytes.TrimSpace(js), []byte("null")) {
		return Configuration{}, fmt.Errorf("empty: want a document with apiVersion: %s and kind: %s", APIVersion, Kind)
	}
	var tm metav1.TypeMeta
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(js, &tm); err != nil {
		return Configuration{}, fmt.Errorf("not a %s %s: %w", APIVersion, Kind, err)
	}
	if tm.APIVersion != APIVersion || tm.Kind != Kind {
		return Configuration{}, fmt.Errorf("apiVersion %q, kind %q: raydar reads only apiVersion: %s, kind: %s (KubeRay v1.7.0's operator configuration)",
			tm.APIVersion, tm.Kind, APIVersion, Kind)
	}
	var c Configuration
	strict, err := sigsjson.UnmarshalStrict(js, &c)
	if err != nil {
		return Configuration{}, fmt.Errorf("%w%s", err, atLine(data, fieldOf(err)))
	}
	if len(strict) > 0 {
		msgs := make([]string, 0, len(strict))
		for _, e := range strict {
			path := ""
			var fe sigsjson.FieldError
			if errors.As(e, &fe) {
				path = fe.FieldPath()
			}
			msgs = append(msgs, e.Error()+atLine(data, path))
		}
		return Configuration{}, fmt.Errorf("%s (KubeRay v1.7.0's Configuration has no such field; raydar refuses it rather than ignore it)",
			strings.Join(msgs, "; "))
	}
	Default(&c)
	if err := c.Validate(); err != nil {
		return Configuration{}, err
	}
	return c, nil
}

// Validate refuses the values KubeRay refuses at start (both batch
// scheduler fields: config_utils.go:23-25; an encoder other than json or
// console: main.go newLogEncoder) and the ones raydar cannot honour
// (a concurrency below 1, a rate of 0 or less, a negative burst, an empty
// name in watchNamespace's list). The batch scheduler's name is checked
// where the scheduler is built (controller/batchscheduler).
func (c Configuration) Validate() error {
	if c.EnableBatchScheduler && c.BatchScheduler != "" {
		return errors.New("both enableBatchScheduler (deprecated) and batchScheduler are set: set batchScheduler only (KubeRay v1.7.0 refuses both too)")
	}
	for _, e := range []struct{ field, v string }{{"logStdoutEncoder", c.LogStdoutEncoder}, {"logFileEncoder", c.LogFileEncoder}} {
		if err := CheckEncoder(e.v); err != nil {
			return fmt.Errorf("%s: %w", e.field, err)
		}
	}
	if c.ReconcileConcurrency < 1 {
		return fmt.Errorf("reconcileConcurrency %d: want at least 1", c.ReconcileConcurrency)
	}
	if c.QPS != nil && *c.QPS <= 0 {
		return fmt.Errorf("qps %v: want more than 0 (raydar does not run its client unthrottled or at client-go's fallback of 5)", *c.QPS)
	}
	if c.Burst != nil && *c.Burst < 1 {
		return fmt.Errorf("burst %d: want at least 1", *c.Burst)
	}
	if _, err := SplitNamespaces(c.WatchNamespace); err != nil {
		return fmt.Errorf("watchNamespace: %w", err)
	}
	return nil
}

// CheckEncoder refuses a log encoder other than json, console or "" (json).
func CheckEncoder(v string) error {
	if v == "" || v == "json" || v == "console" {
		return nil
	}
	return fmt.Errorf("invalid encoder %q (must be 'json' or 'console')", v)
}

// SplitNamespaces reads watchNamespace (and KubeRay's --watch-namespace):
// comma-separated namespaces, "" for all (KubeRay v1.7.0 main.go:281-293).
// An empty name in a list ("a,,b", "a,") is refused: KubeRay would watch
// every namespace for it.
func SplitNamespaces(v string) ([]string, error) {
	if v == "" {
		return nil, nil
	}
	out := strings.Split(v, ",")
	for _, ns := range out {
		if strings.TrimSpace(ns) == "" || ns != strings.TrimSpace(ns) {
			return nil, fmt.Errorf("%q: an empty or space-padded namespace in the list", v)
		}
	}
	return out, nil
}

// fieldOf is the JSON path of a value of the wrong type ("qps",
// "headSidecarContainers.image"), "" for other errors.
func fieldOf(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return te.Field
	}
	return ""
}

// atLine is " (line N)" for the key at the JSON path in the YAML data
// ("headSidecarContainers[0].imagee"), "" when it cannot be found.
func atLine(data []byte, path string) string {
	if path == "" {
		return ""
	}
	var doc yamlv3.Node
	if err := yamlv3.Unmarshal(data, &doc); err != nil || len(doc.Content) == 0 {
		return ""
	}
	n := doc.Content[0]
	line := 0
	for _, seg := range splitPath(path) {
		if i, err := strconv.Atoi(seg); err == nil {
			if n.Kind != yamlv3.SequenceNode || i >= len(n.Content) {
				break
			}
			n = n.Content[i]
			line = n.Line
			continue
		}
		if n.Kind != yamlv3.MappingNode {
			break
		}
		found := false
		for k := 0; k+1 < len(n.Content); k += 2 {
			if n.Content[k].Value == seg {
				line = n.Content[k].Line
				n = n.Content[k+1]
				found = true
				break
			}
		}
		if !found {
			break
		}
	}
	if line == 0 {
		return ""
	}
	return fmt.Sprintf(" (line %d)", line)
}

// splitPath splits "a[0].b" into "a", "0", "b".
func splitPath(path string) []string {
	path = strings.NewReplacer("[", ".", "]", "").Replace(path)
	var out []string
	for _, s := range strings.Split(path, ".") {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}
