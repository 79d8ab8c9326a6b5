package controller

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
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// buildConfig holds the operator-level settings that shape built objects.
type buildConfig struct {
	// ClusterDomain is the cluster DNS domain ("cluster.local").
	ClusterDomain string
	// InjectProbes adds readiness and liveness probes to Ray containers
	// that have none (KubeRay's ENABLE_PROBES_INJECTION, default on).
	InjectProbes bool
	// HeadlessHeadService makes the default ClusterIP head Service headless
	// (KubeRay's default; ENABLE_RAY_HEAD_CLUSTER_IP_SERVICE=true turns it off).
	HeadlessHeadService bool
}

func defaultBuildConfig() buildConfig {
	return buildConfig{ClusterDomain: "cluster.local", InjectProbes: true, HeadlessHeadService: true}
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
)

// ray start flags that take no value: "true" renders as a bare flag and
// anything else leaves the flag out.
var booleanRayFlags = map[string]bool{
	"head": true, "block": true, "no-monitor": true, "disable-usage-stats": true,
	"no-redirect-output": true, "verbose": true,
}

// autoscalingEnabled reports whether the in-tree autoscaler is on.
func autoscalingEnabled(rc *rayv1.RayCluster) bool { return rc.Spec.IsAutoscalingEnabled() }

