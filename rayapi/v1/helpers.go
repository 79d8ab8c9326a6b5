package v1

import (
	"math"
	"strings"

	"k8s.io/apimachinery/pkg/util/version"
)

// This file holds small pure functions over the API types that every consumer
// (controller, TUI, CLI) needs, so that each computes them the same way.

// saturate converts a non-negative int64 to int32, capping at MaxInt32.
func saturate(n int64) int32 {
	if n > math.MaxInt32 {
		return math.MaxInt32
	}
	if n < 0 {
		return 0
	}
	return int32(n)
}

// Hosts returns numOfHosts, treating an unset (0) or invalid value as 1.
func (g *WorkerGroupSpec) Hosts() int32 {
	if g.NumOfHosts < 1 {
		return 1
	}
	return g.NumOfHosts
}

// IsSuspended reports whether the group's suspend flag is set.
func (g *WorkerGroupSpec) IsSuspended() bool { return g.Suspend != nil && *g.Suspend }

// Min returns minReplicas, 0 when unset.
func (g *WorkerGroupSpec) Min() int32 {
	if g.MinReplicas == nil {
		return 0
	}
	return *g.MinReplicas
}

// Max returns maxReplicas, MaxInt32 when unset (the CRD default).
func (g *WorkerGroupSpec) Max() int32 {
	if g.MaxReplicas == nil {
		return DefaultWorkerGroupMaxReplicas
	}
	return *g.MaxReplicas
}

// DesiredReplicas is replicas clamped to [minReplicas, maxReplicas] (unset
// replicas count as 0), or 0 when the group is suspended. When min > max
// (an invalid spec) max wins, so the result never exceeds maxReplicas.
func (g *WorkerGroupSpec) DesiredReplicas() int32 {
	if g.IsSuspended() {
		return 0
	}
	r := int32(0)
	if g.Replicas != nil {
		r = *g.Replicas
	}
	if r < g.Min() {
		r = g.Min()
	}
	if r > g.Max() {
		r = g.Max()
	}
	if r < 0 {
		r = 0
	}
	return r
}

// DesiredPods is DesiredReplicas × numOfHosts: the number of worker pods the
// group should have (KubeRay's GetWorkerGroupDesiredReplicas). Saturates at MaxInt32.
func (g *WorkerGroupSpec) DesiredPods() int32 {
	return saturate(int64(g.DesiredReplicas()) * int64(g.Hosts()))
}

// MinPods is minReplicas × numOfHosts (0 when suspended).
func (g *WorkerGroupSpec) MinPods() int32 {
	if g.IsSuspended() {
		return 0
	}
	return saturate(int64(max(g.Min(), 0)) * int64(g.Hosts()))
}

// MaxPods is maxReplicas × numOfHosts (0 when suspended). Saturates at MaxInt32.
func (g *WorkerGroupSpec) MaxPods() int32 {
	if g.IsSuspended() {
		return 0
	}
	return saturate(int64(max(g.Max(), 0)) * int64(g.Hosts()))
}

// DesiredWorkerPods sums DesiredPods over the worker groups: the value of
// status.desiredWorkerReplicas. Like KubeRay it ignores spec.suspend; use
// DesiredPods for the number of pods that should exist.
func (s *RayClusterSpec) DesiredWorkerPods() int32 {
	var n int64
	for i := range s.WorkerGroupSpecs {
		n += int64(s.WorkerGroupSpecs[i].DesiredPods())
	}
	return saturate(n)
}

// MinWorkerPods sums MinPods over the worker groups (status.minWorkerReplicas).
func (s *RayClusterSpec) MinWorkerPods() int32 {
	var n int64
	for i := range s.WorkerGroupSpecs {
		n += int64(s.WorkerGroupSpecs[i].MinPods())
	}
	return saturate(n)
}

// MaxWorkerPods sums MaxPods over the worker groups (status.maxWorkerReplicas).
func (s *RayClusterSpec) MaxWorkerPods() int32 {
	var n int64
	for i := range s.WorkerGroupSpecs {
		n += int64(s.WorkerGroupSpecs[i].MaxPods())
	}
	return saturate(n)
}

