package raycluster

import (
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/raydar/raydar/controller/internal/fixture"
	"github.com/raydar/raydar/controller/kit"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// The expected values in this file are what KubeRay v1.7.0 builds for the
// same spec (ray-operator/controllers/ray/common/pod.go), written out.

func envValue(c corev1.Container, name string) (corev1.EnvVar, bool) {
	for _, e := range c.Env {
		if e.Name == name {
			return e, true
		}
	}
	return corev1.EnvVar{}, false
}

func envNamesOf(env []corev1.EnvVar) []string {
	var out []string
	for _, e := range env {
		out = append(out, e.Name)
	}
	return out
}

func headOf(rc *rayv1.RayCluster) *corev1.Pod {
	return BuildPod(rc, PodBuild{Name: "demo-head-abcde", Head: true}, "h1", DefaultBuildConfig())
}

func workerOf(rc *rayv1.RayCluster, i int) *corev1.Pod {
	return BuildPod(rc, PodBuild{Name: "demo-w-worker-abcde", Group: &rc.Spec.WorkerGroupSpecs[i]}, "h1", DefaultBuildConfig())
}

const fqdn = "demo-head-svc.ns.svc.cluster.local"

func TestBuildHeadPodExact(t *testing.T) {
	rc := fixture.Cluster("demo", fixture.Group("small", 1))
	rc.Spec.HeadGroupSpec.RayStartParams = map[string]string{"num-cpus": "0", "log-style": "record"}
	rc.Spec.HeadGroupSpec.Template.Labels = map[string]string{"team": "ml", rayv1.RayClusterLabelKey: "evil"}
	rc.Spec.HeadGroupSpec.Template.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "MINE", Value: "1"}}
	p := headOf(rc)

	wantLabels := map[string]string{
		rayv1.RayClusterLabelKey: "demo", rayv1.RayNodeTypeLabelKey: "head", rayv1.RayNodeGroupLabelKey: "headgroup",
		rayv1.RayIDLabelKey: "demo-head", rayv1.RayNodeLabelKey: "yes", rayv1.KubernetesApplicationNameLabelKey: "kuberay",
		rayv1.KubernetesCreatedByLabelKey: "kuberay-operator", "team": "ml",
	}
	if d := cmp.Diff(wantLabels, p.Labels); d != "" {
		t.Errorf("labels (-want +got):\n%s", d)
	}
	wantAnn := map[string]string{
		rayv1.UpgradeStrategyRecreateHashKey: "h1", rayv1.KubeRayVersion: kit.KuberayVersionValue,
		rayv1.RayFTEnabledAnnotationKey: "false",
	}
	if d := cmp.Diff(wantAnn, p.Annotations); d != "" {
		t.Errorf("annotations (-want +got):\n%s", d)
	}
	if p.OwnerReferences[0].UID != rc.UID || !*p.OwnerReferences[0].Controller {
		t.Errorf("owner refs %+v", p.OwnerReferences)
	}
	c := p.Spec.Containers[0]
	start := "ray start --head  --block  --dashboard-agent-listen-port=52365  --dashboard-host=0.0.0.0  --log-style=record " +
		" --memory=4294967296  --metrics-export-port=8080  --num-cpus=0 "
	if d := cmp.Diff([]string{"/bin/bash", "-c", "--"}, c.Command); d != "" {
		t.Errorf("command (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"ulimit -n ${RAY_START_ULIMIT_OPEN_FILES:-65536}; " + start}, c.Args); d != "" {
		t.Errorf("args (-want +got):\n%s", d)
	}
	wantEnv := []corev1.EnvVar{
		{Name: "MINE", Value: "1"},
		fieldEnv("RAY_CLUSTER_NAME", "metadata.labels['ray.io/cluster']"),
		fieldEnv("RAY_CLUSTER_NAMESPACE", "metadata.namespace"),
		fieldEnv("RAY_CLOUD_INSTANCE_ID", "metadata.name"),
		fieldEnv("RAY_NODE_TYPE_NAME", "metadata.labels['ray.io/group']"),
		{Name: "KUBERAY_GEN_RAY_START_CMD", Value: start},
		{Name: "RAY_PORT", Value: "6379"},
		{Name: "RAY_ADDRESS", Value: "127.0.0.1:6379"},
		{Name: "RAY_USAGE_STATS_KUBERAY_IN_USE", Value: "1"},
		{Name: "RAY_USAGE_STATS_EXTRA_TAGS", Value: "kuberay_version=raydar;kuberay_crd=RayCluster"},
		{Name: "RAY_DASHBOARD_ENABLE_K8S_DISK_USAGE", Value: "1"},
	}
	if d := cmp.Diff(wantEnv, c.Env); d != "" {
		t.Errorf("env (-want +got):\n%s", d)
	}
	// Only the metrics port is added; the head's other ports are the Service's business.
	if d := cmp.Diff([]corev1.ContainerPort{{Name: "metrics", ContainerPort: 8080}}, c.Ports); d != "" {
		t.Errorf("ports (-want +got):\n%s", d)
	}
	mem := resource.MustParse("4Gi")
	wantVols := []corev1.Volume{{Name: "shared-mem", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory, SizeLimit: &mem}}}}
	if d := cmp.Diff(wantVols, p.Spec.Volumes); d != "" {
		t.Errorf("volumes (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]corev1.VolumeMount{{Name: "shared-mem", MountPath: "/dev/shm"}}, c.VolumeMounts); d != "" {
		t.Errorf("mounts (-want +got):\n%s", d)
	}
	if len(p.Spec.InitContainers) != 0 || p.Spec.RestartPolicy != "" || p.Spec.ServiceAccountName != "" {
		t.Errorf("head init containers %v, restartPolicy %q, serviceAccount %q", p.Spec.InitContainers, p.Spec.RestartPolicy, p.Spec.ServiceAccountName)
	}
}

