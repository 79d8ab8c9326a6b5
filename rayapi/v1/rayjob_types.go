package v1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// JobStatus is the status of a Ray job as reported by the Ray dashboard.
type JobStatus string

// JobDeploymentStatus is the phase of a RayJob: cluster lifecycle and job submission.
type JobDeploymentStatus string

// JobFailedReason explains why a RayJob's deployment status became Failed.
type JobFailedReason string

// JobSubmissionMode is how a RayJob submits its Ray job.
type JobSubmissionMode string

// DeletionPolicyType is what a RayJob deletes once it has finished.
type DeletionPolicyType string

// DeletionStrategy configures cleanup after a RayJob finishes: either the
// legacy pair onSuccess+onFailure (deprecated), or deletionRules.
//
// +kubebuilder:validation:XValidation:rule="!((has(self.onSuccess) || has(self.onFailure)) && has(self.deletionRules))",message="legacy policies (onSuccess/onFailure) and deletionRules cannot be used together within the same deletionStrategy"
// +kubebuilder:validation:XValidation:rule="((has(self.onSuccess) && has(self.onFailure)) || has(self.deletionRules))",message="deletionStrategy requires either BOTH onSuccess and onFailure, OR the deletionRules field (cannot be empty)"
type DeletionStrategy struct {
	// OnSuccess is the policy after success. Deprecated: use deletionRules.
	// +optional
	OnSuccess *DeletionPolicy `json:"onSuccess,omitempty"`
	// OnFailure is the policy after failure. Deprecated: use deletionRules.
	// +optional
	OnFailure *DeletionPolicy `json:"onFailure,omitempty"`
	// DeletionRules run, each after its condition has held for ttlSeconds.
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	// +optional
	DeletionRules []DeletionRule `json:"deletionRules,omitempty"`
}

// DeletionRule is one cleanup action and its trigger.
type DeletionRule struct {
	// Policy is DeleteCluster, DeleteWorkers, DeleteSelf or DeleteNone.
	// +kubebuilder:validation:Enum=DeleteCluster;DeleteWorkers;DeleteSelf;DeleteNone
	Policy DeletionPolicyType `json:"policy"`
	// Condition triggers the rule.
	Condition DeletionCondition `json:"condition"`
}

// DeletionCondition matches exactly one of a terminal job status or a failed
// deployment status.
//
// +kubebuilder:validation:XValidation:rule="!(has(self.jobStatus) && has(self.jobDeploymentStatus))",message="JobStatus and JobDeploymentStatus cannot be used together within the same deletion condition."
// +kubebuilder:validation:XValidation:rule="has(self.jobStatus) || has(self.jobDeploymentStatus)",message="the deletion condition requires either the JobStatus or the JobDeploymentStatus field."
type DeletionCondition struct {
	// JobStatus is SUCCEEDED or FAILED.
	// +kubebuilder:validation:Enum=SUCCEEDED;FAILED
	// +optional
	JobStatus *JobStatus `json:"jobStatus,omitempty"`
	// JobDeploymentStatus is Failed.
	// +kubebuilder:validation:Enum=Failed
	// +optional
	JobDeploymentStatus *JobDeploymentStatus `json:"jobDeploymentStatus,omitempty"`
	// TTLSeconds after the status is reached (from status.endTime).
	// +kubebuilder:default=0
	// +kubebuilder:validation:Minimum=0
	// +optional
	TTLSeconds int32 `json:"ttlSeconds,omitempty"`
}

// DeletionPolicy is the legacy single-stage policy. Deprecated: use DeletionRule.
type DeletionPolicy struct {
	// +kubebuilder:validation:Enum=DeleteCluster;DeleteWorkers;DeleteSelf;DeleteNone
	// +optional
	Policy *DeletionPolicyType `json:"policy,omitempty"`
}

// SubmitterConfig configures the submitter Kubernetes Job (K8sJobMode).
type SubmitterConfig struct {
	// BackoffLimit of the submitter Job. Default 2.
	// +kubebuilder:validation:Minimum=0
	// +optional
	BackoffLimit *int32 `json:"backoffLimit,omitempty"`
}

