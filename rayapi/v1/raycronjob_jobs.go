package v1

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// The RayJobs a RayCronJob creates: the one definition of their names,
// labels, annotations and owner, shared by the RayCronJob reconciler (a
// tick) and the mutation choke point, kube/actions (trigger now).

// CronJobRayJobSelector selects the RayJobs a RayCronJob created (ticks and
// manual runs alike): what the reconciler lists and what a view lists.
func CronJobRayJobSelector(cronJob string) labels.Selector {
	return labels.SelectorFromSet(labels.Set{RayCronJobNameLabelKey: cronJob})
}

// CronJobTickName is the name of the RayJob of the tick at t: "<cronjob>-
// <minutes since the epoch>", KubeRay's deterministic name. A second create
// of the same tick collides (AlreadyExists) instead of doubling it, across
// restarts of raydar and across operators (KubeRay names it the same).
func CronJobTickName(cronJob string, t time.Time) string {
	return cronJob + "-" + strconv.FormatInt(t.Unix()/60, 10)
}

// CronJobManualName is the name of the RayJob that "trigger now" creates at
// t: "<cronjob>-manual-<minutes since the epoch>", the cronjob's part cut so
// the whole is a valid RayJob name. Two triggers within a minute name the
// same RayJob: the second is refused as AlreadyExists, not run twice.
func CronJobManualName(cronJob string, t time.Time) string {
	suffix := "-manual-" + strconv.FormatInt(t.Unix()/60, 10)
	prefix := cronJob
	if n := MaxRayJobNameLength - len(suffix); len(prefix) > n {
		prefix = strings.TrimRight(prefix[:n], "-")
	}
	return prefix + suffix
}

// CronJobTickJob is the RayJob a tick at t creates: the jobTemplate copied,
// the label ray.io/cronjob-name, the annotation
// ray.io/cronjob-scheduled-timestamp (t, RFC 3339 in UTC) and a controller
// owner reference to the RayCronJob, so deleting the RayCronJob deletes its
// RayJobs. As KubeRay v1.7.0.
func CronJobTickJob(cj *RayCronJob, t time.Time) *RayJob {
	return cronChildJob(cj, CronJobTickName(cj.Name, t), t, nil)
}

// CronJobTriggerNow is the RayJob for a run now, outside the schedule, the
// way `kubectl create job --from=cronjob/NAME` makes a Job: labelled and
// owned like a tick's, annotated raydar.io/cronjob-instantiate: manual so it
// is told apart, and named CronJobManualName so it never takes a tick's
// name. It does not move status.lastScheduleTime. KubeRay has no such
// thing. The error names the field when the RayJob would be invalid.
func CronJobTriggerNow(cj *RayCronJob, now time.Time) (*RayJob, error) {
	j := cronChildJob(cj, CronJobManualName(cj.Name, now), now, map[string]string{
		CronJobInstantiateAnnotationKey: CronJobInstantiateManual,
	})
	if errs := ValidateRayJob(j); len(errs) > 0 {
		return nil, fmt.Errorf("RayCronJob %s/%s: its jobTemplate makes an invalid RayJob: %w", cj.Namespace, cj.Name, errs.ToAggregate())
	}
	return j, nil
}

func cronChildJob(cj *RayCronJob, name string, t time.Time, extra map[string]string) *RayJob {
	ann := map[string]string{RayCronJobTimestampAnnotationKey: t.UTC().Format(time.RFC3339)}
	for k, v := range extra {
		ann[k] = v
	}
	return &RayJob{
		TypeMeta: metav1.TypeMeta{APIVersion: SchemeGroupVersion.String(), Kind: KindRayJob},
		ObjectMeta: metav1.ObjectMeta{
			Name:            name,
			Namespace:       cj.Namespace,
			Labels:          map[string]string{RayCronJobNameLabelKey: cj.Name},
			Annotations:     ann,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(cj, SchemeGroupVersion.WithKind(KindRayCronJob))},
		},
		Spec: *cj.Spec.JobTemplate.DeepCopy(),
	}
}
