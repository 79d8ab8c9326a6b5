package operatorcmd

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/raydar/raydar/controller"
	"github.com/raydar/raydar/controller/batchscheduler"
	"github.com/raydar/raydar/controller/kit"
	"github.com/raydar/raydar/rayapi/config"
)

// deleteRayJobEnv is KubeRay's environment variable for
// deleteRayJobAfterJobFinishes without a config file (main.go:139;
// utils.DELETE_RAYJOB_CR_AFTER_JOB_FINISHES).
const deleteRayJobEnv = "DELETE_RAYJOB_CR_AFTER_JOB_FINISHES"

// kubeRay holds KubeRay v1.7.0's command line (ray-operator/main.go:80-110)
// where raydar has no field of its own for it. A KubeRay flag that names
// a setting raydar already has a flag for is an alias (aliases): its value
// is copied into raydar's flag by resolve, so each setting has one home.
type kubeRay struct {
	config                                     string
	logFile, logFileEncoder, logStdoutEncoder  string
	enableBatchScheduler, forcedClusterUpgrade bool
	enableLeaderElection                       bool
	// verbosity is raydar's -v; --zap-log-level and --zap-devel set it.
	verbosity int
	// controller-runtime's zap flags, which KubeRay's main.go binds
	// (opts.BindFlags, main.go:112-115).
	zapDevel                                                bool
	zapEncoder, zapLevel, zapStacktraceLevel, zapTimeFormat string

	// The aliases' own values, read only by resolve.
	metricsAddr, watchNamespace string
	reconcileConcurrency, burst int
	qps                         float64
}

// alias is a KubeRay flag and raydar's flag for the same setting.
type alias struct{ kuberay, raydar string }

// aliases are KubeRay's names of settings raydar names otherwise.
var aliases = []alias{
	{"metrics-addr", "metrics-bind-address"},
	{"reconcile-concurrency", "concurrency"},
	{"watch-namespace", "watch-namespaces"},
	{"qps", "kube-api-qps"},
	{"burst", "kube-api-burst"},
}

// fileSettings are the flags whose settings a config file holds: with
// --config they are ignored, as KubeRay ignores them ("Flags are ignored if
// config file is set", main.go:104), and resolve says which were given.
var fileSettings = []string{
	"metrics-addr", "metrics-bind-address", "health-probe-bind-address",
	"enable-leader-election", "no-leader-election", "leader-election-namespace",
	"reconcile-concurrency", "concurrency", "watch-namespace", "watch-namespaces",
	"log-file-path", "log-file-encoder", "log-stdout-encoder",
	"enable-batch-scheduler", "batch-scheduler", "use-kubernetes-proxy", "enable-metrics",
	"qps", "kube-api-qps", "burst", "kube-api-burst",
}

// register adds KubeRay's flags to f. o receives the two KubeRay settings
// that are fields of controller.Options with no raydar flag before them.
func (k *kubeRay) register(f *pflag.FlagSet, o *controller.Options) {
	f.StringVar(&k.config, "config", "", "KubeRay's config.ray.io/v1alpha1 Configuration file; as in KubeRay, the flags it holds (metrics, probes, leader election, concurrency, namespaces, logs, batch scheduler, proxy, client rate) are then ignored, and raydar says which were given")
	f.StringVar(&k.metricsAddr, "metrics-addr", ":8080", "KubeRay's name of --metrics-bind-address")
	f.BoolVar(&k.enableLeaderElection, "enable-leader-election", true, "elect a leader (KubeRay's flag; --enable-leader-election=false is --no-leader-election)")
	f.IntVar(&k.reconcileConcurrency, "reconcile-concurrency", controller.DefaultConcurrency, "KubeRay's name of --concurrency (KubeRay's default is 1; raydar's 32)")
	f.StringVar(&k.watchNamespace, "watch-namespace", "", "KubeRay's name of --watch-namespaces: namespaces, comma-separated (default all)")
	f.Float64Var(&k.qps, "qps", float64(controller.DefaultQPS), "KubeRay's name of --kube-api-qps (KubeRay's default is 100)")
	f.IntVar(&k.burst, "burst", controller.DefaultBurst, "KubeRay's name of --kube-api-burst (KubeRay's default is 200)")
	f.StringVar(&k.logFile, "log-file-path", "", "also write the log to this file (rotated at 500 MB, 10 files kept, as KubeRay)")
	f.StringVar(&k.logFileEncoder, "log-file-encoder", "json", "the log file's format: json or console")
	f.StringVar(&k.logStdoutEncoder, "log-stdout-encoder", "console", "the standard error log's format: json or console (KubeRay's default is json; its chart sets json)")
	f.BoolVar(&k.enableBatchScheduler, "enable-batch-scheduler", false, "deprecated, as in KubeRay: --batch-scheduler=volcano")
	f.BoolVar(&o.UseKubernetesProxy, "use-kubernetes-proxy", false, "reach Ray dashboards and Serve proxies through the API server's proxy, in a pod too")
	f.BoolVar(&o.EnableMetrics, "enable-metrics", false, "serve KubeRay's kuberay_* metrics on the metrics address")
	f.BoolVar(&k.forcedClusterUpgrade, "forced-cluster-upgrade", false, "deprecated, as in KubeRay: has no effect")
	f.IntVarP(&k.verbosity, "v", "v", 0, "log verbosity")
	f.BoolVar(&k.zapDevel, "zap-devel", false, "KubeRay's (controller-runtime's zap): debug verbosity (-v 1); raydar writes no stack traces")
	f.StringVar(&k.zapEncoder, "zap-encoder", "", "KubeRay's: no effect, as in KubeRay (--log-stdout-encoder sets the encoder)")
	f.StringVar(&k.zapLevel, "zap-log-level", "", "KubeRay's name of -v: info (0), debug (1) or an integer; error and panic are refused (raydar cannot log less than info)")
	f.StringVar(&k.zapStacktraceLevel, "zap-stacktrace-level", "", "KubeRay's: only panic is taken (raydar writes no stack traces)")
	f.StringVar(&k.zapTimeFormat, "zap-time-encoding", "", "KubeRay's: only iso8601, KubeRay's own default and raydar's format, is taken")
}

