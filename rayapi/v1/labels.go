package v1

// This file is the one home of every well-known name of the ray.io API:
// label, annotation and finalizer keys, default ports and their names, and
// the values of states, condition types and reasons. Code elsewhere refers to
// these constants and never spells the strings itself.

// Labels set on every Ray pod and on the objects a controller creates.
const (
	// RayClusterLabelKey holds the owning RayCluster's name.
	RayClusterLabelKey = "ray.io/cluster"
	// RayNodeTypeLabelKey holds a RayNodeType (head, worker, redis-cleanup).
	RayNodeTypeLabelKey = "ray.io/node-type"
	// RayNodeGroupLabelKey holds the worker group name, or RayNodeHeadGroupLabelValue.
	RayNodeGroupLabelKey = "ray.io/group"
	// RayIDLabelKey holds "<cluster>-<node type>".
	RayIDLabelKey = "ray.io/identifier"
	// RayNodeLabelKey marks every Ray pod with RayNodeLabelValue.
	RayNodeLabelKey = "ray.io/is-ray-node"
	// RayNodeLabelValue is the value of RayNodeLabelKey.
	RayNodeLabelValue = "yes"
	// RayNodeHeadGroupLabelValue is the ray.io/group value of the head pod.
	RayNodeHeadGroupLabelValue = "headgroup"
	// RayNodeSubmitterGroupLabelValue is the Ray group of a RayJob's
	// submitter pod: its task in a batch scheduler's gang (KubeRay v1.6.2
	// utils/constant.go:280, rayjob_controller.go:565).
	RayNodeSubmitterGroupLabelValue = "submittergroup"

	// KubernetesApplicationNameLabelKey is the recommended app name label.
	KubernetesApplicationNameLabelKey = "app.kubernetes.io/name"
	// ApplicationName is the value of KubernetesApplicationNameLabelKey.
	ApplicationName = "kuberay"
	// KubernetesCreatedByLabelKey is the recommended created-by label.
	KubernetesCreatedByLabelKey = "app.kubernetes.io/created-by"
	// ComponentName is the value of KubernetesCreatedByLabelKey; raydar keeps
	// KubeRay's value so selectors written for KubeRay keep matching.
	ComponentName = "kuberay-operator"

	// RayClusterHeadlessServiceLabelKey holds the cluster name on its
	// headless worker Service "<cluster>-headless" (its only label).
	RayClusterHeadlessServiceLabelKey = "ray.io/headless-worker-svc"

	// RayClusterServingServiceLabelKey marks pods that serve traffic ("true"/"false").
	RayClusterServingServiceLabelKey = "ray.io/serve"

	// RayWorkerReplicaNameKey names a multi-host replica group.
	RayWorkerReplicaNameKey = "ray.io/worker-group-replica-name"
	// RayWorkerReplicaIndexKey is the index of a worker replica in its group
	// (every worker pod, single- or multi-host, with KubeRay's
	// RayMultiHostIndexing gate, on by default in v1.7).
	RayWorkerReplicaIndexKey = "ray.io/worker-group-replica-index"
	// RayHostIndexKey is the index of a pod (host) within its multi-host replica.
	RayHostIndexKey = "ray.io/replica-host-index"

	// RayOriginatedFromCRNameLabelKey holds the name of the RayJob or RayService
	// that created a RayCluster or Job.
	RayOriginatedFromCRNameLabelKey = "ray.io/originated-from-cr-name"
	// RayOriginatedFromCRDLabelKey holds that object's kind (see RayOriginatedFromCRDLabelValue).
	RayOriginatedFromCRDLabelKey = "ray.io/originated-from-crd"
	// RayJobSubmissionModeLabelKey holds the JobSubmissionMode of the originating RayJob.
	RayJobSubmissionModeLabelKey = "ray.io/job-submission-mode"
	// RayCronJobNameLabelKey holds the name of the RayCronJob that created a RayJob.
	RayCronJobNameLabelKey = "ray.io/cronjob-name"
)

// RayOriginatedFromCRDLabelValue is the value of RayOriginatedFromCRDLabelKey
// for a kind (RayCluster, RayJob or RayService): the kind itself.
func RayOriginatedFromCRDLabelValue(kind string) string { return kind }

