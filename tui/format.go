package tui

import (
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/raydar/raydar/rayapi/schedule"
	"github.com/raydar/raydar/rayapi/status"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// The TUI's words, counts and ages are rayapi/status's, the vocabulary it
// shares with raydar get; these are its short local names.

const none = status.None

// age formats the time since t like kubectl ("5m", "3h", "2d"); "-" if unset.
func age(now, t time.Time) string { return status.Age(now, t) }

func metaAge(now time.Time, t *metav1.Time) string { return status.Since(now, t) }

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

// clusterStatus is the one-word status of a RayCluster (status.Cluster).
func clusterStatus(rc *rayv1.RayCluster) string { return status.Cluster(rc) }

// clusterWorkers is a RayCluster's "ready/desired" workers (status.Workers).
func clusterWorkers(rc *rayv1.RayCluster) string { return status.Workers(rc) }

// serviceStatus is the one-word status of a RayService (status.Service).
func serviceStatus(s *rayv1.RayService) string { return status.Service(s) }

// appsReady counts RUNNING applications.
func appsReady(st rayv1.RayServiceStatus) (ready, total int) { return status.AppsReady(st) }

// podStatus is kubectl's STATUS column, simplified (status.Pod).
func podStatus(p *corev1.Pod) string { return status.Pod(p) }

// podReady is "ready/total" containers and the restart count.
func podReady(p *corev1.Pod) (string, int32) { return status.PodReady(p) }

func podIsReady(p *corev1.Pod) bool { return status.PodIsReady(p) }

// conditions formats conditions as "Type=Status(Reason)" sorted by type.
func conditions(cs []metav1.Condition) string { return status.Conditions(cs) }

// jobStatus is a RayJob's job status (status.Job); jobDeployment its
// deployment status (status.JobDeployment).
func jobStatus(j *rayv1.RayJob) string     { return status.Job(j) }
func jobDeployment(j *rayv1.RayJob) string { return status.JobDeployment(j) }

// jobDuration is how long the job ran (so far, if it has not ended).
func jobDuration(now time.Time, j *rayv1.RayJob) string { return status.JobDuration(now, j) }

// cronStatus is the one-word status of a RayCronJob (status.CronJob).
func cronStatus(c *rayv1.RayCronJob) string { return status.CronJob(c) }

// cronWords is a RayCronJob's schedule in words (schedule.Describe):
// "every day at 02:00 Europe/Berlin".
func cronWords(c *rayv1.RayCronJob) string { return schedule.Describe(&c.Spec) }

// cronNext is when a RayCronJob's next RayJob is due (schedule.NextRun,
// in the TUI's time zone for one without spec.timeZone); ok is false
// while it is suspended or invalid, or never fires again.
func cronNext(c *rayv1.RayCronJob, now time.Time) (time.Time, bool) {
	return schedule.NextRun(c, now, time.Local)
}

// cronNextRun counts down to the next run: "in 4m12s", "due" when the
// tick is at or before now (its RayJob is not there yet), "-" when there
// is none.
func cronNextRun(c *rayv1.RayCronJob, now time.Time) string {
	t, ok := cronNext(c, now)
	return status.NextRun(now, t, ok)
}

func orNone(s string) string { return status.OrNone(s) }

// sortedKeys returns a map's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