// resolveZap applies controller-runtime's zap flags as raydar can, and
// refuses the values it cannot honour, naming them. They hold no setting
// of the config file, so they count with --config too, as in KubeRay.
func (k *kubeRay) resolveZap(f *pflag.FlagSet) (notes []string, err error) {
	if f.Changed("zap-log-level") {
		v := 0
		switch k.zapLevel {
		case "info":
		case "debug":
			v = 1
		case "error", "panic":
			return nil, fmt.Errorf("--zap-log-level %s: raydar logs at info and more, and cannot leave info out; give info, debug or an integer", k.zapLevel)
		default:
			n, err := strconv.Atoi(k.zapLevel)
			if err != nil || n < 1 {
				return nil, fmt.Errorf("--zap-log-level %q: want info, debug or an integer above 0, as KubeRay", k.zapLevel)
			}
			v = n
		}
		if f.Changed("v") && k.verbosity != v {
			return nil, fmt.Errorf("--zap-log-level %s and -v %d: one setting given twice with different values (--zap-log-level is KubeRay's name of -v): give one", k.zapLevel, k.verbosity)
		}
		k.verbosity = v
	}
	if k.zapDevel && k.verbosity < 1 {
		k.verbosity = 1
	}
	if f.Changed("zap-encoder") {
		if err := config.CheckEncoder(k.zapEncoder); err != nil {
			return nil, fmt.Errorf("--zap-encoder: %w", err)
		}
		notes = append(notes, "--zap-encoder has no effect, as in KubeRay: --log-stdout-encoder sets the encoder")
	}
	if f.Changed("zap-stacktrace-level") && k.zapStacktraceLevel != "panic" {
		return nil, fmt.Errorf("--zap-stacktrace-level %s: raydar writes no stack traces; only panic (none before a panic) is taken", k.zapStacktraceLevel)
	}
	if f.Changed("zap-time-encoding") && k.zapTimeFormat != "iso8601" {
		return nil, fmt.Errorf("--zap-time-encoding %s: raydar writes ISO 8601 times (KubeRay's default too); only iso8601 is taken", k.zapTimeFormat)
	}
	return notes, nil
}

// resolve turns KubeRay's flags, the config file and KubeRay's environment
// into o (noElect is raydar's --no-leader-election), after f is parsed.
// It returns what the operator should log (flags ignored, deprecations).
func (k *kubeRay) resolve(f *pflag.FlagSet, o *controller.Options, noElect *bool, getenv func(string) string) (notes []string, err error) {
	if notes, err = k.resolveZap(f); err != nil {
		return nil, err
	}
	if k.config != "" {
		var ignored []string
		for _, name := range fileSettings {
			if f.Changed(name) {
				ignored = append(ignored, "--"+name)
			}
		}
		if len(ignored) > 0 {
			notes = append(notes, fmt.Sprintf("--config %s is set: %s ignored, as KubeRay ignores flags when a config file is set; set them in the file", k.config, strings.Join(ignored, ", ")))
		}
		c, err := config.Load(k.config)
		if err != nil {
			return nil, err
		}
		if err := k.apply(c, o, noElect); err != nil {
			return nil, fmt.Errorf("--config %s: %w", k.config, err)
		}
	} else {
		if err := k.resolveFlags(f, o, noElect); err != nil {
			return nil, err
		}
		o.RayJob.DeleteRayJobAfterJobFinishes = getenv(deleteRayJobEnv) == "true"
	}
	if k.forcedClusterUpgrade {
		notes = append(notes, "Deprecated feature flag forced-cluster-upgrade is enabled, which has no effect.")
	}
	return notes, nil
}

