package rayjob

// The RayJob state machine as a pure function: Decide maps what was
// observed (the RayJob, its cluster, submitter, head pod, the dashboard's
// answer, this process's unrecorded stop confirmations, the time) to a plan
// (the status to write, objects to create or delete, a submission, a stop,
// Events, when to look again). No I/O, no clock, no randomness except
// through Observed.Now and NewSuffix.
//
// The behaviour follows KubeRay's RayJob controller (New → Initializing →
// Running → Complete/Failed, Waiting for InteractiveMode, Retrying,
// Suspending/Suspended) with these additions: raydar's conditions; a
// declarative stop (annotation raydar.io/stop-requested) carried out once
// per request; a deletion that stops the Ray job until the dashboard
// confirms, recorded on the object before the finalizer goes, and that gives
// up after a bound; requeues at the next deadline instead of every 3 s.

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/raydar/raydar/controller/kit"
	"github.com/raydar/raydar/controller/raycluster"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/raydar/raydar/kube/raydash"
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
	}
}

// Observed is everything the reconciler read before deciding.
type Observed struct {
	Job *rayv1.RayJob
	Now time.Time
	// SkipReason: raydar must not reconcile this RayJob (managedBy, another
	// operator); "" otherwise.
	SkipReason string
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
	// Dash is the dashboard's answer about status.jobId, when asked.
	Dash *DashAnswer
	// StopFailures counts unconfirmed attempts of the current stop (in
	// memory), for the back-off; StopLastAttempt and StopLastError are the
	// time and error of the last one.
	StopFailures    int
	StopLastAttempt time.Time
	StopLastError   string
	// UnrecordedStop is a confirmed stop this process remembers and the
	// RayJob does not show yet (the record to write again).
	UnrecordedStop string
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

// StopCall is a stop to send.
type StopCall struct {
	ClusterName string
	JobID       string
	// Request is the annotation value it answers; "" for the stop of a
	// deletion.
	Request string
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
	AddFinalizer    bool
	RemoveFinalizer bool
	// Status is the status the RayJob has after this pass.
	Status rayv1.RayJobStatus
	// WriteStatus: Status differs from what is stored.
	WriteStatus bool

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

// Reasons of RayJob Events and conditions that are not in rayapi/v1.
const (
	ReasonCreatedCluster       = "CreatedRayCluster"
	ReasonCreatedSubmitter     = "CreatedRayJobSubmitter" // KubeRay's reasons where it has one
	ReasonDeletedCluster       = "DeletedRayCluster"
	reasonDeletedSubmitter     = "DeletedRayJobSubmitter"
	reasonSuspendedWorkers     = "UpdatedRayCluster"
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
	reasonInvalidSpec          = "InvalidRayJobSpec" // KubeRay's utils.InvalidRayJobSpec
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
	reasonCreateClusterFailed  = "FailedToCreateRayCluster"
	reasonCreateSubFailed      = "FailedToCreateRayJobSubmitter"
	reasonDeleteClusterFailed  = "FailedToDeleteRayCluster"
	reasonDeleteSubFailed      = "FailedToDeleteRayJobSubmitter"
	reasonUpdateClusterFailed  = "FailedToUpdateRayCluster"
	reasonInvalidMetadata      = "InvalidRayJobMetadata"
	reasonInvalidStatus        = "InvalidRayJobStatus"
	reasonClusterNotFoundEvent = "RayClusterNotFound"
	reasonDeleteFailed         = "FailedDelete"
	reasonSubmitFailed         = "FailedSubmit"
	// KubeRay's reasons for the RayJob's head Service.
	ReasonCreatedService      = "CreatedService"
	ReasonUpdatedService      = "UpdatedService"
	reasonCreateServiceFailed = "FailedToCreateService"
	reasonUpdateServiceFailed = "FailedToUpdateService"
)

// DefaultStopConfirmTimeout is how long a deleted RayJob waits for the
// dashboard to confirm the stop of its Ray job before its finalizer is
// released anyway.
const DefaultStopConfirmTimeout = 2 * time.Minute

// soon is the requeue after a write whose result the next pass acts on.
const soon = 200 * time.Millisecond

// apiTime is t as the API stores it (whole seconds), so that a status
// computed now compares equal to the same status read back.
func apiTime(t time.Time) *metav1.Time {
	mt := metav1.NewTime(t).Rfc3339Copy()
	return &mt
}

// Decide is the pure decision.
func Decide(o *Observed) *Plan {
	j := o.Job
	p := &Plan{Status: *j.Status.DeepCopy()}
	if o.SkipReason != "" {
		return p
	}
	if j.DeletionTimestamp != nil {
		decideDeletion(o, p)
		return finish(o, p)
	}
	if !slices.Contains(j.Finalizers, rayv1.RayJobStopJobFinalizer) {
		p.AddFinalizer = true
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
	errs = append(errs, Unsupported(j)...)
	statusErrs := rayv1.ValidateRayJobStatus(j)
	// KubeRay's Event reason says which part is invalid.
	reason := reasonInvalidSpec
	switch {
	case len(errs) > 0 && strings.HasPrefix(errs[0].Field, "metadata"):
		reason = reasonInvalidMetadata
	case len(errs) == 0 && len(statusErrs) > 0:
		reason = reasonInvalidStatus
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
		return finish(o, p)
	}
	if st.JobDeploymentStatus == rayv1.JobDeploymentStatusValidationFailed {
		p.Events = append(p.Events, kit.Event{Type: corev1.EventTypeNormal, Reason: reasonSpecValid, Action: "Validate",
			Message: "The RayJob spec is valid now; starting"})
		resetAttempt(st, true)
		st.JobDeploymentStatus = rayv1.JobDeploymentStatusNew
	}

	// A stop request: once per annotation value.
	if decideStopRequest(o, p) {
		return finish(o, p)
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
	return finish(o, p)
}

// finish computes the conditions and whether the status changed.
func finish(o *Observed, p *Plan) *Plan {
	if o.Job.DeletionTimestamp == nil {
		setConditions(o, &p.Status)
	}
	if o.UnrecordedStop != "" && p.StopRecord == "" {
		p.StopRecord = o.UnrecordedStop
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
// copy go too (a new cluster will be made); the counts and conditions stay.
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
	st.StartTime = nil
	st.EndTime = nil
	st.RayJobStatusInfo = rayv1.RayJobStatusInfo{}
	st.JobStatusCheckFailureStartTime = nil
}

// decideNew records the names the attempt will use: the submission ID,
// the cluster's name, the start time. They are written before anything is
// created, so a repeated pass never makes a second cluster or submission.
func decideNew(o *Observed, p *Plan) {
	j, st := o.Job, &p.Status
	mode := j.Spec.EffectiveSubmissionMode()
	switch {
	case j.Spec.JobId != "":
		st.JobId = j.Spec.JobId
	case mode == rayv1.InteractiveMode:
		st.JobId = ""
	case st.JobId == "":
		st.JobId = kit.RayJobGeneratedID(j.Name, o.NewSuffix())
	}
	if j.Spec.UsesClusterSelector() {
		st.RayClusterName = j.Spec.SelectedClusterName()
	} else if st.RayClusterName == "" {
		st.RayClusterName = kit.RayJobClusterName(j.Name, o.NewSuffix())
	}
	st.StartTime = apiTime(o.Now)
	st.EndTime = nil
	st.JobStatus = rayv1.JobStatusNew
	st.Reason, st.Message = "", ""
	st.JobDeploymentStatus = rayv1.JobDeploymentStatusInitializing
	requeueAfter(p, soon)
}

// checkDeadlines fails the job when activeDeadlineSeconds or (before the
// Ray job runs) preRunningDeadlineSeconds has passed since startTime, and
// otherwise asks to be woken at the earlier of them. It reports whether the
// job failed.
func checkDeadlines(o *Observed, p *Plan) bool {
	j, st := o.Job, &p.Status
	if st.StartTime == nil {
		return false
	}
	start := st.StartTime.Time
	if d := j.Spec.ActiveDeadlineSeconds; d != nil {
		at := start.Add(time.Duration(*d) * time.Second)
		if !o.Now.Before(at) {
			failAttempt(o, p, rayv1.DeadlineExceeded, fmt.Sprintf("The RayJob ran longer than activeDeadlineSeconds (%ds) since %s",
				*d, start.UTC().Format(time.RFC3339)))
			return true
		}
		requeueAt(o, p, at)
	}
	if d := j.Spec.PreRunningDeadlineSeconds; d != nil && st.JobStatus != rayv1.JobStatusRunning && !rayv1.IsJobTerminal(st.JobStatus) {
		at := start.Add(time.Duration(*d) * time.Second)
		if !o.Now.Before(at) {
			failAttempt(o, p, rayv1.PreRunningDeadlineExceeded, fmt.Sprintf("The Ray job did not reach RUNNING within preRunningDeadlineSeconds (%ds); its status is %s",
				*d, orWord(string(st.JobStatus), "not submitted")))
			return true
		}
		requeueAt(o, p, at)
	}
	return false
}

func orWord(s, w string) string {
	if s == "" {
		return w
	}
	return s
}

// suspendIfAsked moves to Suspending when spec.suspend is set.
func suspendIfAsked(o *Observed, p *Plan) bool {
	if !o.Job.Spec.Suspend {
		return false
	}
	p.Status.JobDeploymentStatus = rayv1.JobDeploymentStatusSuspending
	p.Events = append(p.Events, kit.Event{Type: corev1.EventTypeNormal, Reason: reasonSuspending, Action: "Suspend",
		Message: "spec.suspend is true: deleting the cluster and the submitter (the Ray job is not stopped first)"})
	requeueAfter(p, soon)
	return true
}

// owns reports whether obj is controlled by the RayJob.
func owns(j *rayv1.RayJob, refs []metav1.OwnerReference) bool {
	return kit.ControllerUID(refs) == string(j.UID)
}

// ensureCluster makes sure the cluster exists (creating it when the
// RayJob owns it), reporting whether it is there to use.
func ensureCluster(o *Observed, p *Plan) bool {
	j, st := o.Job, &p.Status
	rc := o.Cluster
	if j.Spec.UsesClusterSelector() {
		if rc == nil {
			msg := fmt.Sprintf("Waiting for RayCluster %s (spec.clusterSelector) to exist", st.RayClusterName)
			if st.Message != msg {
				p.Events = append(p.Events, kit.Event{Type: corev1.EventTypeWarning, Reason: reasonClusterNotFoundEvent, Action: "Validate",
					Message: fmt.Sprintf("RayCluster %s/%s set in the clusterSelector is not found", j.Namespace, st.RayClusterName)})
			}
			st.Message = msg
			return false
		}
		return rc.DeletionTimestamp == nil
	}
	if rc == nil {
		want, err := buildCluster(j, st.RayClusterName)
		if err != nil {
			buildFailed(p, reasonCreateClusterFailed, "RayCluster "+st.RayClusterName, err)
			return false
		}
		p.CreateCluster = want
		st.Message = fmt.Sprintf("Creating RayCluster %s", st.RayClusterName)
		return false
	}
	if !owns(j, rc.OwnerReferences) {
		msg := fmt.Sprintf("RayCluster %s exists but does not belong to this RayJob; waiting for it to go", rc.Name)
		if st.Message != msg {
			p.Events = append(p.Events, kit.Event{Type: corev1.EventTypeWarning, Reason: reasonClusterNameTaken, Action: "Create", Message: msg})
		}
		st.Message = msg
		requeueAfter(p, 30*time.Second)
		return false
	}
	return rc.DeletionTimestamp == nil
}

func decideInitializing(o *Observed, p *Plan) {
	j, st := o.Job, &p.Status
	if suspendIfAsked(o, p) || checkDeadlines(o, p) {
		return
	}
	if !ensureCluster(o, p) {
		if p.CreateCluster != nil {
			// KubeRay copies the status of the cluster it just created.
			st.RayClusterStatus = rayv1.RayClusterStatus{}
		}
		return
	}
	rc := o.Cluster
	if st.DashboardURL == "" {
		// KubeRay v1.7.0 (rayjob_controller.go, Initializing) copies the
		// cluster's status only while it waits for it to be ready; once
		// ready, the next copy comes with the Ray job's status (Running).
		if rc.Status.State != rayv1.Ready {
			st.RayClusterStatus = *rc.Status.DeepCopy()
			st.Message = fmt.Sprintf("Waiting for RayCluster %s to be ready", rc.Name)
			return // the cluster's status change wakes us
		}
		st.DashboardURL = dashboardURLOf(rc, o.Config.ClusterDomain)
	}
	mode := j.Spec.EffectiveSubmissionMode()
	switch mode {
	case rayv1.K8sJobMode:
		if o.Submitter == nil {
			if !planSubmitter(o, p, rc) {
				return
			}
		} else if !owns(j, o.Submitter.OwnerReferences) {
			msg := fmt.Sprintf("A Job named %s exists but does not belong to this RayJob; waiting for it to go", o.Submitter.Name)
			if st.Message != msg {
				p.Events = append(p.Events, kit.Event{Type: corev1.EventTypeWarning, Reason: reasonCreateSubFailed, Action: "Create", Message: msg})
			}
			st.Message = msg
			requeueAfter(p, 30*time.Second)
			return
		}
	case rayv1.InteractiveMode:
		if j.Spec.JobId == "" {
			st.JobDeploymentStatus = rayv1.JobDeploymentStatusWaiting
			st.Message = "Waiting for spec.jobId: submit the job to " + st.DashboardURL + " and set its submission ID"
			p.Events = append(p.Events, kit.Event{Type: corev1.EventTypeNormal, Reason: reasonWaitingForJobID, Action: "Wait",
				Message: fmt.Sprintf("RayCluster %s is ready; InteractiveMode waits for spec.jobId", rc.Name)})
			return
		}
		st.JobId = j.Spec.JobId
	}
	st.JobDeploymentStatus = rayv1.JobDeploymentStatusRunning
	st.Message = ""
	p.Events = append(p.Events, kit.Event{Type: corev1.EventTypeNormal, Reason: reasonRunning, Action: "Submit",
		Message: fmt.Sprintf("RayCluster %s is ready; running Ray job %s (%s)", rc.Name, orWord(st.JobId, "?"), mode)})
	requeueAfter(p, soon)
}

// planSubmitter plans the creation of the K8sJobMode submitter Job,
// reporting false when it cannot be built.
func planSubmitter(o *Observed, p *Plan, rc *rayv1.RayCluster) bool {
	job, err := buildSubmitterJob(o.Job, rc, p.Status.DashboardURL)
	if err != nil {
		buildFailed(p, reasonCreateSubFailed, "the submitter Job "+kit.RayJobSubmitterName(o.Job), err)
		return false
	}
	p.CreateSubmitter = job
	return true
}

// buildFailed records a child that cannot be built (KubeRay's submit
// command errors: it retries every 3 s, as here): the message says why,
// with one Warning Event per distinct message.
func buildFailed(p *Plan, reason, what string, err error) {
	msg := fmt.Sprintf("Cannot build %s: %v", what, err)
	if p.Status.Message != msg {
		p.Events = append(p.Events, kit.Event{Type: corev1.EventTypeWarning, Reason: reason, Action: "Create", Message: msg})
	}
	p.Status.Message = kit.Truncate(msg, 2000)
	requeueAfter(p, 3*time.Second)
}

func decideWaiting(o *Observed, p *Plan) {
	j, st := o.Job, &p.Status
	if suspendIfAsked(o, p) || checkDeadlines(o, p) {
		return
	}
	if j.Spec.JobId == "" {
		return
	}
	st.JobId = j.Spec.JobId
	st.JobDeploymentStatus = rayv1.JobDeploymentStatusRunning
	st.Message = ""
	p.Events = append(p.Events, kit.Event{Type: corev1.EventTypeNormal, Reason: reasonRunning, Action: "Track",
		Message: "spec.jobId is set: following Ray job " + st.JobId})
	requeueAfter(p, soon)
}

// SubmitterFinished reports whether a submitter Job has finished, when,
// and whether it failed.
func SubmitterFinished(job *batchv1.Job) (done, failed bool, at time.Time, msg string) {
	for _, c := range job.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case batchv1.JobFailed:
			return true, true, c.LastTransitionTime.Time, DescribeSubmitter(job)
		case batchv1.JobComplete:
			return true, false, c.LastTransitionTime.Time, DescribeSubmitter(job)
		}
	}
	return false, false, time.Time{}, ""
}

// submitterFailedCondition is the submitter Job's true Failed condition.
func submitterFailedCondition(job *batchv1.Job) batchv1.JobCondition {
	for _, c := range job.Status.Conditions {
		if c.Type == batchv1.JobFailed && c.Status == corev1.ConditionTrue {
			return c
		}
	}
	return batchv1.JobCondition{}
}

// submitterFinishedMessage is KubeRay's message for a submitter that
// finished while its Ray job did not end within the submitter grace
// (rayjob_controller.go checkSubmitterFinishedTimeoutAndUpdateStatusIfNeeded).
func submitterFinishedMessage(o *Observed, at time.Time) string {
	return fmt.Sprintf("The RayJob submitter finished at %v but the ray job did not reach terminal state within %v",
		at.Format(time.DateTime), o.Config.SubmitterFinishedGrace)
}

// pollInterval is how long to wait before asking the dashboard again about a
// running job: a quarter of its age, within [MinPoll, MaxPoll].
func pollInterval(o *Observed, st *rayv1.RayJobStatus) time.Duration {
	d := o.Config.MinPoll
	if st.StartTime != nil {
		d = o.Now.Sub(st.StartTime.Time) / 4
	}
	return min(max(d, o.Config.MinPoll), o.Config.MaxPoll)
}

func decideRunning(o *Observed, p *Plan) {
	j, st := o.Job, &p.Status
	mode := j.Spec.EffectiveSubmissionMode()
	if suspendIfAsked(o, p) || checkDeadlines(o, p) {
		return
	}
	if !ensureCluster(o, p) {
		requeueAfter(p, pollInterval(o, st))
		return
	}
	rc := o.Cluster
	decideHeadService(o, p, rc)

	// The submitter.
	var subDone bool
	var subAt time.Time
	switch mode {
	case rayv1.K8sJobMode:
		if o.Submitter == nil {
			planSubmitter(o, p, rc)
			break
		}
		done, failed, at, _ := SubmitterFinished(o.Submitter)
		if failed {
			// KubeRay (rayjob_controller.go checkSubmitterAndUpdateStatusIfNeeded):
			// a Ray job already seen FAILED is the application's failure,
			// its message kept; otherwise the submission failed.
			if st.JobStatus == rayv1.JobStatusFailed {
				failAttempt(o, p, rayv1.AppFailed, st.Message)
				return
			}
			c := submitterFailedCondition(o.Submitter)
			failAttempt(o, p, rayv1.SubmissionFailed, fmt.Sprintf("Job submission has failed. Reason: %s. Message: %s", c.Reason, c.Message))
			return
		}
		subDone, subAt = done, at
	case rayv1.SidecarMode:
		if o.HeadPod == nil {
			// KubeRay: the head (and with it the submitter) is gone.
			failAttempt(o, p, rayv1.AppFailed, "Ray head pod not found.")
			return
		}
		if cs := containerStatus(o.HeadPod, rayv1.RayJobSubmitterContainerName); cs != nil && cs.State.Terminated != nil {
			t := cs.State.Terminated
			if t.ExitCode != 0 {
				if st.JobStatus == rayv1.JobStatusFailed {
					failAttempt(o, p, rayv1.AppFailed, st.Message)
					return
				}
				failAttempt(o, p, rayv1.SubmissionFailed, fmt.Sprintf("Ray head pod container %s terminated with exit code %d: %s",
					cs.Name, t.ExitCode, t.Reason))
				return
			}
			subDone, subAt = true, t.FinishedAt.Time
		}
	}

	poll := pollInterval(o, st)
	switch {
	case o.Dash == nil:
		requeueAfter(p, poll)
		return
	case o.Dash.Err != nil && errors.Is(o.Dash.Err, dashboard.ErrNotFound):
		st.JobStatusCheckFailureStartTime = nil
		if mode == rayv1.HTTPMode {
			req, err := raydash.SubmitRequest(j, st.JobId)
			if err != nil {
				failAttempt(o, p, rayv1.SubmissionFailed, err.Error())
				return
			}
			p.Submit = &submission{ClusterName: rc.Name, Request: req}
			requeueAfter(p, o.Config.MinPoll)
			return
		}
		if subDone {
			// The submitter followed the job to its end, yet Ray does not
			// know it (KubeRay: AppFailed at once, or past the 30 s
			// submitter grace its timeout reason).
			if !subAt.IsZero() && !o.Now.Before(subAt.Add(o.Config.SubmitterFinishedGrace)) {
				st.JobStatus = rayv1.JobStatusFailed
				failAttempt(o, p, rayv1.JobDeploymentStatusTransitionGracePeriodExceeded, submitterFinishedMessage(o, subAt))
				return
			}
			failAttempt(o, p, rayv1.AppFailed, "Submitter completed but Ray job not found in RayCluster.")
			return
		}
		requeueAfter(p, poll)
		return
	case o.Dash.Err != nil:
		dashboardFailing(o, p, o.Dash.Err)
		return
	}

	// The dashboard answered. KubeRay copies the cluster's status with
	// every job status it records (rayjob_controller.go, Running: "Always
	// update RayClusterStatus along with JobStatus"), and only then.
	info := o.Dash.Info
	st.RayClusterStatus = *rc.Status.DeepCopy()
	st.JobStatusCheckFailureStartTime = nil
	st.JobStatus = rayv1.JobStatus(info.Status)
	st.Message = kit.Truncate(info.Message, 2000)
	if t := info.Started(); !t.IsZero() {
		st.RayJobStatusInfo.StartTime = apiTime(t)
	}
	if t := info.Ended(); !t.IsZero() {
		st.RayJobStatusInfo.EndTime = apiTime(t)
	}
	if !rayv1.IsJobTerminal(st.JobStatus) {
		if subDone && !subAt.IsZero() {
			at := subAt.Add(o.Config.SubmitterFinishedGrace)
			if !o.Now.Before(at) {
				st.JobStatus = rayv1.JobStatusFailed // as KubeRay records it
				failAttempt(o, p, rayv1.JobDeploymentStatusTransitionGracePeriodExceeded, submitterFinishedMessage(o, subAt))
				return
			}
			requeueAt(o, p, at)
		}
		requeueAfter(p, poll)
		return
	}
	if (mode == rayv1.K8sJobMode || mode == rayv1.SidecarMode) && !subDone {
		// Wait for the submitter (the K8sJobMode Job, the SidecarMode
		// container) to see the end: it still follows the logs. KubeRay
		// (rayjob_controller.go: isJobTerminal && finishedAt != nil, and
		// checkTransitionGracePeriodAndUpdateStatusIfNeeded) waits the
		// transition grace period from the Ray job's end, then ends the
		// RayJob as the Ray job did: Complete for SUCCEEDED or STOPPED —
		// never retried, the job ran — and Failed (retried within
		// backoffLimit) for FAILED. Without Ray's end time there is no
		// deadline, as in KubeRay.
		if st.RayJobStatusInfo.EndTime != nil {
			at := st.RayJobStatusInfo.EndTime.Add(o.Config.TransitionGracePeriod)
			if !o.Now.Before(at) {
				const msg = "JobDeploymentStatus does not transition to Complete or Failed within the grace period after JobStatus reaches a terminal state."
				if st.JobStatus == rayv1.JobStatusFailed {
					failAttempt(o, p, rayv1.JobDeploymentStatusTransitionGracePeriodExceeded, msg)
					return
				}
				completeWith(o, p, rayv1.JobDeploymentStatusTransitionGracePeriodExceeded, msg)
				return
			}
			requeueAt(o, p, at)
		}
		requeueAfter(p, poll)
		return
	}
	if st.JobStatus == rayv1.JobStatusFailed {
		failAttempt(o, p, rayv1.AppFailed, st.Message)
		return
	}
	complete(o, p)
}

// decideHeadService keeps the RayJob's head Service "<rayjob>-head-svc"
// on the head of its cluster while the job runs, as KubeRay's
// reconcileServices does: created when absent, its spec replaced (the
// cluster IP kept) only when it selects another cluster. A RayJob on a
// selected cluster has none. A Service of that name the RayJob does not own
// is left alone.
func decideHeadService(o *Observed, p *Plan, rc *rayv1.RayCluster) {
	j := o.Job
	if j.Spec.UsesClusterSelector() {
		return
	}
	want := buildHeadService(j, rc, o.Config.Build)
	have := o.HeadService
	switch {
	case have == nil:
		p.CreateHeadService = want
	case have.DeletionTimestamp != nil || !owns(j, have.OwnerReferences):
	case have.Spec.Selector[rayv1.RayClusterLabelKey] != want.Spec.Selector[rayv1.RayClusterLabelKey]:
		upd := have.DeepCopy()
		want.Spec.ClusterIP = have.Spec.ClusterIP
		want.Spec.ClusterIPs = have.Spec.ClusterIPs
		upd.Spec = want.Spec
		p.UpdateHeadService = upd
	}
}

func containerStatus(pod *corev1.Pod, name string) *corev1.ContainerStatus {
	for i := range pod.Status.ContainerStatuses {
		if pod.Status.ContainerStatuses[i].Name == name {
			return &pod.Status.ContainerStatuses[i]
		}
	}
	return nil
}

// dashboardFailing handles a dashboard that cannot be asked: the failure
// clock starts (written once, so a failing dashboard causes no status
// writes after that), the job fails once StatusCheckTimeout has passed, and
// the next look backs off with the length of the outage.
func dashboardFailing(o *Observed, p *Plan, err error) {
	st := &p.Status
	if st.JobStatusCheckFailureStartTime == nil {
		st.JobStatusCheckFailureStartTime = apiTime(o.Now)
		p.Events = append(p.Events, kit.Event{Type: corev1.EventTypeWarning, Reason: ReasonDashboardUnreachable, Action: "GetJobInfo",
			Message: fmt.Sprintf("Cannot read Ray job %s from the dashboard of RayCluster %s (retrying with back-off; the RayJob fails after %s): %s",
				st.JobId, st.RayClusterName, o.Config.StatusCheckTimeout, kit.Truncate(err.Error(), 500))})
	}
	since := st.JobStatusCheckFailureStartTime.Time
	at := since.Add(o.Config.StatusCheckTimeout)
	if !o.Now.Before(at) {
		failAttempt(o, p, rayv1.JobStatusCheckTimeoutExceeded, fmt.Sprintf("The dashboard could not be asked about Ray job %s for %s: %s",
			st.JobId, o.Config.StatusCheckTimeout, kit.Truncate(err.Error(), 500)))
		return
	}
	back := min(max(o.Now.Sub(since), o.Config.MinPoll), 3*o.Config.MaxPoll)
	requeueAfter(p, back)
	requeueAt(o, p, at)
}

// failAttempt ends the attempt as failed, then retries it when the reason allows
// and backoffLimit is not used up.
func failAttempt(o *Observed, p *Plan, reason rayv1.JobFailedReason, msg string) {
	j, st := o.Job, &p.Status
	st.Failed = ptrTo(DerefInt32(st.Failed) + 1)
	st.Reason = reason
	st.Message = kit.Truncate(msg, 2000)
	// A job someone asked to stop is not retried.
	retryable := reason != rayv1.DeadlineExceeded && reason != rayv1.PreRunningDeadlineExceeded &&
		reason != rayv1.JobStatusCheckTimeoutExceeded && reason != rayv1.ValidationFailed &&
		j.Annotations[rayv1.StopRequestedAnnotationKey] == ""
	limit := j.Spec.BackoffLimitOrDefault()
	if retryable && *st.Failed <= limit {
		st.JobDeploymentStatus = rayv1.JobDeploymentStatusRetrying
		p.Events = append(p.Events, kit.Event{Type: corev1.EventTypeWarning, Reason: ReasonRetrying, Action: "Retry",
			Message: fmt.Sprintf("Attempt %d failed (%s: %s); retrying with a new cluster (backoffLimit %d)", *st.Failed, reason, kit.Truncate(msg, 300), limit)})
		requeueAfter(p, soon)
		return
	}
	st.JobDeploymentStatus = rayv1.JobDeploymentStatusFailed
	st.EndTime = apiTime(o.Now)
	p.Events = append(p.Events, kit.Event{Type: corev1.EventTypeWarning, Reason: string(reason), Action: "Fail",
		Message: "The RayJob failed: " + kit.Truncate(msg, 800)})
	decideFinished(o, p)
}

func DerefInt32(p *int32) int32 {
	if p == nil {
		return 0
	}
	return *p
}

// complete ends the attempt as Complete (SUCCEEDED or STOPPED).
func complete(o *Observed, p *Plan) { completeWith(o, p, "", "") }

// completeWith ends the attempt as Complete with a reason and message
// (both kept as they are when reason is "").
func completeWith(o *Observed, p *Plan, reason rayv1.JobFailedReason, msg string) {
	st := &p.Status
	st.JobDeploymentStatus = rayv1.JobDeploymentStatusComplete
	st.Reason = reason
	if reason != "" {
		st.Message = kit.Truncate(msg, 2000)
	}
	st.EndTime = apiTime(o.Now)
	if st.JobStatus == rayv1.JobStatusSucceeded {
		st.Succeeded = ptrTo(DerefInt32(st.Succeeded) + 1)
	}
	p.Events = append(p.Events, kit.Event{Type: corev1.EventTypeNormal, Reason: ReasonCompleted, Action: "Complete",
		Message: fmt.Sprintf("Ray job %s is %s", st.JobId, st.JobStatus)})
	decideFinished(o, p)
}

// decideRelease deletes the cluster (unless selected) and the submitter
// of an attempt that is being retried or suspended, then moves on: Retrying
// → New, Suspending → Suspended.
func decideRelease(o *Observed, p *Plan) {
	j, st := o.Job, &p.Status
	why := "the attempt is being retried"
	if st.JobDeploymentStatus == rayv1.JobDeploymentStatusSuspending {
		why = "the RayJob is suspended"
	}
	pending := false
	if rc := o.Cluster; rc != nil && !j.Spec.UsesClusterSelector() && owns(j, rc.OwnerReferences) {
		pending = true
		if rc.DeletionTimestamp == nil {
			p.DeleteCluster = &deletion{Name: rc.Name, UID: string(rc.UID), Reason: why}
		}
	}
	if s := o.Submitter; s != nil && owns(j, s.OwnerReferences) {
		pending = true
		if s.DeletionTimestamp == nil {
			p.DeleteSubmitter = &deletion{Name: s.Name, UID: string(s.UID), Reason: why}
		}
	}
	if pending {
		requeueAfter(p, 2*time.Second) // deletions of children wake us too
		return
	}
	// KubeRay resets the cluster's name and status copy whether the
	// cluster was the RayJob's or selected (New names a selected one again).
	if st.JobDeploymentStatus == rayv1.JobDeploymentStatusSuspending {
		resetAttempt(st, true)
		st.JobDeploymentStatus = rayv1.JobDeploymentStatusSuspended
		p.Events = append(p.Events, kit.Event{Type: corev1.EventTypeNormal, Reason: string(rayv1.JobDeploymentStatusSuspended), Action: "Suspend",
			Message: "The cluster and the submitter are deleted; the RayJob is suspended"})
		return
	}
	resetAttempt(st, true)
	st.JobDeploymentStatus = rayv1.JobDeploymentStatusNew
	requeueAfter(p, soon)
}

// cleanupRule is one deletion to run after the job finished.
type cleanupRule struct {
	Policy rayv1.DeletionPolicyType
	Due    time.Time
	Why    string
}

// cleanupRules lists the deletions that apply to the finished job, each
// with its due time (from status.endTime): deletionRules whose condition
// matches, or the legacy onSuccess/onFailure policy (ttl
// ttlSecondsAfterFinished), or shutdownAfterJobFinishes.
func cleanupRules(j *rayv1.RayJob, st *rayv1.RayJobStatus, cfg config) []cleanupRule {
	if st.EndTime == nil {
		return nil
	}
	end := st.EndTime.Time
	s := &j.Spec
	var out []cleanupRule
	switch {
	case s.UsesDeletionRules():
		for _, r := range s.DeletionStrategy.DeletionRules {
			c := r.Condition
			var match bool
			var what string
			switch {
			case c.JobStatus != nil:
				match, what = st.JobStatus == *c.JobStatus, "jobStatus "+string(*c.JobStatus)
			case c.JobDeploymentStatus != nil:
				match, what = st.JobDeploymentStatus == *c.JobDeploymentStatus, "jobDeploymentStatus "+string(*c.JobDeploymentStatus)
			}
			if !match || r.Policy == rayv1.DeleteNone {
				continue
			}
			out = append(out, cleanupRule{Policy: r.Policy, Due: end.Add(time.Duration(c.TTLSeconds) * time.Second),
				Why: fmt.Sprintf("deletion rule %s on %s after %ds", r.Policy, what, c.TTLSeconds)})
		}
	case s.DeletionStrategy != nil:
		var pol *rayv1.DeletionPolicy
		var side string
		switch {
		case st.JobStatus == rayv1.JobStatusSucceeded:
			pol, side = s.DeletionStrategy.OnSuccess, "onSuccess"
		case st.JobDeploymentStatus == rayv1.JobDeploymentStatusFailed:
			pol, side = s.DeletionStrategy.OnFailure, "onFailure"
		}
		if pol != nil && pol.Policy != nil && *pol.Policy != rayv1.DeleteNone {
			out = append(out, cleanupRule{Policy: *pol.Policy, Due: end.Add(time.Duration(s.TTLSecondsAfterFinished) * time.Second),
				Why: fmt.Sprintf("deletionStrategy.%s %s after %ds", side, *pol.Policy, s.TTLSecondsAfterFinished)})
		}
	case s.ShutdownAfterJobFinishes:
		pol := rayv1.DeleteCluster
		if cfg.DeleteRayJobAfterJobFinishes {
			pol = rayv1.DeleteSelf
		}
		out = append(out, cleanupRule{Policy: pol, Due: end.Add(time.Duration(s.TTLSecondsAfterFinished) * time.Second),
			Why: fmt.Sprintf("shutdownAfterJobFinishes, ttlSecondsAfterFinished %ds", s.TTLSecondsAfterFinished)})
	}
	return out
}

// destructiveness orders policies: DeleteSelf > DeleteCluster > DeleteWorkers.
func destructiveness(p rayv1.DeletionPolicyType) int {
	switch p {
	case rayv1.DeleteSelf:
		return 3
	case rayv1.DeleteCluster:
		return 2
	case rayv1.DeleteWorkers:
		return 1
	}
	return 0
}

// decideFinished runs the clean-up of a Complete or Failed RayJob: of the
// rules that are due, the most destructive (it includes the gentler ones);
// a rule due later that would do more sets the requeue. A selected cluster
// is never touched. Every action is idempotent: a cluster already deleted
// or workers already suspended need nothing.
func decideFinished(o *Observed, p *Plan) {
	j, st := o.Job, &p.Status
	rules := cleanupRules(j, st, o.Config)
	var best *cleanupRule
	for i := range rules {
		r := &rules[i]
		if !o.Now.Before(r.Due) && (best == nil || destructiveness(r.Policy) > destructiveness(best.Policy)) {
			best = r
		}
	}
	for _, r := range rules {
		if o.Now.Before(r.Due) && (best == nil || destructiveness(r.Policy) > destructiveness(best.Policy)) {
			requeueAt(o, p, r.Due)
		}
	}
	if best == nil {
		return
	}
	rc := o.Cluster
	ours := rc != nil && !j.Spec.UsesClusterSelector() && owns(j, rc.OwnerReferences) && rc.DeletionTimestamp == nil
	switch best.Policy {
	case rayv1.DeleteSelf:
		p.DeleteSelf = best.Why
	case rayv1.DeleteCluster:
		if ours {
			p.DeleteCluster = &deletion{Name: rc.Name, UID: string(rc.UID), Reason: best.Why}
		}
	case rayv1.DeleteWorkers:
		if ours && hasRunningWorkerGroups(rc) {
			p.SuspendWorkers = rc.Name
		}
	}
}

func hasRunningWorkerGroups(rc *rayv1.RayCluster) bool {
	for i := range rc.Spec.WorkerGroupSpecs {
		if !rc.Spec.WorkerGroupSpecs[i].IsSuspended() {
			return true
		}
	}
	return false
}

// Stop records. A stop's outcome is kept in the annotation
// rayv1.JobStopRecordAnnotationKey on the RayJob (and, for display, in the
// condition rayv1.JobStopConditionType), whose text names the Ray job and
// the request (the stop annotation's value) or the deletion it answered, so
// that it is carried out once per request, also across restarts:
//
//	Stop of Ray job "<id>" for request "<value>" confirmed: <detail>
//	Stop of Ray job "<id>" on deletion confirmed: <detail>
//	Stop of Ray job "<id>" for request "<value>" not confirmed yet: <detail>
//
// An annotation, not the status: KubeRay's RayJob CRD has no
// status.conditions, and a cluster running it prunes them.

// StopRecord is a parsed stop record.
type StopRecord struct {
	JobID     string
	Request   string // "" for a deletion
	Deletion  bool
	Confirmed bool
}

var stopRecordRE = regexp.MustCompile(`^Stop of Ray job ("(?:[^"\\]|\\.)*") (?:for request ("(?:[^"\\]|\\.)*")|(on deletion)) (confirmed|not confirmed yet)`)

// stopMessage renders a stop record and its detail.
func stopMessage(r StopRecord, detail string) string {
	var b strings.Builder
	b.WriteString("Stop of Ray job " + strconv.Quote(r.JobID) + " ")
	if r.Deletion {
		b.WriteString("on deletion ")
	} else {
		b.WriteString("for request " + strconv.Quote(r.Request) + " ")
	}
	if r.Confirmed {
		b.WriteString("confirmed")
	} else {
		b.WriteString("not confirmed yet")
	}
	if detail != "" {
		b.WriteString(": " + detail)
	}
	return b.String()
}

// stopRecordValue is the annotation value of a record.
func stopRecordValue(r StopRecord, detail string) string {
	return kit.Truncate(stopMessage(r, detail), 1000)
}

// parseStopRecordText parses a record's text.
func parseStopRecordText(text string) (StopRecord, bool) {
	m := stopRecordRE.FindStringSubmatch(text)
	if m == nil {
		return StopRecord{}, false
	}
	r := StopRecord{Deletion: m[3] != "", Confirmed: m[4] == "confirmed"}
	var err error
	if r.JobID, err = strconv.Unquote(m[1]); err != nil {
		return StopRecord{}, false
	}
	if !r.Deletion {
		if r.Request, err = strconv.Unquote(m[2]); err != nil {
			return StopRecord{}, false
		}
	}
	return r, true
}

// StopRecordOf reads the stop record of a RayJob: its annotation, or
// (written by an earlier raydar) its stop condition.
func StopRecordOf(j *rayv1.RayJob) (StopRecord, bool) {
	if v, ok := j.Annotations[rayv1.JobStopRecordAnnotationKey]; ok {
		return parseStopRecordText(v)
	}
	c := kit.FindCondition(j.Status.Conditions, rayv1.JobStopConditionType)
	if c == nil {
		return StopRecord{}, false
	}
	r, ok := parseStopRecordText(c.Message)
	if !ok || r.Confirmed != (c.Status == metav1.ConditionTrue) {
		return StopRecord{}, false
	}
	return r, true
}

// stopRecordText is the text of a RayJob's stop record ("" if none).
func stopRecordText(j *rayv1.RayJob) string {
	if v, ok := j.Annotations[rayv1.JobStopRecordAnnotationKey]; ok {
		return v
	}
	if c := kit.FindCondition(j.Status.Conditions, rayv1.JobStopConditionType); c != nil {
		return c.Message
	}
	return ""
}

// setStopCondition shows a stop record in the status (for display; the
// annotation is the record).
func setStopCondition(st *rayv1.RayJobStatus, value string, confirmed, deletion bool, now time.Time) {
	c := metav1.Condition{Type: rayv1.JobStopConditionType, Status: metav1.ConditionFalse, Reason: reasonStopPending, Message: value}
	if confirmed {
		c.Status = metav1.ConditionTrue
		c.Reason = reasonStopRequested
		if deletion {
			c.Reason = "RayJobDeleted"
		}
	}
	kit.SetCondition(&st.Conditions, c, now)
	if cc := kit.FindCondition(st.Conditions, rayv1.JobStopConditionType); cc != nil {
		cc.LastTransitionTime = *apiTime(cc.LastTransitionTime.Time)
	}
}

// SetStopRecord puts a stop record on a RayJob: the annotation and the
// condition.
func SetStopRecord(j *rayv1.RayJob, r StopRecord, detail string, now time.Time) {
	v := stopRecordValue(r, detail)
	if j.Annotations == nil {
		j.Annotations = map[string]string{}
	}
	j.Annotations[rayv1.JobStopRecordAnnotationKey] = v
	setStopCondition(&j.Status, v, r.Confirmed, r.Deletion, now)
}

// planStopRecord makes the plan record a stop: the annotation (written
// before the status) and the condition in the status.
func planStopRecord(o *Observed, p *Plan, r StopRecord, detail string) {
	p.StopRecord = stopRecordValue(r, detail)
	setStopCondition(&p.Status, p.StopRecord, r.Confirmed, r.Deletion, o.Now)
}

// currentStopRecord is the stop record as it stands after this plan.
func currentStopRecord(o *Observed, p *Plan) (StopRecord, bool) {
	if p.StopRecord != "" {
		return parseStopRecordText(p.StopRecord)
	}
	return StopRecordOf(o.Job)
}

// StopConfirmedFor reports whether a stop of Ray job id is on record as
// confirmed.
func StopConfirmedFor(j *rayv1.RayJob, id string) bool {
	r, ok := StopRecordOf(j)
	return ok && r.Confirmed && r.JobID == id
}

// rayJobMayRun reports whether, by the status, a Ray job may be running
// and a stop has to be sent: the deployment is Running and the last known
// Ray status is not terminal.
func rayJobMayRun(st *rayv1.RayJobStatus) bool {
	return st.JobDeploymentStatus == rayv1.JobDeploymentStatusRunning && st.JobId != "" && !rayv1.IsJobTerminal(st.JobStatus)
}

// decideStopRequest carries out the annotation's stop request once per
// value. It reports whether the request ended the decision (nothing was
// submitted yet: the RayJob ends STOPPED without a call).
func decideStopRequest(o *Observed, p *Plan) bool {
	j, st := o.Job, &p.Status
	req := j.Annotations[rayv1.StopRequestedAnnotationKey]
	if req == "" {
		return false
	}
	if r, ok := currentStopRecord(o, p); ok && r.Confirmed && !r.Deletion && r.Request == req {
		return false // done; the poll sees STOPPED
	}
	rec := StopRecord{JobID: st.JobId, Request: req, Confirmed: true}
	switch {
	case rayJobMayRun(st) && o.Cluster != nil:
		planStop(o, p, &StopCall{ClusterName: st.RayClusterName, JobID: st.JobId, Request: req})
		return false
	case rayv1.IsJobDeploymentTerminal(st.JobDeploymentStatus):
		planStopRecord(o, p, rec, fmt.Sprintf("the Ray job had already ended (%s)", orWord(string(st.JobStatus), string(st.JobDeploymentStatus))))
		return false
	case st.JobDeploymentStatus == rayv1.JobDeploymentStatusValidationFailed:
		planStopRecord(o, p, rec, "the RayJob is invalid; nothing was submitted")
		return false
	}
	// New, Initializing, Waiting, Retrying, Suspending, Suspended, or
	// Running on a cluster that is gone: no Ray job runs. The RayJob ends
	// here, STOPPED, and no attempt starts.
	detail := "nothing was submitted yet; the RayJob will not submit"
	if rayJobMayRun(st) {
		detail = "RayCluster " + st.RayClusterName + " is gone, so no Ray job runs; the RayJob will not submit again"
	}
	planStopRecord(o, p, rec, detail)
	st.JobStatus = rayv1.JobStatusStopped
	st.JobDeploymentStatus = rayv1.JobDeploymentStatusComplete
	st.Reason = ""
	st.Message = "Stopped on request: " + detail
	st.EndTime = apiTime(o.Now)
	p.Events = append(p.Events, kit.Event{Type: corev1.EventTypeNormal, Reason: ReasonStopConfirmed, Action: "Stop",
		Message: "Stop requested (" + req + "): " + detail + "; the RayJob ends STOPPED"})
	decideFinished(o, p)
	return true
}

// decideDeletion: a deleted RayJob whose Ray job may run keeps its
// finalizer until a stop is confirmed (and recorded), or until
// StopConfirmTimeout has passed since the deletion.
func decideDeletion(o *Observed, p *Plan) {
	j, st := o.Job, &p.Status
	if !slices.Contains(j.Finalizers, rayv1.RayJobStopJobFinalizer) {
		return
	}
	switch {
	case !rayJobMayRun(st), o.Cluster == nil, o.ClusterEmpty, StopConfirmedFor(j, st.JobId):
		p.RemoveFinalizer = true
		return
	}
	deadline := j.DeletionTimestamp.Add(o.Config.StopConfirmTimeout)
	if !o.Now.Before(deadline) {
		last := o.StopLastError
		if last == "" {
			if r, ok := StopRecordOf(j); ok && !r.Confirmed {
				last = stopRecordText(j)
			}
		}
		msg := fmt.Sprintf("Released finalizer %s without a confirmed stop of Ray job %s: the dashboard of RayCluster %s did not confirm it within %s of the deletion",
			rayv1.RayJobStopJobFinalizer, st.JobId, st.RayClusterName, o.Config.StopConfirmTimeout)
		if last != "" {
			msg += " (last error: " + kit.Truncate(last, 400) + ")"
		}
		msg += "; the Ray job may still run"
		p.Events = append(p.Events, kit.Event{Type: corev1.EventTypeWarning, Reason: ReasonStopNotConfirmed, Action: "Stop", Message: msg})
		p.RemoveFinalizer = true
		return
	}
	planStop(o, p, &StopCall{ClusterName: st.RayClusterName, JobID: st.JobId})
	requeueAt(o, p, deadline)
}

// stopBackoff is the wait after the n-th unconfirmed attempt of a stop:
// 1 s, 2 s, 4 s, … up to 15 s.
func stopBackoff(n int) time.Duration {
	if n <= 0 {
		return 0
	}
	return min(time.Second<<min(n-1, 4), 15*time.Second)
}

// planStop sends the stop now, or, after failed attempts, once the
// back-off has passed; it asks to be woken for the next attempt.
func planStop(o *Observed, p *Plan, s *StopCall) {
	if o.StopFailures > 0 {
		if next := o.StopLastAttempt.Add(stopBackoff(o.StopFailures)); o.Now.Before(next) {
			requeueAt(o, p, next)
			return
		}
	}
	p.Stop = s
	requeueAfter(p, max(stopBackoff(o.StopFailures+1), time.Second))
}

// setConditions derives raydar's conditions from the status.
func setConditions(o *Observed, st *rayv1.RayJobStatus) {
	now := o.Now
	set := func(t string, ok bool, reason, msg string) {
		s := metav1.ConditionFalse
		if ok {
			s = metav1.ConditionTrue
		}
		kit.SetCondition(&st.Conditions, metav1.Condition{Type: t, Status: s, Reason: reason, Message: kit.Truncate(msg, 1000),
			ObservedGeneration: o.Job.Generation}, now)
		if c := kit.FindCondition(st.Conditions, t); c != nil {
			c.ObservedGeneration = o.Job.Generation
			c.LastTransitionTime = *apiTime(c.LastTransitionTime.Time)
		}
	}
	ds := st.JobDeploymentStatus

	// ClusterReady.
	switch rc := o.Cluster; {
	case rc != nil && rc.Name == st.RayClusterName:
		if rc.Status.State == rayv1.Ready {
			set(rayv1.RayJobClusterReady, true, rayv1.RayJobReasonClusterReady, "RayCluster "+rc.Name+" is ready")
		} else {
			set(rayv1.RayJobClusterReady, false, rayv1.RayJobReasonClusterCreating, "RayCluster "+rc.Name+" is not ready yet")
		}
	case st.RayClusterName != "" && ds != rayv1.JobDeploymentStatusInitializing:
		set(rayv1.RayJobClusterReady, false, reasonClusterNotFound, "RayCluster "+st.RayClusterName+" does not exist")
	case st.RayClusterName != "":
		set(rayv1.RayJobClusterReady, false, rayv1.RayJobReasonClusterCreating, "RayCluster "+st.RayClusterName+" is being created")
	default:
		set(rayv1.RayJobClusterReady, false, reasonWaitingForCluster, "No cluster yet")
	}

	// JobSubmitted.
	if st.JobStatus != rayv1.JobStatusNew && st.JobId != "" {
		set(rayv1.RayJobSubmitted, true, rayv1.RayJobReasonSubmitted, "Ray job "+st.JobId+" is known to the dashboard")
	} else {
		set(rayv1.RayJobSubmitted, false, reasonNotSubmitted, "The Ray job is not submitted yet")
	}

	// Complete / Failed / Suspended.
	switch ds {
	case rayv1.JobDeploymentStatusComplete:
		reason := rayv1.RayJobReasonSucceeded
		if st.JobStatus == rayv1.JobStatusStopped {
			reason = reasonStopped
		}
		set(rayv1.RayJobComplete, true, reason, fmt.Sprintf("Ray job %s ended %s", st.JobId, st.JobStatus))
	default:
		set(rayv1.RayJobComplete, false, reasonNotComplete, "Deployment status "+orWord(string(ds), "New"))
	}
	if ds == rayv1.JobDeploymentStatusFailed || ds == rayv1.JobDeploymentStatusValidationFailed {
		set(rayv1.RayJobFailedCondition, true, orWord(string(st.Reason), "Failed"), st.Message)
	} else {
		set(rayv1.RayJobFailedCondition, false, reasonNotFailed, "Deployment status "+orWord(string(ds), "New"))
	}
	if ds == rayv1.JobDeploymentStatusSuspended || ds == rayv1.JobDeploymentStatusSuspending {
		set(rayv1.RayJobSuspended, ds == rayv1.JobDeploymentStatusSuspended, rayv1.RayJobReasonSuspended, "spec.suspend is true")
	} else {
		set(rayv1.RayJobSuspended, false, reasonNotSuspended, "Not suspended")
	}
}