func TestBuildWorkerPodExact(t *testing.T) {
	g := fixture.Group("gpu", 1)
	g.Template.Spec.Containers[0].Resources.Limits["nvidia.com/gpu"] = resource.MustParse("2")
	g.Template.Spec.Containers[0].Resources.Limits[tpuResource] = resource.MustParse("4")
	g.Template.Spec.Containers[0].Command = []string{"echo", "hi"}
	g.Template.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "MINE", Value: "1"}}
	g.Template.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "certs", MountPath: "/certs"}}
	g.Template.Spec.InitContainers = []corev1.Container{{Name: "gen-cert", Image: "busybox"}}
	g.Labels = map[string]string{"zone": "a"}
	g.Template.Labels = map[string]string{"zone": "template", "team": "ml"}
	rc := fixture.Cluster("demo", g)
	rc.Spec.GcsFaultToleranceOptions = &rayv1.GcsFaultToleranceOptions{RedisAddress: "redis:6379"}
	p := workerOf(rc, 0)

	if p.Labels[rayv1.RayNodeGroupLabelKey] != "gpu" || p.Labels[rayv1.RayIDLabelKey] != "demo-worker" ||
		p.Labels["zone"] != "a" || p.Labels["team"] != "ml" {
		t.Errorf("labels %v", p.Labels)
	}
	if _, ok := p.Annotations[rayv1.RayFTEnabledAnnotationKey]; ok {
		t.Errorf("worker carries %s: %v", rayv1.RayFTEnabledAnnotationKey, p.Annotations)
	}
	c := p.Spec.Containers[0]
	start := "ray start  --address=" + fqdn + ":6379  --block  --dashboard-agent-listen-port=52365  --labels=zone=a " +
		" --memory=2147483648  --metrics-export-port=8080  --num-cpus=1  --num-gpus=2  --resources='{\"TPU\":4}' "
	if d := cmp.Diff([]string{" echo  hi  && ulimit -n ${RAY_START_ULIMIT_OPEN_FILES:-65536}; " + start}, c.Args); d != "" {
		t.Errorf("args (-want +got):\n%s", d)
	}
	wantEnv := []string{"MINE", "RAY_gcs_rpc_server_reconnect_timeout_s", "FQ_RAY_IP", "RAY_IP", "RAY_CLUSTER_NAME", "RAY_CLUSTER_NAMESPACE",
		"RAY_CLOUD_INSTANCE_ID", "RAY_NODE_TYPE_NAME", "KUBERAY_GEN_RAY_START_CMD", "RAY_PORT", "RAY_ADDRESS",
		"RAY_USAGE_STATS_KUBERAY_IN_USE", "RAY_DASHBOARD_ENABLE_K8S_DISK_USAGE"}
	if d := cmp.Diff(wantEnv, envNamesOf(c.Env)); d != "" {
		t.Errorf("env (-want +got):\n%s", d)
	}
	for name, want := range map[string]string{"FQ_RAY_IP": fqdn, "RAY_IP": "demo-head-svc", "RAY_ADDRESS": fqdn + ":6379", "RAY_gcs_rpc_server_reconnect_timeout_s": "600"} {
		if e, _ := envValue(c, name); e.Value != want {
			t.Errorf("env %s = %q, want %q", name, e.Value, want)
		}
	}

	// Init containers: the user's first, then wait-gcs-ready; every one gets FQ_RAY_IP and RAY_IP.
	ip := []corev1.EnvVar{{Name: "FQ_RAY_IP", Value: fqdn}, {Name: "RAY_IP", Value: "demo-head-svc"}}
	res := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("200m"), corev1.ResourceMemory: resource.MustParse("256Mi")}
	want := []corev1.Container{
		{Name: "gen-cert", Image: "busybox", Env: ip},
		{
			Name:    "wait-gcs-ready",
			Image:   "rayproject/ray:2.52.0",
			Command: []string{"/bin/bash", "-c", "--"},
			Args:    []string{fmt.Sprintf(waitGCSScript, fqdn, "6379", fqdn, "6379")},
			// The Ray container's env and mounts as the user wrote them.
			Env:          append([]corev1.EnvVar{{Name: "MINE", Value: "1"}}, ip...),
			VolumeMounts: []corev1.VolumeMount{{Name: "certs", MountPath: "/certs"}},
			Resources:    corev1.ResourceRequirements{Limits: res, Requests: res},
		},
	}
	if d := cmp.Diff(want, p.Spec.InitContainers); d != "" {
		t.Errorf("init containers (-want +got):\n%s", d)
	}
	// The script is KubeRay's, line for line.
	script := p.Spec.InitContainers[1].Args[0]
	for _, line := range []string{
		"\n\t\t\t\t\tSECONDS=0\n",
		"\t\t\t\t\t\t\tif ray health-check --address " + fqdn + ":6379 > /dev/null 2>&1; then\n",
		"\t\t\t\t\t\t\techo \"$SECONDS seconds elapsed: Still waiting for GCS to be ready. For troubleshooting, refer to the FAQ at https://docs.ray.io/en/master/cluster/kubernetes/troubleshooting.html.\"\n",
		"\t\t\t\t\tdone\n\t\t\t\t",
	} {
		if !strings.Contains(script, line) {
			t.Errorf("wait-gcs-ready script lacks %q", line)
		}
	}
}

