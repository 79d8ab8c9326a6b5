package controller

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

func envValue(c corev1.Container, name string) (corev1.EnvVar, bool) {
	for _, e := range c.Env {
		if e.Name == name {
			return e, true
		}
	}
	return corev1.EnvVar{}, false
}

func TestBuildHeadPod(t *testing.T) {
	rc := cluster("demo", group("small", 1))
	rc.Spec.HeadGroupSpec.RayStartParams = map[string]string{"num-cpus": "0", "log-style": "record"}
	rc.Spec.HeadGroupSpec.Template.Labels = map[string]string{"team": "ml", rayv1.RayClusterLabelKey: "evil"}
	p := buildPod(rc, podBuild{name: "demo-head-abcde", head: true}, "h1", defaultBuildConfig())

	// Labels: KubeRay's, user's kept, protected ones not overridable.
	for k, v := range map[string]string{
		rayv1.RayClusterLabelKey: "demo", rayv1.RayNodeTypeLabelKey: "head", rayv1.RayNodeGroupLabelKey: "headgroup",
		rayv1.RayIDLabelKey: "demo-head", rayv1.RayNodeLabelKey: "yes", rayv1.KubernetesApplicationNameLabelKey: "kuberay",
		rayv1.KubernetesCreatedByLabelKey: "kuberay-operator", "team": "ml",
	} {
		if p.Labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, p.Labels[k], v)
		}
	}
	if p.OwnerReferences[0].UID != rc.UID || !*p.OwnerReferences[0].Controller {
		t.Errorf("owner refs %+v", p.OwnerReferences)
	}
	if p.Annotations[rayv1.UpgradeStrategyRecreateHashKey] != "h1" {
		t.Errorf("annotations %v", p.Annotations)
	}
	c := p.Spec.Containers[0]
	if strings.Join(c.Command, " ") != "/bin/bash -c --" {
		t.Errorf("command %v", c.Command)
	}
	args := c.Args[0]
	for _, want := range []string{
		"ulimit -n ${RAY_START_ULIMIT_OPEN_FILES:-65536}; ray start --head",
		"--block", "--dashboard-host=0.0.0.0", "--metrics-export-port=8080", "--dashboard-agent-listen-port=52365",
		"--num-cpus=0", "--memory=4294967296", "--log-style=record",
	} {
		if !strings.Contains(args, want) {
			t.Errorf("ray start %q lacks %q", args, want)
		}
	}
	if e, _ := envValue(c, envGenRayStartCmd); !strings.HasPrefix(e.Value, "ray start --head") {
		t.Errorf("KUBERAY_GEN_RAY_START_CMD %q", e.Value)
	}
	for name, want := range map[string]string{
		envFQRayIP: "demo-head-svc.ns.svc.cluster.local", envRayAddress: "127.0.0.1:6379", envRayPort: "6379",
		envNodeTypeName: "headgroup", envUsageStatsInUse: "1",
	} {
		if e, ok := envValue(c, name); !ok || e.Value != want {
			t.Errorf("env %s = %q, want %q", name, e.Value, want)
		}
	}
	if e, _ := envValue(c, envClusterName); e.ValueFrom == nil || e.ValueFrom.FieldRef.FieldPath != "metadata.labels['ray.io/cluster']" {
		t.Errorf("RAY_CLUSTER_NAME %+v", e)
	}
	// /dev/shm, ports, probes.
	shm := false
	for _, m := range c.VolumeMounts {
		shm = shm || m.MountPath == "/dev/shm"
	}
	if !shm {
		t.Error("no /dev/shm mount")
	}
	ports := map[string]int32{}
	for _, cp := range c.Ports {
		ports[cp.Name] = cp.ContainerPort
	}
	if ports["gcs-server"] != 6379 || ports["dashboard"] != 8265 || ports["client"] != 10001 || ports["metrics"] != 8080 {
		t.Errorf("ports %v", ports)
	}
	if c.ReadinessProbe == nil || c.ReadinessProbe.Exec == nil || !strings.Contains(c.ReadinessProbe.Exec.Command[2], "gcs_healthz") ||
		c.ReadinessProbe.FailureThreshold != 10 || c.LivenessProbe.FailureThreshold != 120 || c.LivenessProbe.InitialDelaySeconds != 30 {
		t.Errorf("probes %+v %+v", c.ReadinessProbe, c.LivenessProbe)
	}
	if len(p.Spec.InitContainers) != 0 {
		t.Error("head got an init container")
	}

	// Ray >= 2.53: one HTTP probe.
	rc.Spec.RayVersion = "2.53.0"
	p = buildPod(rc, podBuild{name: "x", head: true}, "h1", defaultBuildConfig())
	if pr := p.Spec.Containers[0].ReadinessProbe; pr.HTTPGet == nil || pr.HTTPGet.Path != "/api/healthz" {
		t.Errorf("2.53 probe %+v", pr)
	}
}