// Annotations.
const (
	// RayFTEnabledAnnotationKey ("true"/"false") turns GCS fault tolerance on or off.
	RayFTEnabledAnnotationKey = "ray.io/ft-enabled"
	// RayExternalStorageNSAnnotationKey is the Redis namespace of GCS FT.
	RayExternalStorageNSAnnotationKey = "ray.io/external-storage-namespace"
	// UpgradeStrategyRecreateHashKey is the pod-template hash used by the Recreate upgrade strategy.
	UpgradeStrategyRecreateHashKey = "ray.io/upgrade-strategy-recreate-hash"
	// KubeRayVersion is the controller version that created a pod or cluster.
	KubeRayVersion = "ray.io/kuberay-version"
	// RayOverwriteContainerCmdAnnotationKey ("true") keeps the user's container command.
	RayOverwriteContainerCmdAnnotationKey = "ray.io/overwrite-container-cmd"
	// HashWithoutReplicasAndWorkersToDeleteKey is the RayService cluster-spec hash.
	HashWithoutReplicasAndWorkersToDeleteKey = "ray.io/hash-without-replicas-and-workers-to-delete"
	// NumWorkerGroupsKey is the number of worker groups when the hash was taken.
	NumWorkerGroupsKey = "ray.io/num-worker-groups"
	// DisableProvisionedHeadRestartAnnotationKey stops head re-creation once provisioned (SidecarMode).
	DisableProvisionedHeadRestartAnnotationKey = "ray.io/disable-provisioned-head-restart"
	// GCSFaultToleranceDeletionTimeoutAnnotationKey overrides the Redis cleanup finalizer timeout (seconds).
	GCSFaultToleranceDeletionTimeoutAnnotationKey = "ray.io/gcs-ft-deletion-timeout"
	// RayServiceInitializingTimeoutAnnotation is a duration after which an initializing RayService fails.
	RayServiceInitializingTimeoutAnnotation = "ray.io/initializing-timeout"
	// EnableServeServiceKey ("true") asks for a <cluster>-serve-svc Service.
	EnableServeServiceKey = "ray.io/enable-serve-service"
	// EnableServeServiceTrue is the value that enables EnableServeServiceKey.
	EnableServeServiceTrue = "true"
	// RayCronJobTimestampAnnotationKey on a RayJob a RayCronJob created holds
	// the tick it was created for, RFC 3339 in UTC.
	RayCronJobTimestampAnnotationKey = "ray.io/cronjob-scheduled-timestamp"
)

// Finalizers.
const (
	// RayJobStopJobFinalizer stops the Ray job before a RayJob goes away.
	RayJobStopJobFinalizer = "ray.io/rayjob-finalizer"
	// RayServiceFinalizer cleans up before a RayService goes away.
	RayServiceFinalizer = "ray.io/rayservice-finalizer"
	// GCSFaultToleranceRedisCleanupFinalizer runs the Redis cleanup Job.
	GCSFaultToleranceRedisCleanupFinalizer = "ray.io/gcs-ft-redis-cleanup-finalizer"
)

// Values of spec.managedBy.
const (
	// KubeRayController is KubeRay's own controller.
	KubeRayController = "ray.io/kuberay-operator"
	// MultiKueueController is Kueue's MultiKueue dispatcher.
	MultiKueueController = "kueue.x-k8s.io/multikueue"
	// ManagedByRaydar marks objects reconciled by raydar's own loop.
	ManagedByRaydar = "raydar.io/raydar"
)

// AllowedManagedByValues are the values spec.managedBy may take.
var AllowedManagedByValues = []string{KubeRayController, MultiKueueController, ManagedByRaydar}

// Default ports of the head pod and their container-port names.
const (
	DefaultGcsServerPort      int32 = 6379
	DefaultDashboardPort      int32 = 8265
	DefaultClientPort         int32 = 10001
	DefaultServingPort        int32 = 8000
	DefaultMetricsPort        int32 = 8080
	DefaultDashboardAgentPort int32 = 52365

	GcsServerPortName      = "gcs-server"
	DashboardPortName      = "dashboard"
	ClientPortName         = "client"
	ServingPortName        = "serve"
	MetricsPortName        = "metrics"
	DashboardAgentPortName = "dashboard-agent"
)