func TestBuildRayStartFlags(t *testing.T) {
	tests := []struct {
		name   string
		params map[string]string
		want   string
	}{
		{"switch true", map[string]string{"disable-usage-stats": "true"}, " --disable-usage-stats "},
		{"switch True any case", map[string]string{"enable-object-reconstruction": "True"}, " --enable-object-reconstruction "},
		{"switch false dropped", map[string]string{"disable-usage-stats": "false"}, ""},
		{"log-color keeps value", map[string]string{"log-color": "false"}, " --log-color=false "},
		{"include-dashboard keeps value", map[string]string{"include-dashboard": "true"}, " --include-dashboard=true "},
		{"include-log-monitor keeps value", map[string]string{"include-log-monitor": "false"}, " --include-log-monitor=false "},
		{"values verbatim", map[string]string{"resources": `'{"a": 1}'`, "object-store-memory": "100000000"},
			` --object-store-memory=100000000  --resources='{"a": 1}' `},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := renderRayStart(false, tt.params); got != "ray start "+tt.want {
				t.Errorf("got %q, want %q", got, "ray start "+tt.want)
			}
		})
	}
}

func TestBuildGroupResources(t *testing.T) {
	tests := []struct {
		name      string
		resources map[string]string
		limits    corev1.ResourceList
		want      map[string]string // the resource flags of the command
	}{
		{"CPU 0 is num-cpus, not a custom resource", map[string]string{"CPU": "0"}, nil,
			map[string]string{"num-cpus": "0", "memory": "2147483648"}},
		{"quantities rounded up", map[string]string{"cpu": "500m", "memory": "1Gi", "GPU": "1"}, nil,
			map[string]string{"num-cpus": "1", "memory": "1073741824", "num-gpus": "1"}},
		{"nvidia.com/gpu is GPUs", map[string]string{"nvidia.com/gpu": "2"}, nil,
			map[string]string{"num-cpus": "1", "memory": "2147483648", "num-gpus": "2"}},
		{"the rest is --resources JSON", map[string]string{"TPU": "4", "custom": "1Gi", "CPU": "3"}, nil,
			map[string]string{"num-cpus": "3", "memory": "2147483648", "resources": `'{"TPU":4,"custom":1073741824}'`}},
		{"group resources win over container limits", map[string]string{"memory": "1Gi"},
			corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("8Gi"), "nvidia.com/gpu": resource.MustParse("1")},
			map[string]string{"num-cpus": "1", "memory": "1073741824", "num-gpus": "1"}},
		{"container accelerator merged into --resources", map[string]string{"special": "2"},
			corev1.ResourceList{tpuResource: resource.MustParse("4")},
			map[string]string{"num-cpus": "1", "memory": "2147483648", "resources": `'{"TPU":4,"special":2}'`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := fixture.Group("w", 1)
			g.Resources = tt.resources
			for k, v := range tt.limits {
				g.Template.Spec.Containers[0].Resources.Limits[k] = v
			}
			p := workerOf(fixture.Cluster("demo", g), 0)
			args := p.Spec.Containers[0].Args[0]
			got := map[string]string{}
			for _, f := range []string{"num-cpus", "memory", "num-gpus", "resources"} {
				if i := strings.Index(args, " --"+f+"="); i >= 0 {
					got[f] = strings.SplitN(args[i+len(f)+4:], " ", 2)[0]
				}
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("flags (-want +got):\n%s\nargs %s", d, args)
			}
		})
	}
}

func TestBuildContainerResources(t *testing.T) {
	// CPU from the limit, else the request; memory from the limit only;
	// GPUs from the first GPU limit by name.
	g := fixture.Group("w", 1)
	c := &g.Template.Spec.Containers[0]
	c.Resources = corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1500m"), corev1.ResourceMemory: resource.MustParse("1Gi")},
		Limits:   corev1.ResourceList{"amd.com/gpu": resource.MustParse("1"), "nvidia.com/gpu": resource.MustParse("3")},
	}
	args := workerOf(fixture.Cluster("demo", g), 0).Spec.Containers[0].Args[0]
	for _, want := range []string{" --num-cpus=2 ", " --num-gpus=1 "} {
		if !strings.Contains(args, want) {
			t.Errorf("args %q lack %q", args, want)
		}
	}
	if strings.Contains(args, "--memory") {
		t.Errorf("memory taken from the request: %q", args)
	}
}

