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
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/raydar/raydar/controller/kit"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/version"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// buildConfig holds the operator-level settings that shape built objects.
type BuildConfig struct {
	// ClusterDomain is the cluster DNS domain ("cluster.local").
	ClusterDomain string
	// InjectProbes adds readiness and liveness probes to Ray containers
	// that have none (KubeRay's ENABLE_PROBES_INJECTION, default on).
	InjectProbes bool
	// HeadlessHeadService makes the default ClusterIP head Service headless
	// (KubeRay's default; ENABLE_RAY_HEAD_CLUSTER_IP_SERVICE=true turns it off).
	HeadlessHeadService bool
}

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

// podResources sums the resources of a pod's containers: requests, with
// limits standing in for requests that are not set (Kubernetes' own rule).
func podResources(spec corev1.PodSpec) corev1.ResourceList {
	out := corev1.ResourceList{}
	for _, c := range spec.Containers {
		per := corev1.ResourceList{}
		for n, q := range c.Resources.Limits {
			per[n] = q
		}
		for n, q := range c.Resources.Requests {
			per[n] = q
		}
		for n, q := range per {
			sum := out[n]
			sum.Add(q)
			out[n] = sum
		}
	}
	return out
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

// bashCommand is the command KubeRay gives every container whose script it
// writes (the login shell of KubeRay before v1.4 is off by default).
func bashCommand() []string { return []string{"/bin/bash", "-c", "--"} }

// podBuild describes one pod to build.
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

// buildPod returns the pod for b, owned by rc, as KubeRay v1.7.0 builds it
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
	setRayContainerEnv(rc, ray, b.Head, fq, port, startCmd)

	if cfg.InjectProbes {
		injectProbes(rc, ray, b.Head, params)
	}

	pod.Annotations[rayv1.UpgradeStrategyRecreateHashKey] = hash
	pod.Annotations[rayv1.KubeRayVersion] = kit.KuberayVersionValue
	return pod
}

// configureGCSFaultTolerance sets the ray.io/ft-enabled annotation of the
// head ("true" or "false", always), and with GCS fault tolerance on: the
// workers' GCS reconnect timeout, and the head's Redis address, credentials
// and storage namespace (KubeRay's configureGCSFaultTolerance and
// configureRedisFT).
func configureGCSFaultTolerance(rc *rayv1.RayCluster, pod *corev1.Pod, ray *corev1.Container, params map[string]string, head bool) {
	ft := gcsFTEnabled(rc)
	if head {
		pod.Annotations[rayv1.RayFTEnabledAnnotationKey] = strconv.FormatBool(ft)
	}
	if !ft {
		return
	}
	if !head {
		setEnv(ray, corev1.EnvVar{Name: envGcsReconnectTimout, Value: "600"})
		return
	}
	o := rc.Spec.GcsFaultToleranceOptions
	if o != nil && rc.Spec.GcsFTBackend() == rayv1.GcsFTBackendRocksDB {
		return
	}
	ns := externalStorageNamespace(rc)
	pod.Annotations[rayv1.RayExternalStorageNSAnnotationKey] = ns
	setEnv(ray, corev1.EnvVar{Name: envExternalStorageNS, Value: ns})
	if o == nil {
		// ray.io/ft-enabled alone: a redis-password in rayStartParams is
		// copied to REDIS_PASSWORD for the clean-up Job.
		if v, ok := params["redis-password"]; ok && !envExists(ray.Env, envRedisPassword) {
			addEnv(ray, corev1.EnvVar{Name: envRedisPassword, Value: v})
		}
		return
	}
	addEnv(ray, corev1.EnvVar{Name: envRedisAddress, Value: o.RedisAddress})
	if c := o.RedisUsername; c != nil {
		params["redis-username"] = "$" + envRedisUsername
		addEnv(ray, corev1.EnvVar{Name: envRedisUsername, Value: c.Value, ValueFrom: c.ValueFrom.DeepCopy()})
	}
	if c := o.RedisPassword; c != nil {
		params["redis-password"] = "$" + envRedisPassword
		addEnv(ray, corev1.EnvVar{Name: envRedisPassword, Value: c.Value, ValueFrom: c.ValueFrom.DeepCopy()})
	}
}