// DefaultPorts maps each default port name to its number.
func DefaultPorts() map[string]int32 {
	return map[string]int32{
		GcsServerPortName:      DefaultGcsServerPort,
		DashboardPortName:      DefaultDashboardPort,
		ClientPortName:         DefaultClientPort,
		ServingPortName:        DefaultServingPort,
		MetricsPortName:        DefaultMetricsPort,
		DashboardAgentPortName: DefaultDashboardAgentPort,
	}
}

// Ray node types (values of RayNodeTypeLabelKey).
const (
	HeadNode         RayNodeType = "head"
	WorkerNode       RayNodeType = "worker"
	RedisCleanupNode RayNodeType = "redis-cleanup"
)

// RayCluster states (deprecated status.state).
const (
	Ready     ClusterState = "ready"
	Suspended ClusterState = "suspended"
	// Failed is deprecated and never set; kept so old objects still decode meaningfully.
	Failed ClusterState = "failed"
)

// RayCluster condition types.
const (
	RayClusterProvisioned    RayClusterConditionType = "RayClusterProvisioned"
	HeadPodReady             RayClusterConditionType = "HeadPodReady"
	RayClusterReplicaFailure RayClusterConditionType = "ReplicaFailure"
	RayClusterSuspending     RayClusterConditionType = "RayClusterSuspending"
	RayClusterSuspended      RayClusterConditionType = "RayClusterSuspended"
)

// RayCluster condition reasons.
const (
	AllPodRunningAndReadyFirstTime = "AllPodRunningAndReadyFirstTime"
	RayClusterPodsProvisioning     = "RayClusterPodsProvisioning"
	HeadPodNotFound                = "HeadPodNotFound"
	HeadPodRunningAndReady         = "HeadPodRunningAndReady"
	UnknownReason                  = "Unknown"

	// ReplicaFailure reasons.
	FailedCreateHeadPod   = "FailedCreateHeadPod"
	FailedCreateWorkerPod = "FailedCreateWorkerPod"
	FailedDeleteHeadPod   = "FailedDeleteHeadPod"
	FailedDeleteWorkerPod = "FailedDeleteWorkerPod"
	FailedDeleteAllPods   = "FailedDeleteAllPods"
)