func TestBuildUserCommand(t *testing.T) {
	gen := func(rc *rayv1.RayCluster) string {
		e, _ := envValue(workerOf(rc, 0).Spec.Containers[0], envGenRayStartCmd)
		return "ulimit -n ${RAY_START_ULIMIT_OPEN_FILES:-65536}; " + e.Value
	}
	tests := []struct {
		name        string
		command     []string
		args        []string
		clusterAnn  map[string]string
		templateAnn map[string]string
		wantCommand []string
		wantArgs    func(generated string) []string
		wantPodAnn  bool
	}{
		{name: "command and args joined before the generated command", command: []string{"/bin/sh", "-c"}, args: []string{"echo hi"},
			wantCommand: []string{"/bin/bash", "-c", "--"},
			wantArgs:    func(g string) []string { return []string{" /bin/sh  -c  echo hi  && " + g} }},
		{name: "a command running ray start is left alone", command: []string{"/bin/bash", "-c"}, args: []string{"ray start --address=x --block"},
			wantCommand: []string{"/bin/bash", "-c"},
			wantArgs:    func(string) []string { return []string{"ray start --address=x --block"} }},
		{name: "overwrite on the RayCluster", command: []string{"sleep"}, args: []string{"1"},
			clusterAnn:  map[string]string{rayv1.RayOverwriteContainerCmdAnnotationKey: "True"},
			wantCommand: []string{"sleep"}, wantArgs: func(string) []string { return []string{"1"} }, wantPodAnn: true},
		{name: "overwrite on the pod template", command: []string{"sleep"},
			templateAnn: map[string]string{rayv1.RayOverwriteContainerCmdAnnotationKey: "true"},
			wantCommand: []string{"sleep"}, wantArgs: func(string) []string { return nil }, wantPodAnn: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := fixture.Group("w", 1)
			g.Template.Spec.Containers[0].Command = tt.command
			g.Template.Spec.Containers[0].Args = tt.args
			g.Template.Annotations = tt.templateAnn
			rc := fixture.Cluster("demo", g)
			rc.Annotations = tt.clusterAnn
			p := workerOf(rc, 0)
			c := p.Spec.Containers[0]
			if d := cmp.Diff(tt.wantCommand, c.Command); d != "" {
				t.Errorf("command (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tt.wantArgs(gen(rc)), c.Args); d != "" {
				t.Errorf("args (-want +got):\n%s", d)
			}
			if got := p.Annotations[rayv1.RayOverwriteContainerCmdAnnotationKey] == "true"; got != tt.wantPodAnn {
				t.Errorf("pod annotation %v, want %v", p.Annotations, tt.wantPodAnn)
			}
		})
	}
}