// DesiredPods is the number of pods that should exist: the head plus
// DesiredWorkerPods, or 0 when the cluster is suspended.
func (s *RayClusterSpec) DesiredPods() int32 {
	if s.IsSuspended() {
		return 0
	}
	return saturate(1 + int64(s.DesiredWorkerPods()))
}

// IsSuspended reports whether spec.suspend is true.
func (s *RayClusterSpec) IsSuspended() bool { return s.Suspend != nil && *s.Suspend }

// WorkerGroup returns the worker group with the given name.
func (s *RayClusterSpec) WorkerGroup(name string) (*WorkerGroupSpec, bool) {
	for i := range s.WorkerGroupSpecs {
		if s.WorkerGroupSpecs[i].GroupName == name {
			return &s.WorkerGroupSpecs[i], true
		}
	}
	return nil, false
}

// IsAutoscalingEnabled reports whether the in-tree autoscaler is on.
func (s *RayClusterSpec) IsAutoscalingEnabled() bool {
	return s != nil && s.EnableInTreeAutoscaling != nil && *s.EnableInTreeAutoscaling
}

// EffectiveAutoscalerVersion returns the autoscaler version the cluster runs:
// "" without autoscaling; else autoscalerOptions.version; else v2 when the
// head's RAY_enable_autoscaler_v2 is "1"/"true"; else v2 from Ray 2.47, v1 before.
func (s *RayClusterSpec) EffectiveAutoscalerVersion() AutoscalerVersion {
	if !s.IsAutoscalingEnabled() {
		return ""
	}
	if o := s.AutoscalerOptions; o != nil && o.Version != nil {
		return *o.Version
	}
	if c := s.HeadGroupSpec.Template.Spec.Containers; len(c) > 0 {
		if _, env := findEnv(c[RayContainerIndex].Env, EnvRayEnableAutoscalerV2); env != nil {
			if env.Value == "1" || env.Value == "true" {
				return AutoscalerVersionV2
			}
			return AutoscalerVersionV1
		}
	}
	if v, err := version.ParseGeneric(s.RayVersion); err == nil && v.AtLeast(version.MustParseGeneric("2.47.0")) {
		return AutoscalerVersionV2
	}
	return AutoscalerVersionV1
}

// IsGCSFaultToleranceEnabled reports whether GCS FT is on: gcsFaultToleranceOptions
// is set, or the annotation ray.io/ft-enabled is "true" in any case, as
// KubeRay v1.7.0 reads it (utils.IsGCSFaultToleranceEnabled lower-cases it).
func (s *RayClusterSpec) IsGCSFaultToleranceEnabled(annotations map[string]string) bool {
	return s.GcsFaultToleranceOptions != nil || strings.ToLower(annotations[RayFTEnabledAnnotationKey]) == "true"
}

// GcsFTBackend returns the GCS FT backend, redis when unset; "" when GCS FT options are absent.
func (s *RayClusterSpec) GcsFTBackend() GcsFaultToleranceBackend {
	if s.GcsFaultToleranceOptions == nil {
		return ""
	}
	if s.GcsFaultToleranceOptions.Backend == "" {
		return GcsFTBackendRedis
	}
	return s.GcsFaultToleranceOptions.Backend
}

// UpgradeType returns the RayCluster upgrade strategy type, None when unset.
func (s *RayClusterSpec) UpgradeType() RayClusterUpgradeType {
	if s.UpgradeStrategy == nil || s.UpgradeStrategy.Type == nil {
		return RayClusterUpgradeNone
	}
	return *s.UpgradeStrategy.Type
}

// EffectiveAuthMode is the auth mode the Ray pods run with: token only
// with an explicit authOptions.mode: token, as KubeRay v1.7.0 decides
// (utils.IsAuthEnabled); otherwise disabled. KubeRay's API doc says the
// mode defaults to token, but neither its schema nor its operator applies
// that default.
func (s *RayClusterSpec) EffectiveAuthMode() AuthMode {
	if s.AuthOptions != nil && s.AuthOptions.Mode == AuthModeToken {
		return AuthModeToken
	}
	return AuthModeDisabled
}

// IsManagedBy reports whether an object with this spec.managedBy value is
// reconciled by the controller named controller. An unset value means
// KubeRay's default controller.
func IsManagedBy(managedBy *string, controller string) bool {
	if managedBy == nil || *managedBy == "" {
		return controller == KubeRayController
	}
	return *managedBy == controller
}

