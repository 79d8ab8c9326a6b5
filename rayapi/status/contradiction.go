package status

import (
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// JobTerminalGrace is how long a RayJob's terminal jobStatus (SUCCEEDED,
// FAILED, STOPPED) may stand beside jobDeploymentStatus Running, counted
// from status.rayJobInfo.endTime: KubeRay's own transition grace (v1.7.0
// ray-operator/controllers/ray/utils/constant.go:285, 300 s; applied by
// rayjob_controller.go:1366 checkTransitionGracePeriodAndUpdateStatusIfNeeded),
// after which its operator should have moved the deployment on itself.
const JobTerminalGrace = 300 * time.Second

// JobClusterGrace is how long a Running RayJob's cluster status may say
// "not ready" before it contradicts jobDeploymentStatus Running: KubeRay
// refreshes the job's copy of it on every poll of the Ray job, every 3 s
// (rayjob_controller.go:352), and a Running job needs a ready cluster.
const JobClusterGrace = time.Minute

// Contradiction is two fields of a RayJob's status (or the RayJob's and
// its RayCluster's) that cannot both hold: one of them is stale.
type Contradiction struct {
	// Field is the first field and Value what it says ("jobStatus",
	// "RUNNING").
	Field, Value string
	// Other is the field it contradicts and OtherValue what that says
	// ("jobDeploymentStatus", "Failed").
	Other, OtherValue string
	// Since is when it began, as far as the statuses tell; zero when
	// they do not.
	Since time.Time
	// Why says why both cannot hold, and which is likely stale.
	Why string
}

// JobCluster is what the caller knows of a RayJob's RayCluster beyond the
// RayJob itself.
type JobCluster struct {
	// Known: the caller looked for the cluster; Cluster nil then means it
	// is not there. A list of RayJobs does not look (Known false), so its
	// STATUS word (JobWord) reads the RayJob alone.
	Known   bool
	Cluster *rayv1.RayCluster
}

// JobContradiction finds the first contradiction in a RayJob's status
// (kuberay#2314 and its kin), in this order:
//
//  1. jobStatus PENDING or RUNNING while jobDeploymentStatus is Complete or
//     Failed: the deployment ended (a submission failure, a deadline) and
//     the operator stopped reading the Ray job, so jobStatus is the last it
//     read, not the Ray job's (KubeRay never updates jobStatus after Failed).
//  2. jobStatus terminal while jobDeploymentStatus is still Running longer
//     than JobTerminalGrace after status.rayJobInfo.endTime (without an
//     endTime how long cannot be told, and nothing is said).
//  3. jobDeploymentStatus Running while the cluster status the RayJob
//     carries (status.rayClusterStatus) has said "not ready" for longer
//     than JobClusterGrace: that copy is stale, or the cluster broke.
//  4. with the cluster known: jobDeploymentStatus Running while its
//     RayCluster does not exist, or has not been ready for longer than
//     JobClusterGrace (deleting, suspended, failed).
//
// "For longer than" needs a time the statuses give (the cluster's
// stateTransitionTimes, its HeadPodReady or RayClusterProvisioned
// condition's lastTransitionTime); without one nothing is said. The first
// three read the RayJob alone: a list says what `raydar why` says, which
// adds only the fourth.
func JobContradiction(j *rayv1.RayJob, cl JobCluster, now time.Time) (Contradiction, bool) {
	st := &j.Status
	dep, js := st.JobDeploymentStatus, st.JobStatus
	c := Contradiction{Field: "jobStatus", Value: string(js), Other: "jobDeploymentStatus", OtherValue: string(dep)}
	switch {
	case (js == rayv1.JobStatusPending || js == rayv1.JobStatusRunning) && rayv1.IsJobDeploymentTerminal(dep):
		c.Since = timeOf(st.EndTime)
		c.Why = "the deployment ended, so the operator no longer reads the Ray job: jobStatus is the last it read before, not what the Ray job does now"
		return c, true
	case js.IsTerminal() && dep == rayv1.JobDeploymentStatusRunning:
		end := st.RayJobStatusInfo.EndTime
		if end != nil && now.Sub(end.Time) > JobTerminalGrace {
			c.Since = end.Time
			c.Why = "the Ray job ended " + Age(now, end.Time) + " ago; the deployment should have become Complete or Failed within " + duration.HumanDuration(JobTerminalGrace)
			return c, true
		}
	}
	if dep != rayv1.JobDeploymentStatusRunning {
		return Contradiction{}, false
	}
	c.Field, c.Value = "jobDeploymentStatus", string(dep)
	if copied := &st.RayClusterStatus; copied.State != rayv1.Ready {
		if since := statusNotReadySince(copied); !since.IsZero() && now.Sub(since) > JobClusterGrace {
			c.Other, c.OtherValue, c.Since = "rayClusterStatus", clusterStatusWord(copied), since
			c.Why = "a Running job's cluster is ready; the RayJob's copy of its cluster's status has said otherwise for " + Age(now, since)
			return c, true
		}
	}
	name := j.ClusterName()
	if !cl.Known || name == "" {
		return Contradiction{}, false
	}
	c.Other = "RayCluster " + name
	if cl.Cluster == nil {
		c.OtherValue = "not found"
		c.Why = "a Running job runs on its RayCluster, which does not exist"
		return c, true
	}
	rc := cl.Cluster
	word := Cluster(rc)
	if word == string(rayv1.Ready) {
		return Contradiction{}, false
	}
	since := statusNotReadySince(&rc.Status)
	if rc.DeletionTimestamp != nil {
		since = rc.DeletionTimestamp.Time
	}
	if since.IsZero() || now.Sub(since) <= JobClusterGrace {
		return Contradiction{}, false
	}
	c.OtherValue, c.Since = word, since
	c.Why = "a Running job runs on a ready cluster; RayCluster " + name + " has been " + word + " for " + Age(now, since)
	return c, true
}

// JobWord is the RayJob's STATUS word in a list: Job, followed by "?" when
// its status contradicts itself (JobContradiction, the RayJob alone): the
// word is not to be trusted, and `raydar why` says why.
func JobWord(j *rayv1.RayJob, now time.Time) string {
	w := Job(j)
	if _, ok := JobContradiction(j, JobCluster{}, now); ok {
		return w + ContradictionMark
	}
	return w
}

// ContradictionMark follows a STATUS word its other fields contradict.
const ContradictionMark = "?"

// statusNotReadySince is since when a RayCluster status that is not ready
// has been so: the time its state was entered (stateTransitionTimes), else
// since its HeadPodReady, else its RayClusterProvisioned condition is not
// true; zero when it tells none of them (nothing written at all: a job's
// copy before any cluster).
func statusNotReadySince(st *rayv1.RayClusterStatus) time.Time {
	if st.State != "" && st.State != rayv1.Ready {
		if t := st.StateTransitionTimes[st.State]; t != nil {
			return t.Time
		}
	}
	for _, typ := range []rayv1.RayClusterConditionType{rayv1.HeadPodReady, rayv1.RayClusterProvisioned} {
		if c := meta.FindStatusCondition(st.Conditions, string(typ)); c != nil && c.Status != metav1.ConditionTrue {
			return c.LastTransitionTime.Time
		}
	}
	return time.Time{}
}

// clusterStatusWord is a copied cluster status in Cluster's words, for the
// fields it has (no spec, no deletion timestamp).
func clusterStatusWord(st *rayv1.RayClusterStatus) string {
	return Cluster(&rayv1.RayCluster{Status: *st})
}

func timeOf(t *metav1.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.Time
}
