package raycluster

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/raydar/raydar/controller/features"
	"github.com/raydar/raydar/controller/internal/fixture"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// v170Sample is KubeRay v1.7.0's ray-operator/config/samples/<file>,
// unchanged (controller/testdata), in namespace ns with a UID.
func v170Sample(t *testing.T, file string) *rayv1.RayCluster {
	rc := fixture.KubeRaySample(t, "../testdata/kuberay-v1.7.0/"+file)
	rc.Namespace, rc.UID = "ns", "c-uid"
	return rc
}

var historyOn = features.MustParse("RayClusterHistoryServer=true")

func cfgWith(g features.Gates) BuildConfig {
	cfg := DefaultBuildConfig()
	cfg.Features = g
	return cfg
}

// sampleCollector is the collector container KubeRay v1.7.0 adds to the
// pods of ray-cluster.historyserver.yaml, written out from
// BuildCollectorContainer (common/pod.go:1066-1163) and BuildPod's ray-logs
// emptyDir (:871-876).
func sampleCollector(head bool) corev1.Container {
	role := "Worker"
	if head {
		role = "Head"
	}
	env := []corev1.EnvVar{
		{Name: "POD_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}},
		{Name: "RAY_CLUSTER_NAME", Value: "raycluster-historyserver"},
		{Name: "RAY_CLUSTER_NAMESPACE", Value: "ns"},
		{Name: "RAY_ROLE", Value: role},
		{Name: "EVENTS_PORT", Value: "8084"},
		{Name: "FQ_RAY_IP", Value: "raycluster-historyserver-head-svc.ns.svc.cluster.local"},
	}
	if head {
		env = append(env, corev1.EnvVar{Name: "RAY_DASHBOARD_ADDRESS", Value: "http://localhost:8265"})
	}
	env = append(env, corev1.EnvVar{Name: "STORAGE_BACKEND", Value: "GCS"}, corev1.EnvVar{Name: "GCS_BUCKET", Value: "my-gcs-bucket"})
	return corev1.Container{
		Name:            "ray-history-collector",
		Image:           "quay.io/kuberay/collector:nightly",
		ImagePullPolicy: corev1.PullIfNotPresent,
		Resources: corev1.ResourceRequirements{
			Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("200m"), corev1.ResourceMemory: resource.MustParse("256Mi")},
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
		},
		Env:          env,
		VolumeMounts: []corev1.VolumeMount{{Name: "ray-logs", MountPath: "/tmp/ray"}},
	}
}

// The Ray container's env that sends its events to the collector
// (common/pod.go:1326-1342), last.
var collectorEventEnv = []corev1.EnvVar{
	{Name: "RAY_enable_ray_event", Value: "true"},
	{Name: "RAY_enable_core_worker_ray_event_to_aggregator", Value: "true"},
	{Name: "RAY_DASHBOARD_AGGREGATOR_AGENT_EVENTS_EXPORT_ADDR", Value: "http://localhost:8084/v1/events"},
	{Name: "RAY_DASHBOARD_AGGREGATOR_AGENT_EXPOSABLE_EVENT_TYPES", Value: "TASK_DEFINITION_EVENT,TASK_LIFECYCLE_EVENT,ACTOR_TASK_DEFINITION_EVENT,TASK_PROFILE_EVENT,DRIVER_JOB_DEFINITION_EVENT,DRIVER_JOB_LIFECYCLE_EVENT,ACTOR_DEFINITION_EVENT,ACTOR_LIFECYCLE_EVENT,NODE_DEFINITION_EVENT,NODE_LIFECYCLE_EVENT"},
	{Name: "RAY_DASHBOARD_AGGREGATOR_AGENT_PUBLISHER_HTTP_ENDPOINT_EXPOSABLE_EVENT_TYPES", Value: "TASK_DEFINITION_EVENT,TASK_LIFECYCLE_EVENT,ACTOR_TASK_DEFINITION_EVENT,TASK_PROFILE_EVENT,DRIVER_JOB_DEFINITION_EVENT,DRIVER_JOB_LIFECYCLE_EVENT,ACTOR_DEFINITION_EVENT,ACTOR_LIFECYCLE_EVENT,NODE_DEFINITION_EVENT,NODE_LIFECYCLE_EVENT"},
}

// samplePods builds the head and the first worker of rc under cfg.
func samplePods(rc *rayv1.RayCluster, cfg BuildConfig) (head, worker *corev1.Pod) {
	head = BuildPod(rc, PodBuild{Name: rc.Name + "-head", Head: true}, specHash(rc), cfg)
	worker = BuildPod(rc, PodBuild{Name: rc.Name + "-w", Group: &rc.Spec.WorkerGroupSpecs[0]}, specHash(rc), cfg)
	return head, worker
}

