package raycronjob

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// JobSelector selects the RayJobs a RayCronJob created (ticks and manual
// runs alike): what observe lists for Input.Jobs and what a view lists.
func JobSelector(cronJob string) labels.Selector {
	return labels.SelectorFromSet(labels.Set{rayv1.RayCronJobNameLabelKey: cronJob})
}

// TickName is the name of the RayJob of the tick at t: "<cronjob>-<minutes
// since the epoch>", KubeRay's deterministic name. A second create of the
// same tick collides (AlreadyExists) instead of doubling it, across
// restarts of raydar and across operators (KubeRay names it the same).
func TickName(cronJob string, t time.Time) string {
	return cronJob + "-" + strconv.FormatInt(t.Unix()/60, 10)
}

// ManualName is the name of the RayJob that "trigger now" creates at t:
// "<cronjob>-manual-<minutes since the epoch>", the cronjob's part cut so
// the whole is a valid RayJob name. Two triggers within a minute name the
// same RayJob: the second is refused as AlreadyExists, not run twice.
func ManualName(cronJob string, t time.Time) string {
	suffix := "-manual-" + strconv.FormatInt(t.Unix()/60, 10)
	prefix := cronJob
	if n := rayv1.MaxRayJobNameLength - len(suffix); len(prefix) > n {
		prefix = strings.TrimRight(prefix[:n], "-")
	}
	return prefix + suffix
}

// TickJob is the RayJob a tick at t creates: the jobTemplate copied, the
// label ray.io/cronjob-name, the annotation ray.io/cronjob-scheduled-timestamp
// (t, RFC 3339 in UTC) and a controller owner reference to the RayCronJob,
// so deleting the RayCronJob deletes its RayJobs. As KubeRay v1.7.0.
func TickJob(cj *rayv1.RayCronJob, t time.Time) *rayv1.RayJob {
	return childJob(cj, TickName(cj.Name, t), t, nil)
}

// TriggerNow is the RayJob for a run now, outside the schedule, the way
// `kubectl create job --from=cronjob/NAME` makes a Job: labelled and owned
// like a tick's, annotated raydar.io/cronjob-instantiate: manual so it is
// told apart, and named ManualName so it never takes a tick's name. It does
// not move status.lastScheduleTime. KubeRay has no such thing. The error
// names the field when the RayJob would be invalid.
func TriggerNow(cj *rayv1.RayCronJob, now time.Time) (*rayv1.RayJob, error) {
	j := childJob(cj, ManualName(cj.Name, now), now, map[string]string{
		rayv1.CronJobInstantiateAnnotationKey: rayv1.CronJobInstantiateManual,
	})
	if errs := rayv1.ValidateRayJob(j); len(errs) > 0 {
		return nil, fmt.Errorf("RayCronJob %s/%s: its jobTemplate makes an invalid RayJob: %w", cj.Namespace, cj.Name, errs.ToAggregate())
	}
	return j, nil
}

func childJob(cj *rayv1.RayCronJob, name string, t time.Time, extra map[string]string) *rayv1.RayJob {
	ann := map[string]string{rayv1.RayCronJobTimestampAnnotationKey: t.UTC().Format(time.RFC3339)}
	for k, v := range extra {
		ann[k] = v
	}
	return &rayv1.RayJob{
		TypeMeta: metav1.TypeMeta{APIVersion: rayv1.SchemeGroupVersion.String(), Kind: rayv1.KindRayJob},
		ObjectMeta: metav1.ObjectMeta{
			Name:            name,
			Namespace:       cj.Namespace,
			Labels:          map[string]string{rayv1.RayCronJobNameLabelKey: cj.Name},
			Annotations:     ann,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(cj, rayv1.SchemeGroupVersion.WithKind(rayv1.KindRayCronJob))},
		},
		Spec: *cj.Spec.JobTemplate.DeepCopy(),
	}
}