func TestBuildWorkerPod(t *testing.T) {
	g := group("gpu", 1)
	g.Template.Spec.Containers[0].Resources.Limits["nvidia.com/gpu"] = resource.MustParse("2")
	g.Template.Spec.Containers[0].Resources.Limits[tpuResource] = resource.MustParse("4")
	g.Template.Spec.Containers[0].Command = []string{"echo", "hi"}
	g.Labels = map[string]string{"zone": "a"}
	rc := cluster("demo", g)
	p := buildPod(rc, podBuild{name: "demo-gpu-worker-abcde", group: &rc.Spec.WorkerGroupSpecs[0]}, "h", defaultBuildConfig())
	if p.Labels[rayv1.RayNodeGroupLabelKey] != "gpu" || p.Labels[rayv1.RayIDLabelKey] != "demo-worker" {
		t.Errorf("labels %v", p.Labels)
	}
	args := p.Spec.Containers[0].Args[0]
	for _, want := range []string{"echo hi && ulimit", "ray start --address=demo-head-svc.ns.svc.cluster.local:6379", "--num-gpus=2",
		`--resources='{"TPU":4}'`, "--labels=zone=a", "--num-cpus=1"} {
		if !strings.Contains(args, want) {
			t.Errorf("worker command %q lacks %q", args, want)
		}
	}
	if strings.Contains(args, "--head") || strings.Contains(args, "dashboard-host") {
		t.Errorf("worker command has head flags: %s", args)
	}
	if len(p.Spec.InitContainers) != 1 || p.Spec.InitContainers[0].Name != "wait-gcs-ready" ||
		!strings.Contains(p.Spec.InitContainers[0].Args[0], "ray health-check --address demo-head-svc.ns.svc.cluster.local:6379") ||
		p.Spec.InitContainers[0].Resources.Limits.Cpu().String() != "200m" {
		t.Errorf("init container %+v", p.Spec.InitContainers)
	}
	if e, _ := envValue(p.Spec.Containers[0], envRayAddress); e.Value != "demo-head-svc.ns.svc.cluster.local:6379" {
		t.Errorf("RAY_ADDRESS %q", e.Value)
	}

	// overwrite-container-cmd keeps the user's command.
	rc.Spec.WorkerGroupSpecs[0].Template.Annotations = map[string]string{rayv1.RayOverwriteContainerCmdAnnotationKey: "true"}
	p = buildPod(rc, podBuild{name: "x", group: &rc.Spec.WorkerGroupSpecs[0]}, "h", defaultBuildConfig())
	if strings.Join(p.Spec.Containers[0].Command, " ") != "echo hi" {
		t.Errorf("overwritten command %v", p.Spec.Containers[0].Command)
	}
}

func TestBuildAutoscaler(t *testing.T) {
	rc := cluster("demo", group("small", 1))
	rc.Spec.EnableInTreeAutoscaling = ptr(true)
	rc.Spec.AutoscalerOptions = &rayv1.AutoscalerOptions{Version: ptr(rayv1.AutoscalerVersionV2)}
	p := buildPod(rc, podBuild{name: "x", head: true}, "h", defaultBuildConfig())
	if len(p.Spec.Containers) != 2 || p.Spec.Containers[1].Name != rayv1.AutoscalerContainerName {
		t.Fatalf("containers %v", p.Spec.Containers)
	}
	sc := p.Spec.Containers[1]
	if !strings.Contains(sc.Args[0], "ray kuberay-autoscaler --cluster-name $(RAY_CLUSTER_NAME)") || sc.Image != p.Spec.Containers[0].Image ||
		sc.Resources.Limits.Cpu().String() != "500m" {
		t.Errorf("sidecar %+v", sc)
	}
	if !strings.Contains(p.Spec.Containers[0].Args[0], "--no-monitor") {
		t.Error("head lacks --no-monitor")
	}
	if p.Spec.ServiceAccountName != "demo" || p.Spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("sa %q restartPolicy %q", p.Spec.ServiceAccountName, p.Spec.RestartPolicy)
	}
	if e, ok := envValue(sc, envAutoscalerV2); !ok || e.Value != "true" {
		t.Error("v2 env missing")
	}
	objs := buildAutoscalerRBAC(rc)
	if len(objs) != 3 {
		t.Fatalf("rbac objects %d", len(objs))
	}
	for _, o := range objs {
		if o.GetName() != "demo" || o.GetOwnerReferences()[0].UID != rc.UID {
			t.Errorf("%T %s owners %v", o, o.GetName(), o.GetOwnerReferences())
		}
	}
	// A head that names its own service account keeps it; only Role and RoleBinding are made.
	rc.Spec.HeadGroupSpec.Template.Spec.ServiceAccountName = "mine"
	if objs := buildAutoscalerRBAC(rc); len(objs) != 2 || objs[0].GetName() != "mine" {
		t.Errorf("with own SA: %d objects", len(objs))
	}
}

