package raycluster

// Pure construction of the pods and Services of a RayCluster, as KubeRay
// builds them: the `ray start` command from rayStartParams and the container
// resources, the injected environment, /dev/shm, probes, the worker init
// container that waits for the GCS, the autoscaler sidecar, GCS fault
// tolerance settings and the Recreate hash annotation.

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/raydar/raydar/controller/batchscheduler"
	"github.com/raydar/raydar/controller/features"
	"github.com/raydar/raydar/controller/kit"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// BuildConfig holds the operator-level settings that shape built objects.
type BuildConfig struct {
	// ClusterDomain is the cluster DNS domain ("cluster.local").
	ClusterDomain string
	// InjectProbes adds readiness and liveness probes to Ray containers
	// that have none (KubeRay's ENABLE_PROBES_INJECTION, default on).
	InjectProbes bool
	// HeadlessHeadService makes the default ClusterIP head Service headless
	// (KubeRay's default; ENABLE_RAY_HEAD_CLUSTER_IP_SERVICE=true turns it off).
	HeadlessHeadService bool
	// Features are KubeRay's feature gates (the zero value: raydar's
	// defaults): RayClusterNetworkPolicy makes spec.networkPolicy into
	// NetworkPolicies (networkpolicy.go).
	Features features.Gates
	// Scheduler is the batch scheduler of --batch-scheduler, nil for none
	// (gang.go).
	Scheduler batchscheduler.Scheduler
	// PodDefaults are the operator's sidecars, default envs, labels and
	// annotations (KubeRay's Configuration; poddefaults.go).
	PodDefaults kit.PodDefaults
}

// DefaultBuildConfig is the BuildConfig of an operator run without flags:
// domain cluster.local, probes injected, a headless head Service.
func DefaultBuildConfig() BuildConfig {
	return BuildConfig{ClusterDomain: "cluster.local", InjectProbes: true, HeadlessHeadService: true}
}

// Environment variable names injected into Ray containers.
const (
	envClusterName        = "RAY_CLUSTER_NAME"
	envClusterNamespace   = "RAY_CLUSTER_NAMESPACE"
	envFQRayIP            = "FQ_RAY_IP"
	envRayIP              = "RAY_IP"
	envRayAddress         = "RAY_ADDRESS"
	envRayPort            = "RAY_PORT"
	envGenRayStartCmd     = "KUBERAY_GEN_RAY_START_CMD"
	envNodeTypeName       = "RAY_NODE_TYPE_NAME"
	envCloudInstanceID    = "RAY_CLOUD_INSTANCE_ID"
	envUsageStatsInUse    = "RAY_USAGE_STATS_KUBERAY_IN_USE"
	envUsageStatsTags     = "RAY_USAGE_STATS_EXTRA_TAGS"
	envDiskUsage          = "RAY_DASHBOARD_ENABLE_K8S_DISK_USAGE"
	envRedisAddress       = rayv1.EnvRayRedisAddress
	envRedisPassword      = rayv1.EnvRedisPassword
	envRedisUsername      = rayv1.EnvRedisUsername
	envExternalStorageNS  = "RAY_external_storage_namespace"
	envGcsReconnectTimout = "RAY_gcs_rpc_server_reconnect_timeout_s"
	envAutoscalerV2       = rayv1.EnvRayEnableAutoscalerV2
	envHeadPodName        = "RAY_HEAD_POD_NAME"
	envCRDVersion         = "KUBERAY_CRD_VER"
	envUlimit             = "RAY_START_ULIMIT_OPEN_FILES"
	envGenAutoscalerCmd   = "KUBERAY_GEN_AUTOSCALER_START_CMD"

	envTaskWaitForDeathInfo    = "RAY_timeout_ms_task_wait_for_death_info"
	envGcsServerRequestTimeout = "RAY_gcs_server_request_timeout_seconds"
	envServeKVTimeout          = "RAY_SERVE_KV_TIMEOUT_S"
)

// Ports and timeouts of KubeRay's defaults.
const (
	defaultMetricsPort        = rayv1.DefaultMetricsPort
	defaultDashboardAgentPort = rayv1.DefaultDashboardAgentPort
	defaultDashboardPort      = rayv1.DefaultDashboardPort
	defaultServingPort        = rayv1.DefaultServingPort
)

// autoscalingEnabled reports whether the in-tree autoscaler is on.
func autoscalingEnabled(rc *rayv1.RayCluster) bool { return rc.Spec.IsAutoscalingEnabled() }