// resolveFlags copies each alias given into raydar's flag (refusing the
// two given with different values) and checks the rest.
func (k *kubeRay) resolveFlags(f *pflag.FlagSet, o *controller.Options, noElect *bool) error {
	for _, a := range aliases {
		if !f.Changed(a.kuberay) {
			continue
		}
		kv := f.Lookup(a.kuberay).Value.String()
		if a.kuberay == "watch-namespace" {
			ns, err := config.SplitNamespaces(k.watchNamespace)
			if err != nil {
				return fmt.Errorf("--watch-namespace %w", err)
			}
			kv = strings.Join(ns, ",")
		}
		if f.Changed(a.raydar) {
			if !sameValue(kv, f.Lookup(a.raydar).Value.String()) {
				return fmt.Errorf("--%s %s and --%s %s: one setting given twice with different values (--%s is KubeRay's name of --%s): give one",
					a.kuberay, kv, a.raydar, f.Lookup(a.raydar).Value.String(), a.kuberay, a.raydar)
			}
			continue
		}
		if err := f.Set(a.raydar, kv); err != nil {
			return fmt.Errorf("--%s %s: %w", a.kuberay, kv, err)
		}
	}
	if f.Changed("enable-leader-election") {
		if f.Changed("no-leader-election") && *noElect == k.enableLeaderElection {
			return fmt.Errorf("--enable-leader-election=%t and --no-leader-election=%t contradict each other: give one", k.enableLeaderElection, *noElect)
		}
		*noElect = !k.enableLeaderElection
	}
	if k.enableBatchScheduler {
		if f.Changed("batch-scheduler") {
			// KubeRay refuses both (apis/config/v1alpha1/config_utils.go:23-25).
			return fmt.Errorf("--enable-batch-scheduler (deprecated) and --batch-scheduler are both set: give --batch-scheduler only")
		}
		if err := f.Set("batch-scheduler", "volcano"); err != nil {
			return err
		}
	}
	for _, e := range []struct{ flag, v string }{{"log-stdout-encoder", k.logStdoutEncoder}, {"log-file-encoder", k.logFileEncoder}} {
		if err := config.CheckEncoder(e.v); err != nil {
			return fmt.Errorf("--%s: %w", e.flag, err)
		}
	}
	return nil
}

// sameValue compares two flag values as numbers when both are ("100" and
// "100.0"), as strings otherwise.
func sameValue(a, b string) bool {
	x, errx := strconv.ParseFloat(a, 64)
	y, erry := strconv.ParseFloat(b, 64)
	if errx == nil && erry == nil {
		return x == y
	}
	return strings.Trim(a, "[]") == strings.Trim(b, "[]")
}

// apply sets o (and the logger's settings in k) from a decoded config
// file: every field of KubeRay v1.7.0's Configuration, with its defaults
// (config.Default) where the file is silent.
func (k *kubeRay) apply(c config.Configuration, o *controller.Options, noElect *bool) error {
	o.MetricsBindAddress = c.MetricsAddr
	o.HealthProbeBindAddress = c.ProbeAddr
	*noElect = !*c.EnableLeaderElection
	o.LeaderElectionNamespace = c.LeaderElectionNamespace
	o.Concurrency = c.ReconcileConcurrency
	ns, err := config.SplitNamespaces(c.WatchNamespace)
	if err != nil {
		return fmt.Errorf("watchNamespace: %w", err)
	}
	o.Namespaces = ns
	k.logFile, k.logFileEncoder, k.logStdoutEncoder = c.LogFile, c.LogFileEncoder, c.LogStdoutEncoder
	if k.logFileEncoder == "" {
		k.logFileEncoder = "json"
	}
	if k.logStdoutEncoder == "" {
		k.logStdoutEncoder = "json"
	}
	name := c.BatchScheduler
	if c.EnableBatchScheduler {
		name = "volcano"
	}
	s, err := batchscheduler.New(name)
	if err != nil {
		return fmt.Errorf("batchScheduler: %w", err)
	}
	o.BatchScheduler = s
	o.UseKubernetesProxy = c.UseKubernetesProxy
	o.RayJob.DeleteRayJobAfterJobFinishes = c.DeleteRayJobAfterJobFinishes
	o.EnableMetrics = c.EnableMetrics
	o.QPS, o.Burst = float32(*c.QPS), *c.Burst
	o.PodDefaults = kit.PodDefaults{
		HeadSidecarContainers:   slices.Clone(c.HeadSidecarContainers),
		WorkerSidecarContainers: slices.Clone(c.WorkerSidecarContainers),
		DefaultContainerEnvs:    slices.Clone(c.DefaultContainerEnvs),
		DefaultPodLabels:        c.DefaultPodLabels,
		DefaultPodAnnotations:   c.DefaultPodAnnotations,
	}
	return nil
}
