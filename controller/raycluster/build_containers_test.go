package raycluster

import (
	"fmt"
	"strings"
	"testing"

	"github.com/raydar/raydar/controller/internal/fixture"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

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
