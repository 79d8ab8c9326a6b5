package v1

import (
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// RayClusterSpec is the desired state of a Ray cluster: one head group and any
// number of worker groups. It is also embedded in RayJob (rayClusterSpec) and
// RayService (rayClusterConfig).
type RayClusterSpec struct {
	// UpgradeStrategy says what happens to running pods when the pod templates change.
	// +optional
	UpgradeStrategy *RayClusterUpgradeStrategy `json:"upgradeStrategy,omitempty"`
	// AuthOptions configures authentication of the Ray cluster's endpoints.
	// +optional
	AuthOptions *AuthOptions `json:"authOptions,omitempty"`
	// Suspend deletes every pod of the cluster while true.
	// +optional
	Suspend *bool `json:"suspend,omitempty"`
	// ManagedBy names the controller that reconciles this object; empty means
	// the default controller. Immutable.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="the managedBy field is immutable"
	// +kubebuilder:validation:XValidation:rule="self in ['ray.io/kuberay-operator', 'kueue.x-k8s.io/multikueue', 'raydar.io/raydar']",message="the managedBy field value must be one of 'ray.io/kuberay-operator', 'kueue.x-k8s.io/multikueue' or 'raydar.io/raydar'"
	// +optional
	ManagedBy *string `json:"managedBy,omitempty"`
	// AutoscalerOptions configures the in-tree autoscaler sidecar.
	// +optional
	AutoscalerOptions *AutoscalerOptions `json:"autoscalerOptions,omitempty"`
	// HeadServiceAnnotations are added to the head Service.
	// +optional
	HeadServiceAnnotations map[string]string `json:"headServiceAnnotations,omitempty"`
	// EnableInTreeAutoscaling injects the Ray autoscaler sidecar into the head pod.
	// +optional
	EnableInTreeAutoscaling *bool `json:"enableInTreeAutoscaling,omitempty"`
	// GcsFaultToleranceOptions enables GCS fault tolerance.
	// +optional
	GcsFaultToleranceOptions *GcsFaultToleranceOptions `json:"gcsFaultToleranceOptions,omitempty"`
	// HistoryServerOptions configures the history server collector sidecar (alpha).
	// +optional
	HistoryServerOptions *HistoryServerOptions `json:"historyServerOptions,omitempty"`
	// NetworkPolicy isolates the cluster's pods (alpha).
	// +optional
	NetworkPolicy *NetworkPolicyConfig `json:"networkPolicy,omitempty"`
	// TLSOptions enables mTLS between Ray pods (alpha).
	// +optional
	TLSOptions *TLSOptions `json:"tlsOptions,omitempty"`
	// HeadGroupSpec describes the head pod.
	HeadGroupSpec HeadGroupSpec `json:"headGroupSpec"`
	// RayVersion is the Ray version of the images; it selects the submitter
	// command and the probe style.
	// +optional
	RayVersion string `json:"rayVersion,omitempty"`
	// WorkerGroupSpecs describe the worker groups. Group names are unique.
	// At most 256 groups: the bound keeps the uniqueness rule within the
	// API server's CEL cost budget (KubeRay sets no bound and no rule).
	// +optional
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:XValidation:rule="self.all(x, self.exists_one(y, y.groupName == x.groupName))",message="worker group names must be unique"
	WorkerGroupSpecs []WorkerGroupSpec `json:"workerGroupSpecs,omitempty"`
}

// TLSOptions turns on mTLS between the pods of a cluster.
type TLSOptions struct {
	// Enabled turns mTLS on. Default false.
	// +optional
	Enabled *bool `json:"enabled,omitempty"`
}

// RayClusterUpgradeType is what happens to running pods when a RayCluster's
// pod templates change.
// +kubebuilder:validation:Enum=Recreate;None
type RayClusterUpgradeType string

// RayClusterUpgradeStrategy holds the RayCluster upgrade type.
type RayClusterUpgradeStrategy struct {
	// Type is Recreate (delete every pod when the spec hash changes) or None.
	// +optional
	Type *RayClusterUpgradeType `json:"type,omitempty"`
}

// AuthMode is the authentication mode of a Ray cluster.
type AuthMode string

// AuthOptions configures authentication of a Ray cluster.
type AuthOptions struct {
	// EnableK8sTokenAuth delegates token checks to the Kubernetes API server.
	// +optional
	EnableK8sTokenAuth *bool `json:"enableK8sTokenAuth,omitempty"`
	// SecretName is an existing Secret with the key auth_token; when set no
	// Secret is generated.
	// +optional
	SecretName *string `json:"secretName,omitempty"`
	// Mode is disabled or token. Token auth is on only with mode: token
	// (KubeRay documents a default of token but applies none).
	// +kubebuilder:validation:Enum=disabled;token
	// +optional
	Mode AuthMode `json:"mode,omitempty"`
}

// GcsFaultToleranceBackend is where GCS state is persisted.
// +kubebuilder:validation:Enum=redis;rocksdb
type GcsFaultToleranceBackend string

// GcsFaultToleranceOptions configures GCS fault tolerance.
type GcsFaultToleranceOptions struct {
	// Backend is redis (the default) or rocksdb. Immutable.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="gcsFaultToleranceOptions.backend is immutable"
	// +optional
	Backend GcsFaultToleranceBackend `json:"backend,omitempty"`
	// RedisUsername is the Redis user name, inline or from a reference.
	// +optional
	RedisUsername *RedisCredential `json:"redisUsername,omitempty"`
	// RedisPassword is the Redis password, inline or from a reference.
	// +optional
	RedisPassword *RedisCredential `json:"redisPassword,omitempty"`
	// ExternalStorageNamespace isolates this cluster's keys in Redis; defaults to the cluster UID.
	// +optional
	ExternalStorageNamespace string `json:"externalStorageNamespace,omitempty"`
	// RedisAddress is host:port of the Redis server (redis backend).
	// +optional
	RedisAddress string `json:"redisAddress,omitempty"`
	// Storage is the volume of the rocksdb backend.
	// +optional
	Storage *GcsEmbeddedStorage `json:"storage,omitempty"`
}

// GcsEmbeddedStorage is the PersistentVolumeClaim of the rocksdb backend:
// either an existing claim (claimName) or one the controller creates.
type GcsEmbeddedStorage struct {
	// ClaimName is an existing, user-owned claim; mutually exclusive with
	// size, storageClassName and accessModes.
	// +optional
	ClaimName string `json:"claimName,omitempty"`
	// Size of the managed claim. Default 1Gi.
	// +optional
	Size *resource.Quantity `json:"size,omitempty"`
	// StorageClassName of the managed claim; the cluster default when empty.
	// +optional
	StorageClassName *string `json:"storageClassName,omitempty"`
	// AccessModes of the managed claim. Default [ReadWriteOnce].
	// +optional
	AccessModes []corev1.PersistentVolumeAccessMode `json:"accessModes,omitempty"`
	// SubPath mounts a sub-directory of the volume.
	// +optional
	SubPath string `json:"subPath,omitempty"`
	// DeletionPolicy of the managed claim. Default DeleteWithCluster.
	// +optional
	DeletionPolicy *GCSStorageDeletionPolicy `json:"deletionPolicy,omitempty"`
}

// GCSStorageDeletionPolicy says whether a managed GCS claim outlives its cluster.
// +kubebuilder:validation:Enum=DeleteWithCluster;Retain
type GCSStorageDeletionPolicy string

// RedisCredential is a literal value or a reference to one.
type RedisCredential struct {
	// +optional
	ValueFrom *corev1.EnvVarSource `json:"valueFrom,omitempty"`
	// +optional
	Value string `json:"value,omitempty"`
}

// HistoryServerOptions configures the history server (alpha).
type HistoryServerOptions struct {
	// CollectorOptions configures the collector sidecar.
	// +optional
	CollectorOptions *CollectorOptions `json:"collectorOptions,omitempty"`
}

// CollectorOptions configures the history server collector sidecar.
type CollectorOptions struct {
	// +optional
	Image *string `json:"image,omitempty"`
	// +optional
	ImagePullPolicy *corev1.PullPolicy `json:"imagePullPolicy,omitempty"`
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`
	// +optional
	Env []corev1.EnvVar `json:"env,omitempty"`
}

// NetworkPolicyMode is the isolation level of NetworkPolicyConfig.
// +kubebuilder:validation:Enum=DenyAll;DenyAllIngress;DenyAllEgress
type NetworkPolicyMode string

// NetworkPolicyConfig asks for NetworkPolicies around the cluster's pods.
// Intra-cluster traffic is always allowed.
type NetworkPolicyConfig struct {
	// Mode is DenyAll (default), DenyAllIngress or DenyAllEgress.
	// +kubebuilder:default=DenyAll
	// +optional
	Mode *NetworkPolicyMode `json:"mode,omitempty"`
	// Head rules are appended to the head pod's policy.
	// +optional
	Head *NetworkPolicyRules `json:"head,omitempty"`
	// Worker rules are appended to every worker group's policy without its own entry.
	// +optional
	Worker *NetworkPolicyRules `json:"worker,omitempty"`
	// WorkerGroups replace Worker for the named groups.
	// +listType=map
	// +listMapKey=groupName
	// +optional
	WorkerGroups []WorkerGroupNetworkPolicyRules `json:"workerGroups,omitempty"`
}

// WorkerGroupNetworkPolicyRules are NetworkPolicyRules for one worker group.
type WorkerGroupNetworkPolicyRules struct {
	// GroupName is a workerGroupSpecs[].groupName.
	GroupName string `json:"groupName"`

	NetworkPolicyRules `json:",inline"`
}

// NetworkPolicyRules are extra ingress and egress rules.
type NetworkPolicyRules struct {
	// +optional
	IngressRules []networkingv1.NetworkPolicyIngressRule `json:"ingressRules,omitempty"`
	// +optional
	EgressRules []networkingv1.NetworkPolicyEgressRule `json:"egressRules,omitempty"`
}

// HeadGroupSpec describes the head pod. The Ray container must be containers[0].
type HeadGroupSpec struct {
	// Template is the head pod template.
	Template corev1.PodTemplateSpec `json:"template"`
	// HeadService fully overrides the generated head Service.
	// +optional
	HeadService *corev1.Service `json:"headService,omitempty"`
	// EnableIngress creates an Ingress to the dashboard.
	// +optional
	EnableIngress *bool `json:"enableIngress,omitempty"`
	// IngressOptions configures that Ingress.
	// +optional
	IngressOptions *IngressOptions `json:"ingressOptions,omitempty"`
	// Resources are Ray logical resources; they override rayStartParams.
	// +optional
	Resources map[string]string `json:"resources,omitempty"`
	// Labels are Ray node labels; they override rayStartParams' --labels.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// RayStartParams are `ray start` flags without the leading dashes.
	// Not omitempty, as in KubeRay: an empty map is written as {} (nil as
	// null, which the API server drops).
	// +optional
	RayStartParams map[string]string `json:"rayStartParams"`
	// ServiceType of the head Service. Default ClusterIP (headless).
	// +optional
	ServiceType corev1.ServiceType `json:"serviceType,omitempty"`
}

// IngressPathType is the path match of the dashboard Ingress.
// +kubebuilder:validation:Enum=Exact;Prefix;ImplementationSpecific
type IngressPathType string

// IngressOptions configures the dashboard Ingress.
type IngressOptions struct {
	// Host the rule matches; any host when unset.
	// +optional
	Host *string `json:"host,omitempty"`
	// Path routed to the dashboard. Default "/", applied by the operator
	// (PathOrDefault), not by the schema, as in KubeRay.
	// +optional
	Path *string `json:"path,omitempty"`
	// PathType of Path. Default Prefix, applied by the operator
	// (PathTypeOrDefault), not by the schema, as in KubeRay.
	// +optional
	PathType *IngressPathType `json:"pathType,omitempty"`
	// TLS termination of the Ingress.
	// +optional
	TLS []networkingv1.IngressTLS `json:"tls,omitempty"`
}

// WorkerGroupSpec describes one group of identical worker pods.
//
// +kubebuilder:validation:XValidation:rule="!has(self.minReplicas) || !has(self.maxReplicas) || self.minReplicas <= self.maxReplicas",message="minReplicas must be less than or equal to maxReplicas"
type WorkerGroupSpec struct {
	// Suspend deletes the group's pods; set by the RayJob DeleteWorkers policy, not by users.
	// +optional
	Suspend *bool `json:"suspend,omitempty"`
	// GroupName identifies the group (the ray.io/group label, so at most 63
	// characters). Unique in the cluster.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	GroupName string `json:"groupName"`
	// Replicas is the desired number of replicas, clamped to [minReplicas, maxReplicas].
	// +kubebuilder:default:=0
	// +kubebuilder:validation:Minimum=0
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`
	// MinReplicas is the lower bound of replicas.
	// +kubebuilder:default:=0
	// +kubebuilder:validation:Minimum=0
	// +optional
	MinReplicas *int32 `json:"minReplicas,omitempty"`
	// MaxReplicas is the upper bound of replicas.
	// +kubebuilder:default:=2147483647
	// +kubebuilder:validation:Minimum=0
	// +optional
	MaxReplicas *int32 `json:"maxReplicas,omitempty"`
	// IdleTimeoutSeconds overrides the autoscaler's idle timeout for this group (autoscaler v2).
	// +kubebuilder:validation:Minimum=0
	// +optional
	IdleTimeoutSeconds *int32 `json:"idleTimeoutSeconds,omitempty"`
	// Priority makes the autoscaler prefer this group (autoscaler v2, Ray >= 2.56).
	// +kubebuilder:default:=0
	// +optional
	Priority *int32 `json:"priority,omitempty"`
	// Resources are Ray logical resources; they override rayStartParams.
	// +optional
	Resources map[string]string `json:"resources,omitempty"`
	// Labels are Ray node labels; they override rayStartParams' --labels.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// RayStartParams are `ray start` flags without the leading dashes.
	// Not omitempty, as in KubeRay: an empty map is written as {} (nil as
	// null, which the API server drops).
	// +optional
	RayStartParams map[string]string `json:"rayStartParams"`
	// Template is the worker pod template.
	Template corev1.PodTemplateSpec `json:"template"`
	// ScaleStrategy names pods the autoscaler wants deleted.
	// +optional
	ScaleStrategy ScaleStrategy `json:"scaleStrategy,omitempty"`
	// NumOfHosts is the number of pods per replica (multi-host TPU). Default 1.
	// +kubebuilder:default:=1
	// +kubebuilder:validation:Minimum=1
	// +optional
	NumOfHosts int32 `json:"numOfHosts,omitempty"`
}

// ScaleStrategy lists worker pods to delete.
type ScaleStrategy struct {
	// WorkersToDelete are pod names; owned by the autoscaler.
	// +optional
	WorkersToDelete []string `json:"workersToDelete,omitempty"`
}

// AutoscalerOptions configures the autoscaler sidecar.
type AutoscalerOptions struct {
	// Resources of the sidecar. Default 500m CPU and 512Mi memory.
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`
	// Image of the sidecar. Default the head image.
	// +optional
	Image *string `json:"image,omitempty"`
	// +optional
	ImagePullPolicy *corev1.PullPolicy `json:"imagePullPolicy,omitempty"`
	// +optional
	SecurityContext *corev1.SecurityContext `json:"securityContext,omitempty"`
	// IdleTimeoutSeconds before an idle worker is removed. Default 60.
	// +optional
	IdleTimeoutSeconds *int32 `json:"idleTimeoutSeconds,omitempty"`
	// UpscalingMode is Default, Aggressive or Conservative.
	// +optional
	UpscalingMode *UpscalingMode `json:"upscalingMode,omitempty"`
	// Version is v1 or v2; chosen from rayVersion when unset.
	// +optional
	Version *AutoscalerVersion `json:"version,omitempty"`
	// +optional
	Env []corev1.EnvVar `json:"env,omitempty"`
	// +optional
	EnvFrom []corev1.EnvFromSource `json:"envFrom,omitempty"`
	// +optional
	VolumeMounts []corev1.VolumeMount `json:"volumeMounts,omitempty"`
	// +optional
	Command []string `json:"command,omitempty"`
	// +optional
	Args []string `json:"args,omitempty"`
}

// UpscalingMode is how fast the autoscaler adds workers.
// +kubebuilder:validation:Enum=Default;Aggressive;Conservative
type UpscalingMode string

// AutoscalerVersion is v1 or v2.
// +kubebuilder:validation:Enum=v1;v2
type AutoscalerVersion string

// ClusterState is the deprecated one-word state of a RayCluster.
type ClusterState string

// RayClusterStatus is the observed state of a RayCluster.
type RayClusterStatus struct {
	// State is ready or suspended. Deprecated: use Conditions.
	// +optional
	State ClusterState `json:"state,omitempty"`
	// +optional
	DesiredCPU resource.Quantity `json:"desiredCPU,omitempty"`
	// +optional
	DesiredMemory resource.Quantity `json:"desiredMemory,omitempty"`
	// +optional
	DesiredGPU resource.Quantity `json:"desiredGPU,omitempty"`
	// +optional
	DesiredTPU resource.Quantity `json:"desiredTPU,omitempty"`
	// LastUpdateTime is when the status last changed.
	// +nullable
	// +optional
	LastUpdateTime *metav1.Time `json:"lastUpdateTime,omitempty"`
	// StateTransitionTimes is when each State was last entered.
	// +optional
	StateTransitionTimes map[ClusterState]*metav1.Time `json:"stateTransitionTimes,omitempty"`
	// Endpoints maps head port names to port numbers.
	// +optional
	Endpoints map[string]string `json:"endpoints,omitempty"`
	// Head identifies the head pod and Service.
	// +optional
	Head HeadInfo `json:"head,omitempty"`
	// Reason explains State.
	// +optional
	Reason string `json:"reason,omitempty"`
	// Conditions: RayClusterProvisioned, HeadPodReady, ReplicaFailure,
	// RayClusterSuspending, RayClusterSuspended.
	// +patchMergeKey=type
	// +patchStrategy=merge
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`
	// ReadyWorkerReplicas is the number of Ready worker pods.
	// +optional
	ReadyWorkerReplicas int32 `json:"readyWorkerReplicas,omitempty"`
	// AvailableWorkerReplicas is the number of running worker pods.
	// +optional
	AvailableWorkerReplicas int32 `json:"availableWorkerReplicas,omitempty"`
	// DesiredWorkerReplicas is the sum over groups of desired pods.
	// +optional
	DesiredWorkerReplicas int32 `json:"desiredWorkerReplicas,omitempty"`
	// MinWorkerReplicas is the sum over groups of minReplicas × numOfHosts.
	// +optional
	MinWorkerReplicas int32 `json:"minWorkerReplicas,omitempty"`
	// MaxWorkerReplicas is the sum over groups of maxReplicas × numOfHosts.
	// +optional
	MaxWorkerReplicas int32 `json:"maxWorkerReplicas,omitempty"`
	// ObservedGeneration is the generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// RayClusterConditionType is a condition type of RayClusterStatus.
type RayClusterConditionType string

// HeadInfo identifies the head pod and Service.
type HeadInfo struct {
	// +optional
	PodIP string `json:"podIP,omitempty"`
	// +optional
	ServiceIP string `json:"serviceIP,omitempty"`
	// +optional
	PodName string `json:"podName,omitempty"`
	// +optional
	ServiceName string `json:"serviceName,omitempty"`
}

// RayNodeType is the value of the ray.io/node-type label.
type RayNodeType string

// RayCluster is a Ray cluster: a head pod and groups of worker pods.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:categories=all
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:printcolumn:name="desired workers",type=integer,JSONPath=".status.desiredWorkerReplicas",priority=0
// +kubebuilder:printcolumn:name="available workers",type=integer,JSONPath=".status.availableWorkerReplicas",priority=0
// +kubebuilder:printcolumn:name="cpus",type=string,JSONPath=".status.desiredCPU",priority=0
// +kubebuilder:printcolumn:name="memory",type=string,JSONPath=".status.desiredMemory",priority=0
// +kubebuilder:printcolumn:name="gpus",type=string,JSONPath=".status.desiredGPU",priority=0
// +kubebuilder:printcolumn:name="tpus",type=string,JSONPath=".status.desiredTPU",priority=1
// +kubebuilder:printcolumn:name="status",type=string,JSONPath=".status.state",priority=0
// +kubebuilder:printcolumn:name="age",type=date,JSONPath=".metadata.creationTimestamp",priority=0
// +kubebuilder:printcolumn:name="head pod IP",type=string,JSONPath=".status.head.podIP",priority=1
// +kubebuilder:printcolumn:name="head service IP",type=string,JSONPath=".status.head.serviceIP",priority=1
type RayCluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec RayClusterSpec `json:"spec,omitempty"`
	// +optional
	Status RayClusterStatus `json:"status,omitempty"`
}

// RayClusterList is a list of RayClusters.
//
// +kubebuilder:object:root=true
type RayClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []RayCluster `json:"items"`
}