// autoscalerV2 reports whether the autoscaler runs v2: chosen by
// autoscalerOptions.version, else by the head's RAY_enable_autoscaler_v2,
// else by rayVersion (v2 from Ray 2.47), the rule rayapi/v1 validates with.
func autoscalerV2(rc *rayv1.RayCluster) bool {
	if !autoscalingEnabled(rc) {
		return false
	}
	if o := rc.Spec.AutoscalerOptions; o != nil && o.Version != nil {
		return *o.Version == rayv1.AutoscalerVersionV2
	}
	if cs := rc.Spec.HeadGroupSpec.Template.Spec.Containers; len(cs) > 0 {
		for _, e := range cs[rayv1.RayContainerIndex].Env {
			if e.Name == envAutoscalerV2 {
				return e.Value == "1" || e.Value == "true"
			}
		}
	}
	return rayAtLeast(rc.Spec.RayVersion, 2, 47)
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

// headGCSPort is the GCS port of the head container (gcs-server), else 6379.
func headGCSPort(rc *rayv1.RayCluster) int32 {
	if p, ok := containerPort(rc.Spec.HeadGroupSpec.Template.Spec, rayv1.GcsServerPortName); ok {
		return p
	}
	if v, ok := rc.Spec.HeadGroupSpec.RayStartParams["port"]; ok {
		if n, err := strconv.Atoi(v); err == nil {
			return int32(n)
		}
	}
	return rayv1.DefaultGcsServerPort
}

func containerPort(spec corev1.PodSpec, name string) (int32, bool) {
	if len(spec.Containers) == 0 {
		return 0, false
	}
	for _, p := range spec.Containers[rayv1.RayContainerIndex].Ports {
		if p.Name == name {
			return p.ContainerPort, true
		}
	}
	return 0, false
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

// containerQuantity returns the limit of n, else the request.
func containerQuantity(c *corev1.Container, n corev1.ResourceName) (resource.Quantity, bool) {
	if q, ok := c.Resources.Limits[n]; ok && !q.IsZero() {
		return q, true
	}
	if q, ok := c.Resources.Requests[n]; ok && !q.IsZero() {
		return q, true
	}
	return resource.Quantity{}, false
}

// rayStartParams returns the effective ray start flags of a group: the
// user's, plus those KubeRay derives (resources, ports, autoscaler, head).
func rayStartParams(rc *rayv1.RayCluster, user map[string]string, c *corev1.Container, head bool,
	logical, nodeLabels map[string]string, cfg buildConfig) map[string]string {
	p := maps.Clone(user)
	if p == nil {
		p = map[string]string{}
	}
	setDefault := func(k, v string) {
		if _, ok := p[k]; !ok {
			p[k] = v
		}
	}
	if q, ok := containerQuantity(c, corev1.ResourceCPU); ok {
		setDefault("num-cpus", strconv.FormatInt(q.Value(), 10))
	}
	if q, ok := containerQuantity(c, corev1.ResourceMemory); ok {
		setDefault("memory", strconv.FormatInt(q.Value(), 10))
	}
	if g := gpuCount(c.Resources.Limits); !g.IsZero() {
		setDefault("num-gpus", strconv.FormatInt(g.Value(), 10))
	}
	res := map[string]float64{}
	if q, ok := c.Resources.Limits[tpuResource]; ok && !q.IsZero() {
		res["TPU"] = float64(q.Value())
	}
	for k, v := range logical {
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			res[k] = f
		}
	}
	if len(res) > 0 && (len(logical) > 0 || p["resources"] == "") {
		b, _ := json.Marshal(res)
		p["resources"] = string(b)
	}
	if len(nodeLabels) > 0 {
		keys := slices.Sorted(maps.Keys(nodeLabels))
		parts := make([]string, 0, len(keys))
		for _, k := range keys {
			parts = append(parts, k+"="+nodeLabels[k])
		}
		p["labels"] = strings.Join(parts, ",")
	}
	metrics := rayv1.DefaultMetricsPort
	if mp, ok := containerPortOf(c, rayv1.MetricsPortName); ok {
		metrics = mp
	}
	setDefault("metrics-export-port", strconv.Itoa(int(metrics)))
	setDefault("dashboard-agent-listen-port", strconv.Itoa(int(rayv1.DefaultDashboardAgentPort)))
	setDefault("block", "true")
	if head {
		setDefault("dashboard-host", "0.0.0.0")
		if gp := headGCSPort(rc); gp != rayv1.DefaultGcsServerPort {
			setDefault("port", strconv.Itoa(int(gp)))
		}
		if autoscalingEnabled(rc) {
			p["no-monitor"] = "true"
		}
		if o := rc.Spec.GcsFaultToleranceOptions; o != nil && o.RedisPassword != nil {
			setDefault("redis-password", "$"+envRedisPassword)
		}
	} else {
		setDefault("address", headFQDN(rc, cfg.ClusterDomain)+":"+strconv.Itoa(int(headGCSPort(rc))))
	}
	return p
}

func containerPortOf(c *corev1.Container, name string) (int32, bool) {
	for _, p := range c.Ports {
		if p.Name == name {
			return p.ContainerPort, true
		}
	}
	return 0, false
}

// rayStartCommand renders the `ray start` command line, flags sorted.
func rayStartCommand(head bool, params map[string]string) string {
	var b strings.Builder
	b.WriteString("ray start")
	if head {
		b.WriteString(" --head")
	}
	for _, k := range slices.Sorted(maps.Keys(params)) {
		v := params[k]
		if k == "head" {
			continue
		}
		if booleanRayFlags[k] {
			if strings.EqualFold(v, "true") {
				b.WriteString(" --" + k)
			}
			continue
		}
		b.WriteString(" --" + k + "=" + shellValue(v))
	}
	return b.String()
}

// shellValue quotes a flag value for bash unless it is already quoted or
// needs no quoting. Values starting with $ are left for the shell to expand.
func shellValue(v string) string {
	if v == "" {
		return "''"
	}
	if strings.HasPrefix(v, "'") || strings.HasPrefix(v, `"`) || strings.HasPrefix(v, "$") {
		return v
	}
	if strings.ContainsAny(v, " \t\n{}[]\"'`;&|<>()*?!#~\\") {
		return "'" + strings.ReplaceAll(v, "'", `'\''`) + "'"
	}
	return v
}

// setEnv appends an env var unless the container already defines it.
func setEnv(c *corev1.Container, e corev1.EnvVar) {
	for _, x := range c.Env {
		if x.Name == e.Name {
			return
		}
	}
	c.Env = append(c.Env, e)
}

func fieldEnv(name, path string) corev1.EnvVar {
	return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: path}}}
}

func credentialEnv(name string, c *rayv1.RedisCredential) (corev1.EnvVar, bool) {
	if c == nil {
		return corev1.EnvVar{}, false
	}
	if c.ValueFrom != nil {
		return corev1.EnvVar{Name: name, ValueFrom: c.ValueFrom.DeepCopy()}, true
	}
	if c.Value != "" {
		return corev1.EnvVar{Name: name, Value: c.Value}, true
	}
	return corev1.EnvVar{}, false
}

// podBuild describes one pod to build.
type podBuild struct {
	name  string
	head  bool
	group *rayv1.WorkerGroupSpec // nil for the head
	// multi-host replica identity, replica == "" for single-host pods.
	replica      string
	replicaIndex int
	host         int
}

