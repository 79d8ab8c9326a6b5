package why

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// wrote is a managedFields entry of manager, on subresource ("" the main
// resource), ago before now.
func wrote(manager, subresource string, ago time.Duration) metav1.ManagedFieldsEntry {
	return metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate, Subresource: subresource,
		Time: &metav1.Time{Time: now.Add(-ago)}}
}

// generation7 makes the cluster's spec generation 7 while its status still
// describes 6, the spec written by kubectl ago before now and the status
// by raydar's reconciler after it (a status write is not a spec change).
func generation7(ago time.Duration) func(in *ClusterInput) {
	return func(in *ClusterInput) {
		rc := in.Cluster
		rc.Generation, rc.Status.ObservedGeneration = 7, 6
		rc.ManagedFields = []metav1.ManagedFieldsEntry{
			wrote("kubectl-edit", "", ago), wrote(reconcilerManager, statusSubresource, ago/2)}
	}
}

// TestWaitingForOperator: an active reconciler that has not acted on the
// current generation past OperatorActsWithin is said, with since when the
// spec changed (managedFields, else when raydar first saw it, else the
// creation of a status never written, else unknown) and the reconciler's
// own view; within the grace, or when another operator's status lags as
// KubeRay's does, nothing is said.
func TestWaitingForOperator(t *testing.T) {
	tests := []struct {
		name     string
		in       func(in *ClusterInput)
		want     []string
		evidence []string
	}{
		{name: "spec changed 42s ago, not acted on", in: generation7(42 * time.Second),
			want: []string{"WaitingForOperator: waiting for the operator: generation 7 changed 11:59:18Z, not yet acted on for 42s"},
			evidence: []string{"its status does not describe generation 7 (status.observedGeneration is older)",
				"spec last written by kubectl-edit (metadata.managedFields) at 11:59:18Z", "reconciler: this raydar"}},
		{name: "within the grace a reconcile normally takes", in: generation7(OperatorActsWithin - time.Second)},
		{name: "status current: nothing", in: func(in *ClusterInput) {
			generation7(time.Hour)(in)
			in.Cluster.Status.ObservedGeneration = 7
		}},
		{name: "the reconciler's view: last Warning, time in its state, the head's restarts", in: func(in *ClusterInput) {
			generation7(2 * time.Minute)(in)
			in.Cluster.Status.StateTransitionTimes = map[rayv1.ClusterState]*metav1.Time{rayv1.Ready: {Time: now.Add(-time.Hour)}}
			e := warn("RayCluster", "rc", "FailedToUpdate", "conflict")
			e.LastTimestamp = metav1.Time{Time: now.Add(-10 * time.Second)}
			in.Events = append(in.Events, e)
			h := &in.Pods[0].Status.ContainerStatuses[0]
			h.RestartCount = 3
			h.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{Reason: "OOMKilled", ExitCode: 137, FinishedAt: metav1.Time{Time: now.Add(-5 * time.Minute)}}
		}, want: []string{"WaitingForOperator: waiting for the operator: generation 7 changed 11:58:00Z, not yet acted on for 2m",
			"WriteFailed: raydar failed to update objects: conflict"},
			evidence: []string{"last Warning about it: FailedToUpdate: conflict (10s ago)", "state ready since 11:00:00Z (60m)",
				"head pod rc-head container ray restarted 3 times, last OOMKilled (exit code 137) at 11:55:00Z"}},
		{name: "managedFields stripped: since raydar first saw the generation", in: func(in *ClusterInput) {
			generation7(0)(in)
			in.Cluster.ManagedFields = nil
			in.SpecSeen = now.Add(-20 * time.Second)
		}, want: []string{"WaitingForOperator: waiting for the operator: generation 7 changed 11:59:40Z, not yet acted on for 20s"},
			evidence: []string{"spec first seen by raydar at 11:59:40Z"}},
		{name: "no time at all: said as unknown", in: func(in *ClusterInput) {
			generation7(0)(in)
			in.Cluster.ManagedFields = nil
		}, want: []string{"WaitingForOperator: waiting for the operator: generation 7 not yet acted on (changed at an unknown time)"}},
		{name: "status never written: since its creation", in: func(in *ClusterInput) {
			in.Cluster.Status = rayv1.RayClusterStatus{}
			in.Cluster.CreationTimestamp = metav1.Time{Time: now.Add(-30 * time.Second)}
		}, want: []string{"WaitingForOperator: waiting for the operator: created 11:59:30Z, no status written for 30s"},
			evidence: []string{"no operator has written its status (generation 1)"}},
		{name: "raydar did not look for other operators and KubeRay writes the status: its lag is KubeRay's habit", in: func(in *ClusterInput) {
			generation7(time.Hour)(in)
			in.Cluster.ManagedFields[1].Manager = "manager"
			in.Reconciler.OnlyRaydar = true
		}},
		{name: "raydar did not look for other operators and raydar writes the status", in: func(in *ClusterInput) {
			generation7(time.Minute)(in)
			in.Reconciler.OnlyRaydar = true
		}, want: []string{"WaitingForOperator: waiting for the operator: generation 7 changed 11:59:00Z, not yet acted on for 60s"}},
		{name: "no reconciler: NotReconciled says it, not this", in: func(in *ClusterInput) {
			generation7(time.Minute)(in)
			in.Reconciler = Reconciler{Known: true, Who: "--readonly"}
		}, want: []string{"NotReconciled: not reconciled: --readonly"}},
		{name: "another operator manages it", in: func(in *ClusterInput) {
			generation7(time.Minute)(in)
			in.Cluster.Spec.ManagedBy = ptr(rayv1.KubeRayController)
		}, want: []string{"OtherOperator: managed by KubeRay, not raydar"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { clusterCase(t, tt.in, tt.want, tt.evidence, "") })
	}
}

// TestWaitingForOperatorJobAndService: a RayJob and a RayService wait the
// same way, each with its own state.
func TestWaitingForOperatorJobAndService(t *testing.T) {
	j := runningJob()
	j.Generation = 3
	j.ManagedFields = []metav1.ManagedFieldsEntry{wrote("kubectl-patch", "", time.Minute)}
	got := Job(JobInput{Job: j, Reconciler: active(), Now: now,
		Cluster: &ClusterInput{Cluster: readyCluster(), Pods: healthyPods(), Reconciler: active(), Now: now}})
	sameLines(t, got, []string{"WaitingForOperator: waiting for the operator: generation 3 changed 11:59:00Z, not yet acted on for 60s"})
	hasEvidence(t, got, "jobDeploymentStatus: Running")

	s := readyService()
	s.Generation, s.Status.ObservedGeneration = 2, 1
	s.ManagedFields = []metav1.ManagedFieldsEntry{wrote("kubectl-apply", "", 90*time.Second)}
	for i := range s.Status.Conditions {
		s.Status.Conditions[i].LastTransitionTime = metav1.Time{Time: now.Add(-2 * time.Hour)}
	}
	got = Service(ServiceInput{Service: s, Reconciler: active(), Now: now,
		Active: &ClusterInput{Cluster: readyCluster(), Pods: healthyPods(), Reconciler: active(), Now: now}})
	sameLines(t, got, []string{"WaitingForOperator: waiting for the operator: generation 2 changed 11:58:30Z, not yet acted on for 90s"})
	hasEvidence(t, got, "status Ready, Ready True since 10:00:00Z (120m)")
}

// TestWorkersMissing: fewer worker pods than the spec asks for, past the
// grace since the spec changed, is said as progress ("N of M exist"), per
// group; not within the grace, not without a time, not when the pods are
// all there, and not when a cause already says why.
func TestWorkersMissing(t *testing.T) {
	scaled := func(ago time.Duration) func(in *ClusterInput) {
		return func(in *ClusterInput) {
			in.Cluster.Spec.WorkerGroupSpecs[1].Replicas = ptr(int32(3)) // gpu: 1 pod of 3
			in.Cluster.ManagedFields = []metav1.ManagedFieldsEntry{wrote("raydar:alice", "", ago)}
		}
	}
	tests := []struct {
		name     string
		in       func(in *ClusterInput)
		want     []string
		evidence []string
	}{
		{name: "scale-up under way for 42s", in: scaled(42 * time.Second),
			want:     []string{"WorkersMissing: 3 of 5 worker pods exist; oldest missing for up to 42s"},
			evidence: []string{"group gpu: 1 of 3 pods", "spec last written by raydar:alice (metadata.managedFields) at 11:59:18Z"}},
		{name: "within the grace", in: scaled(2 * time.Second)},
		{name: "a pod being deleted is missing too", in: func(in *ClusterInput) {
			scaled(time.Minute)(in)
			in.Cluster.Spec.WorkerGroupSpecs[1].Replicas = ptr(int32(1))
			in.Pods[1].DeletionTimestamp = &metav1.Time{Time: now}
		}, want: []string{"WorkersMissing: 2 of 3 worker pods exist; oldest missing for up to 60s"},
			evidence: []string{"group cpu: 1 of 2 pods"}},
		{name: "managedFields stripped: since raydar first saw it", in: func(in *ClusterInput) {
			scaled(0)(in)
			in.Cluster.ManagedFields = nil
			in.SpecSeen = now.Add(-10 * time.Second)
		}, want: []string{"WorkersMissing: 3 of 5 worker pods exist; oldest missing for up to 10s"}},
		{name: "no time: pods on their way are not a cause", in: func(in *ClusterInput) {
			scaled(0)(in)
			in.Cluster.ManagedFields = nil
		}},
		{name: "all there", in: func(in *ClusterInput) {
			in.Cluster.ManagedFields = []metav1.ManagedFieldsEntry{wrote("kubectl", "", time.Hour)}
		}},
		{name: "no reconciler", in: func(in *ClusterInput) {
			scaled(time.Minute)(in)
			in.Reconciler = Reconciler{}
		}},
		{name: "the operator refused to create them: that cause says why", in: func(in *ClusterInput) {
			scaled(time.Minute)(in)
			in.Events = append(in.Events, warn("RayCluster", "rc", rayv1.EventFailedToCreateWorkerPod,
				`Failed to create worker Pod ns/rc-gpu-x, pods "rc-gpu-x" is forbidden: exceeded quota: gpu, requested: nvidia.com/gpu=4, used: nvidia.com/gpu=4, limited: nvidia.com/gpu=4`))
		}, want: []string{"CreateRefused: quota gpu refuses to create worker pods"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { clusterCase(t, tt.in, tt.want, tt.evidence, "") })
	}
}