func TestBuildProbes(t *testing.T) {
	exec := func(cmd string) corev1.ProbeHandler {
		return corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"bash", "-c", cmd}}}
	}
	raylet := func(port int) string {
		return fmt.Sprintf("wget --tries 1 -T 2 -q -O- http://localhost:%d/api/local_raylet_healthz | grep success", port)
	}
	gcs := func(port int) string {
		return fmt.Sprintf("wget --tries 1 -T 10 -q -O- http://localhost:%d/api/gcs_healthz | grep success", port)
	}
	tests := []struct {
		name       string
		head       bool
		version    string
		params     map[string]string
		creator    string
		wantLive   corev1.Probe
		wantReady  corev1.Probe
		servePorts []corev1.ContainerPort
	}{
		{name: "head exec", head: true, version: "2.52.0",
			wantLive:  corev1.Probe{ProbeHandler: exec(raylet(52365) + " && " + gcs(8265)), InitialDelaySeconds: 30, TimeoutSeconds: 5, PeriodSeconds: 5, SuccessThreshold: 1, FailureThreshold: 120},
			wantReady: corev1.Probe{ProbeHandler: exec(raylet(52365) + " && " + gcs(8265)), InitialDelaySeconds: 10, TimeoutSeconds: 5, PeriodSeconds: 5, SuccessThreshold: 1, FailureThreshold: 10}},
		{name: "head ports from rayStartParams", head: true, version: "2.52.0",
			params:    map[string]string{"dashboard-agent-listen-port": "52000", "dashboard-port": "9000"},
			wantLive:  corev1.Probe{ProbeHandler: exec(raylet(52000) + " && " + gcs(9000)), InitialDelaySeconds: 30, TimeoutSeconds: 5, PeriodSeconds: 5, SuccessThreshold: 1, FailureThreshold: 120},
			wantReady: corev1.Probe{ProbeHandler: exec(raylet(52000) + " && " + gcs(9000)), InitialDelaySeconds: 10, TimeoutSeconds: 5, PeriodSeconds: 5, SuccessThreshold: 1, FailureThreshold: 10}},
		{name: "worker exec", version: "2.52.0",
			wantLive:  corev1.Probe{ProbeHandler: exec(raylet(52365)), InitialDelaySeconds: 30, TimeoutSeconds: 2, PeriodSeconds: 5, SuccessThreshold: 1, FailureThreshold: 120},
			wantReady: corev1.Probe{ProbeHandler: exec(raylet(52365)), InitialDelaySeconds: 10, TimeoutSeconds: 2, PeriodSeconds: 5, SuccessThreshold: 1, FailureThreshold: 10}},
		{name: "Ray 2.53 HTTP on the agent port", head: true, version: "2.53.0", params: map[string]string{"dashboard-agent-listen-port": "52001"},
			wantLive: corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/api/healthz", Port: intstr.FromInt32(52001)}},
				InitialDelaySeconds: 30, TimeoutSeconds: 5, PeriodSeconds: 5, SuccessThreshold: 1, FailureThreshold: 120},
			wantReady: corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/api/healthz", Port: intstr.FromInt32(52001)}},
				InitialDelaySeconds: 10, TimeoutSeconds: 5, PeriodSeconds: 5, SuccessThreshold: 1, FailureThreshold: 10}},
		{name: "RayService worker checks its Serve proxy", version: "2.53.0", creator: rayv1.KindRayService,
			servePorts: []corev1.ContainerPort{{Name: "serve", ContainerPort: 8001}},
			wantLive: corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/api/healthz", Port: intstr.FromInt32(52365)}},
				InitialDelaySeconds: 30, TimeoutSeconds: 2, PeriodSeconds: 5, SuccessThreshold: 1, FailureThreshold: 120},
			wantReady: corev1.Probe{ProbeHandler: exec(raylet(52365) + " && wget --tries 1 -T 10 -q -O- http://localhost:8001/-/healthz | grep success"),
				InitialDelaySeconds: 10, TimeoutSeconds: 2, PeriodSeconds: 5, SuccessThreshold: 1, FailureThreshold: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := fixture.Group("w", 1)
			rc := fixture.Cluster("demo", g)
			rc.Spec.RayVersion = tt.version
			if tt.creator != "" {
				rc.Labels = map[string]string{rayv1.RayOriginatedFromCRDLabelKey: tt.creator}
			}
			var p *corev1.Pod
			if tt.head {
				rc.Spec.HeadGroupSpec.RayStartParams = tt.params
				p = headOf(rc)
			} else {
				rc.Spec.WorkerGroupSpecs[0].RayStartParams = tt.params
				rc.Spec.WorkerGroupSpecs[0].Template.Spec.Containers[0].Ports = tt.servePorts
				p = workerOf(rc, 0)
			}
			c := p.Spec.Containers[0]
			if d := cmp.Diff(&tt.wantLive, c.LivenessProbe); d != "" {
				t.Errorf("liveness (-want +got):\n%s", d)
			}
			if d := cmp.Diff(&tt.wantReady, c.ReadinessProbe); d != "" {
				t.Errorf("readiness (-want +got):\n%s", d)
			}
		})
	}
	// A probe the user wrote is kept.
	rc := fixture.Cluster("demo")
	mine := &corev1.Probe{TimeoutSeconds: 9}
	rc.Spec.HeadGroupSpec.Template.Spec.Containers[0].ReadinessProbe = mine
	if got := headOf(rc).Spec.Containers[0].ReadinessProbe; got.TimeoutSeconds != 9 || got.Exec != nil {
		t.Errorf("user probe replaced: %+v", got)
	}
}

func TestBuildRayServiceEnv(t *testing.T) {
	rc := fixture.Cluster("demo", fixture.Group("w", 1))
	rc.Labels = map[string]string{rayv1.RayOriginatedFromCRDLabelKey: rayv1.KindRayService}
	head := headOf(rc).Spec.Containers[0]
	for name, want := range map[string]string{
		"RAY_timeout_ms_task_wait_for_death_info": "0", "RAY_gcs_server_request_timeout_seconds": "5", "RAY_SERVE_KV_TIMEOUT_S": "5",
		"RAY_USAGE_STATS_EXTRA_TAGS": "kuberay_version=raydar;kuberay_crd=RayService",
	} {
		if e, ok := envValue(head, name); !ok || e.Value != want {
			t.Errorf("env %s = %q, want %q", name, e.Value, want)
		}
	}
}

