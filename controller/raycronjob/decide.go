package raycronjob

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/raydar/raydar/controller/kit"
	"github.com/raydar/raydar/rayapi/schedule"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// Input is what the reconciler observed.
type Input struct {
	// CronJob is the RayCronJob, as read (Decide does not change it).
	CronJob *rayv1.RayCronJob
	// Jobs are the RayJobs in its namespace labelled ray.io/cronjob-name
	// with its name (this process's own creates laid over the cache).
	Jobs []*rayv1.RayJob
	// Now is the reconciler's clock.
	Now time.Time
	// Local is the operator's time zone, for a RayCronJob without
	// spec.timeZone (KubeRay: the operator's local time zone); nil is
	// time.Local.
	Local *time.Location
}

// Plan is what the reconciler does, in order: create Create (AlreadyExists
// counts as done: the tick was created before), emit Events (those of
// Create only when it was created), write Status, look again after
// RequeueAfter.
type Plan struct {
	// Create is the RayJob of the due tick; nil when nothing is due or its
	// RayJob exists.
	Create *rayv1.RayJob
	// Status is the whole status to write; nil when it would not change.
	Status *rayv1.RayCronJobStatus
	// Events to emit on the RayCronJob; the reconciler says each once.
	Events []Event
	// RequeueAfter is the time until the next tick; zero when there is
	// none to wait for (invalid, suspended, never fires again).
	RequeueAfter time.Duration
}

// Event is a Kubernetes Event to emit on the RayCronJob.
type Event struct {
	kit.Event
	// Key, when set, names the state the Event describes (KeySuspended,
	// KeyInvalid): Decide returns it on every pass while the state lasts,
	// and the reconciler says it once (kit.Events.EmitOnce under Key),
	// again when its message changes or once the state has ended and come
	// back. An Event without a Key goes with Plan.Create: it is emitted
	// once that RayJob was created, not when it already existed.
	Key string
}

// The keys of the Events that describe a state (Event.Key).
const (
	KeySuspended = "suspended"
	KeyInvalid   = "invalid"
)

// StateKeys are all the Event keys, for the reconciler to forget those a
// Plan no longer says.
var StateKeys = []string{KeySuspended, KeyInvalid}

func event(typ, reason, action, msg, key string) Event {
	return Event{Event: kit.Event{Type: typ, Reason: reason, Action: action, Message: msg}, Key: key}
}

