package why

// Codes of causes (Cause.Code), stable words for scripts.
const (
	CodeInvalidSpec            = "InvalidSpec"
	CodeSuspended              = "Suspended"
	CodeOtherOperator          = "OtherOperator"
	CodeNotReconciled          = "NotReconciled"
	CodeCreateRefused          = "CreateRefused"
	CodeWriteFailed            = "WriteFailed"
	CodeMissingConfig          = "MissingConfig"
	CodeUnschedulable          = "Unschedulable"
	CodeImagePull              = "ImagePull"
	CodeCrashLoop              = "CrashLoop"
	CodeWaitingForGCS          = "WaitingForGCS"
	CodeRayInfeasible          = "RayInfeasible"
	CodeClusterNotReady        = "ClusterNotReady"
	CodeDashboardUnreachable   = "DashboardUnreachable"
	CodeSubmitterFailed        = "SubmitterFailed"
	CodeJobFailed              = "JobFailed"
	CodeDeadlineSoon           = "DeadlineSoon"
	CodePendingClusterNotReady = "PendingClusterNotReady"
	CodeAppDeployFailed        = "AppDeployFailed"
	CodeDeploymentUnhealthy    = "DeploymentUnhealthy"
	CodeNoServeEndpoints       = "NoServeEndpoints"
)

// Ranks, lower first: what blocks everything (the spec, suspend, who
// reconciles), then raydar's refused writes, then the head's pods, the
// workers' pods, workers waiting for the head, Ray's own demand, and last
// what the job or service says about itself.
const (
	rankInvalidSpec   = 0
	rankSuspended     = 1
	rankOtherOperator = 2
	rankNotReconciled = 3
	rankCreateRefused = 10
	rankWriteFailed   = 11
	rankHeadPod       = 20 // + podRank*
	rankWorkerPod     = 30 // + podRank*
	rankWaitingForGCS = 40
	rankRayDemand     = 45
	rankJobFailed     = 50
	rankSubmitter     = 51
	rankDashboard     = 52
	rankClusterReady  = 55
	rankDeadline      = 58
	rankApp           = 60
	rankDeployment    = 61
	rankEndpoints     = 62
)

// Pod-level causes in the order their fixes unblock each other.
const (
	podRankMissingConfig = 0
	podRankUnschedulable = 1
	podRankImagePull     = 2
	podRankCrashLoop     = 3
)

// Event reasons raydar's reconcile gate emits on an object it leaves
// alone (controller/kit.ReasonManagedElsewhere, kit.ReasonOtherOperator;
// copied: rayapi does not import the controller).
const (
	reasonManagedElsewhere = "ManagedElsewhere"
	reasonOtherOperator    = "OtherOperatorDetected"
	// reasonDashboardUnreachable is controller/rayjob's and
	// controller/rayservice's Warning when the dashboard cannot be asked.
	reasonDashboardUnreachable = "DashboardUnreachable"
	// reasonFailedSubmit and reasonSubmitted are controller/rayjob's
	// Events when an HTTPMode submission failed or went through.
	reasonFailedSubmit = "FailedSubmit"
	reasonSubmitted    = "Submitted"
	// reasonSpecValid is controller/rayjob's Normal Event once a refused
	// spec is valid again.
	reasonSpecValid = "SpecValid"
	// Kubernetes' own reasons.
	reasonFailedScheduling = "FailedScheduling"
	reasonFailedMount      = "FailedMount"
	reasonUnschedulable    = "Unschedulable"
)

// kueueQueueLabel names the Kueue LocalQueue an object is queued in; Kueue
// suspends it until admitted.
const kueueQueueLabel = "kueue.x-k8s.io/queue-name"
