package status

import (
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/raydar/raydar/rayapi/podview"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// Ratio is "ready/total", the shape of every ready count.
func Ratio(ready, total int) string { return fmt.Sprintf("%d/%d", ready, total) }

// Workers is a RayCluster's "ready/desired" worker pods: ready is
// status.readyWorkerReplicas (pods Running and Ready, as the reconciler last
// counted them), desired is what the spec asks for now (replicas clamped to
// min/max, times numOfHosts, over groups not suspended; 0 while the cluster
// is suspended), so it is right before the reconciler has written a status.
func Workers(rc *rayv1.RayCluster) string {
	desired := 0
	if !rc.Spec.IsSuspended() {
		desired = int(rc.Spec.DesiredWorkerPods())
	}
	return Ratio(int(rc.Status.ReadyWorkerReplicas), desired)
}

// PodReady is a pod's "ready/total" containers and its restart count; total
// is the spec's containers, or the statuses' when there are more.
func PodReady(p *podview.Pod) (string, int32) {
	ready, restarts := 0, int32(0)
	for _, cs := range p.Status.ContainerStatuses {
		if cs.Ready {
			ready++
		}
		restarts += cs.RestartCount
	}
	total := max(len(p.Spec.Containers), len(p.Status.ContainerStatuses))
	return Ratio(ready, total), restarts
}

// PodIsReady reports whether the pod's Ready condition is true.
func PodIsReady(p *podview.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// AppsReady counts a RayService side's applications and those RUNNING.
func AppsReady(st rayv1.RayServiceStatus) (ready, total int) {
	for _, a := range st.Applications {
		total++
		if a.Status == rayv1.ApplicationStatusRunning {
			ready++
		}
	}
	return ready, total
}

// Apps is "running/total" applications of a RayService's active cluster.
func Apps(s *rayv1.RayService) string { return Ratio(AppsReady(s.Status.ActiveServiceStatus)) }

// Age is the time since t like kubectl ("5m", "3h", "2d"); None if unset.
func Age(now, t time.Time) string {
	if t.IsZero() {
		return None
	}
	return duration.HumanDuration(now.Sub(t))
}

// Since is Age of an optional timestamp (a job's start or end).
func Since(now time.Time, t *metav1.Time) string {
	if t == nil {
		return None
	}
	return Age(now, t.Time)
}

// JobDuration is how long a RayJob's Ray job ran: start to end, or to now
// while it has not ended; None before it started.
func JobDuration(now time.Time, j *rayv1.RayJob) string {
	start := j.Status.StartTime
	if start == nil {
		return None
	}
	end := now
	if j.Status.EndTime != nil {
		end = j.Status.EndTime.Time
	}
	return duration.HumanDuration(end.Sub(start.Time))
}

// Conditions summarises conditions as "Type=Status(Reason)", sorted, two
// spaces apart; None without conditions.
func Conditions(cs []metav1.Condition) string {
	if len(cs) == 0 {
		return None
	}
	parts := make([]string, 0, len(cs))
	for _, c := range cs {
		s := c.Type + "=" + string(c.Status)
		if c.Reason != "" {
			s += "(" + c.Reason + ")"
		}
		parts = append(parts, s)
	}
	sort.Strings(parts)
	return strings.Join(parts, "  ")
}

// NextRun counts down to a scheduled time (a RayCronJob's next tick):
// "in 4m12s", "due" when the tick is at or before now (its RayJob is not
// there yet), None when there is no next run (ok false).
func NextRun(now, next time.Time, ok bool) string {
	switch {
	case !ok:
		return None
	case !next.After(now):
		return "due"
	}
	return "in " + duration.HumanDuration(next.Sub(now))
}