// KubeRay v1.7.0's history server sample with the gate on: head and worker
// carry the collector, last, sharing /tmp/ray with the Ray container, whose
// env ends with the event settings.
func TestHistoryCollectorOfTheSample(t *testing.T) {
	rc := v170Sample(t, "ray-cluster.historyserver.yaml")
	if errs := append(rayv1.ValidateRayCluster(rc), UnsupportedRayClusterWith(rc, BuildConfig{Features: historyOn})...); len(errs) != 0 {
		t.Fatalf("the sample is refused with the gate on: %v", errs)
	}
	head, worker := samplePods(rc, cfgWith(historyOn))
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		head bool
	}{{"head", head, true}, {"worker", worker, false}} {
		t.Run(tc.name, func(t *testing.T) {
			cs := tc.pod.Spec.Containers
			if len(cs) != 2 {
				t.Fatalf("%d containers, want the Ray container and the collector", len(cs))
			}
			if d := cmp.Diff(sampleCollector(tc.head), cs[1]); d != "" {
				t.Errorf("collector (-want +got):\n%s", d)
			}
			ray := cs[0]
			wantMounts := []corev1.VolumeMount{{Name: "shared-mem", MountPath: "/dev/shm"}, {Name: "ray-logs", MountPath: "/tmp/ray"}}
			if d := cmp.Diff(wantMounts, ray.VolumeMounts); d != "" {
				t.Errorf("Ray container mounts (-want +got):\n%s", d)
			}
			var logs *corev1.Volume
			for i, v := range tc.pod.Spec.Volumes {
				if v.Name == "ray-logs" {
					logs = &tc.pod.Spec.Volumes[i]
				}
			}
			if logs == nil || logs.EmptyDir == nil || logs.EmptyDir.Medium != corev1.StorageMediumDefault || logs.EmptyDir.SizeLimit != nil {
				t.Errorf("ray-logs volume %+v, want an emptyDir without medium or limit", logs)
			}
			if n := len(ray.Env); n < len(collectorEventEnv) || cmp.Diff(collectorEventEnv, ray.Env[n-len(collectorEventEnv):]) != "" {
				t.Errorf("the Ray container's env does not end with the collector's event settings: %+v", ray.Env)
			}
		})
	}

	// Gate off: no sidecar, no shared log volume, no event env (and the
	// cluster is refused before any pod is built).
	head, worker = samplePods(rc, DefaultBuildConfig())
	for _, p := range []*corev1.Pod{head, worker} {
		if len(p.Spec.Containers) != 1 || fixture.EnvOf(&p.Spec.Containers[0], "RAY_enable_ray_event") != nil {
			t.Errorf("gate off: pod %s has %d containers", p.Name, len(p.Spec.Containers))
		}
		for _, v := range p.Spec.Volumes {
			if v.Name == "ray-logs" {
				t.Errorf("gate off: pod %s has the ray-logs volume", p.Name)
			}
		}
	}
}

