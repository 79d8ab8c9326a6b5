package raycluster

// The history server collector sidecar of spec.historyServerOptions, behind
// KubeRay's RayClusterHistoryServer gate (controller/features), as KubeRay
// v1.7.0 builds it (ray-operator/controllers/ray/common/pod.go; line
// numbers are v1.7.0's):
//
//   - every Ray pod, head and workers, gets one more container, last,
//     after the autoscaler's (:304-315 head, :708-716 workers):
//     "ray-history-collector" (utils/constant.go:358-359), built by
//     BuildCollectorContainer (:1066-1163): collectorOptions.image (required,
//     rayapi/v1 validation_alpha.go), imagePullPolicy (default
//     IfNotPresent), resources (default limits 200m/256Mi, requests
//     50m/64Mi); no command or args (the image's own); env POD_IP
//     (status.podIP), RAY_CLUSTER_NAME and RAY_CLUSTER_NAMESPACE (literal
//     values, not field references as in the Ray container), RAY_ROLE
//     (Head or Worker), EVENTS_PORT 8084, FQ_RAY_IP (the head Service's
//     FQDN), OWNER_KIND and OWNER_NAME from the RayCluster's
//     ray.io/originated-from-crd and ray.io/originated-from-cr-name labels
//     when set (a RayJob's or RayService's cluster), on the head
//     RAY_DASHBOARD_ADDRESS http://localhost:8265 unless the user's env has
//     it, then collectorOptions.env;
//   - with token auth (authOptions.mode token), RAY_AUTH_MODE and
//     RAY_AUTH_TOKEN (or Kubernetes token auth's env and mount), as the Ray
//     container, since the collector queries the dashboard (:308-312);
//   - the Ray container and the collector share the Ray log directory: the
//     emptyDir "ray-logs" mounted at /tmp/ray in both, unless a container
//     already mounts something there (BuildPod :871-876, addEmptyDir);
//   - the Ray container gets the env that sends Ray's events to the
//     collector, each unless already set (setContainerEnvVars :1326-1342):
//     RAY_enable_ray_event=true, RAY_enable_core_worker_ray_event_to_aggregator
//     =true, RAY_DASHBOARD_AGGREGATOR_AGENT_EVENTS_EXPORT_ADDR
//     http://localhost:8084/v1/events, and the exposable event types
//     (utils/constant.go:243) for the aggregator agent and its HTTP
//     publisher.
//
// Nothing else: no Service, no ServiceAccount, no RBAC (the collector
// writes to object storage with the credentials its env names; KubeRay
// creates nothing for it). The history server itself is a separate
// deployment KubeRay does not make either.
//
// With the gate off KubeRay refuses historyServerOptions
// (utils/validation.go:260-263) and so does raydar (unsupported.go), by
// the gate's name; the builders below check the gate too, as v1.7.0's do.

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/raydar/raydar/controller/features"
	"github.com/raydar/raydar/controller/kit"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// The Ray container's env of the collector (utils/constant.go:238-243).
const (
	envRayEnableRayEvent             = "RAY_enable_ray_event"
	envRayEnableCoreWorkerEventToAgg = "RAY_enable_core_worker_ray_event_to_aggregator"
	envAggregatorEventsExportAddr    = "RAY_DASHBOARD_AGGREGATOR_AGENT_EVENTS_EXPORT_ADDR"
	envAggregatorExposableEventTypes = "RAY_DASHBOARD_AGGREGATOR_AGENT_EXPOSABLE_EVENT_TYPES"
	envAggregatorPublisherEventTypes = "RAY_DASHBOARD_AGGREGATOR_AGENT_PUBLISHER_HTTP_ENDPOINT_EXPOSABLE_EVENT_TYPES"
	// defaultExposableEventTypes is DEFAULT_RAY_EXPOSABLE_EVENT_TYPES.
	defaultExposableEventTypes = "TASK_DEFINITION_EVENT,TASK_LIFECYCLE_EVENT,ACTOR_TASK_DEFINITION_EVENT,TASK_PROFILE_EVENT," +
		"DRIVER_JOB_DEFINITION_EVENT,DRIVER_JOB_LIFECYCLE_EVENT,ACTOR_DEFINITION_EVENT,ACTOR_LIFECYCLE_EVENT," +
		"NODE_DEFINITION_EVENT,NODE_LIFECYCLE_EVENT"
	// collectorEventsPort is the collector's EVENTS_PORT, where the Ray
	// container's aggregator agent sends the events.
	collectorEventsPort        = "8084"
	collectorEventsExportAddr  = "http://localhost:" + collectorEventsPort + "/v1/events"
	collectorDashboardAddress  = "http://localhost:8265"
	envRayDashboardAddress     = "RAY_DASHBOARD_ADDRESS"
	collectorRoleHead          = "Head"
	collectorRoleWorker        = "Worker"
	defaultCollectorCPULimit   = "200m"
	defaultCollectorMemLimit   = "256Mi"
	defaultCollectorCPURequest = "50m"
	defaultCollectorMemRequest = "64Mi"
)

// historyCollectorOn: the gate is on and the cluster asks for the
// collector (the condition of common/pod.go:304 and :708).
func historyCollectorOn(rc *rayv1.RayCluster, cfg BuildConfig) bool {
	h := rc.Spec.HistoryServerOptions
	return cfg.Features.Enabled(features.RayClusterHistoryServer) && h != nil && h.CollectorOptions != nil
}

