package v1

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// want is one expected error: its type and exact field path.
type want struct {
	typ  field.ErrorType
	path string
}

func (w want) String() string { return fmt.Sprintf("%s %s", w.typ, w.path) }

func checkErrors(t *testing.T, got field.ErrorList, wants []want) {
	t.Helper()
	var g, w []string
	for _, e := range got {
		g = append(g, want{e.Type, e.Field}.String())
	}
	for _, e := range wants {
		w = append(w, e.String())
	}
	if strings.Join(g, "\n") != strings.Join(w, "\n") {
		t.Errorf("errors:\n  %s\nwant:\n  %s\nfull errors: %v", strings.Join(g, "\n  "), strings.Join(w, "\n  "), got)
	}
}

func container(name string) corev1.Container {
	return corev1.Container{Name: name, Image: "rayproject/ray:2.52.0"}
}

func podTemplate() corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{container("ray")}}}
}

func validClusterSpec() RayClusterSpec {
	return RayClusterSpec{
		RayVersion:    "2.52.0",
		HeadGroupSpec: HeadGroupSpec{RayStartParams: map[string]string{"num-cpus": "0"}, Template: podTemplate()},
		WorkerGroupSpecs: []WorkerGroupSpec{
			{GroupName: "cpu", Replicas: i32(1), MinReplicas: i32(0), MaxReplicas: i32(3), Template: podTemplate()},
			{GroupName: "gpu", Replicas: i32(0), MinReplicas: i32(0), MaxReplicas: i32(2), NumOfHosts: 2, Template: podTemplate()},
		},
	}
}

func validCluster() *RayCluster {
	return &RayCluster{ObjectMeta: metav1.ObjectMeta{Name: "demo"}, Spec: validClusterSpec()}
}

func ptr[T any](v T) *T { return &v }

func env(name, value string) corev1.EnvVar { return corev1.EnvVar{Name: name, Value: value} }