// autoscalerVersion is autoscalerOptions.version when autoscaling is on and
// the version is set, else "". KubeRay switches to v2 (RAY_enable_autoscaler_v2
// and restartPolicy Never) only on this field, never on rayVersion or on
// an env var the user set.
func autoscalerVersion(rc *rayv1.RayCluster) rayv1.AutoscalerVersion {
	if !autoscalingEnabled(rc) {
		return ""
	}
	if o := rc.Spec.AutoscalerOptions; o != nil && o.Version != nil {
		return *o.Version
	}
	return ""
}

// autoscalerV2 reports whether the cluster asks for autoscaler v2.
func autoscalerV2(rc *rayv1.RayCluster) bool {
	return autoscalerVersion(rc) == rayv1.AutoscalerVersionV2
}

// gcsFTEnabled reports whether GCS fault tolerance is on (options or the
// ray.io/ft-enabled annotation).
func gcsFTEnabled(rc *rayv1.RayCluster) bool {
	return rc.Spec.IsGCSFaultToleranceEnabled(rc.Annotations)
}

// needsRedisCleanup reports whether a deleted cluster's Redis keys must be
// cleaned up (GCS FT on the Redis backend): such a cluster carries the
// finalizer.
func needsRedisCleanup(rc *rayv1.RayCluster) bool {
	return gcsFTEnabled(rc) && rc.Spec.GcsFTBackend() != rayv1.GcsFTBackendRocksDB
}

// externalStorageNamespace is the Redis namespace of the cluster's GCS state.
func externalStorageNamespace(rc *rayv1.RayCluster) string {
	if o := rc.Spec.GcsFaultToleranceOptions; o != nil && o.ExternalStorageNamespace != "" {
		return o.ExternalStorageNamespace
	}
	if ns := rc.Annotations[rayv1.RayExternalStorageNSAnnotationKey]; ns != "" {
		return ns
	}
	return string(rc.UID)
}

// headPort is the port workers and drivers reach the GCS on: the head's
// rayStartParams port, else 6379. Like KubeRay, the head container's
// gcs-server port is not consulted (keeping the two equal is the user's job).
func headPort(rc *rayv1.RayCluster) string {
	if v, ok := rc.Spec.HeadGroupSpec.RayStartParams["port"]; ok {
		return v
	}
	return strconv.Itoa(int(rayv1.DefaultGcsServerPort))
}

// specHash is the hash of everything in the spec that shapes pods, without
// replicas, min/max, workersToDelete, suspend and the upgrade strategy.
// Pods carry it in ray.io/upgrade-strategy-recreate-hash; the Recreate
// strategy deletes every pod whose hash differs.
func specHash(rc *rayv1.RayCluster) string {
	s := rc.Spec.DeepCopy()
	s.UpgradeStrategy = nil
	s.Suspend = nil
	s.ManagedBy = nil
	s.HeadServiceAnnotations = nil
	s.HeadGroupSpec.HeadService = nil
	s.HeadGroupSpec.ServiceType = ""
	for i := range s.WorkerGroupSpecs {
		g := &s.WorkerGroupSpecs[i]
		g.Replicas, g.MinReplicas, g.MaxReplicas, g.Suspend = nil, nil, nil, nil
		g.IdleTimeoutSeconds = nil
		g.ScaleStrategy = rayv1.ScaleStrategy{}
	}
	b, _ := json.Marshal(s)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])[:16]
}

// gpuCount sums every "*gpu" resource (nvidia.com/gpu, amd.com/gpu, …).
func gpuCount(l corev1.ResourceList) resource.Quantity {
	var q resource.Quantity
	for n, v := range l {
		if strings.HasSuffix(strings.ToLower(string(n)), "gpu") {
			q.Add(v)
		}
	}
	return q
}

const tpuResource corev1.ResourceName = "google.com/tpu"

// envExists reports whether env defines name.
func envExists(env []corev1.EnvVar, name string) bool {
	return slices.ContainsFunc(env, func(e corev1.EnvVar) bool { return e.Name == name })
}

// setEnv appends an env var unless the container already defines it.
func setEnv(c *corev1.Container, e corev1.EnvVar) {
	if !envExists(c.Env, e.Name) {
		c.Env = append(c.Env, e)
	}
}

// addEnv appends an env var whether or not the container defines it
// (KubeRay appends these unconditionally; the last one wins in the pod).
func addEnv(c *corev1.Container, e corev1.EnvVar) { c.Env = append(c.Env, e) }

func fieldEnv(name, path string) corev1.EnvVar {
	return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: path}}}
}

