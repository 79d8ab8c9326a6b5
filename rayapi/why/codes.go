package why

import "slices"

// Codes of causes (Cause.Code): stable words for scripts
// (`raydar why -o json`).
const (
	// CodeInvalidSpec: the reconciler refuses the spec; the summary names
	// the field.
	CodeInvalidSpec = "InvalidSpec"
	// CodeSuspended: spec.suspend is set, by the user or by Kueue (queued).
	CodeSuspended = "Suspended"
	// CodeOtherOperator: another controller manages the object
	// (spec.managedBy, or raydar's gate left it to a running KubeRay).
	CodeOtherOperator = "OtherOperator"
	// CodeNotReconciled: no raydar reconciler is active and the status
	// does not describe the spec.
	CodeNotReconciled = "NotReconciled"
	// CodeWaitingForOperator: a raydar reconciler is active but the
	// object's status has not described its current generation for longer
	// than OperatorActsWithin: since when the spec changed and how long it
	// has waited, with the reconciler's own view (the last write error,
	// time in the current state, head restarts). Inferred from the API
	// objects (queue.go), not read from the operator's work queue.
	CodeWaitingForOperator = "WaitingForOperator"
	// CodeWorkersMissing: fewer worker pods exist than the RayCluster's
	// spec asks for, though the reconciler acted on the spec: how many of
	// how many, per group, and for how long at most; with the cluster's
	// time in its state and the head's restarts. Progress of a scale-up
	// (kuberay#4178), said once it takes longer than OperatorActsWithin.
	CodeWorkersMissing = "WorkersMissing"
	// CodeCreateRefused: a ResourceQuota, an admission webhook or another
	// policy refused an object raydar creates.
	CodeCreateRefused = "CreateRefused"
	// CodeWriteFailed: raydar's own write failed: no permission (RBAC), or
	// another error.
	CodeWriteFailed = "WriteFailed"
	// CodeMissingConfig: a ConfigMap, Secret (or a key of one) or
	// PersistentVolumeClaim the pods use does not exist.
	CodeMissingConfig = "MissingConfig"
	// CodeUnschedulable: pods stay Pending: which resource, how much a pod
	// asks, the most any node offers; selectors or taints no node suits.
	CodeUnschedulable = "Unschedulable"
	// CodeImagePull: an image cannot be pulled (or its name is invalid).
	CodeImagePull = "ImagePull"
	// CodeCrashLoop: a container crash-loops: its last exit code, or
	// OOMKilled with the memory limit.
	CodeCrashLoop = "CrashLoop"
	// CodeWaitingForGCS: workers' init containers wait for the head's GCS
	// while the head is not ready.
	CodeWaitingForGCS = "WaitingForGCS"
	// CodeRayInfeasible: Ray demand no pod will serve: no group offers the
	// shape per pod, or the groups that do cannot grow.
	CodeRayInfeasible = "RayInfeasible"
	// CodeJobDemand: a RayJob that has not started asks, in
	// entrypointNumCpus/entrypointNumGpus/entrypointResources, for what its
	// cluster does not give: no pod offers it, the groups that would cannot
	// grow, or Ray holds it as pending demand (their pods unschedulable, or
	// the autoscaler still to add one).
	CodeJobDemand = "JobDemand"
	// CodeServeDemand: a RayService's Serve deployment, while its
	// application is not RUNNING, asks per replica (ray_actor_options in
	// serveConfigV2, num_cpus 1 by Serve's default) for what its cluster
	// does not give: no pod offers it, the groups that would cannot grow,
	// or Ray holds it as pending demand.
	CodeServeDemand = "ServeDemand"
	// CodeAutoscalerDown: autoscaling is on but the head pod's autoscaler
	// sidecar is missing, crash-looping (restarts, last exit) or not
	// running: nothing scales the worker groups.
	CodeAutoscalerDown = "AutoscalerDown"
	// CodeAutoscalerForbidden: the head pod's ServiceAccount may not do what
	// Ray's autoscaler needs (a SubjectAccessReview says so, or the
	// sidecar's last exit was a 403).
	CodeAutoscalerForbidden = "AutoscalerForbidden"
	// CodeAutoscalerNotActing: Ray's pending demand, which a worker group
	// that may grow would hold, waited longer than AutoscalerActWithin and
	// no replicas were raised for it.
	CodeAutoscalerNotActing = "AutoscalerNotActing"
	// CodeScaleDownStalled: workers Ray reports idle for longer than
	// their group's idleTimeoutSeconds plus ScaleDownGrace are still
	// there, above minReplicas, and the autoscaler has neither lowered
	// replicas nor named them in workersToDelete.
	CodeScaleDownStalled = "ScaleDownStalled"
	// CodeStatusContradiction: a RayJob's status contradicts itself or
	// its RayCluster (rayapi/status JobContradiction, kuberay#2314):
	// jobStatus RUNNING while jobDeploymentStatus Failed, a terminal
	// jobStatus while still Running, Running while its cluster is gone or
	// not ready for long. Names both fields and their values.
	CodeStatusContradiction = "StatusContradiction"
	// CodeClusterNotReady: a RayJob's cluster is not ready (or not there)
	// and has no more specific cause of its own.
	CodeClusterNotReady = "ClusterNotReady"
	// CodeDashboardUnreachable: raydar cannot ask the head's dashboard.
	CodeDashboardUnreachable = "DashboardUnreachable"
	// CodeSubmitterFailed: the job's submission failed: the submitter pod
	// exited non-zero (exit code, last log lines) or the dashboard refused
	// the submission.
	CodeSubmitterFailed = "SubmitterFailed"
	// CodeJobFailed: the Ray job failed (its message), or a deadline fired.
	CodeJobFailed = "JobFailed"
	// CodeDeadlineSoon: activeDeadlineSeconds or preRunningDeadlineSeconds
	// fires within a minute or within 10% of it.
	CodeDeadlineSoon = "DeadlineSoon"
	// CodePendingClusterNotReady: a RayService's new (pending) cluster is
	// not ready and has no more specific cause of its own.
	CodePendingClusterNotReady = "PendingClusterNotReady"
	// CodeGatewayAPIMissing: a RayService asks for
	// NewClusterWithIncrementalUpgrade, which moves traffic through a
	// Gateway, and the cluster has no Gateway API (its CRDs are absent).
	CodeGatewayAPIMissing = "GatewayAPIMissing"
	// CodeGatewayClassMissing: no GatewayClass has the name
	// clusterUpgradeOptions.gatewayClassName gives.
	CodeGatewayClassMissing = "GatewayClassMissing"
	// CodeGatewayNotReady: the incremental upgrade's Gateway is not
	// created yet, or not Accepted or not Programmed (its condition's
	// reason and message quoted).
	CodeGatewayNotReady = "GatewayNotReady"
	// CodeHTTPRouteNotAccepted: the incremental upgrade's HTTPRoute is not
	// created yet, not Accepted by its Gateway, or its backends are not
	// resolved.
	CodeHTTPRouteNotAccepted = "HTTPRouteNotAccepted"
	// CodeAppDeployFailed: a Serve application is DEPLOY_FAILED.
	CodeAppDeployFailed = "AppDeployFailed"
	// CodeDeploymentUnhealthy: a Serve deployment (or application) is
	// UNHEALTHY.
	CodeDeploymentUnhealthy = "DeploymentUnhealthy"
	// CodeNoServeEndpoints: no pod backs the serve Service while the active
	// cluster is ready.
	CodeNoServeEndpoints = "NoServeEndpoints"
	// CodeGangSchedulingIgnored: the cluster carries a label one of
	// KubeRay's batch schedulers reads (ray.io/gang-scheduling-enabled,
	// volcano.sh/queue-name, yunikorn.apache.org/queue,
	// kai.scheduler/queue, …; rayapi/v1 BatchSchedulerLabels) that the
	// scheduler its pods were made for (or none) does not read, so it is
	// ignored. Informational: the cluster may be fine, so it ranks last.
	CodeGangSchedulingIgnored = "GangSchedulingIgnored"
	// CodePodGroupNotRunning: the cluster's pods belong to a Volcano
	// PodGroup (raydar or KubeRay run with --batch-scheduler volcano) and
	// some have waited unbound: only Volcano binds them, all minMember at
	// once, and it has not (not running, or the gang does not fit).
	CodePodGroupNotRunning = "PodGroupNotRunning"
	// CodeGPUsIdle: GPUs the cluster's pods hold are below the idle
	// threshold (Ray's own gauges): how many, which, for how long.
	// Informational: it never makes a cluster "not ready".
	CodeGPUsIdle = "GPUsIdle"
)

