package rayjob

// The RayJob state machine as a pure function: Decide maps what was
// observed (the RayJob, its cluster, submitter, head pod, the dashboard's
// answer, what this process remembers, the time) to a Plan (the status to
// write, objects to create or delete, a submission, a stop and its record,
// Events, when to look again). No I/O, no clock, no randomness except
// through Observed.Now and NewSuffix. The phases are in decide_attempt.go
// (New, Initializing, Waiting, Retrying/Suspending, the end of an attempt),
// decide_running.go (Running), decide_cleanup.go (after the end) and
// decide_stop.go (the exactly-once stop).
//
// The behaviour follows KubeRay's RayJob controller (New → Initializing →
// Running → Complete/Failed, Waiting for InteractiveMode, Retrying,
// Suspending/Suspended) with these additions: raydar's conditions; a
// declarative stop (annotation raydar.io/stop-requested) carried out once
// per request; a deletion that stops the Ray job until the dashboard
// confirms, recorded on the object before the finalizer goes, and that gives
// up after a bound; requeues at the next deadline instead of every 3 s.

import (
	"slices"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/controller/kit"
	"github.com/raydar/raydar/controller/raycluster"
	"github.com/raydar/raydar/rayapi/dashboard"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// config holds the reconciler's tunables (see Options).
type config struct {
	ClusterDomain string
	// Build configures the RayJob's head Service like the cluster's.
	Build raycluster.BuildConfig
	// StopConfirmTimeout bounds how long a deleted RayJob keeps its
	// finalizer while the dashboard does not confirm the stop.
	StopConfirmTimeout time.Duration
	// StatusCheckTimeout: a Running job whose dashboard cannot be asked for
	// this long fails with JobStatusCheckTimeoutExceeded (KubeRay: 300 s).
	StatusCheckTimeout time.Duration
	// TransitionGracePeriod: a terminal Ray job whose K8sJobMode submitter
	// has not finished after this long fails with
	// JobDeploymentStatusTransitionGracePeriodExceeded (KubeRay: 300 s).
	TransitionGracePeriod time.Duration
	// SubmitterFinishedGrace: a submitter that finished while Ray does not
	// report a terminal job fails the RayJob after this long (KubeRay: 30 s).
	SubmitterFinishedGrace time.Duration
	// MinPoll and MaxPoll bound how often the dashboard is asked about a
	// running job: early often, then less, as the job ages.
	MinPoll, MaxPoll time.Duration
	// DashboardWarnAfter: a dashboard that cannot be asked for this long is
	// said by a DashboardUnreachable Warning (10 × MinPoll; a shorter blip,
	// such as a head not yet answering or one slow call on a loaded
	// machine, starts the failure clock and is not said).
	DashboardWarnAfter time.Duration
	// DeleteRayJobAfterJobFinishes: with shutdownAfterJobFinishes, delete
	// the RayJob itself instead of only its cluster (KubeRay's
	// DELETE_RAYJOB_CR_AFTER_JOB_FINISHES).
	DeleteRayJobAfterJobFinishes bool
}

func defaultConfig() config {
	return config{
		ClusterDomain:          "cluster.local",
		Build:                  raycluster.DefaultBuildConfig(),
		StopConfirmTimeout:     DefaultStopConfirmTimeout,
		StatusCheckTimeout:     300 * time.Second,
		TransitionGracePeriod:  300 * time.Second,
		SubmitterFinishedGrace: 30 * time.Second,
		MinPoll:                time.Second,
		MaxPoll:                10 * time.Second,
		DashboardWarnAfter:     10 * time.Second,
	}
}

// Observed is everything the reconciler read before deciding.
type Observed struct {
	Job *rayv1.RayJob
	Now time.Time
	// Cluster is the RayCluster named by status.rayClusterName (nil when
	// absent or not named yet).
	Cluster *rayv1.RayCluster
	// ClusterEmpty: Cluster is being deleted and none of its pods exists
	// any more, so no Ray job can run on it (read only for a deleted
	// RayJob).
	ClusterEmpty bool
	// Submitter is the K8sJobMode submitter Job (nil when absent).
	Submitter *batchv1.Job
	// HeadPod is the cluster's head pod (read in SidecarMode only).
	HeadPod *corev1.Pod
	// HeadService is the RayJob's own head Service "<rayjob>-head-svc"
	// (nil when absent).
	HeadService *corev1.Service
	// Group is the RayJob's batch-scheduler gang object (gang.go), read
	// only with --batch-scheduler, in Initializing and once finished; nil
	// when absent.
	Group client.Object
	// Dash is the dashboard's answer about status.jobId, when asked.
	Dash *DashAnswer
	// What this process remembers (memory.go) and the RayJob may not show
	// yet; Decide lays it over Job (remembered).
	//
	// StopFailures counts unconfirmed attempts of the last stop tried, for
	// the back-off; StopFailing names that stop (stopKey); StopLastAttempt
	// and StopLastError are the time and error of its last attempt.
	StopFailures    int
	StopFailing     string
	StopLastAttempt time.Time
	StopLastError   string
	// RememberedStop is a stop the dashboard confirmed to this process
	// (its record is written again while the RayJob does not show it).
	RememberedStop *StopRecord
	// CheckFailSince is the dashboard failure clock this process wrote for
	// Ray job CheckFailJobID, for a CRD that drops
	// status.jobStatusCheckFailureStartTime.
	CheckFailSince *metav1.Time
	CheckFailJobID string
	// StatusPrunesConditions: the API server drops status.conditions of
	// RayJobs (KubeRay's CRD), so they are not compared.
	StatusPrunesConditions bool
	Config                 config
	NewSuffix              func() string
}

// DashAnswer is one GetJobInfo answer.
type DashAnswer struct {
	Info *dashboard.JobInfo
	Err  error
}

// deletion names an object to delete (with a UID precondition).
type deletion struct {
	Name   string
	UID    string
	Reason string // in words, for the Event
}

// Plan is what the reconciler will do, in this order: add the finalizer,
// write the status (before anything that relies on what it records: a
// generated cluster name or submission ID), create/delete, submit, stop,
// remove the finalizer or delete the RayJob.
type Plan struct {
	// Skip is why raydar leaves the RayJob alone ("" otherwise): act says
	// it once and does nothing else.
	Skip            string
	AddFinalizer    bool
	RemoveFinalizer bool
	// Status is the status the RayJob has after this pass.
	Status rayv1.RayJobStatus
	// WriteStatus: Status differs from what is stored.
	WriteStatus bool

	// CreateGroup and UpdateGroup: the batch scheduler's gang object
	// (gang.go), written before the cluster; GroupCleanup: the write is
	// the finished RayJob's clean-up.
	CreateGroup  client.Object
	UpdateGroup  client.Object
	GroupCleanup bool

	CreateCluster   *rayv1.RayCluster
	DeleteCluster   *deletion
	SuspendWorkers  string // cluster whose worker groups get suspend=true
	CreateSubmitter *batchv1.Job
	DeleteSubmitter *deletion
	// CreateHeadService and UpdateHeadService keep the RayJob's head
	// Service on its cluster's head (KubeRay's reconcileServices).
	CreateHeadService *corev1.Service
	UpdateHeadService *corev1.Service
	Submit            *submission
	Stop              *StopCall
	// StopRecord is a stop record to write into the RayJob's annotation
	// (with a resourceVersion precondition) before the status; "" for none.
	StopRecord string
	DeleteSelf string // reason; "" keeps the RayJob

	Events       []kit.Event
	RequeueAfter time.Duration
}

// submission is an HTTPMode submission.
type submission struct {
	ClusterName string
	Request     dashboard.SubmitJobRequest
}

// Reasons of RayJob Events and conditions that are raydar's; KubeRay's
// Event reasons are rayapi/v1's Event* constants, their only home.
const (
	ReasonSubmitted            = "Submitted"
	reasonWaitingForCluster    = "WaitingForCluster"
	reasonClusterNotFound      = "ClusterNotFound"
	reasonClusterNameTaken     = "ClusterNameTaken"
	reasonRunning              = "Running"
	reasonWaitingForJobID      = "WaitingForJobID"
	ReasonCompleted            = "Completed"
	ReasonRetrying             = "Retrying"
	reasonSuspending           = "Suspending"
	reasonResumed              = "Resumed"
	reasonSpecValid            = "SpecValid"
	ReasonDashboardUnreachable = "DashboardUnreachable"
	reasonStopSent             = "StopSent"
	ReasonStopConfirmed        = "StopConfirmed"
	reasonStopFailed           = "StopFailed"
	ReasonStopNotConfirmed     = "StopNotConfirmed"
	reasonStopPending          = "StopPending"
	reasonStopRequested        = "StopRequested"
	reasonDeletedOnFinish      = "DeletedRayJob"
	reasonNotSubmitted         = "NotSubmitted"
	reasonNotComplete          = "NotComplete"
	reasonNotFailed            = "NotFailed"
	reasonNotSuspended         = "NotSuspended"
	reasonStopped              = "Stopped"
	reasonDeleteFailed         = "FailedDelete"
	reasonSubmitFailed         = "FailedSubmit"
)

// soon is the requeue after a write whose result the next pass acts on.
const soon = 200 * time.Millisecond

// Decide is the pure decision.
func Decide(o *Observed) *Plan {
	o, rewrite := remembered(o)
	p := &Plan{Status: *o.Job.Status.DeepCopy()}
	decide(o, p)
	return finish(o, p, rewrite)
}

// decide fills p from o: the deletion, validation, a stop request, then
// the phase of the attempt.
func decide(o *Observed, p *Plan) {
	j := o.Job
	if j.DeletionTimestamp != nil {
		decideDeletion(o, p)
		return
	}
	st := &p.Status
	st.ObservedGeneration = j.Generation
	if st.Succeeded == nil {
		st.Succeeded = ptrTo(int32(0))
	}
	if st.Failed == nil {
		st.Failed = ptrTo(int32(0))
	}

	// Validation.
	errs := rayv1.ValidateRayJob(j)
	errs = append(errs, UnsupportedWith(j, o.Config.Build)...)
	statusErrs := rayv1.ValidateRayJobStatus(j)
	// KubeRay's Event reason says which part is invalid.
	reason := rayv1.EventInvalidRayJobSpec
	switch {
	case len(errs) > 0 && strings.HasPrefix(errs[0].Field, "metadata"):
		reason = rayv1.EventInvalidRayJobMetadata
	case len(errs) == 0 && len(statusErrs) > 0:
		reason = rayv1.EventInvalidRayJobStatus
	}
	errs = append(errs, statusErrs...)
	if len(errs) > 0 {
		msg := kit.Truncate(errs.ToAggregate().Error(), 1000)
		if st.JobDeploymentStatus != rayv1.JobDeploymentStatusValidationFailed || st.Message != msg {
			p.Events = append(p.Events, kit.Event{Type: corev1.EventTypeWarning, Reason: reason, Action: "Validate",
				Message: "The RayJob spec is invalid, nothing is created: " + msg})
		}
		st.JobDeploymentStatus = rayv1.JobDeploymentStatusValidationFailed
		st.Reason = rayv1.ValidationFailed
		st.Message = msg
		decideStopRequest(o, p)
		return
	}
	// The finalizer only on a RayJob that passed validation, as KubeRay v1.6.2
	// adds it (rayjob_controller.go:152-181): a refused RayJob starts nothing
	// a deletion would have to stop, so it carries nothing of raydar's.
	if !slices.Contains(j.Finalizers, rayv1.RayJobStopJobFinalizer) {
		p.AddFinalizer = true
	}
	if st.JobDeploymentStatus == rayv1.JobDeploymentStatusValidationFailed {
		p.Events = append(p.Events, kit.Event{Type: corev1.EventTypeNormal, Reason: reasonSpecValid, Action: "Validate",
			Message: "The RayJob spec is valid now; starting"})
		resetAttempt(st, true)
		st.JobDeploymentStatus = rayv1.JobDeploymentStatusNew
	}

	// A stop request: once per annotation value.
	if decideStopRequest(o, p) {
		return
	}

	switch st.JobDeploymentStatus {
	case rayv1.JobDeploymentStatusNew:
		decideNew(o, p)
	case rayv1.JobDeploymentStatusInitializing:
		decideInitializing(o, p)
	case rayv1.JobDeploymentStatusWaiting:
		decideWaiting(o, p)
	case rayv1.JobDeploymentStatusRunning:
		decideRunning(o, p)
	case rayv1.JobDeploymentStatusRetrying, rayv1.JobDeploymentStatusSuspending:
		decideRelease(o, p)
	case rayv1.JobDeploymentStatusSuspended:
		if !j.Spec.Suspend {
			p.Events = append(p.Events, kit.Event{Type: corev1.EventTypeNormal, Reason: reasonResumed, Action: "Resume",
				Message: "spec.suspend is false: starting again with a new cluster"})
			resetAttempt(st, true)
			st.JobDeploymentStatus = rayv1.JobDeploymentStatusNew
			requeueAfter(p, soon)
		}
	case rayv1.JobDeploymentStatusComplete, rayv1.JobDeploymentStatusFailed:
		decideFinished(o, p)
	default:
		// An unknown status (written by something else): start over.
		resetAttempt(st, false)
		st.JobDeploymentStatus = rayv1.JobDeploymentStatusNew
		requeueAfter(p, soon)
	}
	// Finished, from the pass that finishes it on: KubeRay's next pass
	// comes from its own status write, raydar's status-only writes bring
	// none (gang.go).
	if rayv1.IsJobDeploymentTerminal(st.JobDeploymentStatus) {
		decideFinishedGang(o, p)
	}
}

// remembered lays over o.Job what this process knows and the RayJob does
// not show yet: a stop the dashboard confirmed whose record has not landed
// (returned as the record to write again), and the dashboard failure clock
// a CRD without that field drops.
func remembered(o *Observed) (*Observed, string) {
	j := o.Job
	var rewrite string
	if rec := o.RememberedStop; rec != nil {
		if cur, ok := StopRecordOf(j); !ok || !cur.Confirmed || cur.JobID != rec.JobID || cur.Request != rec.Request {
			j = j.DeepCopy()
			SetStopRecord(j, *rec, "confirmed by the dashboard", o.Now)
			rewrite = j.Annotations[rayv1.JobStopRecordAnnotationKey]
		}
	}
	if since := o.CheckFailSince; since != nil && j.Status.JobStatusCheckFailureStartTime == nil &&
		o.CheckFailJobID == j.Status.JobId && j.Status.JobDeploymentStatus == rayv1.JobDeploymentStatusRunning {
		if j == o.Job {
			j = j.DeepCopy()
		}
		j.Status.JobStatusCheckFailureStartTime = since.DeepCopy()
	}
	if j == o.Job {
		return o, rewrite
	}
	o2 := *o
	o2.Job = j
	return &o2, rewrite
}

// finish computes the conditions and whether the status changed.
func finish(o *Observed, p *Plan, rewrite string) *Plan {
	if o.Job.DeletionTimestamp == nil {
		setConditions(o, &p.Status)
	}
	if rewrite != "" && p.StopRecord == "" {
		p.StopRecord = rewrite
	}
	next := p.Status
	if o.StatusPrunesConditions {
		next.Conditions = o.Job.Status.Conditions
	}
	p.WriteStatus = !equality.Semantic.DeepEqual(o.Job.Status, next)
	if p.WriteStatus && p.RequeueAfter == 0 && !rayv1.IsJobDeploymentTerminal(p.Status.JobDeploymentStatus) &&
		p.Status.JobDeploymentStatus != rayv1.JobDeploymentStatusSuspended &&
		p.Status.JobDeploymentStatus != rayv1.JobDeploymentStatusValidationFailed {
		// A status-only change raises no watch event: look again.
		requeueAfter(p, soon)
	}
	return p
}

func ptrTo[T any](v T) *T { return &v }

// requeueAfter lowers p.RequeueAfter to d (d > 0).
func requeueAfter(p *Plan, d time.Duration) {
	if d <= 0 {
		d = time.Millisecond
	}
	if p.RequeueAfter == 0 || d < p.RequeueAfter {
		p.RequeueAfter = d
	}
}

// requeueAt lowers p.RequeueAfter to the time until at.
func requeueAt(o *Observed, p *Plan, at time.Time) {
	requeueAfter(p, at.Sub(o.Now))
}

// resetAttempt clears what belongs to one attempt (KubeRay's reset when leaving
// Suspending or Retrying). With cluster, the cluster name and its status
// copy go too (a new cluster will be made); the counts and conditions stay,
// and so does status.startTime: KubeRay v1.6.2 resets rayJobInfo (Ray's
// start and end), not it (rayjob_controller.go:392-399), so a Suspended
// RayJob (Kueue's, created suspended) keeps the start of its Initializing
// pass until the next one sets a new one (:889).
func resetAttempt(st *rayv1.RayJobStatus, cluster bool) {
	if cluster {
		st.RayClusterName = ""
		st.RayClusterStatus = rayv1.RayClusterStatus{}
	}
	st.JobId = ""
	st.DashboardURL = ""
	st.JobStatus = rayv1.JobStatusNew
	st.Reason = ""
	st.Message = ""
	st.EndTime = nil
	st.RayJobStatusInfo = rayv1.RayJobStatusInfo{}
	st.JobStatusCheckFailureStartTime = nil
}

func orWord(s, w string) string {
	if s == "" {
		return w
	}
	return s
}

// owns reports whether obj is controlled by the RayJob.
func owns(j *rayv1.RayJob, refs []metav1.OwnerReference) bool {
	return kit.ControllerUID(refs) == string(j.UID)
}

// DerefInt32 is *p, 0 when p is nil.
func DerefInt32(p *int32) int32 {
	if p == nil {
		return 0
	}
	return *p
}