func TestBuildHeadService(t *testing.T) {
	rc := cluster("demo")
	rc.Spec.HeadServiceAnnotations = map[string]string{"a": "b"}
	svc := buildHeadService(rc, defaultBuildConfig())
	if svc.Name != "demo-head-svc" || svc.Spec.ClusterIP != corev1.ClusterIPNone || !svc.Spec.PublishNotReadyAddresses ||
		svc.Annotations["a"] != "b" || svc.Spec.Selector[rayv1.RayNodeTypeLabelKey] != "head" {
		t.Errorf("default svc %+v", svc)
	}
	names := map[string]int32{}
	for _, p := range svc.Spec.Ports {
		names[p.Name] = p.Port
	}
	if names["gcs-server"] != 6379 || names["dashboard"] != 8265 || names["client"] != 10001 || names["serve"] != 8000 || names["metrics"] != 8080 {
		t.Errorf("default ports %v", names)
	}
	// Ports from the container, metrics always added.
	rc.Spec.HeadGroupSpec.Template.Spec.Containers[0].Ports = []corev1.ContainerPort{{Name: "dashboard", ContainerPort: 8266}}
	rc.Spec.HeadGroupSpec.ServiceType = corev1.ServiceTypeNodePort
	svc = buildHeadService(rc, defaultBuildConfig())
	if len(svc.Spec.Ports) != 2 || svc.Spec.Type != corev1.ServiceTypeNodePort || svc.Spec.ClusterIP != "" {
		t.Errorf("nodeport svc %+v", svc.Spec)
	}
	// Override: its name, labels and type, our selector.
	rc.Spec.HeadGroupSpec.HeadService = &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "custom", Labels: map[string]string{"x": "y"}},
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer},
	}
	svc = buildHeadService(rc, defaultBuildConfig())
	if svc.Name != "custom" || svc.Labels["x"] != "y" || svc.Spec.Type != corev1.ServiceTypeLoadBalancer || svc.Labels[rayv1.RayClusterLabelKey] != "demo" ||
		svc.Spec.Selector[rayv1.RayClusterLabelKey] != "demo" {
		t.Errorf("override svc %+v", svc)
	}
	if HeadServiceName(rc) != "custom" {
		t.Error("HeadServiceName ignores the override")
	}
}

func TestNames(t *testing.T) {
	long := strings.Repeat("a", 53)
	if n := headPodName(long, "abcde"); len(n) > 55 || !strings.HasPrefix(n, "aaaa") {
		t.Errorf("head name %q (%d)", n, len(n))
	}
	if n := defaultHeadServiceName(long); len(n) > 63 || !strings.HasSuffix(n, "-head-svc") {
		t.Errorf("svc name %q", n)
	}
	if workerPodName("c", "g", "xyz12") != "c-g-worker-xyz12" {
		t.Error("worker name")
	}
	if s := randomSuffix(); len(s) != 5 {
		t.Errorf("suffix %q", s)
	}
}

func TestSpecHashIgnoresScaling(t *testing.T) {
	rc := cluster("c", group("small", 1))
	h := specHash(rc)
	rc2 := rc.DeepCopy()
	rc2.Spec.WorkerGroupSpecs[0].Replicas = ptr(int32(7))
	rc2.Spec.WorkerGroupSpecs[0].ScaleStrategy.WorkersToDelete = []string{"x"}
	rc2.Spec.Suspend = ptr(true)
	rc2.UID = types.UID("other")
	if specHash(rc2) != h {
		t.Error("hash changed with scaling fields")
	}
	rc2.Spec.WorkerGroupSpecs[0].Template.Spec.Containers[0].Image = "new"
	if specHash(rc2) == h {
		t.Error("hash unchanged with a new image")
	}
}
