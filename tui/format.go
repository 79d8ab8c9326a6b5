package tui

import (
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

const none = "-"

// age formats the time since t like kubectl ("5m", "3h", "2d"); "-" if unset.
func age(now, t time.Time) string {
	if t.IsZero() {
		return none
	}
	return duration.HumanDuration(now.Sub(t))
}

func metaAge(now time.Time, t *metav1.Time) string {
	if t == nil {
		return none
	}
	return age(now, t.Time)
}

// qty formats a quantity; "-" when zero.
func qty(q resource.Quantity) string {
	if q.IsZero() {
		return none
	}
	return q.String()
}

func i32(p *int32) string {
	if p == nil {
		return none
	}
	return fmt.Sprint(*p)
}

// clusterStatus is the one-word status of a RayCluster: its state, or the
// condition that explains why it has none.
func clusterStatus(rc *rayv1.RayCluster) string {
	c := rc.Status.Conditions
	switch {
	case meta.IsStatusConditionTrue(c, string(rayv1.RayClusterSuspending)):
		return "suspending"
	case rc.Status.State != "":
		return string(rc.Status.State)
	}
	if f := meta.FindStatusCondition(c, string(rayv1.RayClusterReplicaFailure)); f != nil && f.Status == metav1.ConditionTrue {
		return f.Reason
	}
	if rc.Status.Reason != "" {
		return rc.Status.Reason
	}
	if p := meta.FindStatusCondition(c, string(rayv1.RayClusterProvisioned)); p != nil && p.Status != metav1.ConditionTrue {
		return "provisioning"
	}
	return "pending"
}

// serviceStatus is the one-word status of a RayService from its conditions.
func serviceStatus(s *rayv1.RayService) string {
	c := s.Status.Conditions
	is := func(t rayv1.RayServiceConditionType) bool { return meta.IsStatusConditionTrue(c, string(t)) }
	switch {
	case is(rayv1.RayServiceSuspended):
		return "Suspended"
	case is(rayv1.RayServiceSuspending):
		return "Suspending"
	case is(rayv1.RollbackInProgress):
		return "RollingBack"
	case is(rayv1.UpgradeInProgress):
		return "Upgrading"
	case is(rayv1.RayServiceReady):
		return "Ready"
	}
	if r := meta.FindStatusCondition(c, string(rayv1.RayServiceReady)); r != nil && r.Reason != "" {
		return r.Reason
	}
	if s.Status.ServiceStatus != "" {
		return string(s.Status.ServiceStatus)
	}
	return "Pending"
}

// appsReady counts RUNNING applications.
func appsReady(st rayv1.RayServiceStatus) (ready, total int) {
	for _, a := range st.Applications {
		total++
		if a.Status == rayv1.ApplicationStatusRunning {
			ready++
		}
	}
	return ready, total
}

// podStatus is kubectl's STATUS column, simplified.
func podStatus(p *corev1.Pod) string {
	if p.DeletionTimestamp != nil {
		return "Terminating"
	}
	for _, cs := range p.Status.InitContainerStatuses {
		if w := cs.State.Waiting; w != nil && w.Reason != "" && w.Reason != "PodInitializing" {
			return "Init:" + w.Reason
		}
	}
	for _, cs := range p.Status.ContainerStatuses {
		if w := cs.State.Waiting; w != nil && w.Reason != "" {
			return w.Reason
		}
		if t := cs.State.Terminated; t != nil && t.Reason != "" && p.Status.Phase == corev1.PodRunning {
			return t.Reason
		}
	}
	if p.Status.Reason != "" {
		return p.Status.Reason
	}
	if p.Status.Phase == "" {
		return "Pending"
	}
	return string(p.Status.Phase)
}

// podReady is "ready/total" containers and the restart count.
func podReady(p *corev1.Pod) (string, int32) {
	ready, restarts := 0, int32(0)
	for _, cs := range p.Status.ContainerStatuses {
		if cs.Ready {
			ready++
		}
		restarts += cs.RestartCount
	}
	total := len(p.Spec.Containers)
	if n := len(p.Status.ContainerStatuses); n > total {
		total = n
	}
	return fmt.Sprintf("%d/%d", ready, total), restarts
}

func podIsReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// conditions formats conditions as "Type=Status(Reason)" sorted by type.
func conditions(cs []metav1.Condition) string {
	if len(cs) == 0 {
		return none
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

// jobDuration is how long the job ran (so far, if it has not ended).
func jobDuration(now time.Time, j *rayv1.RayJob) string {
	start := j.Status.StartTime
	if start == nil {
		return none
	}
	end := now
	if j.Status.EndTime != nil {
		end = j.Status.EndTime.Time
	}
	return duration.HumanDuration(end.Sub(start.Time))
}

func orNone(s string) string {
	if s == "" {
		return none
	}
	return s
}

// sortedKeys returns a map's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
