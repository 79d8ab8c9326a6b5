package v1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ServiceStatus is the deprecated one-word status of a RayService: Running or "".
type ServiceStatus string

// RayServiceUpgradeType is how a RayService rolls out a changed cluster spec.
// +kubebuilder:validation:Enum=NewCluster;NewClusterWithIncrementalUpgrade;None
type RayServiceUpgradeType string

// ClusterUpgradeOptions tune NewClusterWithIncrementalUpgrade.
type ClusterUpgradeOptions struct {
	// MaxSurgePercent is how much target capacity the new cluster gains per step. Default 100.
	// +kubebuilder:default:=100
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +optional
	MaxSurgePercent *int32 `json:"maxSurgePercent,omitempty"`
	// StepSizePercent of traffic moved to the new cluster per interval.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	StepSizePercent *int32 `json:"stepSizePercent"`
	// IntervalSeconds between traffic steps.
	// +kubebuilder:validation:Minimum=0
	IntervalSeconds *int32 `json:"intervalSeconds"`
	// GatewayClassName of the Gateway API implementation.
	GatewayClassName string `json:"gatewayClassName"`
}

// RayServiceUpgradeStrategy configures RayService upgrades.
type RayServiceUpgradeStrategy struct {
	// Type is NewCluster (default), NewClusterWithIncrementalUpgrade or None.
	// +optional
	Type *RayServiceUpgradeType `json:"type,omitempty"`
	// ClusterUpgradeOptions tune NewClusterWithIncrementalUpgrade.
	// +optional
	ClusterUpgradeOptions *ClusterUpgradeOptions `json:"clusterUpgradeOptions,omitempty"`
}

// RayServiceSpec is the desired state of a RayService.
type RayServiceSpec struct {
	// RayClusterDeletionDelaySeconds before an old cluster is deleted.
	// Default 60, applied by the operator (DeletionDelaySeconds), not by the
	// schema, as in KubeRay.
	// +kubebuilder:validation:Minimum=0
	// +optional
	RayClusterDeletionDelaySeconds *int32 `json:"rayClusterDeletionDelaySeconds,omitempty"`
	// Deprecated: unused.
	// +optional
	ServiceUnhealthySecondThreshold *int32 `json:"serviceUnhealthySecondThreshold,omitempty"`
	// Deprecated: unused.
	// +optional
	DeploymentUnhealthySecondThreshold *int32 `json:"deploymentUnhealthySecondThreshold,omitempty"`
	// ServeService overrides the generated serve Service.
	// +optional
	ServeService *corev1.Service `json:"serveService,omitempty"`
	// UpgradeStrategy says how a changed cluster spec is rolled out.
	// +optional
	UpgradeStrategy *RayServiceUpgradeStrategy `json:"upgradeStrategy,omitempty"`
	// ServeConfigV2 is the Serve multi-application config, as YAML.
	// +optional
	ServeConfigV2 string `json:"serveConfigV2,omitempty"`
	// RayClusterSpec is the template of the service's clusters.
	RayClusterSpec RayClusterSpec `json:"rayClusterConfig"`
	// ExcludeHeadPodFromServeSvc keeps the head pod out of the serve Service.
	// +optional
	ExcludeHeadPodFromServeSvc bool `json:"excludeHeadPodFromServeSvc,omitempty"`
	// Suspend deletes every owned resource while true.
	// +optional
	Suspend bool `json:"suspend,omitempty"`
	// ManagedBy names the controller that reconciles this object. Immutable.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="the managedBy field is immutable"
	// +kubebuilder:validation:XValidation:rule="self in ['ray.io/kuberay-operator', 'kueue.x-k8s.io/multikueue', 'raydar.io/raydar']",message="the managedBy field value must be one of 'ray.io/kuberay-operator', 'kueue.x-k8s.io/multikueue' or 'raydar.io/raydar'"
	// +optional
	ManagedBy *string `json:"managedBy,omitempty"`
}

// RayServiceStatuses is the observed state of a RayService.
type RayServiceStatuses struct {
	// Conditions: Ready, UpgradeInProgress, RollbackInProgress, Suspending, Suspended.
	// +patchMergeKey=type
	// +patchStrategy=merge
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`
	// +optional
	LastUpdateTime *metav1.Time `json:"lastUpdateTime,omitempty"`
	// ServiceStatus is Running or "". Deprecated: use the Ready condition.
	// +optional
	ServiceStatus ServiceStatus `json:"serviceStatus,omitempty"`
	// ActiveServiceStatus describes the cluster serving traffic.
	// +optional
	ActiveServiceStatus RayServiceStatus `json:"activeServiceStatus,omitempty"`
	// PendingServiceStatus describes the cluster being prepared.
	// +optional
	PendingServiceStatus RayServiceStatus `json:"pendingServiceStatus,omitempty"`
	// NumServeEndpoints is the number of ready pods behind the serve Service.
	// +optional
	NumServeEndpoints int32 `json:"numServeEndpoints,omitempty"`
	// ObservedGeneration is the generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// RayServiceStatus describes one of a RayService's clusters.
type RayServiceStatus struct {
	// Applications are the Serve applications by name.
	// +optional
	Applications map[string]AppStatus `json:"applicationStatuses,omitempty"`
	// TargetCapacity is Serve's target_capacity percentage.
	// +optional
	TargetCapacity *int32 `json:"targetCapacity,omitempty"`
	// TrafficRoutedPercent is the HTTPRoute weight of this cluster.
	// +optional
	TrafficRoutedPercent *int32 `json:"trafficRoutedPercent,omitempty"`
	// LastTrafficMigratedTime is when TrafficRoutedPercent last changed.
	// +optional
	LastTrafficMigratedTime *metav1.Time `json:"lastTrafficMigratedTime,omitempty"`
	// +optional
	RayClusterName string `json:"rayClusterName,omitempty"`
	// +optional
	RayClusterStatus RayClusterStatus `json:"rayClusterStatus,omitempty"`
}

// AppStatus is the status of one Serve application.
type AppStatus struct {
	// Deployments are the application's Serve deployments by name.
	// +optional
	Deployments map[string]ServeDeploymentStatus `json:"serveDeploymentStatuses,omitempty"`
	// +optional
	Status string `json:"status,omitempty"`
	// +optional
	Message string `json:"message,omitempty"`
}

// ServeDeploymentStatus is the status of one Serve deployment.
type ServeDeploymentStatus struct {
	// +optional
	Status string `json:"status,omitempty"`
	// +optional
	Message string `json:"message,omitempty"`
}

// RayServiceConditionType is a condition type of RayServiceStatuses.
type RayServiceConditionType string

// RayServiceConditionReason is a condition reason of RayServiceStatuses.
type RayServiceConditionReason string

// RayService serves Ray Serve applications and upgrades them without downtime.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:categories=all
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:printcolumn:name="service status",type=string,JSONPath=".status.serviceStatus"
// +kubebuilder:printcolumn:name="num serve endpoints",type=string,JSONPath=".status.numServeEndpoints"
// +kubebuilder:printcolumn:name="age",type=date,JSONPath=".metadata.creationTimestamp"
type RayService struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec RayServiceSpec `json:"spec,omitempty"`
	// +optional
	Status RayServiceStatuses `json:"status,omitempty"`
}

// RayServiceList is a list of RayServices.
//
// +kubebuilder:object:root=true
type RayServiceList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []RayService `json:"items"`
}