// setRayContainerEnv injects KubeRay's env vars into the Ray container
// (KubeRay's setContainerEnvVars), in KubeRay's order.
func setRayContainerEnv(rc *rayv1.RayCluster, ray *corev1.Container, head bool, fq, port, startCmd string) {
	ip := "127.0.0.1"
	if !head {
		ip = fq
		addEnv(ray, corev1.EnvVar{Name: envFQRayIP, Value: fq})
		addEnv(ray, corev1.EnvVar{Name: envRayIP, Value: kit.HeadServiceName(rc)})
	}
	addEnv(ray, fieldEnv(envClusterName, "metadata.labels['"+rayv1.RayClusterLabelKey+"']"))
	addEnv(ray, fieldEnv(envClusterNamespace, "metadata.namespace"))
	addEnv(ray, fieldEnv(envCloudInstanceID, "metadata.name"))
	addEnv(ray, fieldEnv(envNodeTypeName, "metadata.labels['"+rayv1.RayNodeGroupLabelKey+"']"))
	addEnv(ray, corev1.EnvVar{Name: envGenRayStartCmd, Value: startCmd})
	setEnv(ray, corev1.EnvVar{Name: envRayPort, Value: port})
	kind := creatorKind(rc)
	if kind == rayv1.KindRayService {
		setEnv(ray, corev1.EnvVar{Name: envTaskWaitForDeathInfo, Value: "0"})
		setEnv(ray, corev1.EnvVar{Name: envGcsServerRequestTimeout, Value: "5"})
		setEnv(ray, corev1.EnvVar{Name: envServeKVTimeout, Value: "5"})
	}
	setEnv(ray, corev1.EnvVar{Name: envRayAddress, Value: ip + ":" + port})
	setEnv(ray, corev1.EnvVar{Name: envUsageStatsInUse, Value: "1"})
	if head {
		addEnv(ray, corev1.EnvVar{Name: envUsageStatsTags, Value: "kuberay_version=" + kit.KuberayVersionValue + ";kuberay_crd=" + kind})
	}
	setEnv(ray, corev1.EnvVar{Name: envDiskUsage, Value: "1"})
}

// addEmptyDir mounts an emptyDir volume at path in c unless c already
// mounts something there; the volume is added unless the pod has one of
// that name. A memory-backed one is sized to the container's memory limit,
// else its request.
func addEmptyDir(spec *corev1.PodSpec, c *corev1.Container, name, path string, medium corev1.StorageMedium) {
	if slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.MountPath == path }) {
		return
	}
	if !slices.ContainsFunc(spec.Volumes, func(v corev1.Volume) bool { return v.Name == name }) {
		vol := corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: medium}}}
		if medium == corev1.StorageMediumMemory {
			if q, ok := c.Resources.Limits[corev1.ResourceMemory]; ok {
				vol.EmptyDir.SizeLimit = &q
			} else if q, ok := c.Resources.Requests[corev1.ResourceMemory]; ok {
				vol.EmptyDir.SizeLimit = &q
			}
		}
		spec.Volumes = append(spec.Volumes, vol)
	}
	c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: name, MountPath: path})
}

// unifiedHealthCheck reports whether the Ray version serves the single
// HTTP health endpoint (Ray >= 2.53.0); unparsable versions do not.
func unifiedHealthCheck(rayVersion string) bool {
	v, err := version.ParseGeneric(rayVersion)
	return err == nil && v.AtLeast(version.MustParseGeneric("2.53.0"))
}

// wgetHealthCheck is KubeRay's exec probe for one health URL.
func wgetHealthCheck(timeout int, port int32, path string) string {
	return fmt.Sprintf("wget --tries 1 -T %d -q -O- http://localhost:%d/%s | grep success", timeout, port, path)
}

