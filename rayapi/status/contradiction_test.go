package status

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// TestJobContradiction: each contradiction of kuberay#2314's kind is found,
// naming both fields and their values, only once its grace has passed;
// statuses that agree (or whose times do not tell how long) say nothing.
func TestJobContradiction(t *testing.T) {
	now := time.Date(2026, 12, 6, 14, 0, 0, 0, time.UTC)
	at := func(ago time.Duration) *metav1.Time { return &metav1.Time{Time: now.Add(-ago)} }
	job := func(js rayv1.JobStatus, dep rayv1.JobDeploymentStatus, edit ...func(*rayv1.RayJobStatus)) *rayv1.RayJob {
		j := &rayv1.RayJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "j"}}
		j.Status = rayv1.RayJobStatus{JobStatus: js, JobDeploymentStatus: dep, RayClusterName: "j-rc",
			RayClusterStatus: rayv1.RayClusterStatus{State: rayv1.Ready}}
		for _, e := range edit {
			e(&j.Status)
		}
		return j
	}
	ended := func(ago time.Duration) func(*rayv1.RayJobStatus) {
		return func(s *rayv1.RayJobStatus) { s.RayJobStatusInfo.EndTime = at(ago) }
	}
	copyState := func(state rayv1.ClusterState, ago time.Duration) func(*rayv1.RayJobStatus) {
		return func(s *rayv1.RayJobStatus) {
			s.RayClusterStatus = rayv1.RayClusterStatus{State: state, StateTransitionTimes: map[rayv1.ClusterState]*metav1.Time{state: at(ago)}}
		}
	}
	headNotReady := func(ago time.Duration) func(*rayv1.RayJobStatus) {
		return func(s *rayv1.RayJobStatus) {
			s.RayClusterStatus = rayv1.RayClusterStatus{Conditions: []metav1.Condition{
				{Type: string(rayv1.HeadPodReady), Status: metav1.ConditionFalse, LastTransitionTime: *at(ago)}}}
		}
	}
	cluster := func(state rayv1.ClusterState, ago time.Duration) *rayv1.RayCluster {
		rc := &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "j-rc"}}
		rc.Status = rayv1.RayClusterStatus{State: state, StateTransitionTimes: map[rayv1.ClusterState]*metav1.Time{state: at(ago)}}
		return rc
	}
	const running, failed, complete = rayv1.JobDeploymentStatusRunning, rayv1.JobDeploymentStatusFailed, rayv1.JobDeploymentStatusComplete
	tests := []struct {
		name string
		job  *rayv1.RayJob
		cl   JobCluster
		// want is "Field=Value/Other=OtherValue", "" for none.
		want string
	}{
		{"running and Running agree", job(rayv1.JobStatusRunning, running), JobCluster{}, ""},
		{"succeeded and Complete agree", job(rayv1.JobStatusSucceeded, complete), JobCluster{}, ""},
		{"nothing written", job("", ""), JobCluster{}, ""},
		{"kuberay#2314: RUNNING while Failed", job(rayv1.JobStatusRunning, failed), JobCluster{}, "jobStatus=RUNNING/jobDeploymentStatus=Failed"},
		{"PENDING while Complete", job(rayv1.JobStatusPending, complete), JobCluster{}, "jobStatus=PENDING/jobDeploymentStatus=Complete"},
		{"FAILED while Running within KubeRay's grace", job(rayv1.JobStatusFailed, running, ended(JobTerminalGrace-time.Second)), JobCluster{}, ""},
		{"FAILED while Running past KubeRay's grace", job(rayv1.JobStatusFailed, running, ended(JobTerminalGrace+time.Second)), JobCluster{}, "jobStatus=FAILED/jobDeploymentStatus=Running"},
		{"STOPPED while Running, no endTime: how long is unknown", job(rayv1.JobStatusStopped, running), JobCluster{}, ""},
		{"Running, its copy of the cluster suspended past the grace", job(rayv1.JobStatusRunning, running, copyState(rayv1.Suspended, 2*time.Minute)), JobCluster{},
			"jobDeploymentStatus=Running/rayClusterStatus=suspended"},
		{"Running, its copy not ready within the grace", job(rayv1.JobStatusRunning, running, copyState(rayv1.Failed, 30*time.Second)), JobCluster{}, ""},
		{"Running, its copy's head not ready past the grace", job(rayv1.JobStatusRunning, running, headNotReady(5*time.Minute)), JobCluster{},
			"jobDeploymentStatus=Running/rayClusterStatus=pending"},
		{"Running, no cluster copied at all", job(rayv1.JobStatusRunning, running, func(s *rayv1.RayJobStatus) { s.RayClusterStatus = rayv1.RayClusterStatus{} }), JobCluster{}, ""},
		{"Running, its cluster gone (unknown to a list)", job(rayv1.JobStatusRunning, running), JobCluster{}, ""},
		{"Running, its cluster gone", job(rayv1.JobStatusRunning, running), JobCluster{Known: true}, "jobDeploymentStatus=Running/RayCluster j-rc=not found"},
		{"Running, its cluster ready", job(rayv1.JobStatusRunning, running), JobCluster{Known: true, Cluster: cluster(rayv1.Ready, time.Hour)}, ""},
		{"Running, its cluster failed past the grace", job(rayv1.JobStatusRunning, running), JobCluster{Known: true, Cluster: cluster(rayv1.Failed, 2*time.Minute)},
			"jobDeploymentStatus=Running/RayCluster j-rc=failed"},
		{"Running, its cluster failed within the grace", job(rayv1.JobStatusRunning, running), JobCluster{Known: true, Cluster: cluster(rayv1.Failed, 10*time.Second)}, ""},
		{"Initializing, its cluster gone: not yet created", job("", rayv1.JobDeploymentStatusInitializing), JobCluster{Known: true}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, ok := JobContradiction(tc.job, tc.cl, now)
			got := ""
			if ok {
				got = c.Field + "=" + c.Value + "/" + c.Other + "=" + c.OtherValue
				if c.Why == "" {
					t.Error("a contradiction says why")
				}
			}
			if got != tc.want {
				t.Errorf("got %q, want %q (%+v)", got, tc.want, c)
			}
		})
	}
}

// TestJobWord: the list's STATUS word carries the mark only when the
// RayJob's own fields contradict each other.
func TestJobWord(t *testing.T) {
	now := time.Date(2026, 12, 6, 14, 0, 0, 0, time.UTC)
	j := &rayv1.RayJob{Status: rayv1.RayJobStatus{JobStatus: rayv1.JobStatusRunning, JobDeploymentStatus: rayv1.JobDeploymentStatusRunning}}
	if got := JobWord(j, now); got != "RUNNING" {
		t.Errorf("agreeing statuses: %q, want RUNNING", got)
	}
	j.Status.JobDeploymentStatus = rayv1.JobDeploymentStatusFailed
	if got := JobWord(j, now); got != "RUNNING?" {
		t.Errorf("RUNNING while Failed: %q, want RUNNING?", got)
	}
	if got := JobWord(&rayv1.RayJob{}, now); got != None {
		t.Errorf("no status: %q, want %q", got, None)
	}
}