func TestBuildAutoscaler(t *testing.T) {
	res := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("512Mi")}
	cmd := "ray kuberay-autoscaler --cluster-name $(RAY_CLUSTER_NAME) --cluster-namespace $(RAY_CLUSTER_NAMESPACE)"
	base := corev1.Container{
		Name: "autoscaler", Image: "rayproject/ray:2.52.0", ImagePullPolicy: corev1.PullIfNotPresent,
		Env: []corev1.EnvVar{
			fieldEnv("RAY_CLUSTER_NAME", "metadata.labels['ray.io/cluster']"),
			fieldEnv("RAY_CLUSTER_NAMESPACE", "metadata.namespace"),
			fieldEnv("RAY_HEAD_POD_NAME", "metadata.name"),
			{Name: "KUBERAY_CRD_VER", Value: "v1"},
			{Name: "KUBERAY_GEN_AUTOSCALER_START_CMD", Value: cmd},
		},
		Command:      []string{"/bin/bash", "-c", "--"},
		Args:         []string{cmd},
		Resources:    corev1.ResourceRequirements{Limits: res, Requests: res},
		VolumeMounts: []corev1.VolumeMount{{Name: "ray-logs", MountPath: "/tmp/ray"}},
	}
	small := corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}
	overridden := base
	overridden.Image, overridden.ImagePullPolicy = "my/autoscaler", corev1.PullAlways
	overridden.Env = append(append([]corev1.EnvVar{}, base.Env...), corev1.EnvVar{Name: "X", Value: "y"})
	overridden.VolumeMounts = []corev1.VolumeMount{{Name: "extra", MountPath: "/extra"}, {Name: "ray-logs", MountPath: "/tmp/ray"}}
	overridden.Args = []string{"ulimit -n 65536; $KUBERAY_GEN_AUTOSCALER_START_CMD"}
	overridden.Resources = small
	overridden.SecurityContext = &corev1.SecurityContext{RunAsNonRoot: fixture.Ptr(true)}

	tests := []struct {
		name        string
		opts        *rayv1.AutoscalerOptions
		want        corev1.Container
		wantV2Env   string // "" for none
		wantRestart corev1.RestartPolicy
	}{
		{name: "defaults, no version: neither v1 nor v2 env", want: base},
		{name: "v1", opts: &rayv1.AutoscalerOptions{Version: fixture.Ptr(rayv1.AutoscalerVersionV1)}, want: base, wantV2Env: "false"},
		{name: "v2", opts: &rayv1.AutoscalerOptions{Version: fixture.Ptr(rayv1.AutoscalerVersionV2)}, want: base, wantV2Env: "true",
			wantRestart: corev1.RestartPolicyNever},
		{name: "overrides", opts: &rayv1.AutoscalerOptions{
			Image: fixture.Ptr("my/autoscaler"), ImagePullPolicy: fixture.Ptr(corev1.PullAlways), Env: []corev1.EnvVar{{Name: "X", Value: "y"}},
			VolumeMounts: []corev1.VolumeMount{{Name: "extra", MountPath: "/extra"}}, Args: overridden.Args,
			Resources: &small, SecurityContext: overridden.SecurityContext,
		}, want: overridden},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rc := fixture.Cluster("demo", fixture.Group("small", 1))
			rc.Spec.RayVersion = "2.52.0" // past 2.47: the version does not pick v2
			rc.Spec.EnableInTreeAutoscaling = fixture.Ptr(true)
			rc.Spec.AutoscalerOptions = tt.opts
			rc.Spec.HeadGroupSpec.Template.Spec.Containers[0].ImagePullPolicy = corev1.PullNever
			p := headOf(rc)
			if len(p.Spec.Containers) != 2 {
				t.Fatalf("containers %v", p.Spec.Containers)
			}
			if d := cmp.Diff(tt.want, p.Spec.Containers[1]); d != "" {
				t.Errorf("autoscaler (-want +got):\n%s", d)
			}
			ray := p.Spec.Containers[0]
			e, ok := envValue(ray, envAutoscalerV2)
			if (tt.wantV2Env == "") == ok || e.Value != tt.wantV2Env {
				t.Errorf("%s = %+v (set %v), want %q", envAutoscalerV2, e, ok, tt.wantV2Env)
			}
			if p.Spec.RestartPolicy != tt.wantRestart {
				t.Errorf("head restartPolicy %q, want %q", p.Spec.RestartPolicy, tt.wantRestart)
			}
			if w := workerOf(rc, 0); w.Spec.RestartPolicy != tt.wantRestart {
				t.Errorf("worker restartPolicy %q, want %q", w.Spec.RestartPolicy, tt.wantRestart)
			}
			if !strings.Contains(ray.Args[0], " --no-monitor ") {
				t.Errorf("head lacks --no-monitor: %s", ray.Args[0])
			}
			if d := cmp.Diff([]corev1.VolumeMount{{Name: "shared-mem", MountPath: "/dev/shm"}, {Name: "ray-logs", MountPath: "/tmp/ray"}}, ray.VolumeMounts); d != "" {
				t.Errorf("ray mounts (-want +got):\n%s", d)
			}
			if p.Spec.ServiceAccountName != "demo" {
				t.Errorf("serviceAccountName %q", p.Spec.ServiceAccountName)
			}
		})
	}
}

func TestBuildAutoscalerRBAC(t *testing.T) {
	rc := fixture.Cluster("demo", fixture.Group("small", 1))
	rc.Spec.EnableInTreeAutoscaling = fixture.Ptr(true)
	labels := map[string]string{rayv1.RayClusterLabelKey: "demo", rayv1.KubernetesApplicationNameLabelKey: "kuberay", rayv1.KubernetesCreatedByLabelKey: "kuberay-operator"}
	objs := buildAutoscalerRBAC(rc)
	if len(objs) != 3 {
		t.Fatalf("rbac objects %d", len(objs))
	}
	for _, o := range objs {
		if o.GetName() != "demo" || o.GetOwnerReferences()[0].UID != rc.UID {
			t.Errorf("%T %s owners %v", o, o.GetName(), o.GetOwnerReferences())
		}
		if d := cmp.Diff(labels, o.GetLabels()); d != "" {
			t.Errorf("%T labels (-want +got):\n%s", o, d)
		}
	}
	// A head that names its own service account keeps it; the Role and
	// RoleBinding keep the cluster's name and bind that account.
	rc.Spec.HeadGroupSpec.Template.Spec.ServiceAccountName = "mine"
	objs = buildAutoscalerRBAC(rc)
	if len(objs) != 2 || objs[0].GetName() != "demo" || objs[1].GetName() != "demo" {
		t.Fatalf("with own SA: %d objects", len(objs))
	}
	if rb, ok := objs[1].(*rbacv1.RoleBinding); !ok || rb.Subjects[0].Name != "mine" || rb.RoleRef.Name != "demo" {
		t.Errorf("RoleBinding %+v", objs[1])
	}
	if p := headOf(rc); p.Spec.ServiceAccountName != "mine" {
		t.Errorf("head serviceAccountName %q", p.Spec.ServiceAccountName)
	}
}

