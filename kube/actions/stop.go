package actions

import (
	"context"
	"errors"
	"fmt"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/kube/raydash"
	"github.com/raydar/raydar/rayapi/kinds"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// JobStopper stops a Ray job through the Ray dashboard of the RayJob's
// cluster. StopJobDirect uses it where another operator (KubeRay)
// reconciles the RayJob and does not read raydar's stop annotation.
type JobStopper interface {
	StopJob(ctx context.Context, ns, rayJobName, submissionID string) error
}

// How a stop is delivered.
const (
	StopViaAnnotation = "annotation"
	StopViaDashboard  = "dashboard"
)

// StopJobPlan is the preview of StopJob and StopJobDirect.
type StopJobPlan struct {
	Namespace string `json:"namespace"`
	Job       string `json:"job"`
	// Cluster is the RayCluster the job runs on ("" before it has one).
	Cluster string `json:"cluster,omitempty"`
	// SubmissionID is the Ray job's submission ID (status.jobId).
	SubmissionID     string `json:"submissionID,omitempty"`
	JobStatus        string `json:"jobStatus,omitempty"`
	DeploymentStatus string `json:"deploymentStatus,omitempty"`
	// Via is StopViaAnnotation or StopViaDashboard.
	Via string `json:"via"`
	// Annotation is "<key>=<value>" of the stop request (Via annotation).
	Annotation string `json:"annotation,omitempty"`
	// PreviousRequest is the value of an earlier stop request, if any.
	PreviousRequest string   `json:"previousRequest,omitempty"`
	Warnings        []string `json:"warnings,omitempty"`
}

// Lines implements Plan.
func (p *StopJobPlan) Lines() []string {
	cluster := p.Cluster
	if cluster == "" {
		cluster = "(no cluster yet)"
	}
	l := []string{
		fmt.Sprintf("stop RayJob %s/%s on RayCluster %s", p.Namespace, p.Job, cluster),
		fmt.Sprintf("job status %s, deployment status %s", orDash(p.JobStatus), orDash(p.DeploymentStatus)),
	}
	if p.Via == StopViaDashboard {
		l = append(l, fmt.Sprintf("how: the Ray dashboard stops submission %s now", p.SubmissionID))
	} else {
		l = append(l, "how: annotation "+p.Annotation+"; the RayJob reconciler stops the Ray job once and reports condition "+rayv1.JobStopConditionType)
	}
	return appendWarnings(l, p.Warnings)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// StopRequestValue is the value of rayv1.StopRequestedAnnotationKey that
// records who asked and when: "<actor>@<RFC3339 time>".
func StopRequestValue(actor string, now time.Time) string {
	return actor + "@" + now.UTC().Format(time.RFC3339)
}

// PlanStopJob validates a declarative stop of j and previews it. Refused
// when the job already finished or is suspended. Pure.
func PlanStopJob(j *rayv1.RayJob, actor string, now time.Time) (*StopJobPlan, error) {
	p, err := planStop(j)
	if err != nil {
		return nil, err
	}
	p.Via = StopViaAnnotation
	p.Annotation = rayv1.StopRequestedAnnotationKey + "=" + StopRequestValue(actor, now)
	if prev := j.Annotations[rayv1.StopRequestedAnnotationKey]; prev != "" {
		p.PreviousRequest = prev
		p.Warnings = append(p.Warnings, "a stop was requested before ("+prev+"); this asks again")
	}
	if mb := j.Spec.ManagedBy; !rayv1.IsManagedBy(mb, rayv1.ManagedByRaydar) && !rayv1.IsManagedBy(mb, rayv1.KubeRayController) {
		p.Warnings = append(p.Warnings, fmt.Sprintf("spec.managedBy is %q: that controller does not read raydar's stop annotation; stop through the dashboard instead", *mb))
	}
	if p.SubmissionID == "" {
		p.Warnings = append(p.Warnings, "the Ray job has not been submitted yet")
	}
	return p, nil
}

// PlanStopJobDirect validates a stop of j through the Ray dashboard and
// previews it: as PlanStopJob, and the job must have a submission ID. Pure.
func PlanStopJobDirect(j *rayv1.RayJob) (*StopJobPlan, error) {
	p, err := planStop(j)
	if err != nil {
		return nil, err
	}
	p.Via = StopViaDashboard
	if p.SubmissionID == "" {
		return nil, invalidf("RayJob %s/%s has no Ray job yet (status.jobId is empty): nothing to stop through the dashboard", j.Namespace, j.Name)
	}
	if p.Cluster == "" {
		return nil, invalidf("RayJob %s/%s has no RayCluster yet (status.rayClusterName is empty)", j.Namespace, j.Name)
	}
	return p, nil
}

func planStop(j *rayv1.RayJob) (*StopJobPlan, error) {
	st := &j.Status
	p := &StopJobPlan{
		Namespace: j.Namespace, Job: j.Name, Cluster: st.RayClusterName, SubmissionID: st.JobId,
		JobStatus: string(st.JobStatus), DeploymentStatus: string(st.JobDeploymentStatus),
	}
	if p.Cluster == "" && j.Spec.UsesClusterSelector() {
		p.Cluster = j.Spec.SelectedClusterName()
	}
	switch {
	case st.JobStatus.IsTerminal() || j.IsTerminal():
		return nil, invalidf("RayJob %s/%s has already finished (job status %s, deployment status %s): nothing to stop",
			j.Namespace, j.Name, orDash(string(st.JobStatus)), orDash(string(st.JobDeploymentStatus)))
	case j.Spec.Suspend || st.JobDeploymentStatus == rayv1.JobDeploymentStatusSuspended:
		return nil, invalidf("RayJob %s/%s is suspended: no Ray job is running", j.Namespace, j.Name)
	case j.DeletionTimestamp != nil:
		return nil, invalidf("RayJob %s/%s is being deleted", j.Namespace, j.Name)
	}
	return p, nil
}

// PreviewStopJob reads the RayJob and returns PlanStopJob's preview.
func (a *Actions) PreviewStopJob(ctx context.Context, ns, name string) (*StopJobPlan, error) {
	j, err := a.getJob(ctx, ns, name)
	if err != nil {
		return nil, err
	}
	return PlanStopJob(j, a.actor, a.clock.Now())
}

// PreviewStopJobDirect reads the RayJob and returns PlanStopJobDirect's preview.
func (a *Actions) PreviewStopJobDirect(ctx context.Context, ns, name string) (*StopJobPlan, error) {
	j, err := a.getJob(ctx, ns, name)
	if err != nil {
		return nil, err
	}
	return PlanStopJobDirect(j)
}

// StopJob asks the RayJob reconciler to stop the Ray job: one
// optimistic-locked patch sets rayv1.StopRequestedAnnotationKey to
// StopRequestValue(actor, now). The reconciler stops the job once per value
// and reports condition rayv1.JobStopConditionType. Event reason StopRequested.
func (a *Actions) StopJob(ctx context.Context, ns, name string) (*Result, error) {
	ref := ObjectRef{Kind: kinds.RayJob, Namespace: ns, Name: name}
	return a.runWrite(ctx, ActionStopJob, ref, func(r *Result) (*change, error) {
		j, err := a.getJob(ctx, ns, name)
		if err != nil {
			return nil, err
		}
		now := a.clock.Now()
		p, err := PlanStopJob(j, a.actor, now)
		if err != nil {
			return nil, err
		}
		r.Plan = p
		out := j.DeepCopy()
		if out.Annotations == nil {
			out.Annotations = map[string]string{}
		}
		out.Annotations[rayv1.StopRequestedAnnotationKey] = StopRequestValue(a.actor, now)
		if err := a.patch(ctx, ref, out, j); err != nil {
			return nil, err
		}
		return &change{obj: out, reason: ReasonStopRequested, verb: "Stop",
			what: fmt.Sprintf("Requested stop of the Ray job (annotation %s)", p.Annotation)}, nil
	})
}

// StopJobDirect stops the Ray job through Options.JobStopper (the Ray
// dashboard), for RayJobs another operator reconciles. No object is written;
// the Event (reason StopRequested) and audit line record it.
func (a *Actions) StopJobDirect(ctx context.Context, ns, name string) (*Result, error) {
	ref := ObjectRef{Kind: kinds.RayJob, Namespace: ns, Name: name}
	return a.run(ctx, ActionStopJobDirect, ref, func(r *Result) (*change, error) {
		if a.opts.JobStopper == nil {
			return nil, errors.New("stopping through the dashboard is not configured (no JobStopper)")
		}
		j, err := a.getJob(ctx, ns, name)
		if err != nil {
			return nil, err
		}
		p, err := PlanStopJobDirect(j)
		if err != nil {
			return nil, err
		}
		r.Plan = p
		r.Attempts = 1
		if err := a.opts.JobStopper.StopJob(ctx, ns, name, p.SubmissionID); err != nil {
			return nil, fmt.Errorf("stopping Ray job %s of RayJob %s/%s through the dashboard: %w", p.SubmissionID, ns, name, err)
		}
		return &change{obj: j, reason: ReasonStopRequested, verb: "Stop",
			what: fmt.Sprintf("Stopped Ray job %s through the Ray dashboard", p.SubmissionID)}, nil
	})
}

func (a *Actions) getJob(ctx context.Context, ns, name string) (*rayv1.RayJob, error) {
	j := &rayv1.RayJob{}
	if err := a.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, j); err != nil {
		return nil, a.apiErr(err, "get", rayv1.ResourceRayJobs, ns, name)
	}
	return j, nil
}

// DashboardStopper is the JobStopper of raydar: it finds the RayJob's
// RayCluster and reaches its dashboard through a raydash.Resolver (the API
// server's service proxy from a laptop, with the cluster's auth token).
type DashboardStopper struct {
	// Reader reads the RayJob and its RayCluster.
	Reader   client.Reader
	Resolver raydash.Resolver
}

// StopJob implements JobStopper.
func (s *DashboardStopper) StopJob(ctx context.Context, ns, rayJobName, submissionID string) error {
	dc, _, err := raydash.ClientForRayJob(ctx, s.Reader, s.Resolver, ns, rayJobName)
	if err != nil {
		return err
	}
	_, err = dc.StopJob(ctx, submissionID)
	return err
}