// RayJobStatusInfo is the part of the dashboard's job info kept in status.
type RayJobStatusInfo struct {
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// +optional
	EndTime *metav1.Time `json:"endTime,omitempty"`
}

// RayJobSpec is the desired state of a RayJob.
//
// +kubebuilder:validation:XValidation:rule="has(self.rayClusterSpec) != (has(self.clusterSelector) && size(self.clusterSelector) > 0)",message="exactly one of rayClusterSpec or clusterSelector must be set"
// +kubebuilder:validation:XValidation:rule="!has(self.clusterSelector) || size(self.clusterSelector) == 0 || 'ray.io/cluster' in self.clusterSelector",message="clusterSelector must name the RayCluster with the key ray.io/cluster"
type RayJobSpec struct {
	// ActiveDeadlineSeconds limits the RayJob's run time, from status.startTime.
	// +kubebuilder:validation:Minimum=0
	// +optional
	ActiveDeadlineSeconds *int32 `json:"activeDeadlineSeconds,omitempty"`
	// PreRunningDeadlineSeconds limits the time to reach Running.
	// +kubebuilder:validation:Minimum=1
	// +optional
	PreRunningDeadlineSeconds *int32 `json:"preRunningDeadlineSeconds,omitempty"`
	// BackoffLimit is the number of retries; each retry creates a new cluster.
	// +kubebuilder:default:=0
	// +kubebuilder:validation:Minimum=0
	// +optional
	BackoffLimit *int32 `json:"backoffLimit,omitempty"`
	// RayClusterSpec is the cluster created for the job. Exactly one of
	// rayClusterSpec and clusterSelector is set.
	// +optional
	RayClusterSpec *RayClusterSpec `json:"rayClusterSpec,omitempty"`
	// SubmitterPodTemplate is the submitter pod (K8sJobMode).
	// +optional
	SubmitterPodTemplate *corev1.PodTemplateSpec `json:"submitterPodTemplate,omitempty"`
	// Metadata is stored with the Ray job.
	// +optional
	Metadata map[string]string `json:"metadata,omitempty"`
	// ClusterSelector selects an existing RayCluster by the ray.io/cluster key.
	// +optional
	ClusterSelector map[string]string `json:"clusterSelector,omitempty"`
	// SubmitterConfig configures the submitter Job (K8sJobMode).
	// +optional
	SubmitterConfig *SubmitterConfig `json:"submitterConfig,omitempty"`
	// ManagedBy names the controller that reconciles this object. Immutable.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="the managedBy field is immutable"
	// +kubebuilder:validation:XValidation:rule="self in ['ray.io/kuberay-operator', 'kueue.x-k8s.io/multikueue', 'raydar.io/raydar']",message="the managedBy field value must be one of 'ray.io/kuberay-operator', 'kueue.x-k8s.io/multikueue' or 'raydar.io/raydar'"
	// +optional
	ManagedBy *string `json:"managedBy,omitempty"`
	// DeletionStrategy automates cleanup after the job finishes.
	// +optional
	DeletionStrategy *DeletionStrategy `json:"deletionStrategy,omitempty"`
	// Entrypoint is the command given to `ray job submit`.
	// +optional
	Entrypoint string `json:"entrypoint,omitempty"`
	// RuntimeEnvYAML is the Ray runtime_env as YAML.
	// +optional
	RuntimeEnvYAML string `json:"runtimeEnvYAML,omitempty"`
	// JobId is the submission ID; generated when empty.
	// +optional
	JobId string `json:"jobId,omitempty"` //nolint:revive // KubeRay's Go name
	// SubmissionMode is K8sJobMode (default), HTTPMode, InteractiveMode or SidecarMode.
	// +kubebuilder:default:=K8sJobMode
	// +kubebuilder:validation:Enum=K8sJobMode;HTTPMode;InteractiveMode;SidecarMode
	// +optional
	SubmissionMode JobSubmissionMode `json:"submissionMode,omitempty"`
	// EntrypointResources is a JSON object of custom resources for the driver.
	// +optional
	EntrypointResources string `json:"entrypointResources,omitempty"`
	// EntrypointNumCpus reserved for the driver.
	// +optional
	EntrypointNumCpus float32 `json:"entrypointNumCpus,omitempty"`
	// EntrypointNumGpus reserved for the driver.
	// +optional
	EntrypointNumGpus float32 `json:"entrypointNumGpus,omitempty"`
	// TTLSecondsAfterFinished delays the cluster deletion of shutdownAfterJobFinishes.
	// +kubebuilder:default:=0
	// +kubebuilder:validation:Minimum=0
	// +optional
	TTLSecondsAfterFinished int32 `json:"ttlSecondsAfterFinished,omitempty"`
	// ShutdownAfterJobFinishes deletes the cluster when the job finishes.
	// +optional
	ShutdownAfterJobFinishes bool `json:"shutdownAfterJobFinishes,omitempty"`
	// Suspend deletes the cluster and the submitter while true.
	// +optional
	Suspend bool `json:"suspend,omitempty"`
}