// Event reasons, KubeRay's (v1.7.0 controllers/ray/utils/constant.go,
// K8sEventType). Users alert on them, so raydar's Events carry the same
// reason for the same fact. A failed pod write has both an Event reason
// (FailedTo...) and a ReplicaFailure condition reason (Failed..., above),
// paired as KubeRay pairs them in raycluster_controller.go; other failures
// (Services, the autoscaler's RBAC, the Ingress, the clean-up Job) have an
// Event only and leave the ReplicaFailure condition as it was.
const (
	// RayCluster.
	EventInvalidRayClusterSpec     = "InvalidRayClusterSpec"
	EventInvalidRayClusterMetadata = "InvalidRayClusterMetadata"
	EventInvalidRayClusterStatus   = "InvalidRayClusterStatus"

	EventCreatedHeadPod        = "CreatedHeadPod"
	EventFailedToCreateHeadPod = "FailedToCreateHeadPod"
	EventDeletedHeadPod        = "DeletedHeadPod"
	EventFailedToDeleteHeadPod = "FailedToDeleteHeadPod"

	EventCreatedWorkerPod                  = "CreatedWorkerPod"
	EventFailedToCreateWorkerPod           = "FailedToCreateWorkerPod"
	EventDeletedWorkerPod                  = "DeletedWorkerPod"
	EventFailedToDeleteWorkerPod           = "FailedToDeleteWorkerPod"
	EventFailedToDeleteWorkerPodCollection = "FailedToDeleteWorkerPodCollection"

	EventDeletedPod                  = "DeletedPod"
	EventFailedToDeletePod           = "FailedToDeletePod"
	EventFailedToDeletePodCollection = "FailedToDeletePodCollection"

	EventCreatedRedisCleanupJob        = "CreatedRedisCleanupJob"
	EventFailedToCreateRedisCleanupJob = "FailedToCreateRedisCleanupJob"
	EventForceDeletedStuckCluster      = "ForceDeletedStuckCluster"

	EventCreatedService        = "CreatedService"
	EventUpdatedService        = "UpdatedService"
	EventFailedToCreateService = "FailedToCreateService"
	EventFailedToUpdateService = "FailedToUpdateService"
	EventFailedToDeleteService = "FailedToDeleteService"
	EventDeletedService        = "DeletedService"

	EventCreatedServiceAccount            = "CreatedServiceAccount"
	EventFailedToCreateServiceAccount     = "FailedToCreateServiceAccount"
	EventAutoscalerServiceAccountNotFound = "AutoscalerServiceAccountNotFound"
	EventCreatedRole                      = "CreatedRole"
	EventFailedToCreateRole               = "FailedToCreateRole"
	EventCreatedRoleBinding               = "CreatedRoleBinding"
	EventFailedToCreateRoleBinding        = "FailedToCreateRoleBinding"

	EventCreatedIngress        = "CreatedIngress"
	EventFailedToCreateIngress = "FailedToCreateIngress"
	EventUpdatedIngress        = "UpdatedIngress"
	EventFailedToUpdateIngress = "FailedToUpdateIngress"

	EventCreatedPVC        = "CreatedPVC"
	EventFailedToCreatePVC = "FailedToCreatePVC"

	// RayJob (and, for its RayClusters, RayService). UpdatedRayCluster: a
	// RayJob or a RayService changed the spec of a RayCluster it owns in
	// place (KubeRay v1.6.2: a RayJob suspending every worker group for
	// deletion rule DeleteWorkers, a RayService updating its active or
	// pending cluster); its action is Update.
	EventInvalidRayJobSpec             = "InvalidRayJobSpec"
	EventInvalidRayJobMetadata         = "InvalidRayJobMetadata"
	EventInvalidRayJobStatus           = "InvalidRayJobStatus"
	EventCreatedRayJobSubmitter        = "CreatedRayJobSubmitter"
	EventDeletedRayJobSubmitter        = "DeletedRayJobSubmitter"
	EventFailedToCreateRayJobSubmitter = "FailedToCreateRayJobSubmitter"
	EventFailedToDeleteRayJobSubmitter = "FailedToDeleteRayJobSubmitter"
	EventCreatedRayCluster             = "CreatedRayCluster"
	EventUpdatedRayCluster             = "UpdatedRayCluster"
	EventDeletedRayCluster             = "DeletedRayCluster"
	EventFailedToCreateRayCluster      = "FailedToCreateRayCluster"
	EventFailedToDeleteRayCluster      = "FailedToDeleteRayCluster"
	EventFailedToUpdateRayCluster      = "FailedToUpdateRayCluster"
	EventRayClusterNotFound            = "RayClusterNotFound"
	// A finished RayJob's batch-scheduler gang object brought to what
	// its cluster still holds (KubeRay v1.6.2 utils/constant.go,
	// rayjob_controller.go:1511-1533), or not.
	EventBatchSchedulerCleanedUp       = "BatchSchedulerCleanedUp"
	EventFailedToCleanupBatchScheduler = "FailedToCleanupBatchScheduler"

	// RayService.
	EventInvalidRayServiceSpec           = "InvalidRayServiceSpec"
	EventInvalidRayServiceMetadata       = "InvalidRayServiceMetadata"
	EventRayServiceInitializingTimeout   = "RayServiceInitializingTimeout"
	EventUpdatedHeadPodServeLabel        = "UpdatedHeadPodServeLabel"
	EventUpdatedServeApplications        = "UpdatedServeApplications"
	EventUpdatedServeTargetCapacity      = "UpdatedServeTargetCapacity"
	EventFailedToUpdateHeadPodServeLabel = "FailedToUpdateHeadPodServeLabel"
	EventFailedToUpdateServeApplications = "FailedToUpdateServeApplications"
	EventFailedToUpdateTargetCapacity    = "FailedToUpdateTargetCapacity"
	// The Gateway and HTTPRoute of an incremental upgrade (KubeRay v1.6.2
	// utils/constant.go:397-407).
	EventCreatedGateway          = "CreatedGateway"
	EventUpdatedGateway          = "UpdatedGateway"
	EventFailedToCreateGateway   = "FailedToCreateGateway"
	EventFailedToUpdateGateway   = "FailedToUpdateGateway"
	EventCreatedHTTPRoute        = "CreatedHTTPRoute"
	EventUpdatedHTTPRoute        = "UpdatedHTTPRoute"
	EventFailedToCreateHTTPRoute = "FailedToCreateHTTPRoute"
	EventFailedToUpdateHTTPRoute = "FailedToUpdateHTTPRoute"

	// RayCronJob. KubeRay has the first two; the others are raydar's.
	EventInvalidRayCronJobSpec = "InvalidRayCronJobSpec"
	EventSuspendedRayCronJob   = "SuspendedRayCronJob"
	// EventCreatedRayJob: a tick (or a manual trigger) created a RayJob.
	EventCreatedRayJob = "CreatedRayJob"
	// EventSkippedMissedTicks: ticks missed while nothing reconciled (the
	// operator was down, or the RayCronJob suspended) were skipped; only
	// the latest missed tick got a RayJob.
	EventSkippedMissedTicks = "SkippedMissedTicks"
)