// creatorKind is the kind that created the cluster (ray.io/originated-from-crd:
// RayJob or RayService), else RayCluster.
func creatorKind(rc *rayv1.RayCluster) string {
	switch k := rc.Labels[rayv1.RayOriginatedFromCRDLabelKey]; k {
	case rayv1.KindRayJob, rayv1.KindRayService:
		return k
	}
	return rayv1.KindRayCluster
}

// childMeta is the metadata of a child of rc: its name and labels, in rc's
// namespace, rc its controller (so the garbage collector removes it).
func childMeta(rc *rayv1.RayCluster, name string, labels map[string]string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: rc.Namespace, Labels: labels, OwnerReferences: []metav1.OwnerReference{kit.OwnerRef(rc)}}
}

// bashCommand is the command KubeRay gives every container whose script it
// writes (the login shell of KubeRay before v1.4 is off by default).
func bashCommand() []string { return []string{"/bin/bash", "-c", "--"} }

// PodBuild describes one pod to build.
type PodBuild struct {
	Name  string
	Head  bool
	Group *rayv1.WorkerGroupSpec // nil for the head
	// replicaIndex is the worker's ray.io/worker-group-replica-index
	// (every worker, as KubeRay with RayMultiHostIndexing); replica and
	// host are a multi-host pod's replica name and host index, replica ""
	// for single-host pods.
	replicaIndex int
	replica      string
	host         int
}