func TestHistoryCollectorVariants(t *testing.T) {
	envNames := func(c *corev1.Container) []string {
		var out []string
		for _, e := range c.Env {
			out = append(out, e.Name)
		}
		return out
	}
	t.Run("a RayJob's cluster: owner kind and name; the user's dashboard address", func(t *testing.T) {
		rc := v170Sample(t, "ray-cluster.historyserver.yaml")
		rc.Labels = map[string]string{rayv1.RayOriginatedFromCRDLabelKey: "RayJob", rayv1.RayOriginatedFromCRNameLabelKey: "job"}
		o := rc.Spec.HistoryServerOptions.CollectorOptions
		o.Env = append(o.Env, corev1.EnvVar{Name: "RAY_DASHBOARD_ADDRESS", Value: "http://elsewhere:8265"})
		head, _ := samplePods(rc, cfgWith(historyOn))
		c := fixture.FindContainer(head.Spec.Containers, "ray-history-collector")
		want := []string{"POD_IP", "RAY_CLUSTER_NAME", "RAY_CLUSTER_NAMESPACE", "RAY_ROLE", "EVENTS_PORT", "FQ_RAY_IP", "OWNER_KIND", "OWNER_NAME",
			"STORAGE_BACKEND", "GCS_BUCKET", "RAY_DASHBOARD_ADDRESS"}
		if d := cmp.Diff(want, envNames(c)); d != "" {
			t.Fatalf("collector env names (-want +got):\n%s", d)
		}
		if e := fixture.EnvOf(c, "OWNER_KIND"); e.Value != "RayJob" {
			t.Errorf("OWNER_KIND %q", e.Value)
		}
		if e := fixture.EnvOf(c, "RAY_DASHBOARD_ADDRESS"); e.Value != "http://elsewhere:8265" {
			t.Errorf("RAY_DASHBOARD_ADDRESS %q, want the user's", e.Value)
		}
	})
	t.Run("token auth: the collector gets the token after the user's env", func(t *testing.T) {
		rc := v170Sample(t, "ray-cluster.historyserver.yaml")
		rc.Spec.AuthOptions = &rayv1.AuthOptions{Mode: rayv1.AuthModeToken}
		_, worker := samplePods(rc, cfgWith(historyOn))
		c := fixture.FindContainer(worker.Spec.Containers, "ray-history-collector")
		names := envNames(c)
		if got := strings.Join(names[len(names)-2:], ","); got != "RAY_AUTH_MODE,RAY_AUTH_TOKEN" {
			t.Fatalf("collector env %v, want RAY_AUTH_MODE, RAY_AUTH_TOKEN last", names)
		}
		tok := fixture.EnvOf(c, "RAY_AUTH_TOKEN")
		if tok.ValueFrom == nil || tok.ValueFrom.SecretKeyRef == nil || tok.ValueFrom.SecretKeyRef.Name != "raycluster-historyserver" ||
			tok.ValueFrom.SecretKeyRef.Key != "auth_token" {
			t.Errorf("RAY_AUTH_TOKEN %+v", tok)
		}
	})
	t.Run("user's own settings are kept: pull policy, resources, /tmp/ray already mounted, event env already set", func(t *testing.T) {
		rc := v170Sample(t, "ray-cluster.historyserver.yaml")
		o := rc.Spec.HistoryServerOptions.CollectorOptions
		o.ImagePullPolicy, o.Resources = fixture.Ptr(corev1.PullAlways), &corev1.ResourceRequirements{}
		ray := &rc.Spec.HeadGroupSpec.Template.Spec.Containers[0]
		ray.VolumeMounts = []corev1.VolumeMount{{Name: "logs", MountPath: "/tmp/ray"}}
		ray.Env = []corev1.EnvVar{{Name: "RAY_enable_ray_event", Value: "false"}}
		rc.Spec.HeadGroupSpec.Template.Spec.Volumes = []corev1.Volume{{Name: "logs"}}
		head, _ := samplePods(rc, cfgWith(historyOn))
		c := fixture.FindContainer(head.Spec.Containers, "ray-history-collector")
		if c.ImagePullPolicy != corev1.PullAlways || len(c.Resources.Limits) != 0 {
			t.Errorf("collector pull policy %s, resources %+v", c.ImagePullPolicy, c.Resources)
		}
		r := head.Spec.Containers[0]
		if len(r.VolumeMounts) != 2 || r.VolumeMounts[0].Name != "logs" {
			t.Errorf("Ray container mounts %+v: /tmp/ray mounted twice", r.VolumeMounts)
		}
		if e := fixture.EnvOf(&r, "RAY_enable_ray_event"); e.Value != "false" {
			t.Errorf("RAY_enable_ray_event %q, want the user's", e.Value)
		}
		if d := cmp.Diff([]corev1.VolumeMount{{Name: "ray-logs", MountPath: "/tmp/ray"}}, c.VolumeMounts); d != "" {
			t.Errorf("collector mounts (-want +got):\n%s", d)
		}
	})
}