// collectorContainer is KubeRay's BuildCollectorContainer
// (common/pod.go:1066-1163) for a pod of rc, fq the head Service's FQDN.
func collectorContainer(rc *rayv1.RayCluster, head bool, fq string) corev1.Container {
	o := rc.Spec.HistoryServerOptions.CollectorOptions
	c := corev1.Container{
		Name:            rayv1.CollectorContainerName,
		ImagePullPolicy: corev1.PullIfNotPresent,
		Resources: corev1.ResourceRequirements{
			Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(defaultCollectorCPULimit),
				corev1.ResourceMemory: resource.MustParse(defaultCollectorMemLimit)},
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(defaultCollectorCPURequest),
				corev1.ResourceMemory: resource.MustParse(defaultCollectorMemRequest)},
		},
	}
	if o.Image != nil {
		c.Image = *o.Image
	}
	if o.ImagePullPolicy != nil {
		c.ImagePullPolicy = *o.ImagePullPolicy
	}
	if o.Resources != nil {
		c.Resources = *o.Resources.DeepCopy()
	}
	role := collectorRoleWorker
	if head {
		role = collectorRoleHead
	}
	c.Env = []corev1.EnvVar{
		fieldEnv(rayv1.EnvPodIP, "status.podIP"),
		{Name: rayv1.EnvRayClusterName, Value: rc.Name},
		{Name: rayv1.EnvRayClusterNamespace, Value: rc.Namespace},
		{Name: rayv1.EnvRayRole, Value: role},
		{Name: rayv1.EnvEventsPort, Value: collectorEventsPort},
	}
	if fq != "" {
		c.Env = append(c.Env, corev1.EnvVar{Name: rayv1.EnvFQRayIP, Value: fq})
	}
	if k := rc.Labels[rayv1.RayOriginatedFromCRDLabelKey]; k != "" {
		c.Env = append(c.Env, corev1.EnvVar{Name: rayv1.EnvOwnerKind, Value: k})
	}
	if n := rc.Labels[rayv1.RayOriginatedFromCRNameLabelKey]; n != "" {
		c.Env = append(c.Env, corev1.EnvVar{Name: rayv1.EnvOwnerName, Value: n})
	}
	if head && !envExists(o.Env, envRayDashboardAddress) {
		c.Env = append(c.Env, corev1.EnvVar{Name: envRayDashboardAddress, Value: collectorDashboardAddress})
	}
	for _, e := range o.Env {
		c.Env = append(c.Env, *e.DeepCopy())
	}
	return c
}

// addHistoryCollector appends the collector sidecar to a Ray pod, with the
// token auth env when the cluster uses it (common/pod.go:304-315,
// :708-716). It is called where KubeRay's pod templates append it: after
// the auth and TLS settings of the pod template. The Ray container's
// address may change: callers take it again.
func addHistoryCollector(rc *rayv1.RayCluster, spec *corev1.PodSpec, head bool, fq string, cfg BuildConfig) {
	if !historyCollectorOn(rc, cfg) {
		return
	}
	c := collectorContainer(rc, head, fq)
	if tokenAuthEnabled(&rc.Spec) {
		SetContainerTokenAuth(rc, &c)
	}
	spec.Containers = append(spec.Containers, c)
}

// collectorIndex is the index of the collector container, -1 without one
// (getCollectorContainerIndex, common/pod.go:1056-1064).
func collectorIndex(spec *corev1.PodSpec) int {
	for i := range spec.Containers {
		if spec.Containers[i].Name == rayv1.CollectorContainerName {
			return i
		}
	}
	return -1
}

// addCollectorLogVolume shares /tmp/ray between the Ray container and the
// collector (BuildPod, common/pod.go:871-876), after /dev/shm and the
// autoscaler's log volume.
func addCollectorLogVolume(spec *corev1.PodSpec, cfg BuildConfig) {
	if !cfg.Features.Enabled(features.RayClusterHistoryServer) {
		return
	}
	i := collectorIndex(spec)
	if i < 0 {
		return
	}
	addEmptyDir(spec, &spec.Containers[rayv1.RayContainerIndex], kit.RayLogsVolume, kit.RayLogsPath, corev1.StorageMediumDefault)
	addEmptyDir(spec, &spec.Containers[i], kit.RayLogsVolume, kit.RayLogsPath, corev1.StorageMediumDefault)
}

// setCollectorEventEnv sends the Ray container's events to the collector
// (setContainerEnvVars, common/pod.go:1326-1342), after KubeRay's other
// injected env.
func setCollectorEventEnv(spec *corev1.PodSpec, ray *corev1.Container, cfg BuildConfig) {
	if !cfg.Features.Enabled(features.RayClusterHistoryServer) || collectorIndex(spec) < 0 {
		return
	}
	setEnv(ray, corev1.EnvVar{Name: envRayEnableRayEvent, Value: "true"})
	setEnv(ray, corev1.EnvVar{Name: envRayEnableCoreWorkerEventToAgg, Value: "true"})
	setEnv(ray, corev1.EnvVar{Name: envAggregatorEventsExportAddr, Value: collectorEventsExportAddr})
	setEnv(ray, corev1.EnvVar{Name: envAggregatorExposableEventTypes, Value: defaultExposableEventTypes})
	setEnv(ray, corev1.EnvVar{Name: envAggregatorPublisherEventTypes, Value: defaultExposableEventTypes})
}
