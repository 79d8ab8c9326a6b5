package actions

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/rayapi/kinds"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// TriggerPlan is the preview of Trigger: the RayJob a run now creates.
type TriggerPlan struct {
	Namespace string `json:"namespace"`
	CronJob   string `json:"cronJob"`
	// Job is the name of the RayJob (rayv1.CronJobManualName): the same for
	// every trigger within one minute.
	Job      string `json:"job"`
	Schedule string `json:"schedule"`
	// AlreadyExists is true when that RayJob exists already: the RayCronJob
	// was triggered within this minute before, and nothing more is created.
	AlreadyExists bool     `json:"alreadyExists,omitempty"`
	Warnings      []string `json:"warnings,omitempty"`
}

// Lines implements Plan.
func (p *TriggerPlan) Lines() []string {
	l := []string{fmt.Sprintf("create RayJob %s/%s from the jobTemplate of RayCronJob %s, now, outside its schedule %q",
		p.Namespace, p.Job, p.CronJob, p.Schedule)}
	if p.AlreadyExists {
		l = append(l, fmt.Sprintf("no change: RayJob %s exists already (triggered within this minute before); nothing more is created", p.Job))
	} else {
		l = append(l, "effect: the RayJob is owned by the RayCronJob and runs as a tick's would; status.lastScheduleTime does not move")
	}
	return appendWarnings(l, p.Warnings)
}

// PlanTrigger validates running cj now, outside its schedule, and previews
// it: the RayJob rayv1.CronJobTriggerNow builds at now. Refused when the
// RayCronJob is being deleted or its jobTemplate makes an invalid RayJob; a
// suspended RayCronJob runs anyway (as `kubectl create job --from=cronjob/`),
// with a warning. Pure.
func PlanTrigger(cj *rayv1.RayCronJob, now time.Time) (*TriggerPlan, error) {
	p, _, err := planTrigger(cj, now)
	return p, err
}

func planTrigger(cj *rayv1.RayCronJob, now time.Time) (*TriggerPlan, *rayv1.RayJob, error) {
	if cj.DeletionTimestamp != nil {
		return nil, nil, invalidf("RayCronJob %s/%s is being deleted", cj.Namespace, cj.Name)
	}
	j, err := rayv1.CronJobTriggerNow(cj, now)
	if err != nil {
		return nil, nil, &InvalidError{Reason: err.Error()}
	}
	p := &TriggerPlan{Namespace: cj.Namespace, CronJob: cj.Name, Job: j.Name, Schedule: cj.Spec.Schedule}
	if cj.Spec.IsSuspended() {
		p.Warnings = append(p.Warnings, "the RayCronJob is suspended: this runs anyway; its schedule stays suspended")
	}
	return p, j, nil
}

// PreviewTrigger reads the RayCronJob and returns PlanTrigger's preview at
// the actions' clock, AlreadyExists set when the RayJob is there.
func (a *Actions) PreviewTrigger(ctx context.Context, ns, name string) (*TriggerPlan, error) {
	p, _, cj, err := a.readAndPlanTrigger(ctx, ns, name)
	if err != nil {
		return nil, err
	}
	switch exists, err := a.manualRunExists(ctx, cj, p.Job); {
	case err != nil && errors.Is(err, ErrInvalid):
		return nil, err
	case err != nil:
		p.Warnings = append(p.Warnings, "cannot tell whether it exists already: "+err.Error())
	default:
		p.AlreadyExists = exists
	}
	return p, nil
}

// readAndPlanTrigger reads the RayCronJob fresh and plans its trigger now.
func (a *Actions) readAndPlanTrigger(ctx context.Context, ns, name string) (*TriggerPlan, *rayv1.RayJob, *rayv1.RayCronJob, error) {
	obj, err := a.getObject(ctx, kinds.RayCronJob, ns, name)
	if err != nil {
		return nil, nil, nil, err
	}
	cj := obj.(*rayv1.RayCronJob)
	p, j, err := planTrigger(cj, a.clock.Now())
	return p, j, cj, err
}

// manualRunExists reports whether RayJob name, cj's manual run, exists; a
// RayJob of that name that is not cj's is an *InvalidError: it is not
// taken for the run.
func (a *Actions) manualRunExists(ctx context.Context, cj *rayv1.RayCronJob, name string) (bool, error) {
	j := &rayv1.RayJob{}
	switch err := a.c.Get(ctx, client.ObjectKey{Namespace: cj.Namespace, Name: name}, j); {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, a.apiErr(err, "get", rayv1.ResourceRayJobs, cj.Namespace, name)
	case !metav1.IsControlledBy(j, cj):
		return false, invalidf("RayJob %s/%s exists and is not RayCronJob %s's: trigger again in a minute, under the next minute's name",
			j.Namespace, j.Name, cj.Name)
	}
	return true, nil
}

// Trigger runs a RayCronJob now, outside its schedule, the way `kubectl
// create job --from=cronjob/NAME` does: it creates the RayJob
// rayv1.CronJobTriggerNow builds, directly, so it works whichever operator
// reconciles RayJobs. Its name is the same within a minute, so a retry does
// not run the job twice: AlreadyExists (of a RayJob of this RayCronJob) is
// OutcomeUnchanged, the plan saying so. The Event (reason Triggered) is on
// the RayCronJob.
func (a *Actions) Trigger(ctx context.Context, ns, name string) (*Result, error) {
	ref := ObjectRef{Kind: kinds.RayCronJob, Namespace: ns, Name: name}
	return a.run(ctx, ActionTrigger, ref, func(r *Result) (*change, error) {
		p, j, cj, err := a.readAndPlanTrigger(ctx, ns, name)
		if err != nil {
			return nil, err
		}
		r.Plan = p
		r.Attempts = 1
		err = a.c.Create(ctx, j)
		if apierrors.IsAlreadyExists(err) {
			if _, err := a.manualRunExists(ctx, cj, j.Name); err != nil {
				return nil, err
			}
			p.AlreadyExists = true
			return nil, nil
		}
		if err != nil {
			return nil, a.apiErr(err, "create", rayv1.ResourceRayJobs, ns, j.Name)
		}
		return &change{obj: cj, reason: ReasonTriggered, verb: "Trigger",
			what: fmt.Sprintf("Triggered RayJob %s now, outside the schedule", j.Name)}, nil
	})
}
