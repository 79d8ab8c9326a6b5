package why

import (
	"strings"
	"testing"

	"github.com/raydar/raydar/rayapi/dashboard"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// pendingJob is a submitted RayJob whose Ray job is still PENDING (its
// entrypoint not placed) on readyCluster.
func pendingJob() JobInput {
	in := JobInput{Job: runningJob(), Reconciler: active(), Now: now,
		Cluster: &ClusterInput{Cluster: readyCluster(), Pods: healthyPods(), Reconciler: active(), Now: now}}
	in.Job.Status.JobStatus = rayv1.JobStatusPending
	return in
}

// cpuOnly drops readyCluster's gpu group and its pod.
func cpuOnly(in *JobInput) {
	rc := in.Cluster.Cluster
	rc.Spec.WorkerGroupSpecs = rc.Spec.WorkerGroupSpecs[:1]
	in.Cluster.Pods = in.Cluster.Pods[:3]
}

func TestJobDemand(t *testing.T) {
	tests := []struct {
		name     string
		in       func(in *JobInput)
		want     []string
		evidence []string
	}{
		{name: "2 GPUs on a CPU-only cluster, Ray's view unknown (the WHY column)", in: func(in *JobInput) {
			cpuOnly(in)
			in.Job.Spec.EntrypointNumGpus = 2
		}, want: []string{"JobDemand: entrypoint asks {GPU: 2}; no pod of RayCluster rc offers 2 GPU (the most is 0)"},
			evidence: []string{"spec.entrypointNumGpus: 2", "group cpu offers {CPU: 2, memory: 4Gi} per pod", "the head offers {memory: 2Gi} per pod"}},
		{name: "2 GPUs on a CPU-only cluster before the cluster is ready", in: func(in *JobInput) {
			cpuOnly(in)
			in.Job.Spec.EntrypointNumGpus = 2
			in.Job.Status.JobStatus, in.Job.Status.JobDeploymentStatus = "", rayv1.JobDeploymentStatusInitializing
		}, want: []string{"JobDemand: entrypoint asks {GPU: 2}; no pod of RayCluster rc offers 2 GPU (the most is 0)"}},
		{name: "infeasible in Ray's view too: stated once, on the job", in: func(in *JobInput) {
			in.Job.Spec.EntrypointNumGpus = 8
			in.Cluster.Capacity = &dashboard.Capacity{DemandKnown: true,
				Infeasible: []dashboard.Demand{{Shape: dashboard.Resources{"GPU": 8}, Count: 1}}}
		}, want: []string{"JobDemand: entrypoint asks {GPU: 8}; no pod of RayCluster rc offers 8 GPU (the most is 4)"},
			evidence: []string{"Ray autoscaler: 1 task wants {GPU: 8} (infeasible)"}},
		{name: "custom resources no group offers", in: func(in *JobInput) {
			in.Job.Spec.EntrypointNumCpus = 1
			in.Job.Spec.EntrypointResources = `{"TPU": 4}`
		}, want: []string{"JobDemand: entrypoint asks {CPU: 1, TPU: 4}; no pod of RayCluster rc offers 4 TPU (the most is 0)"},
			evidence: []string{`spec.entrypointResources: {"TPU": 4}`}},
		{name: "the only fitting group is at maxReplicas and Ray holds it pending", in: func(in *JobInput) {
			in.Job.Spec.EntrypointNumGpus = 1
			in.Cluster.Cluster.Spec.WorkerGroupSpecs[1].MaxReplicas = ptr(int32(1))
			in.Cluster.Capacity = &dashboard.Capacity{DemandKnown: true,
				Pending: []dashboard.Demand{{Shape: dashboard.Resources{"GPU": 1}, Count: 1}}}
		}, want: []string{"JobDemand: entrypoint asks {GPU: 1}; group gpu: it is at maxReplicas 1"},
			evidence: []string{"Ray autoscaler: 1 task wants {GPU: 1}", "spec.entrypointNumGpus: 1"}},
		{name: "the fitting group has no pod and autoscaling is off", in: func(in *JobInput) {
			in.Job.Spec.EntrypointNumGpus = 1
			in.Cluster.Cluster.Spec.WorkerGroupSpecs[1].Replicas = ptr(int32(0))
			in.Cluster.Pods = in.Cluster.Pods[:3]
		}, want: []string{"JobDemand: entrypoint asks {GPU: 1}; group gpu: autoscaling is off (replicas 0)"}},
		{name: "the fitting group has a pod, Ray's view unknown: nothing said", in: func(in *JobInput) {
			in.Job.Spec.EntrypointNumGpus = 1
			in.Cluster.Cluster.Spec.WorkerGroupSpecs[1].MaxReplicas = ptr(int32(1))
		}},
		{name: "Ray holds it pending, the group may grow", in: func(in *JobInput) {
			in.Job.Spec.EntrypointNumGpus = 1
			autoscaled(in.Cluster)
			in.Cluster.Capacity = &dashboard.Capacity{DemandKnown: true,
				Pending: []dashboard.Demand{{Shape: dashboard.Resources{"GPU": 1}, Count: 1}}}
		}, want: []string{"JobDemand: entrypoint waits for {GPU: 1}: the autoscaler may add a gpu pod (1 of max 4)"}},
		{name: "Ray holds it pending, the group's new pod is unschedulable", in: func(in *JobInput) {
			in.Job.Spec.EntrypointNumGpus = 1
			autoscaled(in.Cluster)
			in.Cluster.Pods = append(in.Cluster.Pods, unschedulablePod(pod("rc-gpu-b", false, "gpu", in.Cluster.Cluster.Spec.WorkerGroupSpecs[1].Template),
				"0/3 nodes are available: 3 Insufficient nvidia.com/gpu."))
			in.Cluster.Capacity = &dashboard.Capacity{DemandKnown: true,
				Pending: []dashboard.Demand{{Shape: dashboard.Resources{"GPU": 1}, Count: 1}}}
		}, want: []string{"Unschedulable: 1 gpu worker Pending: asks nvidia.com/gpu 4",
			"JobDemand: entrypoint waits for {GPU: 1}: group gpu's pods cannot be scheduled"}},
		{name: "running: the entrypoint got its GPUs", in: func(in *JobInput) {
			cpuOnly(in)
			in.Job.Status.JobStatus = rayv1.JobStatusRunning
			in.Job.Spec.EntrypointNumGpus = 2
		}},
		{name: "asks for nothing: other demand stays the cluster's", in: func(in *JobInput) {
			cpuOnly(in)
			in.Cluster.Capacity = &dashboard.Capacity{DemandKnown: true,
				Pending: []dashboard.Demand{{Shape: dashboard.Resources{"CPU": 1}, Count: 1}}}
		}, want: []string{"RayInfeasible: 1 task wants {CPU: 1}; group cpu: it is at maxReplicas 2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := pendingJob()
			tt.in(&in)
			got := Job(in)
			sameLines(t, got, tt.want)
			for _, e := range tt.evidence {
				hasEvidence(t, got, e)
			}
		})
	}
}

// The WHY column of a PENDING job on a CPU-only cluster names its own
// demand, and the cluster's page (Cluster) states the same shape only
// when Ray's view says so.
func TestJobDemandColumn(t *testing.T) {
	in := pendingJob()
	cpuOnly(&in)
	in.Job.Spec.EntrypointNumGpus = 2
	got := Job(in)
	if col := Column(got); !strings.HasPrefix(col, "entrypoint asks {GPU: 2}") {
		t.Errorf("Column = %q", col)
	}
	if got[0].Subject != "RayJob ns/job" || !strings.Contains(got[0].Fix, "entrypointNumGpus") {
		t.Errorf("cause %+v", got[0])
	}
	if cs := Cluster(*in.Cluster); cs != nil {
		t.Errorf("cluster without Ray's view: %v", lines(cs))
	}
}
