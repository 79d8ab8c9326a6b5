package why

import (
	"time"

	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/raydar/raydar/rayapi/status"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// statusContradiction: the RayJob's status contradicts itself or its
// RayCluster (status.JobContradiction, the one home of that check: the
// lists mark the same word with status.ContradictionMark). The cluster is
// known here: JobInput.Cluster nil means there is none.
func statusContradiction(in *JobInput) (Cause, bool) {
	j := in.Job
	cl := status.JobCluster{Known: true}
	if in.Cluster != nil {
		cl.Cluster = in.Cluster.Cluster
	}
	k, ok := status.JobContradiction(j, cl, in.Now)
	if !ok {
		return Cause{}, false
	}
	c := Cause{Code: CodeStatusContradiction, Subject: jobSubject(j), Rank: rankStatusContradiction,
		Summary:  "status contradicts itself: " + k.Field + " " + k.Value + " while " + k.Other + " " + k.OtherValue,
		Evidence: []string{k.Field + ": " + k.Value, k.Other + ": " + k.OtherValue, k.Why}}
	if !k.Since.IsZero() && !in.Now.IsZero() {
		c.Evidence = append(c.Evidence, "since "+clock(k.Since)+" ("+duration.HumanDuration(in.Now.Sub(k.Since))+" ago)")
	}
	switch {
	case k.Field == "jobStatus" && rayv1.IsJobDeploymentTerminal(j.Status.JobDeploymentStatus):
		c.Fix = "trust jobDeploymentStatus and its reason (" + orWords(string(j.Status.Reason), "none") + "): jobStatus was not updated after the deployment ended (kuberay#2314); " +
			"the Ray job itself may still run if the cluster is kept: ask its dashboard (ray job status " + orWords(j.Status.JobId, "JOB_ID") + ") and stop it there"
	case k.Field == "jobStatus":
		c.Fix = "the operator has not moved the deployment on after the Ray job ended: check that it runs and reconciles this RayJob (its log, the other causes here)"
	case k.Other == "rayClusterStatus":
		c.Fix = "the RayJob's copy of its cluster's status is stale or the cluster broke: look at the cluster (raydar why cluster " + j.ClusterName() + ")"
	default:
		c.Fix = "look at RayCluster " + j.ClusterName() + " (raydar why cluster " + j.ClusterName() + "): the job cannot run without a ready cluster; the operator moves the RayJob on when it reconciles it"
	}
	return c, true
}

// clock is a time of day as kubectl's timestamps are, in UTC: "14:02:11Z".
func clock(t time.Time) string { return t.UTC().Format("15:04:05Z07:00") }