// buildPod returns the pod for b, owned by rc.
func buildPod(rc *rayv1.RayCluster, b podBuild, hash string, cfg buildConfig) *corev1.Pod {
	var tmpl *corev1.PodTemplateSpec
	var userParams, logical, nodeLabels map[string]string
	var lbls map[string]string
	groupName := rayv1.RayNodeHeadGroupLabelValue
	if b.head {
		tmpl = rc.Spec.HeadGroupSpec.Template.DeepCopy()
		userParams = rc.Spec.HeadGroupSpec.RayStartParams
		logical, nodeLabels = rc.Spec.HeadGroupSpec.Resources, rc.Spec.HeadGroupSpec.Labels
		lbls = headPodLabels(rc)
	} else {
		tmpl = b.group.Template.DeepCopy()
		userParams = b.group.RayStartParams
		logical, nodeLabels = b.group.Resources, b.group.Labels
		lbls = workerPodLabels(rc, b.group)
		groupName = b.group.GroupName
		if b.replica != "" {
			multiHostLabels(lbls, b.replica, b.replicaIndex, b.host)
		}
	}
	ann := maps.Clone(tmpl.Annotations)
	if ann == nil {
		ann = map[string]string{}
	}
	ann[rayv1.UpgradeStrategyRecreateHashKey] = hash
	ft := gcsFTEnabled(rc)
	if ft {
		ann[rayv1.RayFTEnabledAnnotationKey] = "true"
		if b.head {
			ann[rayv1.RayExternalStorageNSAnnotationKey] = externalStorageNamespace(rc)
		}
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:            b.name,
			Namespace:       rc.Namespace,
			Labels:          lbls,
			Annotations:     ann,
			OwnerReferences: []metav1.OwnerReference{ownerRef(rc)},
		},
		Spec: tmpl.Spec,
	}
	spec := &pod.Spec
	if len(spec.Containers) == 0 {
		return pod // rejected by validation before we get here
	}
	ray := &spec.Containers[rayv1.RayContainerIndex]

	// Ports: the head gets the default ports it lacks; every Ray container
	// exposes metrics.
	if b.head && len(ray.Ports) == 0 {
		for _, n := range []string{rayv1.GcsServerPortName, rayv1.DashboardPortName, rayv1.ClientPortName} {
			ray.Ports = append(ray.Ports, corev1.ContainerPort{Name: n, ContainerPort: rayv1.DefaultPorts()[n], Protocol: corev1.ProtocolTCP})
		}
	}
	if _, ok := containerPortOf(ray, rayv1.MetricsPortName); !ok {
		ray.Ports = append(ray.Ports, corev1.ContainerPort{Name: rayv1.MetricsPortName, ContainerPort: rayv1.DefaultMetricsPort, Protocol: corev1.ProtocolTCP})
	}

	params := rayStartParams(rc, userParams, ray, b.head, logical, nodeLabels, cfg)
	startCmd := rayStartCommand(b.head, params)
	if !strings.EqualFold(ann[rayv1.RayOverwriteContainerCmdAnnotationKey], "true") {
		full := "ulimit -n ${" + envUlimit + ":-65536}; " + startCmd
		if user := strings.TrimSpace(strings.Join(append(slices.Clone(ray.Command), ray.Args...), " ")); user != "" {
			full = user + " && " + full
		}
		ray.Command = []string{"/bin/bash", "-c", "--"}
		ray.Args = []string{full}
	}

	fq := headFQDN(rc, cfg.ClusterDomain)
	gcsPort := strconv.Itoa(int(headGCSPort(rc)))
	setEnv(ray, fieldEnv(envClusterName, "metadata.labels['"+rayv1.RayClusterLabelKey+"']"))
	setEnv(ray, fieldEnv(envClusterNamespace, "metadata.namespace"))
	setEnv(ray, fieldEnv(envCloudInstanceID, "metadata.name"))
	setEnv(ray, corev1.EnvVar{Name: envFQRayIP, Value: fq})
	setEnv(ray, corev1.EnvVar{Name: envRayIP, Value: HeadServiceName(rc)})
	setEnv(ray, corev1.EnvVar{Name: envRayPort, Value: gcsPort})
	if b.head {
		setEnv(ray, corev1.EnvVar{Name: envRayAddress, Value: "127.0.0.1:" + gcsPort})
	} else {
		setEnv(ray, corev1.EnvVar{Name: envRayAddress, Value: fq + ":" + gcsPort})
	}
	setEnv(ray, corev1.EnvVar{Name: envNodeTypeName, Value: groupName})
	setEnv(ray, corev1.EnvVar{Name: envGenRayStartCmd, Value: startCmd})
	setEnv(ray, corev1.EnvVar{Name: envUsageStatsInUse, Value: "1"})
	setEnv(ray, corev1.EnvVar{Name: envUsageStatsTags, Value: "kuberay_version=raydar;kuberay_crd=RayCluster"})
	setEnv(ray, corev1.EnvVar{Name: envDiskUsage, Value: "1"})
	if autoscalerV2(rc) {
		setEnv(ray, corev1.EnvVar{Name: envAutoscalerV2, Value: "true"})
	}
	if ft {
		if b.head {
			if o := rc.Spec.GcsFaultToleranceOptions; o != nil {
				if o.RedisAddress != "" {
					setEnv(ray, corev1.EnvVar{Name: envRedisAddress, Value: o.RedisAddress})
				}
				if e, ok := credentialEnv(envRedisPassword, o.RedisPassword); ok {
					setEnv(ray, e)
				}
				if e, ok := credentialEnv(envRedisUsername, o.RedisUsername); ok {
					setEnv(ray, e)
				}
			}
			setEnv(ray, corev1.EnvVar{Name: envExternalStorageNS, Value: externalStorageNamespace(rc)})
		} else {
			setEnv(ray, corev1.EnvVar{Name: envGcsReconnectTimout, Value: "600"})
		}
	}

	addSharedMemory(spec, ray)
	if cfg.InjectProbes {
		injectProbes(rc, ray, b.head)
	}
	if !b.head {
		spec.InitContainers = append([]corev1.Container{waitGCSContainer(ray, fq, gcsPort)}, spec.InitContainers...)
	}
	if b.head && autoscalingEnabled(rc) {
		addAutoscaler(rc, pod)
	}
	if autoscalerV2(rc) && tmpl.Spec.RestartPolicy == "" {
		spec.RestartPolicy = corev1.RestartPolicyNever
	}
	return pod
}