// RayCronJob condition type and reasons (raydar's; KubeRay writes none).
const (
	// RayCronJobScheduleValid is False while spec.schedule, spec.timeZone or
	// spec.jobTemplate is invalid; its message names the field.
	RayCronJobScheduleValid = "ScheduleValid"

	RayCronJobReasonValid              = "Valid"
	RayCronJobReasonInvalidSchedule    = "InvalidSchedule"
	RayCronJobReasonInvalidTimeZone    = "InvalidTimeZone"
	RayCronJobReasonInvalidJobTemplate = "InvalidJobTemplate"
	RayCronJobReasonInvalidName        = "InvalidName"
)

// Autoscaler, auth, GCS FT, upgrade and network-policy enum values.
const (
	UpscalingModeDefault      UpscalingMode = "Default"
	UpscalingModeAggressive   UpscalingMode = "Aggressive"
	UpscalingModeConservative UpscalingMode = "Conservative"

	AutoscalerVersionV1 AutoscalerVersion = "v1"
	AutoscalerVersionV2 AutoscalerVersion = "v2"

	AuthModeDisabled AuthMode = "disabled"
	AuthModeToken    AuthMode = "token"

	GcsFTBackendRedis   GcsFaultToleranceBackend = "redis"
	GcsFTBackendRocksDB GcsFaultToleranceBackend = "rocksdb"

	DeleteWithClusterGCSStorageDeletionPolicy GCSStorageDeletionPolicy = "DeleteWithCluster"
	RetainGCSStorageDeletionPolicy            GCSStorageDeletionPolicy = "Retain"

	RayClusterRecreate    RayClusterUpgradeType = "Recreate"
	RayClusterUpgradeNone RayClusterUpgradeType = "None"

	NetworkPolicyDenyAll        NetworkPolicyMode = "DenyAll"
	NetworkPolicyDenyAllIngress NetworkPolicyMode = "DenyAllIngress"
	NetworkPolicyDenyAllEgress  NetworkPolicyMode = "DenyAllEgress"

	IngressPathTypeExact                  IngressPathType = "Exact"
	IngressPathTypePrefix                 IngressPathType = "Prefix"
	IngressPathTypeImplementationSpecific IngressPathType = "ImplementationSpecific"
)