// With the gate off historyServerOptions is refused, naming the gate, as
// KubeRay v1.7.0 refuses it; with it on it is validated as v1.7.0 does.
func TestHistoryServerRefusedAndValidated(t *testing.T) {
	rc := v170Sample(t, "ray-cluster.historyserver.yaml")
	errs := UnsupportedRayCluster(rc)
	if len(errs) != 1 || errs[0].Field != "spec.historyServerOptions" || !strings.Contains(errs[0].Detail, "RayClusterHistoryServer feature gate") {
		t.Fatalf("gate off: %v", errs)
	}
	p := decide(obsOf(rc, nil))
	if len(p.CreatePods) != 0 || len(p.Invalid) == 0 {
		t.Fatalf("gate off: %d pods planned", len(p.CreatePods))
	}
	o := obsOf(rc, nil)
	o.Config = cfgWith(historyOn)
	p = decide(o)
	if len(p.Invalid) != 0 || len(p.CreatePods) != 2 {
		t.Fatalf("gate on: invalid %v, %d pods", p.Invalid, len(p.CreatePods))
	}
	for _, pod := range p.CreatePods {
		if fixture.FindContainer(pod.Spec.Containers, "ray-history-collector") == nil {
			t.Errorf("gate on: pod %s has no collector", pod.Name)
		}
	}

	for _, tc := range []struct {
		name   string
		mutate func(*rayv1.RayCluster)
		want   string // field: detail substring
	}{
		{"no collectorOptions", func(rc *rayv1.RayCluster) { rc.Spec.HistoryServerOptions.CollectorOptions = nil },
			"spec.historyServerOptions.collectorOptions: Required"},
		{"no image", func(rc *rayv1.RayCluster) { rc.Spec.HistoryServerOptions.CollectorOptions.Image = fixture.Ptr("") },
			"spec.historyServerOptions.collectorOptions.image: Required"},
		{"an env KubeRay manages", func(rc *rayv1.RayCluster) {
			o := rc.Spec.HistoryServerOptions.CollectorOptions
			o.Env = append(o.Env, corev1.EnvVar{Name: "RAY_ROLE", Value: "x"})
		}, "spec.historyServerOptions.collectorOptions.env[2].name: Forbidden: RAY_ROLE is managed by KubeRay"},
		{"no STORAGE_BACKEND", func(rc *rayv1.RayCluster) { rc.Spec.HistoryServerOptions.CollectorOptions.Env = nil },
			"STORAGE_BACKEND must be set with a literal string value"},
		{"GCS without a bucket", func(rc *rayv1.RayCluster) {
			rc.Spec.HistoryServerOptions.CollectorOptions.Env = []corev1.EnvVar{{Name: "STORAGE_BACKEND", Value: "gcs"}}
		}, "GCS_BUCKET must be set when STORAGE_BACKEND is GCS"},
		{"S3 without a region", func(rc *rayv1.RayCluster) {
			rc.Spec.HistoryServerOptions.CollectorOptions.Env = []corev1.EnvVar{{Name: "STORAGE_BACKEND", Value: "S3"}}
		}, "S3_REGION must be set when STORAGE_BACKEND is S3"},
		{"Azure without credentials", func(rc *rayv1.RayCluster) {
			rc.Spec.HistoryServerOptions.CollectorOptions.Env = []corev1.EnvVar{{Name: "STORAGE_BACKEND", Value: "AzureBlob"}}
		}, "either AZURE_STORAGE_CONNECTION_STRING or AZURE_STORAGE_ACCOUNT_URL must be set"},
		{"Azure workload identity without an account URL", func(rc *rayv1.RayCluster) {
			rc.Spec.HistoryServerOptions.CollectorOptions.Env = []corev1.EnvVar{{Name: "STORAGE_BACKEND", Value: "AZUREBLOB"},
				{Name: "AZURE_STORAGE_AUTH_MODE", Value: "Workload_Identity"}, {Name: "AZURE_STORAGE_CONNECTION_STRING", Value: "x"}}
		}, "AZURE_STORAGE_ACCOUNT_URL must be set when STORAGE_BACKEND is AZUREBLOB and AZURE_STORAGE_AUTH_MODE is workload_identity"},
		{"Aliyun without a region", func(rc *rayv1.RayCluster) {
			rc.Spec.HistoryServerOptions.CollectorOptions.Env = []corev1.EnvVar{{Name: "STORAGE_BACKEND", Value: "aliyunoss"},
				{Name: "OSS_BUCKET", Value: "b"}, {Name: "OSS_ENDPOINT", ValueFrom: &corev1.EnvVarSource{}}}
		}, "OSS_REGION must be set when STORAGE_BACKEND is ALIYUNOSS"},
		{"a worker container named as the collector", func(rc *rayv1.RayCluster) {
			cs := &rc.Spec.WorkerGroupSpecs[0].Template.Spec.Containers
			*cs = append(*cs, corev1.Container{Name: "ray-history-collector", Image: "x"})
		}, `spec.workerGroupSpecs[0].template.spec.containers[1].name: Forbidden: must not be "ray-history-collector"`},
		{"an unknown backend is the collector's business", func(rc *rayv1.RayCluster) {
			rc.Spec.HistoryServerOptions.CollectorOptions.Env = []corev1.EnvVar{{Name: "STORAGE_BACKEND", Value: "minio"}}
		}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc := v170Sample(t, "ray-cluster.historyserver.yaml")
			tc.mutate(rc)
			errs := append(rayv1.ValidateRayCluster(rc), UnsupportedRayClusterWith(rc, BuildConfig{Features: historyOn})...)
			if tc.want == "" {
				if len(errs) != 0 {
					t.Fatalf("refused: %v", errs)
				}
				return
			}
			if !strings.Contains(errs.ToAggregate().Error(), tc.want) {
				t.Fatalf("errors %v, want one containing %q", errs, tc.want)
			}
		})
	}
}