// addSharedMemory mounts a memory-backed emptyDir at /dev/shm unless the
// container already mounts something there.
func addSharedMemory(spec *corev1.PodSpec, c *corev1.Container) {
	for _, m := range c.VolumeMounts {
		if m.MountPath == sharedMemPath {
			return
		}
	}
	vol := corev1.Volume{Name: sharedMemVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory}}}
	if q, ok := containerQuantity(c, corev1.ResourceMemory); ok {
		vol.EmptyDir.SizeLimit = &q
	}
	spec.Volumes = append(spec.Volumes, vol)
	c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: sharedMemVolume, MountPath: sharedMemPath})
}

// rayAtLeast reports whether version ("2.53.0") is at least major.minor.
func rayAtLeast(version string, major, minor int) bool {
	parts := strings.SplitN(strings.TrimPrefix(version, "v"), ".", 3)
	if len(parts) < 2 {
		return false
	}
	ma, err1 := strconv.Atoi(parts[0])
	mi, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil {
		return false
	}
	return ma > major || (ma == major && mi >= minor)
}

// injectProbes adds KubeRay's readiness and liveness probes when the Ray
// container has none.
func injectProbes(rc *rayv1.RayCluster, c *corev1.Container, head bool) {
	mk := func(initial, failure int32) *corev1.Probe {
		p := &corev1.Probe{InitialDelaySeconds: initial, PeriodSeconds: 5, TimeoutSeconds: 2, SuccessThreshold: 1, FailureThreshold: failure}
		if rayAtLeast(rc.Spec.RayVersion, 2, 53) {
			p.HTTPGet = &corev1.HTTPGetAction{Path: "/api/healthz", Port: intstr.FromInt32(rayv1.DefaultDashboardAgentPort)}
			return p
		}
		check := fmt.Sprintf("wget -T 2 -q -O- http://localhost:%d/api/local_raylet_healthz | grep success", rayv1.DefaultDashboardAgentPort)
		if head {
			check += fmt.Sprintf(" && wget -T 2 -q -O- http://localhost:%d/api/gcs_healthz | grep success", rayv1.DefaultDashboardPort)
		}
		p.Exec = &corev1.ExecAction{Command: []string{"bash", "-c", check}}
		return p
	}
	if c.ReadinessProbe == nil {
		c.ReadinessProbe = mk(10, 10)
	}
	if c.LivenessProbe == nil {
		c.LivenessProbe = mk(30, 120)
	}
}