// BuildPod returns the pod for b, owned by rc, as KubeRay v1.7.0 builds it
// (common.DefaultHeadPodTemplate / DefaultWorkerPodTemplate, then
// common.BuildPod). The order of the steps is KubeRay's, so env vars,
// volumes and containers come out in KubeRay's order.
func BuildPod(rc *rayv1.RayCluster, b PodBuild, hash string, cfg BuildConfig) *corev1.Pod {
	var tmpl *corev1.PodTemplateSpec
	var params, groupResources, groupLabels map[string]string
	nodeType, groupName := rayv1.HeadNode, rayv1.RayNodeHeadGroupLabelValue
	if b.Head {
		tmpl = rc.Spec.HeadGroupSpec.Template.DeepCopy()
		params = maps.Clone(rc.Spec.HeadGroupSpec.RayStartParams)
		groupResources, groupLabels = rc.Spec.HeadGroupSpec.Resources, rc.Spec.HeadGroupSpec.Labels
	} else {
		tmpl = b.Group.Template.DeepCopy()
		params = maps.Clone(b.Group.RayStartParams)
		groupResources, groupLabels = b.Group.Resources, b.Group.Labels
		nodeType, groupName = rayv1.WorkerNode, b.Group.GroupName
	}
	if params == nil {
		params = map[string]string{}
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:            b.Name,
			Namespace:       rc.Namespace,
			Annotations:     maps.Clone(tmpl.Annotations),
			OwnerReferences: []metav1.OwnerReference{kit.OwnerRef(rc)},
		},
		Spec: tmpl.Spec,
	}
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	// Labels: the template's, then the group's labels field over them, then
	// KubeRay's fixed ones.
	merged := maps.Clone(tmpl.Labels)
	if merged == nil {
		merged = map[string]string{}
	}
	maps.Copy(merged, groupLabels)
	pod.Labels = kit.PodLabels(rc.Name, nodeType, groupName, merged)
	if !b.Head {
		kit.ReplicaLabels(pod.Labels, b.replicaIndex, b.replica, b.host)
	}
	// A RayService's cluster: workers start serving, the head not until
	// the RayService controller sees its proxy (KubeRay v1.7.0 common/pod.go
	// BuildPod, over the template's own value).
	if creatorKind(rc) == rayv1.KindRayService {
		pod.Labels[rayv1.RayClusterServingServiceLabelKey] = strconv.FormatBool(!b.Head)
	}
	spec := &pod.Spec
	if len(spec.Containers) == 0 {
		return pod // rejected by validation before we get here
	}
	ray := &spec.Containers[rayv1.RayContainerIndex]
	fq := kit.HeadFQDN(rc, cfg.ClusterDomain)
	port := headPort(rc)

	// Workers wait for the GCS after the user's own init containers. The
	// init container sees the Ray container's env and mounts as the user
	// wrote them, before anything below is injected.
	if !b.Head {
		spec.InitContainers = append(spec.InitContainers, waitGCSContainer(ray, fq, port))
	}

	applyGroupResources(params, groupResources)
	applyGroupLabels(params, groupLabels)
	setMissingRayStartParams(params, b.Head, fq+":"+port)

	if strings.EqualFold(rc.Annotations[rayv1.RayOverwriteContainerCmdAnnotationKey], "true") {
		pod.Annotations[rayv1.RayOverwriteContainerCmdAnnotationKey] = "true"
	}

	if b.Head && autoscalingEnabled(rc) {
		params["no-monitor"] = "true"
		spec.ServiceAccountName = kit.CheckName(kit.AutoscalerServiceAccountName(rc))
		spec.Containers = append(spec.Containers, autoscalerContainer(rc, ray.Image))
		ray = &spec.Containers[rayv1.RayContainerIndex]
		switch autoscalerVersion(rc) {
		case rayv1.AutoscalerVersionV2:
			addEnv(ray, corev1.EnvVar{Name: envAutoscalerV2, Value: "true"})
			spec.RestartPolicy = corev1.RestartPolicyNever
		case rayv1.AutoscalerVersionV1:
			addEnv(ray, corev1.EnvVar{Name: envAutoscalerV2, Value: "false"})
		}
	}

	configureGCSFaultTolerance(rc, pod, ray, params, b.Head)

	if _, ok := kit.ContainerPortOf(ray, rayv1.MetricsPortName); !ok {
		ray.Ports = append(ray.Ports, corev1.ContainerPort{Name: rayv1.MetricsPortName, ContainerPort: defaultMetricsPort})
	}
	if !b.Head && autoscalerV2(rc) {
		spec.RestartPolicy = corev1.RestartPolicyNever
	}

	// Token auth env (auth.go), where KubeRay's pod templates add it: after
	// the autoscaler and GCS FT env, before the env BuildPod generates.
	addTokenAuth(rc, pod)
	// mTLS (mtls.go), after token auth as in KubeRay's templates
	// (common/pod.go:302), before the collector, which gets no TLS.
	addTLS(rc, pod, b.Head, cfg)
	// The history collector sidecar, last (historyserver.go; :304-314).
	addHistoryCollector(rc, spec, b.Head, fq, cfg)
	// The operator's sidecars, labels and annotations, where KubeRay adds
	// them: after its pod template, before BuildPod (poddefaults.go).
	addPodDefaults(pod, b.Head, cfg.PodDefaults)
	ray = &spec.Containers[rayv1.RayContainerIndex]

	// From here on KubeRay's BuildPod: volumes, the command, env, probes.
	if _, ok := params["plasma-directory"]; !ok {
		addEmptyDir(spec, ray, kit.SharedMemVolume, kit.SharedMemPath, corev1.StorageMediumMemory)
	}
	if b.Head && autoscalingEnabled(rc) {
		addEmptyDir(spec, ray, kit.RayLogsVolume, kit.RayLogsPath, corev1.StorageMediumDefault)
		for i := range spec.Containers {
			if spec.Containers[i].Name == rayv1.AutoscalerContainerName {
				addEmptyDir(spec, &spec.Containers[i], kit.RayLogsVolume, kit.RayLogsPath, corev1.StorageMediumDefault)
				break
			}
		}
	}
	addCollectorLogVolume(spec, cfg)

	user := joinCommand(ray.Command) + joinCommand(ray.Args)
	applyContainerResources(params, ray.Resources)
	startCmd := renderRayStart(b.Head, params)
	overwrite := strings.EqualFold(pod.Annotations[rayv1.RayOverwriteContainerCmdAnnotationKey], "true")
	// A user command that already runs `ray start` is left alone, as KubeRay does.
	if !overwrite && !strings.Contains(user, "ray start") {
		generated := "ulimit -n ${" + envUlimit + ":-65536}; " + startCmd
		ray.Command = bashCommand()
		if user != "" {
			ray.Args = []string{user + " && " + generated}
		} else {
			ray.Args = []string{generated}
		}
	}

	for i := range spec.InitContainers {
		addEnv(&spec.InitContainers[i], corev1.EnvVar{Name: envFQRayIP, Value: fq})
		addEnv(&spec.InitContainers[i], corev1.EnvVar{Name: envRayIP, Value: kit.HeadServiceName(rc)})
	}
	addDefaultEnvs(ray, cfg.PodDefaults)
	setRayContainerEnv(rc, ray, b.Head, fq, port, startCmd)
	setCollectorEventEnv(spec, ray, cfg)

	if cfg.InjectProbes {
		injectProbes(rc, ray, b.Head, params)
	}

	pod.Annotations[rayv1.UpgradeStrategyRecreateHashKey] = hash
	pod.Annotations[rayv1.KubeRayVersion] = kit.KuberayVersionValue
	return pod
}
