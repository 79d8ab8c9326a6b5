package conformance

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/raydar/raydar/controller"
	"github.com/raydar/raydar/controller/kit"
	"github.com/raydar/raydar/rayapi/config"
)

// configSamples are the samples compared under configFile: a plain
// cluster, one with the autoscaler's sidecar (where KubeRay puts the
// configured sidecars beside it), one whose head sets RAY_GRAFANA_HOST
// itself (a default env of that name must lose to it), a RayJob's and a
// RayService's clusters.
var configSamples = []string{
	"samples/ray-cluster.sample.yaml",
	"samples/ray-cluster.autoscaler.yaml",
	"samples/ray-cluster.embed-grafana.yaml",
	"samples/ray-job.sample.yaml",
	"samples/ray-service.sample.yaml",
}

// configFile is one config.ray.io/v1alpha1 Configuration with the
// pod-shaping fields KubeRay v1.6.2 has (sidecars for the head and the
// workers, default container envs, one of which (RAY_GRAFANA_HOST)
// ray-cluster.embed-grafana.yaml's head sets too: the user's value must
// win), run by both operators; %s is the
// watched namespaces, each side's own. With --config KubeRay ignores its
// other flags (main.go), so the rest of what the suite runs it with is in
// the file too.
const configFile = `apiVersion: config.ray.io/v1alpha1
kind: Configuration
metricsAddr: "0"
probeAddr: "0"
enableLeaderElection: false
reconcileConcurrency: 4
watchNamespace: %s
headSidecarContainers:
- name: log-shipper
  image: fluent/fluent-bit:3.2
  args: ["-i", "tail", "-p", "path=/tmp/ray/session_latest/logs/*", "-o", "stdout"]
workerSidecarContainers:
- name: node-agent
  image: busybox:1.36
  command: ["sh", "-c", "sleep infinity"]
  resources:
    requests: {cpu: 10m, memory: 16Mi}
defaultContainerEnvs:
- name: TEAM
  value: ml-platform
- name: RAY_GRAFANA_HOST
  value: http://grafana.monitoring:3000
`

// TestConformanceConfigFile compares the samples of configSamples again
// with both operators run with the same Configuration file (configFile,
// KubeRay's --config): the sidecars and default envs must land in the
// same containers, in the same order, with the same precedence, so
// intended.yaml's entries alone explain the differences. raydar reads the
// file with rayapi/config, as raydar-operator --config does.
func TestConformanceConfigFile(t *testing.T) {
	if env == nil {
		t.Skip("conformance suite: needs the sandbox and KubeRay's operator (skipped with -short)")
	}
	corpus := env.manifestsNamed(configSamples)
	if len(corpus) != len(configSamples) {
		t.Fatalf("found %d of the %d samples %v in the corpus", len(corpus), len(configSamples), configSamples)
	}
	krNS, rdNS, kr, rd := env.passNamespaces(t, "cfg", len(corpus))
	dir := t.TempDir()
	krFile := filepath.Join(dir, "kuberay.yaml")
	if err := os.WriteFile(krFile, fmt.Appendf(nil, configFile, strings.Join(kr, ",")), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd, err := env.startKubeRay(kr, "--config="+krFile)
	if err != nil {
		t.Fatal(err)
	}
	defer stopKubeRay(cmd)
	c, err := config.Decode(fmt.Appendf(nil, configFile, strings.Join(rd, ",")))
	if err != nil {
		t.Fatalf("rayapi/config refuses the file KubeRay runs with: %v", err)
	}
	stop, err := env.startRaydar(rd, true, func(o *controller.Options) {
		o.PodDefaults = kit.PodDefaults{
			HeadSidecarContainers:   c.HeadSidecarContainers,
			WorkerSidecarContainers: c.WorkerSidecarContainers,
			DefaultContainerEnvs:    c.DefaultContainerEnvs,
			DefaultPodLabels:        c.DefaultPodLabels,
			DefaultPodAnnotations:   c.DefaultPodAnnotations,
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	summary := runPass(t, corpus, krNS, rdNS, false)
	summary = strings.Replace(summary, "conformance: KubeRay "+KubeRayVersion, "conformance: KubeRay "+KubeRayVersion+", both with one --config file (sidecars, default envs)", 1)
	t.Log(summary)
	fmt.Fprintln(os.Stderr, summary)
}