// waitGCSContainer is the worker init container that loops until the GCS of
// the head answers.
func waitGCSContainer(ray *corev1.Container, fq, port string) corev1.Container {
	q := func(s string) resource.Quantity { return resource.MustParse(s) }
	res := corev1.ResourceList{corev1.ResourceCPU: q("200m"), corev1.ResourceMemory: q("256Mi")}
	env := slices.Clone(ray.Env)
	return corev1.Container{
		Name:            initContainerName,
		Image:           ray.Image,
		ImagePullPolicy: ray.ImagePullPolicy,
		Command:         []string{"/bin/bash", "-lc", "--"},
		Args: []string{"SECONDS=0; while true; do if (( SECONDS <= 120 )); then " +
			"if ray health-check --address " + fq + ":" + port + " > /dev/null 2>&1; then echo \"GCS is ready.\"; break; fi; " +
			"echo \"$SECONDS seconds elapsed: Waiting for GCS to be ready.\"; else " +
			"if ray health-check --address " + fq + ":" + port + "; then echo \"GCS is ready. Any error messages above can be safely ignored.\"; break; fi; " +
			"echo \"$SECONDS seconds elapsed: Still waiting for GCS to be ready.\"; fi; sleep 5; done"},
		Env:             env,
		Resources:       corev1.ResourceRequirements{Limits: res, Requests: res},
		SecurityContext: ray.SecurityContext.DeepCopy(),
		VolumeMounts:    slices.Clone(ray.VolumeMounts),
	}
}

