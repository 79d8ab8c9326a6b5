package why

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/raydar/raydar/rayapi/dashboard"
	"github.com/raydar/raydar/rayapi/podview"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

func runningJob() *rayv1.RayJob {
	return &rayv1.RayJob{
		ObjectMeta: metav1.ObjectMeta{Name: "job", Namespace: "ns", Generation: 1},
		Spec:       rayv1.RayJobSpec{Entrypoint: "python run.py"},
		Status: rayv1.RayJobStatus{ObservedGeneration: 1, RayClusterName: "rc", JobId: "job-abc",
			JobStatus: rayv1.JobStatusRunning, JobDeploymentStatus: rayv1.JobDeploymentStatusRunning,
			StartTime: &metav1.Time{Time: now.Add(-10 * time.Minute)}},
	}
}

func submitter(exit int32, reason string) *podview.Pod {
	return &podview.Pod{ObjectMeta: metav1.ObjectMeta{Name: "job-sub-1", Namespace: "ns"},
		Status: podview.Status{Phase: corev1.PodFailed, ContainerStatuses: []podview.ContainerStatus{{
			Name:  rayv1.RayJobSubmitterContainerName,
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: exit, Reason: reason}}}}}}
}

func TestJobCauses(t *testing.T) {
	tests := []struct {
		name     string
		in       func(in *JobInput)
		want     []string
		evidence []string
	}{
		{name: "running on a healthy cluster", in: func(in *JobInput) {}},
		{name: "succeeded", in: func(in *JobInput) {
			in.Job.Status.JobStatus, in.Job.Status.JobDeploymentStatus = rayv1.JobStatusSucceeded, rayv1.JobDeploymentStatusComplete
			in.Cluster = nil
		}},
		{name: "succeeded says nothing even with a broken cluster", in: func(in *JobInput) {
			in.Job.Status.JobStatus, in.Job.Status.JobDeploymentStatus = rayv1.JobStatusSucceeded, rayv1.JobDeploymentStatusComplete
			in.Cluster.Pods[1] = waiting(in.Cluster.Pods[1], corev1.PodPending, "ImagePullBackOff", "")
		}},
		{name: "failed: its failure", in: func(in *JobInput) {
			st := &in.Job.Status
			st.JobStatus, st.JobDeploymentStatus, st.Reason = rayv1.JobStatusFailed, rayv1.JobDeploymentStatusFailed, rayv1.AppFailed
			st.Message = "Job entrypoint command failed with exit code 1"
		}, want: []string{"JobFailed: Ray job failed: Job entrypoint command failed with exit code 1"}},
		{name: "failed: deadline", in: func(in *JobInput) {
			st := &in.Job.Status
			in.Job.Spec.ActiveDeadlineSeconds = ptr(int32(600))
			st.JobDeploymentStatus, st.Reason = rayv1.JobDeploymentStatusFailed, rayv1.DeadlineExceeded
		}, want: []string{"JobFailed: failed: activeDeadlineSeconds 600s passed",
			// the deadline failed the deployment; jobStatus stays what was last read (kuberay#2314)
			"StatusContradiction: status contradicts itself: jobStatus RUNNING while jobDeploymentStatus Failed"}},
		{name: "failed: never running, with the cluster's cause", in: func(in *JobInput) {
			st := &in.Job.Status
			in.Job.Spec.PreRunningDeadlineSeconds = ptr(int32(300))
			st.JobStatus, st.JobDeploymentStatus, st.Reason = "", rayv1.JobDeploymentStatusFailed, rayv1.PreRunningDeadlineExceeded
			in.Cluster.Pods[0] = waiting(in.Cluster.Pods[0], corev1.PodPending, "ImagePullBackOff", "")
		}, want: []string{"ImagePull: head can't pull rayproject/ray:2.9.0", "JobFailed: failed: not running within preRunningDeadlineSeconds 300s"}},
		{name: "cluster not ready: its own cause, stated as the cluster's", in: func(in *JobInput) {
			in.Job.Status.JobStatus, in.Job.Status.JobDeploymentStatus = "", rayv1.JobDeploymentStatusInitializing
			rc := in.Cluster.Cluster
			rc.Status.State = ""
			in.Cluster.Pods[0] = waiting(in.Cluster.Pods[0], corev1.PodRunning, "CrashLoopBackOff", "")
			in.Cluster.Pods[0].Status.ContainerStatuses[0].RestartCount = 2
		}, want: []string{"CrashLoop: head crash-looping: restarted 2 times"}},
		{name: "cluster not ready without a cause of its own", in: func(in *JobInput) {
			in.Job.Status.JobStatus, in.Job.Status.JobDeploymentStatus = "", rayv1.JobDeploymentStatusInitializing
			in.Cluster.Cluster.Status.State = ""
			in.Cluster.Pods[1].Status.Phase = corev1.PodPending
		}, want: []string{"ClusterNotReady: RayCluster rc not ready (pending)"}},
		{name: "cluster not ready: how long, and its head's restarts", in: func(in *JobInput) {
			in.Job.Status.JobStatus, in.Job.Status.JobDeploymentStatus = "", rayv1.JobDeploymentStatusInitializing
			rc := in.Cluster.Cluster
			rc.Status.State = rayv1.Suspended
			rc.Status.StateTransitionTimes = map[rayv1.ClusterState]*metav1.Time{rayv1.Suspended: {Time: now.Add(-3 * time.Minute)}}
			h := &in.Cluster.Pods[0].Status.ContainerStatuses[0]
			h.RestartCount = 1
			h.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 1}
		}, want: []string{"ClusterNotReady: RayCluster rc not ready (suspended)"},
			evidence: []string{"state suspended since 11:57:00Z (3m)", "head pod rc-head container ray restarted once, last Error (exit code 1)"}},
		{name: "labelled cluster not ready: the ignored label does not stand in for not ready", in: func(in *JobInput) {
			in.Job.Status.JobStatus, in.Job.Status.JobDeploymentStatus = "", rayv1.JobDeploymentStatusInitializing
			in.Cluster.Cluster.Status.State = ""
			in.Cluster.Cluster.Labels = map[string]string{rayv1.VolcanoQueueNameLabelKey: "q"}
			in.Cluster.Pods[1].Status.Phase = corev1.PodPending
		}, want: []string{"ClusterNotReady: RayCluster rc not ready (pending)",
			"GangSchedulingIgnored: no gang scheduling: raydar ignores volcano.sh/queue-name (no PodGroup; pods are scheduled one by one)"}},
		{name: "cluster not created yet", in: func(in *JobInput) {
			in.Job.Status.JobStatus, in.Job.Status.JobDeploymentStatus = "", rayv1.JobDeploymentStatusInitializing
			in.Cluster = nil
		}, want: []string{"ClusterNotReady: RayCluster rc not created yet"}},
		{name: "selected cluster not found", in: func(in *JobInput) {
			in.Job.Spec.ClusterSelector = map[string]string{rayv1.RayClusterLabelKey: "shared"}
			in.Job.Status.JobStatus, in.Job.Status.JobDeploymentStatus = "", rayv1.JobDeploymentStatusInitializing
			in.Cluster = nil
		}, want: []string{"ClusterNotReady: RayCluster shared not found"}},
		{name: "running, but its demand no group can satisfy", in: func(in *JobInput) {
			in.Cluster.Capacity = &dashboard.Capacity{Infeasible: []dashboard.Demand{{Shape: dashboard.Resources{"CPU": 1, "TPU": 4}, Count: 2}}}
		}, want: []string{"RayInfeasible: 2 tasks want {CPU: 1, TPU: 4}; no worker group offers 4 TPU per pod"},
			evidence: []string{"Ray autoscaler: 2 tasks want {CPU: 1, TPU: 4} (infeasible)"}},
		{name: "dashboard unreachable", in: func(in *JobInput) {
			in.Job.Status.JobStatusCheckFailureStartTime = &metav1.Time{Time: now.Add(-3 * time.Minute)}
			in.Events = append(in.Events, warn("RayJob", "job", reasonDashboardUnreachable, "Cannot read Ray job job-abc from the dashboard of RayCluster rc: connection refused"))
		}, want: []string{"DashboardUnreachable: dashboard unreachable for 3m"},
			evidence: []string{"connection refused"}},
		{name: "submitter failing: exit code and log", in: func(in *JobInput) {
			in.Submitters = []*podview.Pod{submitter(1, "Error")}
			in.SubmitterLog = []string{"a", "b", "c", "d", "e", "Traceback (most recent call last):", "ModuleNotFoundError: No module named 'torch'"}
		}, want: []string{"SubmitterFailed: submitter exited 1"},
			evidence: []string{"pod job-sub-1 container ray-job-submitter: exit code 1 (Error)", "log: ModuleNotFoundError: No module named 'torch'"}},
		{name: "HTTPMode submit refused by the dashboard", in: func(in *JobInput) {
			in.Job.Spec.SubmissionMode = rayv1.HTTPMode
			in.Job.Status.JobStatus, in.Job.Status.JobDeploymentStatus = "", rayv1.JobDeploymentStatusInitializing
			in.Events = append(in.Events, warn("RayJob", "job", reasonFailedSubmit, "Failed to submit Ray job job-abc (retrying): 400 Bad Request: runtime_env pip install failed"))
		}, want: []string{"SubmitterFailed: submit failed: 400 Bad Request: runtime_env pip install failed"}},
		{name: "HTTPMode submit that went through later says nothing", in: func(in *JobInput) {
			in.Events = append(in.Events, warn("RayJob", "job", reasonFailedSubmit, "Failed to submit Ray job job-abc (retrying): connection refused"),
				normal("RayJob", "job", reasonSubmitted, "Submitted Ray job job-abc"))
		}},
		{name: "submission failed", in: func(in *JobInput) {
			st := &in.Job.Status
			st.JobDeploymentStatus, st.Reason, st.JobStatus = rayv1.JobDeploymentStatusFailed, rayv1.SubmissionFailed, ""
			st.Message = "Job submission has failed. Reason: BackoffLimitExceeded. Message: Job has reached the specified backoff limit"
		}, want: []string{"SubmitterFailed: submission failed: Job submission has failed"}},
		{name: "active deadline soon", in: func(in *JobInput) {
			in.Job.Spec.ActiveDeadlineSeconds = ptr(int32(630))
		}, want: []string{"DeadlineSoon: activeDeadlineSeconds fires in 30s"}},
		{name: "active deadline far", in: func(in *JobInput) {
			in.Job.Spec.ActiveDeadlineSeconds = ptr(int32(3600))
		}},
		{name: "pre-running deadline under 10% left", in: func(in *JobInput) {
			in.Job.Status.JobStatus, in.Job.Status.JobDeploymentStatus = "", rayv1.JobDeploymentStatusInitializing
			in.Job.Spec.PreRunningDeadlineSeconds = ptr(int32(3600 * 3))
			in.Job.Status.StartTime = &metav1.Time{Time: now.Add(-170 * time.Minute)}
		}, want: []string{"DeadlineSoon: preRunningDeadlineSeconds fires in 10m"}},
		{name: "suspended, queued by Kueue", in: func(in *JobInput) {
			in.Job.Spec.Suspend = true
			in.Job.Labels = map[string]string{"kueue.x-k8s.io/queue-name": "q"}
			in.Job.Status.JobDeploymentStatus = rayv1.JobDeploymentStatusSuspended
			in.Cluster = nil
		}, want: []string{"Suspended: queued by Kueue (queue q)"}},
		{name: "invalid spec", in: func(in *JobInput) {
			st := &in.Job.Status
			st.JobDeploymentStatus, st.Reason = rayv1.JobDeploymentStatusValidationFailed, rayv1.ValidationFailed
			st.Message = "spec.entrypoint: Required value: entrypoint is required in K8sJobMode"
			in.Cluster = nil
		}, want: []string{"InvalidSpec: invalid spec.entrypoint"}},
		{name: "managed by MultiKueue with lagging status", in: func(in *JobInput) {
			in.Job.Spec.ManagedBy = ptr(rayv1.MultiKueueController)
			in.Job.Status = rayv1.RayJobStatus{}
			in.Cluster = nil
		}, want: []string{"OtherOperator: managed by MultiKueue, not raydar"}},
		{name: "not reconciled, stated once for job and cluster", in: func(in *JobInput) {
			in.Job.Generation = 2
			in.Cluster.Cluster.Generation = 2
			in.Reconciler = Reconciler{Known: true, Who: "--readonly"}
			in.Cluster.Reconciler = in.Reconciler
		}, want: []string{"NotReconciled: not reconciled: --readonly"}},
		{name: "kuberay#2314: RUNNING while Failed, both fields named", in: func(in *JobInput) {
			st := &in.Job.Status
			st.JobDeploymentStatus, st.Reason = rayv1.JobDeploymentStatusFailed, rayv1.SubmissionFailed
			st.EndTime = &metav1.Time{Time: now.Add(-42 * time.Second)}
		}, want: []string{"SubmitterFailed: submission failed",
			"StatusContradiction: status contradicts itself: jobStatus RUNNING while jobDeploymentStatus Failed"},
			evidence: []string{"jobStatus: RUNNING", "jobDeploymentStatus: Failed", "since 11:59:18Z (42s ago)"}},
		{name: "RUNNING while Complete: said though Complete says nothing else", in: func(in *JobInput) {
			in.Job.Status.JobDeploymentStatus = rayv1.JobDeploymentStatusComplete
		}, want: []string{"StatusContradiction: status contradicts itself: jobStatus RUNNING while jobDeploymentStatus Complete"}},
		{name: "SUCCEEDED while Running past KubeRay's grace", in: func(in *JobInput) {
			in.Job.Status.JobStatus = rayv1.JobStatusSucceeded
			in.Job.Status.RayJobStatusInfo.EndTime = &metav1.Time{Time: now.Add(-10 * time.Minute)}
		}, want: []string{"StatusContradiction: status contradicts itself: jobStatus SUCCEEDED while jobDeploymentStatus Running"}},
		{name: "Running while its cluster is gone", in: func(in *JobInput) {
			in.Cluster = nil
		}, want: []string{"StatusContradiction: status contradicts itself: jobDeploymentStatus Running while RayCluster rc not found"}},
		{name: "Running while its cluster has been suspended for long", in: func(in *JobInput) {
			rc := in.Cluster.Cluster
			rc.Spec.Suspend = ptr(true)
			rc.Status.State = rayv1.Suspended
			rc.Status.StateTransitionTimes = map[rayv1.ClusterState]*metav1.Time{rayv1.Suspended: {Time: now.Add(-5 * time.Minute)}}
			rc.Status.Conditions = append(rc.Status.Conditions, metav1.Condition{Type: string(rayv1.RayClusterSuspended), Status: metav1.ConditionTrue})
			in.Cluster.Pods = nil
		}, want: []string{"Suspended: suspended (spec.suspend)",
			"StatusContradiction: status contradicts itself: jobDeploymentStatus Running while RayCluster rc suspended"}},
		{name: "cluster create refused", in: func(in *JobInput) {
			in.Job.Status.JobStatus, in.Job.Status.JobDeploymentStatus, in.Job.Status.RayClusterName = "", rayv1.JobDeploymentStatusInitializing, ""
			in.Cluster = nil
			in.Events = append(in.Events, warn("RayJob", "job", rayv1.EventFailedToCreateRayCluster,
				`Failed to create RayCluster ns/job-x: admission webhook "kueue.example" denied the request: no queue`))
		}, want: []string{"CreateRefused: webhook kueue.example refuses to create the RayCluster: no queue"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := JobInput{Job: runningJob(), Reconciler: active(), Now: now,
				Cluster: &ClusterInput{Cluster: readyCluster(), Pods: healthyPods(), Reconciler: active(), Now: now}}
			tt.in(&in)
			got := Job(in)
			sameLines(t, got, tt.want)
			for _, e := range tt.evidence {
				hasEvidence(t, got, e)
			}
			if tt.want == nil && got != nil {
				t.Errorf("want nil, got %#v", got)
			}
		})
	}
}

func TestJobClusterCauseSubjectIsTheCluster(t *testing.T) {
	in := JobInput{Job: runningJob(), Reconciler: active(), Now: now,
		Cluster: &ClusterInput{Cluster: readyCluster(), Pods: healthyPods(), Reconciler: active(), Now: now}}
	in.Cluster.Pods[1] = waiting(in.Cluster.Pods[1], corev1.PodPending, "ImagePullBackOff", "")
	got := Job(in)
	if len(got) != 1 || got[0].Subject != "RayCluster ns/rc, group cpu" {
		t.Fatalf("got %+v", got)
	}
	if !strings.HasPrefix(Column(got), "1 cpu worker can't pull") {
		t.Errorf("Column = %q", Column(got))
	}
}