// RayJobStatus is the observed state of a RayJob.
type RayJobStatus struct {
	// RayJobStatusInfo holds the times reported by the dashboard.
	// +optional
	RayJobStatusInfo RayJobStatusInfo `json:"rayJobInfo,omitempty"`
	// +optional
	JobId string `json:"jobId,omitempty"` //nolint:revive // KubeRay's Go name
	// +optional
	RayClusterName string `json:"rayClusterName,omitempty"`
	// +optional
	DashboardURL string `json:"dashboardURL,omitempty"`
	// +optional
	JobStatus JobStatus `json:"jobStatus,omitempty"`
	// +optional
	JobDeploymentStatus JobDeploymentStatus `json:"jobDeploymentStatus,omitempty"`
	// +optional
	Reason JobFailedReason `json:"reason,omitempty"`
	// +optional
	Message string `json:"message,omitempty"`
	// StartTime is when the deployment left New.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// EndTime is when the deployment became Complete or Failed.
	// +optional
	EndTime *metav1.Time `json:"endTime,omitempty"`
	// JobStatusCheckFailureStartTime is when dashboard checks started failing.
	// +optional
	JobStatusCheckFailureStartTime *metav1.Time `json:"jobStatusCheckFailureStartTime,omitempty"`
	// Succeeded counts successful attempts.
	// +kubebuilder:default:=0
	// +optional
	Succeeded *int32 `json:"succeeded,omitempty"`
	// Failed counts failed attempts.
	// +kubebuilder:default:=0
	// +optional
	Failed *int32 `json:"failed,omitempty"`
	// RayClusterStatus is a copy of the job cluster's status.
	// +optional
	RayClusterStatus RayClusterStatus `json:"rayClusterStatus,omitempty"`
	// Conditions are written by raydar's reconciler (KubeRay has none).
	// +patchMergeKey=type
	// +patchStrategy=merge
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`
	// ObservedGeneration is the generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// RayJob runs one Ray job, on a cluster it creates or on an existing one.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:categories=all
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:printcolumn:name="job status",type=string,JSONPath=".status.jobStatus",priority=0
// +kubebuilder:printcolumn:name="deployment status",type=string,JSONPath=".status.jobDeploymentStatus",priority=0
// +kubebuilder:printcolumn:name="ray cluster name",type=string,JSONPath=".status.rayClusterName",priority=0
// +kubebuilder:printcolumn:name="start time",type=string,JSONPath=".status.startTime",priority=0
// +kubebuilder:printcolumn:name="end time",type=string,JSONPath=".status.endTime",priority=0
// +kubebuilder:printcolumn:name="age",type=date,JSONPath=".metadata.creationTimestamp",priority=0
type RayJob struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec RayJobSpec `json:"spec,omitempty"`
	// +optional
	Status RayJobStatus `json:"status,omitempty"`
}

// RayJobList is a list of RayJobs.
//
// +kubebuilder:object:root=true
type RayJobList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []RayJob `json:"items"`
}