// Decide is the RayCronJob reconciler's one decision. KubeRay v1.7.0's rules,
// and where raydar differs:
//   - an invalid name, schedule, time zone or jobTemplate: a Warning Event
//     (InvalidRayCronJobSpec) naming the field, as KubeRay; raydar also sets
//     the ScheduleValid condition False with the same message, and never
//     requeues (a fix is a spec change, which is an event);
//   - spec.suspend: a Normal Event (SuspendedRayCronJob), no tick, no
//     requeue, lastScheduleTime kept, as KubeRay;
//   - the next tick is the first after status.lastScheduleTime, else after
//     the creation time; not yet due: requeue until it is, as KubeRay;
//   - due: KubeRay creates the first due tick and catches up the others one
//     reconcile at a time (a day missed on a per-minute schedule makes 1,440
//     RayJobs). raydar creates only the latest due tick and says in a Normal
//     Event (SkippedMissedTicks) how many it skipped; a tick missed while
//     suspended counts as missed, so resuming runs the latest one (as
//     batch/v1 CronJob);
//   - the tick's RayJob is named rayv1.CronJobTickName, so a tick whose RayJob exists
//     (created before a restart, or by KubeRay) creates nothing, and
//     lastScheduleTime still moves to it, as KubeRay;
//   - lastScheduleTime is the tick's time, written only when it changes;
//   - requeue at the tick after the one just handled, as KubeRay.
func Decide(in Input) Plan {
	cj := in.CronJob
	var p Plan
	st := cj.Status.DeepCopy()
	changed := false

	if errs := rayv1.ValidateRayCronJob(cj); len(errs) > 0 {
		msg := errs.ToAggregate().Error()
		changed = setValid(st, cj, metav1.ConditionFalse, invalidReason(errs), msg, in.Now)
		p.Events = append(p.Events, event(corev1.EventTypeWarning, rayv1.EventInvalidRayCronJobSpec, "Validate",
			fmt.Sprintf("%s/%s: %s", cj.Namespace, cj.Name, msg), KeyInvalid))
		return withStatus(p, st, changed)
	}
	// A fixed spec turns an existing condition True; none is added for a
	// RayCronJob that was always valid (KubeRay's CRD would prune it).
	if meta.FindStatusCondition(st.Conditions, rayv1.RayCronJobScheduleValid) != nil {
		changed = setValid(st, cj, metav1.ConditionTrue, rayv1.RayCronJobReasonValid, "", in.Now)
	}

	if cj.Spec.IsSuspended() {
		p.Events = append(p.Events, event(corev1.EventTypeNormal, rayv1.EventSuspendedRayCronJob, "Suspend",
			"RayCronJob suspended, no new RayJobs will be created", KeySuspended))
		return withStatus(p, st, changed)
	}

	s, _ := rayv1.ParseCronSchedule(&cj.Spec, schedule.OrLocal(in.Local)) // valid: checked above
	from := schedule.Earliest(cj, in.Now)
	d := dueTicks(s, from, in.Now)
	if d.Latest.IsZero() {
		if next := s.Next(from); !next.IsZero() {
			p.RequeueAfter = next.Sub(in.Now)
		}
		return withStatus(p, st, changed)
	}

	name := rayv1.CronJobTickName(cj.Name, d.Latest)
	if !hasJob(in.Jobs, name) {
		p.Create = rayv1.CronJobTickJob(cj, d.Latest)
		if d.Skipped > 0 {
			p.Events = append(p.Events, event(corev1.EventTypeNormal, rayv1.EventSkippedMissedTicks, "Schedule",
				fmt.Sprintf("skipped %s after %s; created a RayJob only for the latest, %s",
					skippedTicks(d), from.UTC().Format(time.RFC3339), d.Latest.UTC().Format(time.RFC3339)), ""))
		}
		p.Events = append(p.Events, event(corev1.EventTypeNormal, rayv1.EventCreatedRayJob, "Create",
			fmt.Sprintf("Created RayJob %s/%s for the tick at %s", cj.Namespace, name, d.Latest.UTC().Format(time.RFC3339)), ""))
	}
	if st.LastScheduleTime == nil || !st.LastScheduleTime.Time.Equal(d.Latest) {
		st.LastScheduleTime = &metav1.Time{Time: d.Latest}
		changed = true
	}
	if next := s.Next(d.Latest); !next.IsZero() {
		p.RequeueAfter = next.Sub(in.Now)
	}
	return withStatus(p, st, changed)
}

func withStatus(p Plan, st *rayv1.RayCronJobStatus, changed bool) Plan {
	if changed {
		p.Status = st
	}
	return p
}

// setValid sets the ScheduleValid condition, reporting whether it changed.
func setValid(st *rayv1.RayCronJobStatus, cj *rayv1.RayCronJob, s metav1.ConditionStatus, reason, msg string, now time.Time) bool {
	return meta.SetStatusCondition(&st.Conditions, metav1.Condition{
		Type: rayv1.RayCronJobScheduleValid, Status: s, Reason: reason, Message: msg,
		ObservedGeneration: cj.Generation, LastTransitionTime: metav1.NewTime(now),
	})
}

// invalidReason is the condition reason of the first invalid field.
func invalidReason(errs field.ErrorList) string {
	switch f := errs[0].Field; {
	case strings.HasPrefix(f, "metadata."):
		return rayv1.RayCronJobReasonInvalidName
	case f == "spec.timeZone":
		return rayv1.RayCronJobReasonInvalidTimeZone
	case f == "spec.schedule":
		return rayv1.RayCronJobReasonInvalidSchedule
	}
	return rayv1.RayCronJobReasonInvalidJobTemplate
}

func hasJob(jobs []*rayv1.RayJob, name string) bool {
	for _, j := range jobs {
		if j.Name == name {
			return true
		}
	}
	return false
}
