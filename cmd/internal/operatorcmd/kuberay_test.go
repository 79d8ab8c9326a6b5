package operatorcmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/raydar/raydar/controller"
	"github.com/raydar/raydar/controller/batchscheduler"
	"github.com/raydar/raydar/controller/features"
)

// parsed is what a command line sets.
type parsed struct {
	o       controller.Options
	noElect bool
	kr      kubeRay
	notes   []string
}

// parse binds the operator's settings on a fresh flag set, parses args and
// resolves KubeRay's flags with env as the environment.
func parse(t *testing.T, env map[string]string, args ...string) (parsed, error) {
	t.Helper()
	var p parsed
	f := pflag.NewFlagSet("raydar-operator", pflag.ContinueOnError)
	bindSettings(f, &p.o, &p.noElect, &p.kr)
	if err := f.Parse(args); err != nil {
		return p, err
	}
	notes, err := p.kr.resolve(f, &p.o, &p.noElect, func(k string) string { return env[k] })
	p.notes = notes
	return p, err
}

// KubeRay v1.7.0's chart with its default values renders this command line
// (test/deploy renders it for real); every flag of it is taken, with
// KubeRay's meaning.
func TestKubeRayChartDefaultCommandLine(t *testing.T) {
	p, err := parse(t, nil, "--log-stdout-encoder", "json", "--log-file-encoder", "json", "--enable-leader-election=true",
		"--enable-metrics=true", "--reconcile-concurrency=1", "--qps=100", "--burst=200",
		"--feature-gates=RayClusterStatusConditions=true,RayJobDeletionPolicy=true,RayMultiHostIndexing=true,RayServiceIncrementalUpgrade=true,RayCronJob=false,RayClusterMTLS=false,RayClusterNetworkPolicy=false,RayClusterHistoryServer=false")
	if err != nil {
		t.Fatal(err)
	}
	if p.noElect || !p.o.EnableMetrics || p.o.Concurrency != 1 || p.o.QPS != 100 || p.o.Burst != 200 || p.kr.logStdoutEncoder != "json" {
		t.Errorf("options %+v, noElect %t, stdout encoder %q", p.o, p.noElect, p.kr.logStdoutEncoder)
	}
	if p.o.FeatureGates.Enabled(features.RayCronJob) {
		t.Error("RayCronJob=false left RayCronJob on")
	}
}