// injectProbes adds KubeRay's readiness and liveness probes when the Ray
// container has none (KubeRay's initLivenessAndReadinessProbe). The ports
// come from rayStartParams (dashboard-agent-listen-port, dashboard-port).
// RayService workers' readiness also checks their Serve proxy.
func injectProbes(rc *rayv1.RayCluster, c *corev1.Container, head bool, params map[string]string) {
	paramPort := func(key string, def int32) int32 {
		if v, ok := params[key]; ok {
			if n, err := strconv.ParseInt(v, 10, 32); err == nil {
				return int32(n)
			}
		}
		return def
	}
	agentPort := paramPort("dashboard-agent-listen-port", defaultDashboardAgentPort)
	checks := []string{wgetHealthCheck(2, agentPort, "api/local_raylet_healthz")}
	if head {
		// KubeRay passes 10 here (its readiness failure threshold) where a
		// timeout is meant; the text is kept as KubeRay writes it.
		checks = append(checks, wgetHealthCheck(10, paramPort("dashboard-port", defaultDashboardPort), "api/gcs_healthz"))
	}
	timeout := int32(2)
	if head {
		timeout = 5
	}
	http := unifiedHealthCheck(rc.Spec.RayVersion)
	handler := func(checks []string) corev1.ProbeHandler {
		if http {
			return corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/api/healthz", Port: intstr.FromInt32(agentPort)}}
		}
		return corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"bash", "-c", strings.Join(checks, " && ")}}}
	}
	if c.LivenessProbe == nil {
		c.LivenessProbe = &corev1.Probe{ProbeHandler: handler(checks), InitialDelaySeconds: 30, TimeoutSeconds: timeout,
			PeriodSeconds: 5, SuccessThreshold: 1, FailureThreshold: 120}
	}
	if c.ReadinessProbe == nil {
		c.ReadinessProbe = &corev1.Probe{ProbeHandler: handler(checks), InitialDelaySeconds: 10, TimeoutSeconds: timeout,
			PeriodSeconds: 5, SuccessThreshold: 1, FailureThreshold: 10}
		if !head && creatorKind(rc) == rayv1.KindRayService {
			servePort := defaultServingPort
			if p, ok := kit.ContainerPortOf(c, rayv1.ServingPortName); ok {
				servePort = p
			}
			serve := append(slices.Clone(checks), wgetHealthCheck(10, servePort, "-/healthz"))
			c.ReadinessProbe.ProbeHandler = corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"bash", "-c", strings.Join(serve, " && ")}}}
			c.ReadinessProbe.FailureThreshold = 1
		}
	}
}

// waitGCSScript is the script of the wait-gcs-ready init container,
// byte-for-byte KubeRay's (its indentation included); the four %s are the
// head address and port, twice.
const waitGCSScript = "\n\t\t\t\t\tSECONDS=0\n\t\t\t\t\twhile true; do\n\t\t\t\t\t\tif (( SECONDS <= 120 )); then\n\t\t\t\t\t\t\tif ray health-check --address %s:%s > /dev/null 2>&1; then\n\t\t\t\t\t\t\t\techo \"GCS is ready.\"\n\t\t\t\t\t\t\t\tbreak\n\t\t\t\t\t\t\tfi\n\t\t\t\t\t\t\techo \"$SECONDS seconds elapsed: Waiting for GCS to be ready.\"\n\t\t\t\t\t\telse\n\t\t\t\t\t\t\tif ray health-check --address %s:%s; then\n\t\t\t\t\t\t\t\techo \"GCS is ready. Any error messages above can be safely ignored.\"\n\t\t\t\t\t\t\t\tbreak\n\t\t\t\t\t\t\tfi\n\t\t\t\t\t\t\techo \"$SECONDS seconds elapsed: Still waiting for GCS to be ready. For troubleshooting, refer to the FAQ at https://docs.ray.io/en/master/cluster/kubernetes/troubleshooting.html.\"\n\t\t\t\t\t\tfi\n\t\t\t\t\t\tsleep 5\n\t\t\t\t\tdone\n\t\t\t\t"

// waitGCSContainer is the worker init container that loops until the GCS of
// the head answers. It gets the Ray container's env and mounts as the user
// wrote them (TLS settings may point at files in those volumes).
func waitGCSContainer(ray *corev1.Container, fq, port string) corev1.Container {
	res := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("200m"), corev1.ResourceMemory: resource.MustParse("256Mi")}
	c := ray.DeepCopy()
	return corev1.Container{
		Name:            kit.InitContainerName,
		Image:           ray.Image,
		ImagePullPolicy: ray.ImagePullPolicy,
		Command:         bashCommand(),
		Args:            []string{fmt.Sprintf(waitGCSScript, fq, port, fq, port)},
		SecurityContext: c.SecurityContext,
		Env:             c.Env,
		VolumeMounts:    c.VolumeMounts,
		Resources:       corev1.ResourceRequirements{Limits: res, Requests: res.DeepCopy()},
	}
}