// Ranks, lower first: what blocks everything (the spec, suspend, who
// reconciles), then raydar's refused writes, then the head's pods, the
// workers' pods, workers waiting for the head, the autoscaler (down,
// refused, not acting), Ray's own demand, what the job or service says
// about itself, and last what is only worth knowing (labels raydar
// ignores).
const (
	rankInvalidSpec         = 0
	rankSuspended           = 1
	rankOtherOperator       = 2
	rankNotReconciled       = 3
	rankWaitingForOp        = 4 // the operator has not acted on the spec yet
	rankCreateRefused       = 10
	rankWriteFailed         = 11
	rankGangPending         = 15 // no pod of the gang starts before all are bound
	rankHeadPod             = 20 // + podRank*
	rankWorkerPod           = 30 // + podRank*
	rankWorkersMissing      = 38 // after what the existing pods say
	rankWaitingForGCS       = 40
	rankAutoscaler          = 42 // the sidecar down or refused: nothing scales
	rankAutoscalerIdle      = 44
	rankRayDemand           = 45
	rankJobFailed           = 50
	rankSubmitter           = 51
	rankDashboard           = 52
	rankGateway             = 53 // the Gateway API side of an incremental upgrade
	rankRoute               = 54
	rankClusterReady        = 55
	rankStatusContradiction = 57 // the job's own words, one of them stale
	rankDeadline            = 58
	rankApp                 = 60
	rankDeployment          = 61
	rankEndpoints           = 62
	rankIgnoredLabels       = 90 // informational: nothing may be wrong
	rankGPUsIdle            = 91 // informational: held, not used
)

// blocking reports whether some cause may hold the object back: any but
// the informational ones (rankIgnoredLabels and after), which must not
// stand in for a cluster's "not ready".
func blocking(cs []Cause) bool {
	return slices.ContainsFunc(cs, func(c Cause) bool { return c.Rank < rankIgnoredLabels })
}

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