// addAutoscaler adds the autoscaler sidecar to the head pod, the shared
// /tmp/ray volume, and the service account the autoscaler RBAC binds.
func addAutoscaler(rc *rayv1.RayCluster, pod *corev1.Pod) {
	spec := &pod.Spec
	ray := &spec.Containers[rayv1.RayContainerIndex]
	for _, c := range spec.Containers {
		if c.Name == rayv1.AutoscalerContainerName {
			return
		}
	}
	if spec.ServiceAccountName == "" {
		spec.ServiceAccountName = autoscalerRBACName(rc)
	}
	hasLogs := false
	for _, m := range ray.VolumeMounts {
		if m.MountPath == rayLogsPath {
			hasLogs = true
		}
	}
	if !hasLogs {
		spec.Volumes = append(spec.Volumes, corev1.Volume{Name: rayLogsVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
		ray.VolumeMounts = append(ray.VolumeMounts, corev1.VolumeMount{Name: rayLogsVolume, MountPath: rayLogsPath})
	}
	var logsMount corev1.VolumeMount
	for _, m := range ray.VolumeMounts {
		if m.MountPath == rayLogsPath {
			logsMount = m
		}
	}
	opts := rc.Spec.AutoscalerOptions
	if opts == nil {
		opts = &rayv1.AutoscalerOptions{}
	}
	image := ray.Image
	if opts.Image != nil && *opts.Image != "" {
		image = *opts.Image
	}
	pull := ray.ImagePullPolicy
	if opts.ImagePullPolicy != nil {
		pull = *opts.ImagePullPolicy
	}
	res := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse(rayv1.DefaultAutoscalerCPU),
		corev1.ResourceMemory: resource.MustParse(rayv1.DefaultAutoscalerMemory),
	}
	resources := corev1.ResourceRequirements{Limits: res, Requests: res.DeepCopy()}
	if opts.Resources != nil {
		resources = *opts.Resources.DeepCopy()
	}
	cmd := []string{"/bin/bash", "-c", "--"}
	args := []string{"ray kuberay-autoscaler --cluster-name $(" + envClusterName + ") --cluster-namespace $(" + envClusterNamespace + ")"}
	if len(opts.Command) > 0 {
		cmd = slices.Clone(opts.Command)
	}
	if len(opts.Args) > 0 {
		args = slices.Clone(opts.Args)
	}
	c := corev1.Container{
		Name:            rayv1.AutoscalerContainerName,
		Image:           image,
		ImagePullPolicy: pull,
		Command:         cmd,
		Args:            args,
		Env: []corev1.EnvVar{
			fieldEnv(envClusterName, "metadata.labels['"+rayv1.RayClusterLabelKey+"']"),
			fieldEnv(envClusterNamespace, "metadata.namespace"),
			fieldEnv(envHeadPodName, "metadata.name"),
			{Name: envCRDVersion, Value: rayv1.Version},
		},
		EnvFrom:         slices.Clone(opts.EnvFrom),
		Resources:       resources,
		SecurityContext: opts.SecurityContext.DeepCopy(),
		VolumeMounts:    append([]corev1.VolumeMount{logsMount}, opts.VolumeMounts...),
	}
	if autoscalerV2(rc) {
		c.Env = append(c.Env, corev1.EnvVar{Name: envAutoscalerV2, Value: "true"})
	}
	for _, e := range opts.Env {
		setEnv(&c, e)
	}
	spec.Containers = append(spec.Containers, c)
}

// headServicePorts returns the ports of the head Service: the head
// container's named ports, else the defaults; metrics is always present.
func headServicePorts(rc *rayv1.RayCluster) []corev1.ServicePort {
	var out []corev1.ServicePort
	seen := map[string]bool{}
	spec := rc.Spec.HeadGroupSpec.Template.Spec
	if len(spec.Containers) > 0 {
		for _, p := range spec.Containers[rayv1.RayContainerIndex].Ports {
			if p.Name == "" || seen[p.Name] {
				continue
			}
			seen[p.Name] = true
			proto := p.Protocol
			if proto == "" {
				proto = corev1.ProtocolTCP
			}
			out = append(out, corev1.ServicePort{Name: p.Name, Port: p.ContainerPort, TargetPort: intstr.FromInt32(p.ContainerPort), Protocol: proto})
		}
	}
	if len(out) == 0 {
		defaults := rayv1.DefaultPorts()
		for _, n := range []string{rayv1.GcsServerPortName, rayv1.DashboardPortName, rayv1.ClientPortName, rayv1.ServingPortName} {
			seen[n] = true
			out = append(out, corev1.ServicePort{Name: n, Port: defaults[n], TargetPort: intstr.FromInt32(defaults[n]), Protocol: corev1.ProtocolTCP})
		}
	}
	if !seen[rayv1.MetricsPortName] {
		out = append(out, corev1.ServicePort{Name: rayv1.MetricsPortName, Port: rayv1.DefaultMetricsPort, TargetPort: intstr.FromInt32(rayv1.DefaultMetricsPort), Protocol: corev1.ProtocolTCP})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// buildHeadService returns the head Service: the headService override when
// given (its spec and metadata kept, selector and missing ports filled in),
// else a Service of headGroupSpec.serviceType, headless for ClusterIP.
func buildHeadService(rc *rayv1.RayCluster, cfg buildConfig) *corev1.Service {
	svc := &corev1.Service{}
	if hs := rc.Spec.HeadGroupSpec.HeadService; hs != nil {
		svc.Spec = *hs.Spec.DeepCopy()
		svc.Labels = maps.Clone(hs.Labels)
		svc.Annotations = maps.Clone(hs.Annotations)
	}
	svc.Name = HeadServiceName(rc)
	svc.Namespace = rc.Namespace
	svc.OwnerReferences = []metav1.OwnerReference{ownerRef(rc)}
	if svc.Labels == nil {
		svc.Labels = map[string]string{}
	}
	maps.Copy(svc.Labels, serviceLabels(rc.Name, rayv1.HeadNode))
	if len(rc.Spec.HeadServiceAnnotations) > 0 {
		if svc.Annotations == nil {
			svc.Annotations = map[string]string{}
		}
		maps.Copy(svc.Annotations, rc.Spec.HeadServiceAnnotations)
	}
	svc.Spec.Selector = headSelector(rc.Name)
	if len(svc.Spec.Ports) == 0 {
		svc.Spec.Ports = headServicePorts(rc)
	}
	if rc.Spec.HeadGroupSpec.HeadService == nil || svc.Spec.Type == "" {
		t := rc.Spec.HeadGroupSpec.ServiceType
		if t == "" {
			t = corev1.ServiceTypeClusterIP
		}
		if svc.Spec.Type == "" {
			svc.Spec.Type = t
		}
	}
	if rc.Spec.HeadGroupSpec.HeadService == nil && svc.Spec.Type == corev1.ServiceTypeClusterIP && cfg.HeadlessHeadService {
		svc.Spec.ClusterIP = corev1.ClusterIPNone
		svc.Spec.PublishNotReadyAddresses = true
	}
	return svc
}

// buildHeadlessWorkerService returns the headless Service multi-host groups
// use for pod-to-pod discovery.
func buildHeadlessWorkerService(rc *rayv1.RayCluster) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{
			Name:            headlessWorkerServiceName(rc.Name),
			Namespace:       rc.Namespace,
			Labels:          serviceLabels(rc.Name, rayv1.WorkerNode),
			OwnerReferences: []metav1.OwnerReference{ownerRef(rc)},
		},
		Spec: corev1.ServiceSpec{
			ClusterIP:                corev1.ClusterIPNone,
			Selector:                 workerSelector(rc.Name),
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