// Operator-level defaults applied when a field is unset.
const (
	DefaultIngressPath                    = "/"
	DefaultRayClusterDeletionDelaySeconds = int32(60)
	DefaultSubmitterBackoffLimit          = int32(2)
	DefaultMaxSurgePercent                = int32(100)
	DefaultAutoscalerIdleTimeoutSeconds   = int32(60)
	DefaultAutoscalerCPU                  = "500m"
	DefaultAutoscalerMemory               = "512Mi"
	DefaultGCSStorageSize                 = "1Gi"
	DefaultSubmitterCPURequest            = "500m"
	DefaultSubmitterMemoryRequest         = "200Mi"
	DefaultSubmitterCPULimit              = "1"
	DefaultSubmitterMemoryLimit           = "1Gi"
	DefaultGCSFTDeletionTimeoutSeconds    = int32(300)
	DefaultWorkerGroupMaxReplicas         = int32(2147483647)
	RayContainerIndex                     = 0
)

// Ray job statuses, as reported by the Ray dashboard.
const (
	JobStatusNew       JobStatus = ""
	JobStatusPending   JobStatus = "PENDING"
	JobStatusRunning   JobStatus = "RUNNING"
	JobStatusStopped   JobStatus = "STOPPED"
	JobStatusSucceeded JobStatus = "SUCCEEDED"
	JobStatusFailed    JobStatus = "FAILED"
)

// AllJobStatuses lists every JobStatus.
var AllJobStatuses = []JobStatus{
	JobStatusNew, JobStatusPending, JobStatusRunning, JobStatusStopped, JobStatusSucceeded, JobStatusFailed,
}

// IsJobTerminal reports whether a Ray job status is final (STOPPED, SUCCEEDED, FAILED),
// like Ray's JobStatus.is_terminal().
func IsJobTerminal(s JobStatus) bool {
	return s == JobStatusStopped || s == JobStatusSucceeded || s == JobStatusFailed
}

// IsTerminal is IsJobTerminal as a method.
func (s JobStatus) IsTerminal() bool { return IsJobTerminal(s) }

// RayJob deployment statuses.
const (
	JobDeploymentStatusNew              JobDeploymentStatus = ""
	JobDeploymentStatusInitializing     JobDeploymentStatus = "Initializing"
	JobDeploymentStatusRunning          JobDeploymentStatus = "Running"
	JobDeploymentStatusComplete         JobDeploymentStatus = "Complete"
	JobDeploymentStatusFailed           JobDeploymentStatus = "Failed"
	JobDeploymentStatusValidationFailed JobDeploymentStatus = "ValidationFailed"
	JobDeploymentStatusSuspending       JobDeploymentStatus = "Suspending"
	JobDeploymentStatusSuspended        JobDeploymentStatus = "Suspended"
	JobDeploymentStatusRetrying         JobDeploymentStatus = "Retrying"
	JobDeploymentStatusWaiting          JobDeploymentStatus = "Waiting"
)

// AllJobDeploymentStatuses lists every JobDeploymentStatus.
var AllJobDeploymentStatuses = []JobDeploymentStatus{
	JobDeploymentStatusNew, JobDeploymentStatusInitializing, JobDeploymentStatusRunning,
	JobDeploymentStatusComplete, JobDeploymentStatusFailed, JobDeploymentStatusValidationFailed,
	JobDeploymentStatusSuspending, JobDeploymentStatusSuspended, JobDeploymentStatusRetrying,
	JobDeploymentStatusWaiting,
}

// IsJobDeploymentTerminal reports whether a deployment status is final (Complete or Failed).
func IsJobDeploymentTerminal(s JobDeploymentStatus) bool {
	return s == JobDeploymentStatusComplete || s == JobDeploymentStatusFailed
}

// IsTerminal is IsJobDeploymentTerminal as a method.
func (s JobDeploymentStatus) IsTerminal() bool { return IsJobDeploymentTerminal(s) }

// RayJob failure reasons (status.reason).
const (
	SubmissionFailed                                 JobFailedReason = "SubmissionFailed"
	DeadlineExceeded                                 JobFailedReason = "DeadlineExceeded"
	PreRunningDeadlineExceeded                       JobFailedReason = "PreRunningDeadlineExceeded"
	AppFailed                                        JobFailedReason = "AppFailed"
	JobDeploymentStatusTransitionGracePeriodExceeded JobFailedReason = "JobDeploymentStatusTransitionGracePeriodExceeded"
	JobStatusCheckTimeoutExceeded                    JobFailedReason = "JobStatusCheckTimeoutExceeded"
	ValidationFailed                                 JobFailedReason = "ValidationFailed"
)