// autoscalerStartCmd is the autoscaler's command, also offered to custom
// args as $KUBERAY_GEN_AUTOSCALER_START_CMD.
const autoscalerStartCmd = "ray kuberay-autoscaler --cluster-name $(" + envClusterName + ") --cluster-namespace $(" + envClusterNamespace + ")"

// autoscalerContainer is the autoscaler sidecar (KubeRay's
// BuildAutoscalerContainer with autoscalerOptions merged over it). image
// is the Ray container's; the pull policy defaults to IfNotPresent. Its
// /tmp/ray mount is added with the head's (buildPod).
func autoscalerContainer(rc *rayv1.RayCluster, image string) corev1.Container {
	res := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse(rayv1.DefaultAutoscalerCPU),
		corev1.ResourceMemory: resource.MustParse(rayv1.DefaultAutoscalerMemory),
	}
	c := corev1.Container{
		Name:            rayv1.AutoscalerContainerName,
		Image:           image,
		ImagePullPolicy: corev1.PullIfNotPresent,
		Env: []corev1.EnvVar{
			fieldEnv(envClusterName, "metadata.labels['"+rayv1.RayClusterLabelKey+"']"),
			fieldEnv(envClusterNamespace, "metadata.namespace"),
			fieldEnv(envHeadPodName, "metadata.name"),
			{Name: envCRDVersion, Value: rayv1.Version},
			{Name: envGenAutoscalerCmd, Value: autoscalerStartCmd},
		},
		Command:   bashCommand(),
		Args:      []string{autoscalerStartCmd},
		Resources: corev1.ResourceRequirements{Limits: res, Requests: res.DeepCopy()},
	}
	o := rc.Spec.AutoscalerOptions
	if o == nil {
		return c
	}
	if o.Resources != nil {
		c.Resources = *o.Resources.DeepCopy()
	}
	if o.Image != nil {
		c.Image = *o.Image
	}
	if o.ImagePullPolicy != nil {
		c.ImagePullPolicy = *o.ImagePullPolicy
	}
	c.Env = append(c.Env, o.Env...)
	c.EnvFrom = append(c.EnvFrom, o.EnvFrom...)
	c.VolumeMounts = append(c.VolumeMounts, o.VolumeMounts...)
	if o.SecurityContext != nil {
		c.SecurityContext = o.SecurityContext.DeepCopy()
	}
	if len(o.Command) > 0 {
		c.Command = slices.Clone(o.Command)
	}
	if len(o.Args) > 0 {
		c.Args = slices.Clone(o.Args)
	}
	return c
}

// buildHeadlessWorkerService returns the headless Service multi-host groups
// use for pod-to-pod discovery, as KubeRay v1.7.0 builds it
// (common/service.go BuildHeadlessServiceForRayCluster): labelled only
// ray.io/headless-worker-svc=<cluster>. It has no ray.io/cluster label, so
// the shared cache does not hold it: the reconciler reads it live
// (headlessServiceExists), which also finds one KubeRay made.
func buildHeadlessWorkerService(rc *rayv1.RayCluster) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{
			Name:            kit.HeadlessWorkerServiceName(rc.Name),
			Namespace:       rc.Namespace,
			Labels:          map[string]string{rayv1.RayClusterHeadlessServiceLabelKey: rc.Name},
			OwnerReferences: []metav1.OwnerReference{kit.OwnerRef(rc)},
		},
		Spec: corev1.ServiceSpec{
			ClusterIP:                corev1.ClusterIPNone,
			Selector:                 kit.WorkerSelector(rc.Name),
			Type:                     corev1.ServiceTypeClusterIP,
			PublishNotReadyAddresses: true,
		},
	}
}

// needsHeadlessWorkerService reports whether any group is multi-host.
func needsHeadlessWorkerService(rc *rayv1.RayCluster) bool {
	for _, g := range rc.Spec.WorkerGroupSpecs {
		if g.NumOfHosts > 1 {
			return true
		}
	}
	return false
}
