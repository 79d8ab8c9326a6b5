package raycluster

import (
	"fmt"
	"strings"
	"testing"

	"github.com/raydar/raydar/controller/internal/fixture"
	"github.com/raydar/raydar/controller/kit"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"

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
