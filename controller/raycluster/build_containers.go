package raycluster

// What BuildPod adds to the Ray container and beside it, as KubeRay does:
// GCS fault tolerance, the injected environment, /dev/shm, probes, the
// worker init container that waits for the GCS and the autoscaler sidecar.

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/raydar/raydar/controller/kit"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/version"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

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
		configureEmbeddedFT(rc, &pod.Spec, ray) // gcs_embedded.go
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
// /tmp/ray mount is added with the head's (BuildPod).
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

// insertBeforeAutoscalerOptions puts env and mounts into the autoscaler
// sidecar c where KubeRay sets them when it builds the sidecar (token auth,
// TLS): after the sidecar's own and before autoscalerOptions.env and
// .volumeMounts, which autoscalerContainer appends last and KubeRay merges
// after them. An env name c already defines (the user's env included) is
// left as it is.
func insertBeforeAutoscalerOptions(rc *rayv1.RayCluster, c *corev1.Container, env []corev1.EnvVar, mounts []corev1.VolumeMount) {
	var userEnv []corev1.EnvVar
	var userMounts []corev1.VolumeMount
	if o := rc.Spec.AutoscalerOptions; o != nil {
		userEnv, userMounts = o.Env, o.VolumeMounts
	}
	at := len(c.Env) - len(userEnv)
	if at < 0 {
		at = len(c.Env)
	}
	var add []corev1.EnvVar
	for _, e := range env {
		if !envExists(c.Env, e.Name) {
			add = append(add, e)
		}
	}
	c.Env = slices.Insert(c.Env, at, add...)
	at = len(c.VolumeMounts) - len(userMounts)
	if at < 0 {
		at = len(c.VolumeMounts)
	}
	c.VolumeMounts = slices.Insert(c.VolumeMounts, at, mounts...)
}
