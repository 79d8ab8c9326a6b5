package why

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/raydar/raydar/rayapi/dashboard"
	"github.com/raydar/raydar/rayapi/podview"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// Cause is one reason an object is not progressing.
type Cause struct {
	// Code is a stable word for scripts (`raydar why -o json`), e.g.
	// Unschedulable, ImagePull, CrashLoop, WaitingForGCS, MissingConfig,
	// CreateRefused, InvalidSpec, Suspended, OtherOperator, NotReconciled,
	// WriteFailed, ClusterNotReady, DashboardUnreachable, SubmitterFailed,
	// DeadlineSoon, PendingClusterNotReady, AppDeployFailed,
	// DeploymentUnhealthy, NoServeEndpoints, RayInfeasible, JobDemand, ServeDemand, AutoscalerDown,
	// AutoscalerForbidden, AutoscalerNotActing, ScaleDownStalled,
	// GangSchedulingIgnored, PodGroupNotRunning, GatewayAPIMissing,
	// GatewayClassMissing, GatewayNotReady, HTTPRouteNotAccepted, GPUsIdle,
	// WaitingForOperator, WorkersMissing, StatusContradiction.
	Code string `json:"code"`
	// Subject is what the cause is about, in kubectl's words:
	// "pod ray-head-x", "group gpu", "RayCluster ns/name".
	Subject string `json:"subject,omitempty"`
	// Summary is one line that names the cause specifically ("2 gpu
	// workers Pending: each asks 4 nvidia.com/gpu, the most any node
	// offers is 0"). The WHY column shows it cut to fit.
	Summary string `json:"summary"`
	// Evidence is what shows it: Event messages, container states, fields.
	Evidence []string `json:"evidence,omitempty"`
	// Fix says what to do.
	Fix string `json:"fix,omitempty"`
	// Rank orders causes, lower first: the most decisive cause (the one
	// whose fix unblocks the others) comes first.
	Rank int `json:"-"`
	// demand is the Ray resource shape a RayInfeasible, JobDemand or
	// ServeDemand cause is about (shapeWords), so that a job's or
	// service's cause and its cluster's are stated once.
	demand string
}

// Nodes are the cluster's nodes when raydar may read them; Known is false
// when it may not (no permission, not watched) and node-specific evidence
// ("the most any node offers") is then left out rather than guessed.
type Nodes struct {
	Known bool
	List  []*corev1.Node
}

// Reconciler is who reconciles ray.io objects, as far as raydar knows.
type Reconciler struct {
	// Known is false when raydar cannot tell; no cause is then derived.
	Known bool
	// Active is true when a raydar reconciler (this process or the holder
	// of the leader lease) is working.
	Active bool
	// Who says who in words ("this raydar (leader)", "raydar operator
	// raydar-system/raydar-7f9 (lease holder)"), or why no one
	// ("--readonly", "no leader: lease raydar-system/raydar expired 3m ago").
	Who string
	// OnlyRaydar: Known speaks of raydar only, read from its leader Lease
	// by a raydar that did not look for other operators (its loop is off,
	// or `raydar why`). KubeRay may reconcile the object and still leave
	// status.observedGeneration behind (v1.6.2 writes the status only when
	// something in it but observedGeneration changed: utils/consistency.go
	// InconsistentRayClusterStatus), so only a status never written says
	// the object is not reconciled.
	OnlyRaydar bool
}

// ClusterInput is what the cache holds about one RayCluster.
type ClusterInput struct {
	Cluster *rayv1.RayCluster
	// Pods are the cluster's pods (label ray.io/cluster).
	Pods []*podview.Pod
	// Events are the Events about the cluster and its pods, oldest first.
	Events     []*corev1.Event
	Nodes      Nodes
	Reconciler Reconciler
	// Capacity is Ray's view when the dashboard answered; nil otherwise.
	Capacity *dashboard.Capacity
	// DemandSince is when the caller first saw Ray's current pending
	// demand (Capacity.Pending, the same shapes since); zero when unknown.
	// "The autoscaler is not acting" needs it.
	DemandSince time.Time
	// AutoscalerAccess is what the head's ServiceAccount may do of what
	// Ray's autoscaler needs; nil when not asked.
	AutoscalerAccess *AutoscalerAccess
	// GPUs is what Ray's own gauges say of the GPUs the cluster's pods
	// hold (kube/gauges); nil when not read.
	GPUs *GPUGauges
	// SpecSeen is when the caller first saw the object's current
	// generation; zero when unknown. WaitingForOperator and WorkersMissing
	// time the wait from the object's managedFields, and from this when
	// they are stripped (the TUI's cache).
	SpecSeen time.Time
	Now      time.Time
}

// GPUGauges are the GPUs a cluster's pods hold, as Ray's gauges read them,
// and what counts as idle.
type GPUGauges struct {
	GPUs []GPUReading
	// BelowPct: a GPU under this utilisation is idle once it has been so
	// for IdleFor; IdleFor 0 is one reading (`raydar why`), which says
	// "now" rather than for how long.
	BelowPct float64
	IdleFor  time.Duration
}

// GPUReading is one GPU of a pod.
type GPUReading struct {
	Pod     string
	Index   int
	UtilPct float64
	// Below is how long it has been under BelowPct as the reader saw it
	// (0 with one reading).
	Below time.Duration
}

// JobInput is what the cache holds about one RayJob.
type JobInput struct {
	Job *rayv1.RayJob
	// Cluster is the job's RayCluster (status.rayClusterName or the
	// clusterSelector's), nil when there is none (yet).
	Cluster *ClusterInput
	// Submitters are the pods of the job's submitter Kubernetes Job
	// (K8sJobMode), newest last; SubmitterLog their last log lines when
	// known.
	Submitters   []*podview.Pod
	SubmitterLog []string
	// Events are the Events about the RayJob, oldest first.
	Events     []*corev1.Event
	Reconciler Reconciler
	// SpecSeen is when the caller first saw the object's current
	// generation; zero when unknown. WaitingForOperator and WorkersMissing
	// time the wait from the object's managedFields, and from this when
	// they are stripped (the TUI's cache).
	SpecSeen time.Time
	Now      time.Time
}

// ServiceInput is what the cache holds about one RayService.
type ServiceInput struct {
	Service *rayv1.RayService
	// Active and Pending are its clusters, nil when there is none.
	Active, Pending *ClusterInput
	// Events are the Events about the RayService, oldest first.
	Events     []*corev1.Event
	Reconciler Reconciler
	// Gateway is what was read of the Gateway API objects of a RayService
	// with NewClusterWithIncrementalUpgrade (gateway.go); nil when they
	// were not read: nothing is then said of them.
	Gateway *GatewayInput
	// SpecSeen is when the caller first saw the object's current
	// generation; zero when unknown. WaitingForOperator and WorkersMissing
	// time the wait from the object's managedFields, and from this when
	// they are stripped (the TUI's cache).
	SpecSeen time.Time
	Now      time.Time
}