func TestKubeRayFlags(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		env     map[string]string
		check   func(parsed) bool
		wantErr string
	}{
		{name: "metrics-addr is --metrics-bind-address", args: []string{"--metrics-addr=:9090"}, check: func(p parsed) bool { return p.o.MetricsBindAddress == ":9090" }},
		{name: "both names, one value", args: []string{"--metrics-addr=:9090", "--metrics-bind-address=:9090"}, check: func(p parsed) bool { return p.o.MetricsBindAddress == ":9090" }},
		{name: "both names, two values", args: []string{"--metrics-addr=:9090", "--metrics-bind-address=:9091"}, wantErr: "--metrics-addr :9090 and --metrics-bind-address :9091: one setting given twice"},
		{name: "watch-namespace", args: []string{"--watch-namespace=a,b"}, check: func(p parsed) bool { return strings.Join(p.o.Namespaces, ",") == "a,b" }},
		{name: "watch-namespace empty name", args: []string{"--watch-namespace=a,,b"}, wantErr: "--watch-namespace"},
		{name: "qps as float", args: []string{"--qps=50.5", "--burst=70"}, check: func(p parsed) bool { return p.o.QPS == 50.5 && p.o.Burst == 70 }},
		{name: "qps same number", args: []string{"--qps=50", "--kube-api-qps=50.0"}, check: func(p parsed) bool { return p.o.QPS == 50 }},
		{name: "leader election off", args: []string{"--enable-leader-election=false"}, check: func(p parsed) bool { return p.noElect }},
		{name: "leader election contradiction", args: []string{"--enable-leader-election=true", "--no-leader-election"}, wantErr: "contradict"},
		{name: "enable-batch-scheduler is volcano", args: []string{"--enable-batch-scheduler"}, check: func(p parsed) bool { return batchscheduler.NameOf(p.o.BatchScheduler) == "volcano" }},
		{name: "both batch scheduler flags", args: []string{"--enable-batch-scheduler", "--batch-scheduler=yunikorn"}, wantErr: "--enable-batch-scheduler (deprecated) and --batch-scheduler are both set"},
		{name: "bad encoder", args: []string{"--log-file-encoder=xml"}, wantErr: `--log-file-encoder: invalid encoder "xml"`},
		{name: "use-kubernetes-proxy", args: []string{"--use-kubernetes-proxy"}, check: func(p parsed) bool { return p.o.UseKubernetesProxy }},
		{name: "forced-cluster-upgrade is deprecated", args: []string{"--forced-cluster-upgrade"}, check: func(p parsed) bool {
			return len(p.notes) == 1 && strings.Contains(p.notes[0], "no effect")
		}},
		{name: "DELETE_RAYJOB_CR_AFTER_JOB_FINISHES", env: map[string]string{deleteRayJobEnv: "true"}, check: func(p parsed) bool { return p.o.RayJob.DeleteRayJobAfterJobFinishes }},
		{name: "raydar's defaults stand", check: func(p parsed) bool {
			return !p.noElect && p.o.Concurrency == controller.DefaultConcurrency && p.o.QPS == controller.DefaultQPS && !p.o.EnableMetrics && !p.o.RayJob.DeleteRayJobAfterJobFinishes
		}},
		{name: "unknown flag", args: []string{"--zap-level=debug"}, wantErr: "unknown flag: --zap-level"},
		{name: "zap-log-level debug is -v 1", args: []string{"--zap-log-level=debug"}, check: func(p parsed) bool { return p.kr.verbosity == 1 }},
		{name: "zap-log-level as an integer", args: []string{"--zap-log-level=3"}, check: func(p parsed) bool { return p.kr.verbosity == 3 }},
		{name: "zap-log-level error is refused", args: []string{"--zap-log-level=error"}, wantErr: "--zap-log-level error: raydar logs at info and more"},
		{name: "zap-log-level beside another -v", args: []string{"--zap-log-level=debug", "-v", "2"}, wantErr: "--zap-log-level debug and -v 2: one setting given twice"},
		{name: "zap-devel is debug", args: []string{"--zap-devel"}, check: func(p parsed) bool { return p.kr.verbosity == 1 }},
		{name: "zap-encoder has no effect, said", args: []string{"--zap-encoder=console"}, check: func(p parsed) bool {
			return len(p.notes) == 1 && strings.Contains(p.notes[0], "--zap-encoder has no effect") && p.kr.logStdoutEncoder == "console"
		}},
		{name: "zap-stacktrace-level error is refused", args: []string{"--zap-stacktrace-level=error"}, wantErr: "raydar writes no stack traces"},
		{name: "zap-stacktrace-level panic", args: []string{"--zap-stacktrace-level=panic"}, check: func(p parsed) bool { return len(p.notes) == 0 }},
		{name: "zap-time-encoding iso8601", args: []string{"--zap-time-encoding=iso8601"}, check: func(p parsed) bool { return len(p.notes) == 0 }},
		{name: "zap-time-encoding epoch is refused", args: []string{"--zap-time-encoding=epoch"}, wantErr: "--zap-time-encoding epoch: raydar writes ISO 8601 times"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := parse(t, tc.env, tc.args...)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !tc.check(p) {
				t.Errorf("%v: options %+v noElect %t notes %q", tc.args, p.o, p.noElect, p.notes)
			}
		})
	}
}