// PathOrDefault returns the Ingress path, "/" when unset.
func (o *IngressOptions) PathOrDefault() string {
	if o == nil || o.Path == nil {
		return DefaultIngressPath
	}
	return *o.Path
}

// PathTypeOrDefault returns the Ingress path type, Prefix when unset.
func (o *IngressOptions) PathTypeOrDefault() IngressPathType {
	if o == nil || o.PathType == nil {
		return IngressPathTypePrefix
	}
	return *o.PathType
}

// EffectiveSubmissionMode returns submissionMode, K8sJobMode when unset.
func (s *RayJobSpec) EffectiveSubmissionMode() JobSubmissionMode {
	if s.SubmissionMode == "" {
		return K8sJobMode
	}
	return s.SubmissionMode
}

// UsesClusterSelector reports whether the job runs on an existing cluster.
func (s *RayJobSpec) UsesClusterSelector() bool { return len(s.ClusterSelector) > 0 }

// SelectedClusterName is the RayCluster named by clusterSelector["ray.io/cluster"].
func (s *RayJobSpec) SelectedClusterName() string { return s.ClusterSelector[RayClusterLabelKey] }

// BackoffLimitOrDefault returns spec.backoffLimit, 0 when unset.
func (s *RayJobSpec) BackoffLimitOrDefault() int32 {
	if s.BackoffLimit == nil {
		return 0
	}
	return *s.BackoffLimit
}

// SubmitterBackoffLimit returns submitterConfig.backoffLimit, 2 when unset.
func (s *RayJobSpec) SubmitterBackoffLimit() int32 {
	if s.SubmitterConfig == nil || s.SubmitterConfig.BackoffLimit == nil {
		return DefaultSubmitterBackoffLimit
	}
	return *s.SubmitterConfig.BackoffLimit
}

// UsesDeletionRules reports whether deletionStrategy.deletionRules is in use.
func (s *RayJobSpec) UsesDeletionRules() bool {
	return s.DeletionStrategy != nil && len(s.DeletionStrategy.DeletionRules) > 0
}

// IsTerminal reports whether the RayJob's deployment has finished (Complete or Failed).
func (j *RayJob) IsTerminal() bool { return IsJobDeploymentTerminal(j.Status.JobDeploymentStatus) }

// ClusterName is the RayCluster the job runs on: the one its status names,
// else the one its clusterSelector selects; "" before either exists.
func (j *RayJob) ClusterName() string {
	if n := j.Status.RayClusterName; n != "" {
		return n
	}
	return j.Spec.SelectedClusterName()
}

// DeletionDelaySeconds returns rayClusterDeletionDelaySeconds, 60 when unset.
func (s *RayServiceSpec) DeletionDelaySeconds() int32 {
	if s.RayClusterDeletionDelaySeconds == nil {
		return DefaultRayClusterDeletionDelaySeconds
	}
	return *s.RayClusterDeletionDelaySeconds
}

// EffectiveUpgradeType returns upgradeStrategy.type, NewCluster when unset.
func (s *RayServiceSpec) EffectiveUpgradeType() RayServiceUpgradeType {
	if s.UpgradeStrategy == nil || s.UpgradeStrategy.Type == nil {
		return NewCluster
	}
	return *s.UpgradeStrategy.Type
}

// GatewayName and HTTPRouteName name the Gateway and HTTPRoute of a
// RayService's incremental upgrade, in its namespace, as KubeRay names them
// (ray-operator/controllers/ray/common/association.go:207-219). The
// reconciler creates them under these names; raydar why and the TUI read
// them back by the same.
func (s *RayService) GatewayName() string { return s.Name + "-gateway" }

// HTTPRouteName names the HTTPRoute of the RayService's incremental
// upgrade: see GatewayName.
func (s *RayService) HTTPRouteName() string { return s.Name + "-httproute" }

// IsServeApplicationFailed reports whether a Serve application status is DEPLOY_FAILED or UNHEALTHY.
func IsServeApplicationFailed(status string) bool {
	return status == ApplicationStatusDeployFailed || status == ApplicationStatusUnhealthy
}