func TestCheckName(t *testing.T) {
	for in, want := range map[string]string{
		"demo":                         "demo",
		"1abc":                         "rabc",
		strings.Repeat("a", 49) + "bc": strings.Repeat("a", 48) + "bc",
	} {
		if got := kit.CheckName(in); got != want {
			t.Errorf("checkName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestBuildGCSFaultTolerance(t *testing.T) {
	rc := fixture.Cluster("demo", fixture.Group("w", 1))
	rc.Spec.GcsFaultToleranceOptions = &rayv1.GcsFaultToleranceOptions{
		RedisAddress:  "redis:6379",
		RedisPassword: &rayv1.RedisCredential{ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{Key: "pw"}}},
		RedisUsername: &rayv1.RedisCredential{Value: "me"},
	}
	p := headOf(rc)
	if p.Annotations[rayv1.RayFTEnabledAnnotationKey] != "true" || p.Annotations[rayv1.RayExternalStorageNSAnnotationKey] != "demo-uid" {
		t.Errorf("annotations %v", p.Annotations)
	}
	c := p.Spec.Containers[0]
	if d := cmp.Diff([]string{"RAY_external_storage_namespace", "RAY_REDIS_ADDRESS", "REDIS_USERNAME", "REDIS_PASSWORD"}, envNamesOf(c.Env)[:4]); d != "" {
		t.Errorf("env (-want +got):\n%s", d)
	}
	for _, want := range []string{" --redis-password=$REDIS_PASSWORD ", " --redis-username=$REDIS_USERNAME "} {
		if !strings.Contains(c.Args[0], want) {
			t.Errorf("args %q lack %q", c.Args[0], want)
		}
	}
}

func TestBuildPlasmaDirectorySkipsShm(t *testing.T) {
	rc := fixture.Cluster("demo")
	rc.Spec.HeadGroupSpec.RayStartParams = map[string]string{"plasma-directory": "/data"}
	if p := headOf(rc); len(p.Spec.Volumes) != 0 || len(p.Spec.Containers[0].VolumeMounts) != 0 {
		t.Errorf("volumes %v mounts %v", p.Spec.Volumes, p.Spec.Containers[0].VolumeMounts)
	}
}

func TestBuildHeadService(t *testing.T) {
	tcp := "tcp"
	sp := func(name string, port int32) corev1.ServicePort {
		return corev1.ServicePort{Name: name, Port: port, AppProtocol: &tcp}
	}
	sel := map[string]string{
		rayv1.RayClusterLabelKey: "demo", rayv1.RayNodeTypeLabelKey: "head", rayv1.RayIDLabelKey: "demo-head",
		rayv1.KubernetesApplicationNameLabelKey: "kuberay", rayv1.KubernetesCreatedByLabelKey: "kuberay-operator",
	}
	owner := []metav1.OwnerReference{kit.OwnerRef(fixture.Cluster("demo"))}
	tests := []struct {
		name   string
		change func(rc *rayv1.RayCluster)
		want   *corev1.Service
	}{
		{"default: headless, Ray's default ports", func(rc *rayv1.RayCluster) {
			rc.Spec.HeadServiceAnnotations = map[string]string{"a": "b"}
		}, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: "demo-head-svc", Namespace: "ns", Labels: sel, Annotations: map[string]string{"a": "b"}, OwnerReferences: owner},
			Spec: corev1.ServiceSpec{Selector: sel, Type: corev1.ServiceTypeClusterIP, ClusterIP: "None", PublishNotReadyAddresses: true,
				Ports: []corev1.ServicePort{sp("client", 10001), sp("dashboard", 8265), sp("gcs-server", 6379), sp("metrics", 8080), sp("serve", 8000)}},
		}},
		{"container ports, metrics added, app name from the template", func(rc *rayv1.RayCluster) {
			rc.Spec.HeadGroupSpec.Template.Labels = map[string]string{rayv1.KubernetesApplicationNameLabelKey: "mine"}
			rc.Spec.HeadGroupSpec.Template.Spec.Containers[0].Ports = []corev1.ContainerPort{{Name: "dashboard", ContainerPort: 8266}, {ContainerPort: 9999}}
			rc.Spec.HeadGroupSpec.ServiceType = corev1.ServiceTypeNodePort
		}, func() *corev1.Service {
			l := maps.Clone(sel)
			l[rayv1.KubernetesApplicationNameLabelKey] = "mine"
			return &corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Name: "demo-head-svc", Namespace: "ns", Labels: l, OwnerReferences: owner},
				Spec: corev1.ServiceSpec{Selector: l, Type: corev1.ServiceTypeNodePort,
					Ports: []corev1.ServicePort{sp("9999-port", 9999), sp("dashboard", 8266), sp("metrics", 8080)}},
			}
		}()},
		{"custom headService: Ray's ports after the user's, KubeRay's selector and labels", func(rc *rayv1.RayCluster) {
			rc.Spec.HeadServiceAnnotations = map[string]string{"a": "b"}
			rc.Spec.HeadGroupSpec.HeadService = &corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Name: "custom", Labels: map[string]string{"x": "y", rayv1.RayClusterLabelKey: "evil"}, Annotations: map[string]string{"a": "mine", "c": "d"}},
				Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Selector: map[string]string{"any": "thing"},
					Ports: []corev1.ServicePort{{Name: "custom-port", Port: 12345, TargetPort: intstr.FromInt32(12345)}, {Name: "dash", Port: 8265}}},
			}
		}, func() *corev1.Service {
			l := maps.Clone(sel)
			l["x"] = "y"
			return &corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Name: "custom", Namespace: "ns", Labels: l, Annotations: map[string]string{"a": "b", "c": "d"}, OwnerReferences: owner},
				Spec: corev1.ServiceSpec{Selector: sel, Type: corev1.ServiceTypeLoadBalancer,
					Ports: []corev1.ServicePort{{Name: "custom-port", Port: 12345, TargetPort: intstr.FromInt32(12345)}, {Name: "dash", Port: 8265},
						sp("client", 10001), sp("gcs-server", 6379), sp("metrics", 8080), sp("serve", 8000)}},
			}
		}()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rc := fixture.Cluster("demo")
			tt.change(rc)
			if d := cmp.Diff(tt.want, BuildHeadService(rc, DefaultBuildConfig())); d != "" {
				t.Errorf("Service (-want +got):\n%s", d)
			}
		})
	}
	// FQ_RAY_IP points at the custom Service.
	rc := fixture.Cluster("demo", fixture.Group("w", 1))
	rc.Spec.HeadGroupSpec.HeadService = &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "custom"}}
	if e, _ := envValue(workerOf(rc, 0).Spec.Containers[0], envFQRayIP); e.Value != "custom.ns.svc.cluster.local" {
		t.Errorf("FQ_RAY_IP %q", e.Value)
	}
}