// RayJob submission modes.
const (
	K8sJobMode      JobSubmissionMode = "K8sJobMode"
	HTTPMode        JobSubmissionMode = "HTTPMode"
	InteractiveMode JobSubmissionMode = "InteractiveMode"
	SidecarMode     JobSubmissionMode = "SidecarMode"
)

// AllJobSubmissionModes lists every JobSubmissionMode.
var AllJobSubmissionModes = []JobSubmissionMode{K8sJobMode, HTTPMode, InteractiveMode, SidecarMode}

// RayJob deletion policies.
const (
	DeleteCluster DeletionPolicyType = "DeleteCluster"
	DeleteWorkers DeletionPolicyType = "DeleteWorkers"
	DeleteSelf    DeletionPolicyType = "DeleteSelf"
	DeleteNone    DeletionPolicyType = "DeleteNone"
)

// RayJob condition types and reasons. KubeRay writes no RayJob conditions;
// these are raydar's. Reasons reuse the JobFailedReason strings where they apply.
const (
	// RayJobClusterReady is true when the job's cluster is ready.
	RayJobClusterReady = "ClusterReady"
	// RayJobSubmitted is true once the Ray job has been submitted.
	RayJobSubmitted = "JobSubmitted"
	// RayJobComplete is true when the job deployment reached Complete.
	RayJobComplete = "Complete"
	// RayJobFailedCondition is true when the job deployment reached Failed.
	RayJobFailedCondition = "Failed"
	// RayJobSuspended is true while the RayJob is suspended.
	RayJobSuspended = "Suspended"
)

// RayJob condition reasons that are not JobFailedReasons.
const (
	RayJobReasonClusterCreating = "ClusterCreating"
	RayJobReasonClusterReady    = "ClusterReady"
	RayJobReasonSubmitted       = "Submitted"
	RayJobReasonSucceeded       = "Succeeded"
	RayJobReasonSuspended       = "SuspendRequested"
)

// Container names.
const (
	// RayJobSubmitterContainerName is the SidecarMode submitter in the head pod
	// and the container of the K8sJobMode submitter Job.
	RayJobSubmitterContainerName = "ray-job-submitter"
	// AutoscalerContainerName is the autoscaler sidecar.
	AutoscalerContainerName = "autoscaler"
)

// RayService statuses and conditions.
const (
	Running    ServiceStatus = "Running"
	NotRunning ServiceStatus = ""

	NewClusterWithIncrementalUpgrade RayServiceUpgradeType = "NewClusterWithIncrementalUpgrade"
	NewCluster                       RayServiceUpgradeType = "NewCluster"
	None                             RayServiceUpgradeType = "None"

	RayServiceReady    RayServiceConditionType = "Ready"
	UpgradeInProgress  RayServiceConditionType = "UpgradeInProgress"
	RollbackInProgress RayServiceConditionType = "RollbackInProgress"
	// RayServiceSuspending and RayServiceSuspended are the suspend conditions.
	RayServiceSuspending RayServiceConditionType = "Suspending"
	RayServiceSuspended  RayServiceConditionType = "Suspended"

	RayServiceInitializing         RayServiceConditionReason = "Initializing"
	RayServiceInitializingTimeout  RayServiceConditionReason = "InitializingTimeout"
	ZeroServeEndpoints             RayServiceConditionReason = "ZeroServeEndpoints"
	NonZeroServeEndpoints          RayServiceConditionReason = "NonZeroServeEndpoints"
	BothActivePendingClustersExist RayServiceConditionReason = "BothActivePendingClustersExist"
	NoPendingCluster               RayServiceConditionReason = "NoPendingCluster"
	NoActiveCluster                RayServiceConditionReason = "NoActiveCluster"
	RayServiceValidationFailed     RayServiceConditionReason = "ValidationFailed"
	SuspendRequested               RayServiceConditionReason = "SuspendRequested"
	SuspendInProgress              RayServiceConditionReason = "SuspendInProgress"
	SuspendComplete                RayServiceConditionReason = "SuspendComplete"
	RayServiceResumed              RayServiceConditionReason = "RayServiceResumed"
)