func TestValidateRayCluster(t *testing.T) {
	const wg0, wg1 = "spec.workerGroupSpecs[0]", "spec.workerGroupSpecs[1]"
	headEnv0 := "spec.headGroupSpec.template.spec.containers[0].env[0]"
	tests := []struct {
		name   string
		mutate func(c *RayCluster)
		want   []want
	}{
		{"valid", func(*RayCluster) {}, nil},
		{"valid: defaulted", func(c *RayCluster) { c.Default() }, nil},
		{"valid: no worker groups", func(c *RayCluster) { c.Spec.WorkerGroupSpecs = nil }, nil},
		{"name too long", func(c *RayCluster) { c.Name = strings.Repeat("a", 54) }, []want{{field.ErrorTypeTooLong, "metadata.name"}}},
		{"name not DNS-1035", func(c *RayCluster) { c.Name = "1abc" }, []want{{field.ErrorTypeInvalid, "metadata.name"}}},
		{"head without containers", func(c *RayCluster) { c.Spec.HeadGroupSpec.Template.Spec.Containers = nil },
			[]want{{field.ErrorTypeRequired, "spec.headGroupSpec.template.spec.containers"}}},
		{"worker without containers", func(c *RayCluster) { c.Spec.WorkerGroupSpecs[1].Template.Spec.Containers = nil },
			[]want{{field.ErrorTypeRequired, wg1 + ".template.spec.containers"}}},
		{"empty group name", func(c *RayCluster) { c.Spec.WorkerGroupSpecs[0].GroupName = "" },
			[]want{{field.ErrorTypeRequired, wg0 + ".groupName"}}},
		{"duplicate group name", func(c *RayCluster) { c.Spec.WorkerGroupSpecs[1].GroupName = "cpu" },
			[]want{{field.ErrorTypeDuplicate, wg1 + ".groupName"}}},
		{"more worker groups than the CRD allows", func(c *RayCluster) {
			g := c.Spec.WorkerGroupSpecs[0]
			c.Spec.WorkerGroupSpecs = nil
			for i := range MaxWorkerGroups + 1 {
				g.GroupName = fmt.Sprintf("g%d", i)
				c.Spec.WorkerGroupSpecs = append(c.Spec.WorkerGroupSpecs, *g.DeepCopy())
			}
		}, []want{{field.ErrorTypeTooMany, "spec.workerGroupSpecs"}}},
		{"group name not a label value", func(c *RayCluster) { c.Spec.WorkerGroupSpecs[0].GroupName = "has space" },
			[]want{{field.ErrorTypeInvalid, wg0 + ".groupName"}}},
		{"min > max", func(c *RayCluster) { c.Spec.WorkerGroupSpecs[1].MinReplicas = i32(5) },
			[]want{{field.ErrorTypeInvalid, wg1 + ".minReplicas"}}},
		{"negative replicas", func(c *RayCluster) { c.Spec.WorkerGroupSpecs[0].Replicas = i32(-1) },
			[]want{{field.ErrorTypeInvalid, wg0 + ".replicas"}}},
		{"negative min and max", func(c *RayCluster) {
			c.Spec.WorkerGroupSpecs[0].MinReplicas = i32(-1)
			c.Spec.WorkerGroupSpecs[0].MaxReplicas = i32(-2)
		}, []want{{field.ErrorTypeInvalid, wg0 + ".minReplicas"}, {field.ErrorTypeInvalid, wg0 + ".maxReplicas"}, {field.ErrorTypeInvalid, wg0 + ".minReplicas"}}},
		{"negative numOfHosts", func(c *RayCluster) { c.Spec.WorkerGroupSpecs[1].NumOfHosts = -1 },
			[]want{{field.ErrorTypeInvalid, wg1 + ".numOfHosts"}}},
		{"negative idleTimeoutSeconds", func(c *RayCluster) { c.Spec.WorkerGroupSpecs[0].IdleTimeoutSeconds = i32(-1) },
			[]want{{field.ErrorTypeInvalid, wg0 + ".idleTimeoutSeconds"}}},
		{"idleTimeoutSeconds without autoscaler v2 (KubeRay refuses it)", func(c *RayCluster) {
			c.Spec.AutoscalerOptions = nil
			c.Spec.WorkerGroupSpecs[0].IdleTimeoutSeconds = i32(60)
		}, []want{{field.ErrorTypeInvalid, wg0 + ".idleTimeoutSeconds"}}},
		{"empty workersToDelete entry", func(c *RayCluster) { c.Spec.WorkerGroupSpecs[0].ScaleStrategy.WorkersToDelete = []string{"p", ""} },
			[]want{{field.ErrorTypeRequired, wg0 + ".scaleStrategy.workersToDelete[1]"}}},
		{"resources with rayStartParams num-cpus", func(c *RayCluster) { c.Spec.HeadGroupSpec.Resources = map[string]string{"CPU": "1"} },
			[]want{{field.ErrorTypeForbidden, "spec.headGroupSpec.rayStartParams[num-cpus]"}}},
		{"resource not a number", func(c *RayCluster) { c.Spec.WorkerGroupSpecs[0].Resources = map[string]string{"TPU": "many"} },
			[]want{{field.ErrorTypeInvalid, wg0 + ".resources[TPU]"}}},
		{"rayStartParams labels", func(c *RayCluster) { c.Spec.WorkerGroupSpecs[0].RayStartParams = map[string]string{"labels": "a=b"} },
			[]want{{field.ErrorTypeForbidden, wg0 + ".rayStartParams[labels]"}}},
		{"bad label key and value", func(c *RayCluster) {
			c.Spec.WorkerGroupSpecs[0].Labels = map[string]string{"bad key": "ok", "k": "bad value"}
		},
			[]want{{field.ErrorTypeInvalid, wg0 + ".labels"}, {field.ErrorTypeInvalid, wg0 + ".labels[k]"}}},
		{"unknown serviceType", func(c *RayCluster) { c.Spec.HeadGroupSpec.ServiceType = "Magic" },
			[]want{{field.ErrorTypeNotSupported, "spec.headGroupSpec.serviceType"}}},
		{"ingress path not absolute and bad pathType", func(c *RayCluster) {
			c.Spec.HeadGroupSpec.IngressOptions = &IngressOptions{Path: ptr("dash"), PathType: ptr(IngressPathType("Regex"))}
		}, []want{{field.ErrorTypeNotSupported, "spec.headGroupSpec.ingressOptions.pathType"}, {field.ErrorTypeInvalid, "spec.headGroupSpec.ingressOptions.path"}}},
		{"managedBy unknown", func(c *RayCluster) { c.Spec.ManagedBy = ptr("someone/else") },
			[]want{{field.ErrorTypeNotSupported, "spec.managedBy"}}},
		{"valid: managedBy raydar", func(c *RayCluster) { c.Spec.ManagedBy = ptr(ManagedByRaydar) }, nil},
		{"valid: managedBy multikueue", func(c *RayCluster) { c.Spec.ManagedBy = ptr(MultiKueueController) }, nil},
		{"upgradeStrategy type unknown", func(c *RayCluster) {
			c.Spec.UpgradeStrategy = &RayClusterUpgradeStrategy{Type: ptr(RayClusterUpgradeType("Rolling"))}
		}, []want{{field.ErrorTypeNotSupported, "spec.upgradeStrategy.type"}}},
		{"valid: upgradeStrategy Recreate", func(c *RayCluster) {
			c.Spec.UpgradeStrategy = &RayClusterUpgradeStrategy{Type: ptr(RayClusterRecreate)}
		}, nil},
		{"suspended group with autoscaling", func(c *RayCluster) {
			c.Spec.EnableInTreeAutoscaling = b(true)
			c.Spec.WorkerGroupSpecs[0].Suspend = b(true)
		}, []want{{field.ErrorTypeForbidden, wg0 + ".suspend"}}},
		{"valid: suspended group without autoscaling", func(c *RayCluster) { c.Spec.WorkerGroupSpecs[0].Suspend = b(true) }, nil},
		{"valid: autoscaler v2 implied by rayVersion allows restartPolicy Always", func(c *RayCluster) {
			c.Spec.EnableInTreeAutoscaling = b(true)
			c.Spec.HeadGroupSpec.Template.Spec.RestartPolicy = corev1.RestartPolicyAlways
		}, nil},
		{"autoscaler v2 needs restartPolicy Never", func(c *RayCluster) {
			c.Spec.EnableInTreeAutoscaling = b(true)
			c.Spec.AutoscalerOptions = &AutoscalerOptions{Version: ptr(AutoscalerVersionV2)}
			c.Spec.HeadGroupSpec.Template.Spec.RestartPolicy = corev1.RestartPolicyAlways
			c.Spec.WorkerGroupSpecs[1].Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
		}, []want{{field.ErrorTypeNotSupported, wg1 + ".template.spec.restartPolicy"}, {field.ErrorTypeNotSupported, "spec.headGroupSpec.template.spec.restartPolicy"}}},
		{"valid: autoscaler v2 by env var alone allows restartPolicy Always", func(c *RayCluster) {
			c.Spec.EnableInTreeAutoscaling = b(true)
			c.Spec.HeadGroupSpec.Template.Spec.Containers[0].Env = []corev1.EnvVar{env(EnvRayEnableAutoscalerV2, "true")}
			c.Spec.HeadGroupSpec.Template.Spec.RestartPolicy = corev1.RestartPolicyAlways
		}, nil},
		{"valid: autoscaler v1 allows restartPolicy Always", func(c *RayCluster) {
			c.Spec.EnableInTreeAutoscaling = b(true)
			c.Spec.AutoscalerOptions = &AutoscalerOptions{Version: ptr(AutoscalerVersionV1)}
			c.Spec.HeadGroupSpec.Template.Spec.RestartPolicy = corev1.RestartPolicyAlways
		}, nil},
		{"autoscaler options enums and negative timeout", func(c *RayCluster) {
			c.Spec.AutoscalerOptions = &AutoscalerOptions{IdleTimeoutSeconds: i32(-1), UpscalingMode: ptr(UpscalingMode("Fast")), Version: ptr(AutoscalerVersion("v3"))}
		}, []want{{field.ErrorTypeInvalid, "spec.autoscalerOptions.idleTimeoutSeconds"}, {field.ErrorTypeNotSupported, "spec.autoscalerOptions.upscalingMode"}, {field.ErrorTypeNotSupported, "spec.autoscalerOptions.version"}}},
		{"autoscaler v2 env without autoscaling", func(c *RayCluster) {
			c.Spec.HeadGroupSpec.Template.Spec.Containers[0].Env = []corev1.EnvVar{env(EnvRayEnableAutoscalerV2, "true")}
		}, []want{{field.ErrorTypeForbidden, headEnv0}}},
		{"autoscaler v2 env together with autoscalerOptions.version", func(c *RayCluster) {
			c.Spec.EnableInTreeAutoscaling = b(true)
			c.Spec.AutoscalerOptions = &AutoscalerOptions{Version: ptr(AutoscalerVersionV2)}
			c.Spec.HeadGroupSpec.Template.Spec.Containers[0].Env = []corev1.EnvVar{env(EnvRayEnableAutoscalerV2, "1")}
		}, []want{{field.ErrorTypeForbidden, headEnv0}}},
		{"valid: GCS FT with redis", func(c *RayCluster) {
			c.Spec.GcsFaultToleranceOptions = &GcsFaultToleranceOptions{RedisAddress: "redis:6379"}
		}, nil},
		{"GCS FT redis without address", func(c *RayCluster) {
			c.Spec.GcsFaultToleranceOptions = &GcsFaultToleranceOptions{}
		}, []want{{field.ErrorTypeRequired, "spec.gcsFaultToleranceOptions.redisAddress"}}},
		{"GCS FT options with ft-enabled=false annotation", func(c *RayCluster) {
			c.Annotations = map[string]string{RayFTEnabledAnnotationKey: "false"}
			c.Spec.GcsFaultToleranceOptions = &GcsFaultToleranceOptions{RedisAddress: "redis:6379"}
		}, []want{{field.ErrorTypeForbidden, "spec.gcsFaultToleranceOptions"}}},
		{"RAY_REDIS_ADDRESS without GCS FT", func(c *RayCluster) {
			c.Spec.HeadGroupSpec.Template.Spec.Containers[0].Env = []corev1.EnvVar{env(EnvRayRedisAddress, "redis:6379")}
		}, []want{{field.ErrorTypeForbidden, headEnv0}}},
		{"valid: RAY_REDIS_ADDRESS with the ft-enabled annotation", func(c *RayCluster) {
			c.Annotations = map[string]string{RayFTEnabledAnnotationKey: "true"}
			c.Spec.HeadGroupSpec.Template.Spec.Containers[0].Env = []corev1.EnvVar{env(EnvRayRedisAddress, "redis:6379")}
		}, nil},
		{"GCS FT options with redis env, params and annotation", func(c *RayCluster) {
			c.Annotations = map[string]string{RayExternalStorageNSAnnotationKey: "ns"}
			c.Spec.GcsFaultToleranceOptions = &GcsFaultToleranceOptions{RedisAddress: "redis:6379"}
			c.Spec.HeadGroupSpec.RayStartParams["redis-password"] = "x"
			c.Spec.HeadGroupSpec.Template.Spec.Containers[0].Env = []corev1.EnvVar{env(EnvRedisPassword, "x"), env(EnvRayRedisAddress, "r:1")}
		}, []want{
			{field.ErrorTypeForbidden, headEnv0},
			{field.ErrorTypeForbidden, "spec.headGroupSpec.template.spec.containers[0].env[1]"},
			{field.ErrorTypeForbidden, "spec.headGroupSpec.rayStartParams[redis-password]"},
			{field.ErrorTypeForbidden, "metadata.annotations[ray.io/external-storage-namespace]"},
		}},
		{"redis username outside GCS FT options", func(c *RayCluster) {
			c.Spec.HeadGroupSpec.RayStartParams["redis-username"] = "u"
			c.Spec.HeadGroupSpec.Template.Spec.Containers[0].Env = []corev1.EnvVar{env(EnvRedisUsername, "u")}
		}, []want{{field.ErrorTypeForbidden, headEnv0}, {field.ErrorTypeForbidden, "spec.headGroupSpec.rayStartParams[redis-username]"}}},
		{"redis credential with value and valueFrom", func(c *RayCluster) {
			c.Spec.GcsFaultToleranceOptions = &GcsFaultToleranceOptions{RedisAddress: "r:1",
				RedisPassword: &RedisCredential{Value: "x", ValueFrom: &corev1.EnvVarSource{}}}
		}, []want{{field.ErrorTypeForbidden, "spec.gcsFaultToleranceOptions.redisPassword.valueFrom"}}},
		{"valid: rocksdb backend needs no redis address", func(c *RayCluster) {
			c.Spec.GcsFaultToleranceOptions = &GcsFaultToleranceOptions{Backend: GcsFTBackendRocksDB,
				Storage: &GcsEmbeddedStorage{ClaimName: "gcs"}}
		}, nil},
		{"rocksdb claimName with managed-claim fields, bad size and policy", func(c *RayCluster) {
			q := resource.MustParse("0")
			c.Spec.GcsFaultToleranceOptions = &GcsFaultToleranceOptions{Backend: GcsFTBackendRocksDB,
				Storage: &GcsEmbeddedStorage{ClaimName: "gcs", Size: &q, DeletionPolicy: ptr(GCSStorageDeletionPolicy("Keep"))}}
		}, []want{
			{field.ErrorTypeForbidden, "spec.gcsFaultToleranceOptions.storage.claimName"},
			{field.ErrorTypeInvalid, "spec.gcsFaultToleranceOptions.storage.size"},
			{field.ErrorTypeNotSupported, "spec.gcsFaultToleranceOptions.storage.deletionPolicy"},
		}},
		{"unknown GCS backend", func(c *RayCluster) {
			c.Spec.GcsFaultToleranceOptions = &GcsFaultToleranceOptions{Backend: "etcd"}
		}, []want{{field.ErrorTypeNotSupported, "spec.gcsFaultToleranceOptions.backend"}}},
		{"valid: token auth on Ray 2.52", func(c *RayCluster) { c.Spec.AuthOptions = &AuthOptions{Mode: AuthModeToken} }, nil},
		{"token auth on old Ray", func(c *RayCluster) {
			c.Spec.RayVersion = "2.46.0"
			c.Spec.AuthOptions = &AuthOptions{Mode: AuthModeToken}
		}, []want{{field.ErrorTypeInvalid, "spec.rayVersion"}}},
		{"token auth without rayVersion", func(c *RayCluster) {
			c.Spec.RayVersion = ""
			c.Spec.AuthOptions = &AuthOptions{Mode: AuthModeToken}
		}, []want{{field.ErrorTypeRequired, "spec.rayVersion"}}},
		{"unknown auth mode", func(c *RayCluster) { c.Spec.AuthOptions = &AuthOptions{Mode: "oidc"} },
			[]want{{field.ErrorTypeNotSupported, "spec.authOptions.mode"}}},
		{"valid: Kubernetes token auth on Ray 2.55", func(c *RayCluster) {
			c.Spec.RayVersion = "2.55.0"
			c.Spec.AuthOptions = &AuthOptions{Mode: AuthModeToken, EnableK8sTokenAuth: ptr(true)}
		}, nil},
		{"Kubernetes token auth on Ray 2.54 (KubeRay: minimum 2.55.0)", func(c *RayCluster) {
			c.Spec.RayVersion = "2.54.1"
			c.Spec.AuthOptions = &AuthOptions{Mode: AuthModeToken, EnableK8sTokenAuth: ptr(true)}
		}, []want{{field.ErrorTypeInvalid, "spec.rayVersion"}}},
		{"Kubernetes token auth with secretName (KubeRay refuses both)", func(c *RayCluster) {
			c.Spec.RayVersion = "2.55.0"
			c.Spec.AuthOptions = &AuthOptions{Mode: AuthModeToken, EnableK8sTokenAuth: ptr(true), SecretName: ptr("mine")}
		}, []want{{field.ErrorTypeForbidden, "spec.authOptions.secretName"}}},
		{"Kubernetes token auth with mode disabled: refused, as KubeRay does, not ignored", func(c *RayCluster) {
			c.Spec.RayVersion = "2.55.0"
			c.Spec.AuthOptions = &AuthOptions{Mode: AuthModeDisabled, EnableK8sTokenAuth: ptr(true)}
		}, []want{{field.ErrorTypeForbidden, "spec.authOptions.enableK8sTokenAuth"}}},
		{"Kubernetes token auth without a mode: refused too", func(c *RayCluster) {
			c.Spec.RayVersion = "2.55.0"
			c.Spec.AuthOptions = &AuthOptions{EnableK8sTokenAuth: ptr(true)}
		}, []want{{field.ErrorTypeForbidden, "spec.authOptions.enableK8sTokenAuth"}}},
		{"valid: enableK8sTokenAuth false with mode disabled", func(c *RayCluster) {
			c.Spec.AuthOptions = &AuthOptions{Mode: AuthModeDisabled, EnableK8sTokenAuth: ptr(false)}
		}, nil},
		{"network policy: bad mode, empty and duplicate group", func(c *RayCluster) {
			c.Spec.NetworkPolicy = &NetworkPolicyConfig{Mode: ptr(NetworkPolicyMode("AllowAll")),
				WorkerGroups: []WorkerGroupNetworkPolicyRules{{GroupName: "cpu"}, {GroupName: ""}, {GroupName: "cpu"}}}
		}, []want{
			{field.ErrorTypeNotSupported, "spec.networkPolicy.mode"},
			{field.ErrorTypeRequired, "spec.networkPolicy.workerGroups[1].groupName"},
			{field.ErrorTypeDuplicate, "spec.networkPolicy.workerGroups[2].groupName"},
		}},
		{"valid: network policy DenyAll with rules both ways (KubeRay v1.7.0 sample)", func(c *RayCluster) {
			c.Spec.NetworkPolicy = &NetworkPolicyConfig{Mode: ptr(NetworkPolicyDenyAll),
				Head:         &NetworkPolicyRules{IngressRules: []networkingv1.NetworkPolicyIngressRule{{}}, EgressRules: []networkingv1.NetworkPolicyEgressRule{{}}},
				WorkerGroups: []WorkerGroupNetworkPolicyRules{{GroupName: "gpu", NetworkPolicyRules: NetworkPolicyRules{EgressRules: []networkingv1.NetworkPolicyEgressRule{{}}}}}}
		}, nil},
		{"network policy: rules in a direction the mode leaves open (KubeRay v1.7.0 validateNetworkPolicy)", func(c *RayCluster) {
			c.Spec.NetworkPolicy = &NetworkPolicyConfig{Mode: ptr(NetworkPolicyDenyAllEgress),
				Head:         &NetworkPolicyRules{IngressRules: []networkingv1.NetworkPolicyIngressRule{{}}},
				Worker:       &NetworkPolicyRules{IngressRules: []networkingv1.NetworkPolicyIngressRule{{}}, EgressRules: []networkingv1.NetworkPolicyEgressRule{{}}},
				WorkerGroups: []WorkerGroupNetworkPolicyRules{{GroupName: "cpu", NetworkPolicyRules: NetworkPolicyRules{IngressRules: []networkingv1.NetworkPolicyIngressRule{{}}}}}}
		}, []want{
			{field.ErrorTypeForbidden, "spec.networkPolicy.head.ingressRules"},
			{field.ErrorTypeForbidden, "spec.networkPolicy.worker.ingressRules"},
			{field.ErrorTypeForbidden, "spec.networkPolicy.workerGroups[0].ingressRules"},
		}},
		{"network policy: egress rules with DenyAllIngress", func(c *RayCluster) {
			c.Spec.NetworkPolicy = &NetworkPolicyConfig{Mode: ptr(NetworkPolicyDenyAllIngress),
				Head: &NetworkPolicyRules{EgressRules: []networkingv1.NetworkPolicyEgressRule{{}}}}
		}, []want{{field.ErrorTypeForbidden, "spec.networkPolicy.head.egressRules"}}},
		{"network policy: an entry for a group the cluster does not have, a group name no policy name may hold", func(c *RayCluster) {
			c.Spec.WorkerGroupSpecs[0].GroupName = "CPU_big"
			c.Spec.NetworkPolicy = &NetworkPolicyConfig{WorkerGroups: []WorkerGroupNetworkPolicyRules{{GroupName: "tpu"}}}
		}, []want{
			{field.ErrorTypeInvalid, "spec.workerGroupSpecs[0].groupName"},
			{field.ErrorTypeNotFound, "spec.networkPolicy.workerGroups[0].groupName"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := validCluster()
			tt.mutate(c)
			checkErrors(t, ValidateRayCluster(c), tt.want)
		})
	}
}

func TestValidationMessage(t *testing.T) {
	c := validCluster()
	c.Spec.WorkerGroupSpecs = append(c.Spec.WorkerGroupSpecs[:1], WorkerGroupSpec{
		GroupName: "g", MinReplicas: i32(5), MaxReplicas: i32(3), Template: podTemplate()})
	errs := ValidateRayCluster(c)
	const msg = "spec.workerGroupSpecs[1].minReplicas: Invalid value: 5: must be <= maxReplicas (3)"
	if len(errs) != 1 || errs[0].Error() != msg {
		t.Fatalf("got %v, want %q", errs, msg)
	}
}

func validJob() *RayJob {
	spec := validClusterSpec()
	return &RayJob{ObjectMeta: metav1.ObjectMeta{Name: "job"}, Spec: RayJobSpec{
		Entrypoint:               "python main.py",
		RayClusterSpec:           &spec,
		ShutdownAfterJobFinishes: true,
		TTLSecondsAfterFinished:  60,
	}}
}

func rule(policy DeletionPolicyType, status JobStatus, ttl int32) DeletionRule {
	return DeletionRule{Policy: policy, Condition: DeletionCondition{JobStatus: &status, TTLSeconds: ttl}}
}

func withRules(j *RayJob, rules ...DeletionRule) {
	j.Spec.ShutdownAfterJobFinishes = false
	j.Spec.TTLSecondsAfterFinished = 0
	j.Spec.DeletionStrategy = &DeletionStrategy{DeletionRules: rules}
}

func useSelector(j *RayJob) {
	j.Spec.RayClusterSpec = nil
	j.Spec.ClusterSelector = map[string]string{RayClusterLabelKey: "shared"}
}

func TestValidateRayJob(t *testing.T) {
	const ds = "spec.deletionStrategy"
	tests := []struct {
		name   string
		mutate func(j *RayJob)
		want   []want
	}{
		{"valid", func(*RayJob) {}, nil},
		{"valid: defaulted", func(j *RayJob) { j.Default() }, nil},
		{"valid: cluster selector", useSelector, nil},
		{"name too long", func(j *RayJob) { j.Name = strings.Repeat("j", 48) }, []want{{field.ErrorTypeTooLong, "metadata.name"}}},
		{"both rayClusterSpec and clusterSelector", func(j *RayJob) { j.Spec.ClusterSelector = map[string]string{RayClusterLabelKey: "c"} },
			[]want{{field.ErrorTypeForbidden, "spec.clusterSelector"}}},
		{"neither rayClusterSpec nor clusterSelector", func(j *RayJob) { j.Spec.RayClusterSpec = nil },
			[]want{{field.ErrorTypeRequired, "spec.rayClusterSpec"}}},
		{"neither, in InteractiveMode too", func(j *RayJob) { j.Spec.RayClusterSpec = nil; j.Spec.SubmissionMode = InteractiveMode },
			[]want{{field.ErrorTypeRequired, "spec.rayClusterSpec"}}},
		{"clusterSelector without ray.io/cluster", func(j *RayJob) {
			j.Spec.RayClusterSpec = nil
			j.Spec.ClusterSelector = map[string]string{"team": "a"}
		}, []want{{field.ErrorTypeRequired, "spec.clusterSelector[ray.io/cluster]"}}},
		{"clusterSelector in SidecarMode", func(j *RayJob) { useSelector(j); j.Spec.SubmissionMode = SidecarMode },
			[]want{{field.ErrorTypeForbidden, "spec.clusterSelector"}}},
		{"suspend with clusterSelector", func(j *RayJob) { useSelector(j); j.Spec.Suspend = true },
			[]want{{field.ErrorTypeForbidden, "spec.suspend"}}},
		{"valid: suspend with shutdownAfterJobFinishes", func(j *RayJob) { j.Spec.Suspend = true }, nil},
		{"suspend without shutdownAfterJobFinishes", func(j *RayJob) {
			j.Spec.Suspend = true
			j.Spec.ShutdownAfterJobFinishes = false
			j.Spec.TTLSecondsAfterFinished = 0
		}, []want{{field.ErrorTypeForbidden, "spec.suspend"}}},
		{"unknown submissionMode", func(j *RayJob) { j.Spec.SubmissionMode = "CronMode" },
			[]want{{field.ErrorTypeNotSupported, "spec.submissionMode"}}},
		{"negative ttlSecondsAfterFinished", func(j *RayJob) { j.Spec.TTLSecondsAfterFinished = -1 },
			[]want{{field.ErrorTypeInvalid, "spec.ttlSecondsAfterFinished"}}},
		{"ttlSecondsAfterFinished without shutdown", func(j *RayJob) { j.Spec.ShutdownAfterJobFinishes = false },
			[]want{{field.ErrorTypeForbidden, "spec.ttlSecondsAfterFinished"}}},
		{"negative backoffLimit", func(j *RayJob) { j.Spec.BackoffLimit = i32(-1) },
			[]want{{field.ErrorTypeInvalid, "spec.backoffLimit"}}},
		{"activeDeadlineSeconds zero", func(j *RayJob) { j.Spec.ActiveDeadlineSeconds = i32(0) },
			[]want{{field.ErrorTypeInvalid, "spec.activeDeadlineSeconds"}}},
		{"preRunningDeadlineSeconds zero", func(j *RayJob) { j.Spec.PreRunningDeadlineSeconds = i32(0) },
			[]want{{field.ErrorTypeInvalid, "spec.preRunningDeadlineSeconds"}}},
		{"valid: preRunningDeadlineSeconds 1", func(j *RayJob) { j.Spec.PreRunningDeadlineSeconds = i32(1) }, nil},
		{"negative entrypoint resources", func(j *RayJob) {
			j.Spec.EntrypointNumCpus = -1
			j.Spec.EntrypointNumGpus = -0.5
			j.Spec.EntrypointResources = `{"TPU": -1}`
		}, []want{{field.ErrorTypeInvalid, "spec.entrypointNumCpus"}, {field.ErrorTypeInvalid, "spec.entrypointNumGpus"}, {field.ErrorTypeInvalid, "spec.entrypointResources[TPU]"}}},
		{"entrypointResources not JSON", func(j *RayJob) { j.Spec.EntrypointResources = "TPU=1" },
			[]want{{field.ErrorTypeInvalid, "spec.entrypointResources"}}},
		{"runtimeEnvYAML not a mapping", func(j *RayJob) { j.Spec.RuntimeEnvYAML = "pip: [a" },
			[]want{{field.ErrorTypeInvalid, "spec.runtimeEnvYAML"}}},
		{"valid: runtimeEnvYAML", func(j *RayJob) { j.Spec.RuntimeEnvYAML = "pip:\n  - requests\nenv_vars:\n  A: b\n" }, nil},
		{"InteractiveMode with retries", func(j *RayJob) { j.Spec.SubmissionMode = InteractiveMode; j.Spec.BackoffLimit = i32(1) },
			[]want{{field.ErrorTypeForbidden, "spec.backoffLimit"}}},
		{"submitter settings outside K8sJobMode", func(j *RayJob) {
			j.Spec.SubmissionMode = HTTPMode
			j.Spec.SubmitterPodTemplate = ptr(podTemplate())
			j.Spec.SubmitterConfig = &SubmitterConfig{BackoffLimit: i32(1)}
		}, []want{{field.ErrorTypeForbidden, "spec.submitterPodTemplate"}, {field.ErrorTypeForbidden, "spec.submitterConfig"}}},
		{"valid: submitter settings in K8sJobMode", func(j *RayJob) {
			j.Spec.SubmitterPodTemplate = ptr(podTemplate())
			j.Spec.SubmitterConfig = &SubmitterConfig{BackoffLimit: i32(1)}
		}, nil},
		{"negative submitter backoffLimit, submitter without container", func(j *RayJob) {
			j.Spec.SubmitterPodTemplate = &corev1.PodTemplateSpec{}
			j.Spec.SubmitterConfig = &SubmitterConfig{BackoffLimit: i32(-1)}
		}, []want{{field.ErrorTypeInvalid, "spec.submitterConfig.backoffLimit"}, {field.ErrorTypeRequired, "spec.submitterPodTemplate.spec.containers"}}},
		{"SidecarMode head restartPolicy", func(j *RayJob) {
			j.Spec.SubmissionMode = SidecarMode
			j.Spec.RayClusterSpec.HeadGroupSpec.Template.Spec.RestartPolicy = corev1.RestartPolicyAlways
		}, []want{{field.ErrorTypeNotSupported, "spec.rayClusterSpec.headGroupSpec.template.spec.restartPolicy"}}},
		{"managedBy unknown", func(j *RayJob) { j.Spec.ManagedBy = ptr("x") }, []want{{field.ErrorTypeNotSupported, "spec.managedBy"}}},
		{"embedded cluster spec is validated at its path", func(j *RayJob) { j.Spec.RayClusterSpec.WorkerGroupSpecs[0].MaxReplicas = i32(-1) },
			[]want{{field.ErrorTypeInvalid, "spec.rayClusterSpec.workerGroupSpecs[0].maxReplicas"}, {field.ErrorTypeInvalid, "spec.rayClusterSpec.workerGroupSpecs[0].minReplicas"}}},
		{"embedded cluster sees the job's annotations", func(j *RayJob) {
			j.Annotations = map[string]string{RayFTEnabledAnnotationKey: "false"}
			j.Spec.RayClusterSpec.GcsFaultToleranceOptions = &GcsFaultToleranceOptions{RedisAddress: "r:1"}
		}, []want{{field.ErrorTypeForbidden, "spec.rayClusterSpec.gcsFaultToleranceOptions"}}},
		{"Kubernetes token auth: KubeRay does not support it for RayJob", func(j *RayJob) {
			j.Spec.RayClusterSpec.RayVersion = "2.55.0"
			j.Spec.RayClusterSpec.AuthOptions = &AuthOptions{Mode: AuthModeToken, EnableK8sTokenAuth: ptr(true)}
		}, []want{{field.ErrorTypeForbidden, "spec.rayClusterSpec.authOptions.enableK8sTokenAuth"}}},

		// Deletion strategy.
		{"valid: deletion rules", func(j *RayJob) {
			withRules(j, rule(DeleteWorkers, JobStatusFailed, 10), rule(DeleteCluster, JobStatusFailed, 20), rule(DeleteSelf, JobStatusFailed, 30),
				rule(DeleteCluster, JobStatusSucceeded, 0),
				DeletionRule{Policy: DeleteCluster, Condition: DeletionCondition{JobDeploymentStatus: ptr(JobDeploymentStatusFailed)}})
		}, nil},
		{"empty deletion strategy", func(j *RayJob) { j.Spec.DeletionStrategy = &DeletionStrategy{} },
			[]want{{field.ErrorTypeRequired, ds}}},
		{"legacy and rules mixed", func(j *RayJob) {
			withRules(j, rule(DeleteCluster, JobStatusFailed, 0))
			j.Spec.DeletionStrategy.OnSuccess = &DeletionPolicy{Policy: ptr(DeleteCluster)}
		}, []want{{field.ErrorTypeForbidden, ds + ".deletionRules"}}},
		{"rules with shutdownAfterJobFinishes", func(j *RayJob) {
			withRules(j, rule(DeleteCluster, JobStatusFailed, 0))
			j.Spec.ShutdownAfterJobFinishes = true
		}, []want{{field.ErrorTypeForbidden, "spec.shutdownAfterJobFinishes"}}},
		{"rule ttl negative", func(j *RayJob) { withRules(j, rule(DeleteCluster, JobStatusFailed, -1)) },
			[]want{{field.ErrorTypeInvalid, ds + ".deletionRules[0].condition.ttlSeconds"}}},
		{"rule without condition", func(j *RayJob) { withRules(j, DeletionRule{Policy: DeleteSelf}) },
			[]want{{field.ErrorTypeRequired, ds + ".deletionRules[0].condition"}}},
		{"rule with both conditions", func(j *RayJob) {
			r := rule(DeleteSelf, JobStatusFailed, 0)
			r.Condition.JobDeploymentStatus = ptr(JobDeploymentStatusFailed)
			withRules(j, r)
		}, []want{{field.ErrorTypeForbidden, ds + ".deletionRules[0].condition.jobDeploymentStatus"}}},
		{"rule with unsupported statuses and policy", func(j *RayJob) {
			withRules(j, rule(DeleteSelf, JobStatusRunning, 0),
				DeletionRule{Policy: DeleteSelf, Condition: DeletionCondition{JobDeploymentStatus: ptr(JobDeploymentStatusComplete)}},
				rule("DeleteAll", JobStatusFailed, 0), DeletionRule{})
		}, []want{
			{field.ErrorTypeNotSupported, ds + ".deletionRules[0].condition.jobStatus"},
			{field.ErrorTypeNotSupported, ds + ".deletionRules[1].condition.jobDeploymentStatus"},
			{field.ErrorTypeNotSupported, ds + ".deletionRules[2].policy"},
			{field.ErrorTypeRequired, ds + ".deletionRules[3].policy"},
		}},
		{"duplicate rule", func(j *RayJob) {
			withRules(j, rule(DeleteCluster, JobStatusFailed, 0), rule(DeleteCluster, JobStatusFailed, 5))
		}, []want{{field.ErrorTypeDuplicate, ds + ".deletionRules[1]"}}},
		{"more destructive rule fires first", func(j *RayJob) {
			withRules(j, rule(DeleteSelf, JobStatusFailed, 10), rule(DeleteCluster, JobStatusFailed, 20), rule(DeleteWorkers, JobStatusFailed, 30))
		}, []want{
			{field.ErrorTypeInvalid, ds + ".deletionRules[0].condition.ttlSeconds"},
			{field.ErrorTypeInvalid, ds + ".deletionRules[0].condition.ttlSeconds"},
			{field.ErrorTypeInvalid, ds + ".deletionRules[1].condition.ttlSeconds"},
		}},
		{"cluster policies with clusterSelector", func(j *RayJob) {
			withRules(j, rule(DeleteCluster, JobStatusFailed, 0), rule(DeleteSelf, JobStatusFailed, 0))
			useSelector(j)
		}, []want{{field.ErrorTypeForbidden, ds + ".deletionRules[0].policy"}}},
		{"DeleteWorkers with autoscaling", func(j *RayJob) {
			withRules(j, rule(DeleteWorkers, JobStatusFailed, 0))
			j.Spec.RayClusterSpec.EnableInTreeAutoscaling = b(true)
		}, []want{{field.ErrorTypeForbidden, ds + ".deletionRules[0].policy"}}},
		{"valid: legacy onSuccess/onFailure", func(j *RayJob) {
			j.Spec.DeletionStrategy = &DeletionStrategy{OnSuccess: &DeletionPolicy{Policy: ptr(DeleteCluster)}, OnFailure: &DeletionPolicy{Policy: ptr(DeleteSelf)}}
		}, nil},
		{"legacy with only onSuccess", func(j *RayJob) {
			j.Spec.DeletionStrategy = &DeletionStrategy{OnSuccess: &DeletionPolicy{Policy: ptr(DeleteCluster)}}
		}, []want{{field.ErrorTypeRequired, ds + ".onFailure.policy"}}},
		{"legacy DeleteNone with shutdown, DeleteWorkers with selector", func(j *RayJob) {
			j.Spec.DeletionStrategy = &DeletionStrategy{OnSuccess: &DeletionPolicy{Policy: ptr(DeleteNone)}, OnFailure: &DeletionPolicy{Policy: ptr(DeletionPolicyType("Nuke"))}}
		}, []want{{field.ErrorTypeForbidden, ds + ".onSuccess.policy"}, {field.ErrorTypeNotSupported, ds + ".onFailure.policy"}}},
		{"legacy cluster policy with clusterSelector", func(j *RayJob) {
			useSelector(j)
			j.Spec.ShutdownAfterJobFinishes = false
			j.Spec.TTLSecondsAfterFinished = 0
			j.Spec.DeletionStrategy = &DeletionStrategy{OnSuccess: &DeletionPolicy{Policy: ptr(DeleteWorkers)}, OnFailure: &DeletionPolicy{Policy: ptr(DeleteSelf)}}
		}, []want{{field.ErrorTypeForbidden, ds + ".onSuccess.policy"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := validJob()
			tt.mutate(j)
			checkErrors(t, ValidateRayJob(j), tt.want)
		})
	}
}

func validService() *RayService {
	return &RayService{ObjectMeta: metav1.ObjectMeta{Name: "svc"}, Spec: RayServiceSpec{
		ServeConfigV2:  "applications:\n  - name: app\n    import_path: app:deployment\n",
		RayClusterSpec: validClusterSpec(),
	}}
}

func incremental(s *RayService) {
	s.Spec.RayClusterSpec.EnableInTreeAutoscaling = b(true)
	s.Spec.UpgradeStrategy = &RayServiceUpgradeStrategy{Type: ptr(NewClusterWithIncrementalUpgrade),
		ClusterUpgradeOptions: &ClusterUpgradeOptions{StepSizePercent: i32(10), IntervalSeconds: i32(30), GatewayClassName: "istio"}}
}

func TestValidateRayService(t *testing.T) {
	const op = "spec.upgradeStrategy.clusterUpgradeOptions"
	tests := []struct {
		name   string
		mutate func(s *RayService)
		want   []want
	}{
		{"valid", func(*RayService) {}, nil},
		{"valid: defaulted", func(s *RayService) { s.Default() }, nil},
		{"valid: no serve config", func(s *RayService) { s.Spec.ServeConfigV2 = "" }, nil},
		{"name too long", func(s *RayService) { s.Name = strings.Repeat("s", 48) }, []want{{field.ErrorTypeTooLong, "metadata.name"}}},
		{"serveConfigV2 not YAML", func(s *RayService) { s.Spec.ServeConfigV2 = "applications: [" },
			[]want{{field.ErrorTypeInvalid, "spec.serveConfigV2"}}},
		{"serveConfigV2 a list, not a mapping", func(s *RayService) { s.Spec.ServeConfigV2 = "- a\n- b\n" },
			[]want{{field.ErrorTypeInvalid, "spec.serveConfigV2"}}},
		{"negative rayClusterDeletionDelaySeconds", func(s *RayService) { s.Spec.RayClusterDeletionDelaySeconds = i32(-1) },
			[]want{{field.ErrorTypeInvalid, "spec.rayClusterDeletionDelaySeconds"}}},
		{"valid: zero deletion delay", func(s *RayService) { s.Spec.RayClusterDeletionDelaySeconds = i32(0) }, nil},
		{"Kubernetes token auth: KubeRay does not support it for RayService", func(s *RayService) {
			s.Spec.RayClusterSpec.RayVersion = "2.55.0"
			s.Spec.RayClusterSpec.AuthOptions = &AuthOptions{Mode: AuthModeToken, EnableK8sTokenAuth: ptr(true)}
		}, []want{{field.ErrorTypeForbidden, "spec.rayClusterConfig.authOptions.enableK8sTokenAuth"}}},
		{"unknown upgrade type", func(s *RayService) {
			s.Spec.UpgradeStrategy = &RayServiceUpgradeStrategy{Type: ptr(RayServiceUpgradeType("Canary"))}
		}, []want{{field.ErrorTypeNotSupported, "spec.upgradeStrategy.type"}}},
		{"valid: upgrade None", func(s *RayService) { s.Spec.UpgradeStrategy = &RayServiceUpgradeStrategy{Type: ptr(None)} }, nil},
		{"valid: incremental upgrade", incremental, nil},
		{"incremental without autoscaler or options", func(s *RayService) {
			s.Spec.UpgradeStrategy = &RayServiceUpgradeStrategy{Type: ptr(NewClusterWithIncrementalUpgrade)}
		}, []want{{field.ErrorTypeRequired, "spec.rayClusterConfig.enableInTreeAutoscaling"}, {field.ErrorTypeRequired, op}}},
		{"incremental options out of range", func(s *RayService) {
			incremental(s)
			o := s.Spec.UpgradeStrategy.ClusterUpgradeOptions
			o.MaxSurgePercent, o.StepSizePercent, o.IntervalSeconds, o.GatewayClassName = i32(101), i32(-1), i32(0), ""
		}, []want{
			{field.ErrorTypeInvalid, op + ".maxSurgePercent"}, {field.ErrorTypeInvalid, op + ".stepSizePercent"},
			{field.ErrorTypeInvalid, op + ".intervalSeconds"}, {field.ErrorTypeRequired, op + ".gatewayClassName"},
		}},
		{"incremental options missing", func(s *RayService) {
			incremental(s)
			o := s.Spec.UpgradeStrategy.ClusterUpgradeOptions
			o.StepSizePercent, o.IntervalSeconds = nil, nil
		}, []want{{field.ErrorTypeRequired, op + ".stepSizePercent"}, {field.ErrorTypeRequired, op + ".intervalSeconds"}}},
		{"head service named", func(s *RayService) {
			s.Spec.RayClusterSpec.HeadGroupSpec.HeadService = &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "fixed"}}
		}, []want{{field.ErrorTypeForbidden, "spec.rayClusterConfig.headGroupSpec.headService.metadata.name"}}},
		{"managedBy unknown", func(s *RayService) { s.Spec.ManagedBy = ptr("x") }, []want{{field.ErrorTypeNotSupported, "spec.managedBy"}}},
		{"cluster config validated at its path", func(s *RayService) { s.Spec.RayClusterSpec.WorkerGroupSpecs[1].GroupName = "cpu" },
			[]want{{field.ErrorTypeDuplicate, "spec.rayClusterConfig.workerGroupSpecs[1].groupName"}}},
		{"initializing timeout annotation invalid", func(s *RayService) {
			s.Annotations = map[string]string{RayServiceInitializingTimeoutAnnotation: "soon"}
		}, []want{{field.ErrorTypeInvalid, "metadata.annotations[ray.io/initializing-timeout]"}}},
		{"initializing timeout annotation not positive", func(s *RayService) {
			s.Annotations = map[string]string{RayServiceInitializingTimeoutAnnotation: "-5m"}
		}, []want{{field.ErrorTypeInvalid, "metadata.annotations[ray.io/initializing-timeout]"}}},
		{"valid: initializing timeout in seconds", func(s *RayService) {
			s.Annotations = map[string]string{RayServiceInitializingTimeoutAnnotation: "600"}
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := validService()
			tt.mutate(s)
			checkErrors(t, ValidateRayService(s), tt.want)
		})
	}
}

func TestValidateStatus(t *testing.T) {
	st := &RayClusterStatus{Conditions: []metav1.Condition{
		{Type: string(RayClusterSuspending), Status: metav1.ConditionTrue},
		{Type: string(RayClusterSuspended), Status: metav1.ConditionTrue},
	}}
	checkErrors(t, ValidateRayClusterStatus(st), []want{{field.ErrorTypeInvalid, "status.conditions"}})
	st.Conditions[0].Status = metav1.ConditionFalse
	checkErrors(t, ValidateRayClusterStatus(st), nil)

	j := validJob()
	j.Status.JobDeploymentStatus = JobDeploymentStatusWaiting
	checkErrors(t, ValidateRayJobStatus(j), []want{{field.ErrorTypeInvalid, "status.jobDeploymentStatus"}})
	j.Spec.SubmissionMode = InteractiveMode
	checkErrors(t, ValidateRayJobStatus(j), nil)
}