// A config file sets every field it holds, KubeRay's defaults fill the
// rest, and the flags it holds are ignored (and said), as in KubeRay.
func TestKubeRayConfigFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "config.yaml")
	write := func(s string) {
		if err := os.WriteFile(file, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(`apiVersion: config.ray.io/v1alpha1
kind: Configuration
metricsAddr: ":9000"
enableLeaderElection: false
leaderElectionNamespace: ops
reconcileConcurrency: 6
watchNamespace: team-a,team-b
logStdoutEncoder: console
batchScheduler: yunikorn
useKubernetesProxy: true
deleteRayJobAfterJobFinishes: true
enableMetrics: true
qps: 40
burst: 80
headSidecarContainers:
- name: log-shipper
  image: fluent-bit
workerSidecarContainers:
- name: node-agent
  image: busybox
defaultContainerEnvs:
- name: TEAM
  value: ml
defaultPodLabels: {team: ml}
defaultPodAnnotations: {owner: ml-platform}
`)
	p, err := parse(t, nil, "--config", file, "--reconcile-concurrency=2", "--feature-gates=RayClusterNetworkPolicy=true")
	if err != nil {
		t.Fatal(err)
	}
	o := p.o
	switch {
	case o.MetricsBindAddress != ":9000", o.HealthProbeBindAddress != ":8082", !p.noElect, o.LeaderElectionNamespace != "ops",
		o.Concurrency != 6, strings.Join(o.Namespaces, ",") != "team-a,team-b", p.kr.logStdoutEncoder != "console", p.kr.logFileEncoder != "json",
		batchscheduler.NameOf(o.BatchScheduler) != "yunikorn", !o.UseKubernetesProxy, !o.RayJob.DeleteRayJobAfterJobFinishes, !o.EnableMetrics,
		o.QPS != 40, o.Burst != 80:
		t.Errorf("options from the file: %+v (noElect %t, encoders %q %q)", o, p.noElect, p.kr.logStdoutEncoder, p.kr.logFileEncoder)
	}
	d := o.PodDefaults
	if len(d.HeadSidecarContainers) != 1 || d.HeadSidecarContainers[0].Name != "log-shipper" || len(d.WorkerSidecarContainers) != 1 ||
		len(d.DefaultContainerEnvs) != 1 || d.DefaultPodLabels["team"] != "ml" || d.DefaultPodAnnotations["owner"] != "ml-platform" {
		t.Errorf("pod defaults from the file: %+v", d)
	}
	if !o.FeatureGates.Enabled(features.RayClusterNetworkPolicy) {
		t.Error("--feature-gates is taken beside --config, as in KubeRay")
	}
	if len(p.notes) != 1 || !strings.Contains(p.notes[0], "--reconcile-concurrency ignored") {
		t.Errorf("notes %q, want one naming --reconcile-concurrency as ignored", p.notes)
	}

	write("apiVersion: config.ray.io/v1alpha1\nkind: Configuration\n")
	p, err = parse(t, nil, "--config", file)
	if err != nil {
		t.Fatal(err)
	}
	if p.noElect || p.o.Concurrency != 1 || p.o.QPS != 100 || p.o.Burst != 200 || p.o.MetricsBindAddress != ":8080" {
		t.Errorf("KubeRay's defaults: %+v noElect %t", p.o, p.noElect)
	}

	for _, tc := range []struct{ file, wantErr string }{
		{"apiVersion: config.ray.io/v1alpha1\nkind: Configuration\nreconcileConcurency: 3\n", `unknown field "reconcileConcurency" (line 3)`},
		{"apiVersion: config.ray.io/v1alpha1\nkind: Configuration\nheadSidecarContainers:\n- name: a\n  imagee: x\n", `unknown field "headSidecarContainers[0].imagee" (line 5)`},
		{"apiVersion: config.ray.io/v1\nkind: Configuration\n", `apiVersion "config.ray.io/v1"`},
		{"apiVersion: config.ray.io/v1alpha1\nkind: Config\n", `kind "Config"`},
		{"apiVersion: config.ray.io/v1alpha1\nkind: Configuration\nqps: [\n", "not a YAML or JSON document"},
		{"apiVersion: config.ray.io/v1alpha1\nkind: Configuration\nbatchScheduler: slurm\n", "batchScheduler: --batch-scheduler slurm"},
		{"apiVersion: config.ray.io/v1alpha1\nkind: Configuration\nbatchScheduler: volcano\nenableBatchScheduler: true\n", "both enableBatchScheduler"},
	} {
		write(tc.file)
		if _, err := parse(t, nil, "--config", file); err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%q: error %v, want one containing %q", tc.file, err, tc.wantErr)
		}
	}
}

// --log-file-path writes the log to the file as well, each in its own
// encoder: here console to stderr, json to the file.
func TestLogFileBesideStderr(t *testing.T) {
	file := filepath.Join(t.TempDir(), "operator.log")
	var stderr strings.Builder
	logger, closeLog, err := newLogger(&stderr, 0, "console", file, "json")
	if err != nil {
		t.Fatal(err)
	}
	logger.WithName("setup").Info("starting", "workers", 3)
	closeLog()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if line := strings.TrimSpace(string(b)); !strings.HasPrefix(line, "{") || !strings.Contains(line, `"msg":"starting"`) || !strings.Contains(line, `"workers":3`) {
		t.Errorf("log file %q, want one JSON line with the message and its values", line)
	}
	if got := stderr.String(); strings.HasPrefix(got, "{") || !strings.Contains(got, `"msg"="starting"`) || !strings.Contains(got, "setup") {
		t.Errorf("stderr %q, want the console line with the logger's name", got)
	}
	notDir := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(notDir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := newLogger(&stderr, 0, "console", filepath.Join(notDir, "x.log"), "json"); err == nil || !strings.Contains(err.Error(), "--log-file-path") {
		t.Errorf("an unwritable log file: %v, want an error naming --log-file-path", err)
	}
}