// TestNames: pod and replica names as KubeRay v1.7.0 makes them
// (utils.PodName util.go:203 with generateName, the API server's five
// random characters, utils.GenerateRayWorkerReplicaGroupName util.go:380).
func TestNames(t *testing.T) {
	a50, a53 := strings.Repeat("a", 50), strings.Repeat("a", 53)
	for _, tt := range []struct {
		name, got, want string
	}{
		{"head", kit.HeadPodName("demo", "abcde"), "demo-head-abcde"},
		// The cluster name is cut to 50 before "-head-": 61 characters.
		{"long head", kit.HeadPodName(a53, "abcde"), a50 + "-head-abcde"},
		{"worker", kit.WorkerPodName("c", "g", "xyz12"), "c-g-worker-xyz12"},
		// "<cluster>-<group>" is cut to 50 before "-worker-": 63 characters.
		{"long worker", kit.WorkerPodName(strings.Repeat("c", 30), strings.Repeat("g", 30), "xyz12"),
			strings.Repeat("c", 30) + "-" + strings.Repeat("g", 19) + "-worker-xyz12"},
		// Group names may have capitals (label values); pod names may not.
		{"capital group", kit.WorkerPodName("c", "TPU", "xyz12"), "c-tpu-worker-xyz12"},
		{"replica", kit.ReplicaName("tpu", "q1w2e"), "tpu-q1w2e"},
		{"replica keeps the group's case", kit.ReplicaName("TPU", "q1w2e"), "TPU-q1w2e"},
		{"head svc", kit.DefaultHeadServiceName("demo"), "demo-head-svc"},
		{"long head svc", kit.DefaultHeadServiceName(a53), a53 + "-head-svc"},
	} {
		if tt.got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, tt.got, tt.want)
		}
	}
	if s := kit.RandomSuffix(); len(s) != 5 {
		t.Errorf("suffix %q", s)
	}
}

func TestSpecHashIgnoresScaling(t *testing.T) {
	rc := fixture.Cluster("c", fixture.Group("small", 1))
	h := specHash(rc)
	rc2 := rc.DeepCopy()
	rc2.Spec.WorkerGroupSpecs[0].Replicas = fixture.Ptr(int32(7))
	rc2.Spec.WorkerGroupSpecs[0].ScaleStrategy.WorkersToDelete = []string{"x"}
	rc2.Spec.Suspend = fixture.Ptr(true)
	rc2.UID = types.UID("other")
	if specHash(rc2) != h {
		t.Error("hash changed with scaling fields")
	}
	rc2.Spec.WorkerGroupSpecs[0].Template.Spec.Containers[0].Image = "new"
	if specHash(rc2) == h {
		t.Error("hash unchanged with a new image")
	}
}