// Serve application statuses (Ray Serve's ApplicationStatus).
const (
	ApplicationStatusNotStarted   = "NOT_STARTED"
	ApplicationStatusDeploying    = "DEPLOYING"
	ApplicationStatusRunning      = "RUNNING"
	ApplicationStatusDeployFailed = "DEPLOY_FAILED"
	ApplicationStatusDeleting     = "DELETING"
	ApplicationStatusUnhealthy    = "UNHEALTHY"
)

// Serve deployment statuses (Ray Serve's DeploymentStatus).
const (
	DeploymentStatusUpdating  = "UPDATING"
	DeploymentStatusHealthy   = "HEALTHY"
	DeploymentStatusUnhealthy = "UNHEALTHY"
)

// raydar's own keys. They extend ray.io/v1 without changing its schema, so a
// cluster that runs KubeRay's CRDs accepts them too.
const (
	// StopRequestedAnnotationKey on a RayJob asks the RayJob reconciler to stop
	// the Ray job (declarative stop). Its value identifies the request (who and
	// when); the reconciler stops the job exactly once per value and records
	// the outcome in JobStopRecordAnnotationKey (and, for display, in
	// status.conditions as JobStopConditionType).
	StopRequestedAnnotationKey = "raydar.io/stop-requested"
	// JobStopRecordAnnotationKey on a RayJob is raydar's durable record of a
	// stop it sent (which Ray job, for which request or the deletion, whether
	// the dashboard confirmed it), written with a resourceVersion precondition.
	// It is an annotation because KubeRay's RayJob CRD (v1.5.0) has no
	// status.conditions and prunes them: the record must survive either CRD.
	JobStopRecordAnnotationKey = "raydar.io/stop-record"
	// ManagedByRaydarAnnotationKey set to "true" on a RayCluster, RayJob or
	// RayService opts it in to raydar's reconcile loop while a KubeRay
	// operator runs, like spec.managedBy: raydar.io/raydar — which KubeRay's
	// CRDs refuse (their managedBy allows only KubeRay's and MultiKueue's
	// values). The annotation works with both CRDs.
	ManagedByRaydarAnnotationKey = "raydar.io/managed-by-raydar"
	// JobStopConditionType is the RayJob condition that reports a requested stop:
	// Status True once the dashboard confirmed it (stopped, already terminal or unknown).
	JobStopConditionType = "StopConfirmed"
	// AuditEventSource is the reportingController of Events raydar records for
	// actions taken by a person through the TUI or CLI.
	AuditEventSource = "raydar.io/actions"

	// ServeConfigHashAnnotationKey on a RayService's cluster holds the hash
	// of the serveConfigV2 its dashboard last accepted, so a restarted
	// raydar knows whether to submit again.
	ServeConfigHashAnnotationKey = "raydar.io/serve-config-hash"
	// DeleteAfterAnnotationKey on a RayService's old cluster holds the RFC
	// 3339 time after which it is deleted (rayClusterDeletionDelaySeconds
	// after traffic switched away), so the delay survives a restart.
	DeleteAfterAnnotationKey = "raydar.io/delete-after"
	// RayServiceReplicasHashAnnotationKey on a RayService's cluster holds
	// the hash of the replicas, min and max last pushed from the RayService,
	// so replica changes are applied once and the autoscaler stays free.
	RayServiceReplicasHashAnnotationKey = "raydar.io/rayservice-replicas-hash"
	// CronJobInstantiateAnnotationKey on a RayJob says how it was created
	// from its RayCronJob: CronJobInstantiateManual for "trigger now" (as
	// kubectl create job --from=cronjob/... writes
	// cronjob.kubernetes.io/instantiate: manual); absent for a tick.
	CronJobInstantiateAnnotationKey = "raydar.io/cronjob-instantiate"
	// CronJobInstantiateManual is the value of CronJobInstantiateAnnotationKey
	// on a RayJob triggered by hand.
	CronJobInstantiateManual = "manual"
)
