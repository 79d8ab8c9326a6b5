package why

import (
	"strings"
	"testing"

	"github.com/raydar/raydar/rayapi/dashboard"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// gpuServeConfig: app llm, deployment Model, 2 replicas of 2 GPUs each
// (and Serve's default CPU).
const gpuServeConfig = `applications:
  - name: llm
    import_path: llm.app:model
    deployments:
      - name: Model
        num_replicas: 2
        ray_actor_options:
          num_gpus: 2
`

// deployingService is readyService on readyCluster with gpuServeConfig,
// its app DEPLOYING (Model UPDATING: its replicas not placed yet).
func deployingService() ServiceInput {
	in := ServiceInput{Service: readyService(), Reconciler: active(), Now: now,
		Active: &ClusterInput{Cluster: readyCluster(), Pods: healthyPods(), Reconciler: active(), Now: now}}
	in.Service.Spec.ServeConfigV2 = gpuServeConfig
	in.Service.Status.ActiveServiceStatus.Applications["llm"] = rayv1.AppStatus{Status: rayv1.ApplicationStatusDeploying,
		Deployments: map[string]rayv1.ServeDeploymentStatus{"Model": {Status: rayv1.DeploymentStatusUpdating}}}
	return in
}

// cpuOnlyCluster drops readyCluster's gpu group and its pod.
func cpuOnlyCluster(ci *ClusterInput) {
	ci.Cluster.Spec.WorkerGroupSpecs = ci.Cluster.Spec.WorkerGroupSpecs[:1]
	ci.Pods = ci.Pods[:3]
}

func TestServeDemand(t *testing.T) {
	tests := []struct {
		name     string
		in       func(in *ServiceInput)
		want     []string
		evidence []string
		fix      string
	}{
		{name: "GPU replicas on a CPU-only cluster, Ray's view unknown", in: func(in *ServiceInput) {
			cpuOnlyCluster(in.Active)
		}, want: []string{"ServeDemand: replica of deployment llm/Model asks {CPU: 1, GPU: 2}; no pod of RayCluster rc offers 2 GPU (the most is 0)"},
			evidence: []string{"spec.serveConfigV2 applications[0].deployments[0].ray_actor_options: {num_gpus: 2} (num_cpus 1: Serve's default); 2 replicas",
				"group cpu offers {CPU: 2, memory: 4Gi} per pod"},
			fix: "ask for less in ray_actor_options of deployment llm/Model in spec.serveConfigV2, or add a worker group whose pods offer {CPU: 1, GPU: 2}; its replicas cannot start before then"},
		{name: "infeasible in Ray's view too: stated once, on the service", in: func(in *ServiceInput) {
			cpuOnlyCluster(in.Active)
			in.Active.Capacity = &dashboard.Capacity{DemandKnown: true,
				Infeasible: []dashboard.Demand{{Shape: dashboard.Resources{"CPU": 1, "GPU": 2}, Count: 2}}}
		}, want: []string{"ServeDemand: replica of deployment llm/Model asks {CPU: 1, GPU: 2}; no pod of RayCluster rc offers 2 GPU (the most is 0)"},
			evidence: []string{"Ray autoscaler: 2 tasks want {CPU: 1, GPU: 2} (infeasible)"}},
		{name: "the only fitting group is at maxReplicas and Ray holds the replica pending", in: func(in *ServiceInput) {
			in.Service.Spec.ServeConfigV2 = strings.Replace(gpuServeConfig, "num_gpus: 2", "num_gpus: 4", 1)
			in.Active.Cluster.Spec.WorkerGroupSpecs[1].MaxReplicas = ptr(int32(1))
			in.Active.Capacity = &dashboard.Capacity{DemandKnown: true,
				Pending: []dashboard.Demand{{Shape: dashboard.Resources{"CPU": 1, "GPU": 4}, Count: 1}}}
		}, want: []string{"ServeDemand: replica of deployment llm/Model asks {CPU: 1, GPU: 4}; group gpu: it is at maxReplicas 1"},
			evidence: []string{"Ray autoscaler: 1 task wants {CPU: 1, GPU: 4}"},
			fix:      "raise the group's maxReplicas (or replicas), or turn on autoscaling; its replicas cannot start before a pod offers {CPU: 1, GPU: 4}"},
		{name: "Ray holds it pending, the group may grow", in: func(in *ServiceInput) {
			autoscaled(in.Active)
			in.Active.Capacity = &dashboard.Capacity{DemandKnown: true,
				Pending: []dashboard.Demand{{Shape: dashboard.Resources{"CPU": 1, "GPU": 2}, Count: 1}}}
		}, want: []string{"ServeDemand: replica of deployment llm/Model waits for {CPU: 1, GPU: 2}: the autoscaler may add a gpu pod (1 of max 4)"}},
		{name: "fits a group that has a pod, Ray holds nothing: nothing said", in: func(in *ServiceInput) {
			in.Active.Capacity = &dashboard.Capacity{DemandKnown: true}
		}},
		{name: "fits, Ray's view unknown: nothing said", in: func(in *ServiceInput) {}},
		{name: "app RUNNING: its replicas got their resources", in: func(in *ServiceInput) {
			cpuOnlyCluster(in.Active)
			in.Service.Status.ActiveServiceStatus.Applications["llm"] = rayv1.AppStatus{Status: rayv1.ApplicationStatusRunning,
				Deployments: map[string]rayv1.ServeDeploymentStatus{"Model": {Status: rayv1.DeploymentStatusHealthy}}}
		}},
		{name: "app DEPLOYING, this deployment HEALTHY", in: func(in *ServiceInput) {
			cpuOnlyCluster(in.Active)
			in.Service.Status.ActiveServiceStatus.Applications["llm"] = rayv1.AppStatus{Status: rayv1.ApplicationStatusDeploying,
				Deployments: map[string]rayv1.ServeDeploymentStatus{"Model": {Status: rayv1.DeploymentStatusHealthy}}}
		}},
		{name: "app not in the status yet", in: func(in *ServiceInput) {
			cpuOnlyCluster(in.Active)
			in.Service.Status.ActiveServiceStatus.Applications = nil
		}, want: []string{"ServeDemand: replica of deployment llm/Model asks {CPU: 1, GPU: 2}; no pod of RayCluster rc offers 2 GPU (the most is 0)"}},
		{name: "malformed serveConfigV2: no cause (validation says it)", in: func(in *ServiceInput) {
			cpuOnlyCluster(in.Active)
			in.Service.Spec.ServeConfigV2 = "applications: [ {deployments: 3}, 7, {deployments: [{name: M, ray_actor_options: [1]}]}"
		}},
		{name: "no ray_actor_options: the code's apply, not judged", in: func(in *ServiceInput) {
			cpuOnlyCluster(in.Active)
			in.Service.Spec.ServeConfigV2 = "applications:\n- name: llm\n  import_path: a.b\n  deployments:\n  - name: Model\n    num_replicas: 2\n"
		}},
		{name: "zero replicas ask for nothing", in: func(in *ServiceInput) {
			cpuOnlyCluster(in.Active)
			in.Service.Spec.ServeConfigV2 = strings.Replace(gpuServeConfig, "num_replicas: 2", "num_replicas: 0", 1)
		}},
		{name: "the new cluster of an upgrade offers no GPU", in: func(in *ServiceInput) {
			in.Service.Status.ActiveServiceStatus.Applications["llm"] = rayv1.AppStatus{Status: rayv1.ApplicationStatusRunning}
			rc := readyCluster()
			rc.Name = "rc-new"
			in.Pending = &ClusterInput{Cluster: rc, Pods: healthyPods(), Reconciler: active(), Now: now}
			cpuOnlyCluster(in.Pending)
			in.Service.Status.PendingServiceStatus = rayv1.RayServiceStatus{RayClusterName: "rc-new"}
		}, want: []string{"ServeDemand: new cluster: replica of deployment llm/Model asks {CPU: 1, GPU: 2}; no pod of RayCluster rc-new offers 2 GPU (the most is 0)"}},
		{name: "during an upgrade the config is the new cluster's, not the old one's", in: func(in *ServiceInput) {
			cpuOnlyCluster(in.Active)
			in.Service.Status.ActiveServiceStatus.Applications["llm"] = rayv1.AppStatus{Status: rayv1.ApplicationStatusUnhealthy}
			rc := readyCluster()
			rc.Name = "rc-new"
			in.Pending = &ClusterInput{Cluster: rc, Pods: healthyPods(), Reconciler: active(), Now: now}
			in.Service.Status.PendingServiceStatus = rayv1.RayServiceStatus{RayClusterName: "rc-new"}
		}, want: []string{"DeploymentUnhealthy: app llm UNHEALTHY"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := deployingService()
			tt.in(&in)
			got := Service(in)
			sameLines(t, got, tt.want)
			for _, e := range tt.evidence {
				hasEvidence(t, got, e)
			}
			if tt.fix != "" && (len(got) == 0 || got[0].Fix != tt.fix) {
				t.Errorf("fix of %+v, want %q", got, tt.fix)
			}
			if tt.want == nil && got != nil {
				t.Errorf("want nil, got %#v", got)
			}
		})
	}
}

// The WHY column of a deploying RayService on a CPU-only cluster names
// the deployment and its demand.
func TestServeDemandColumn(t *testing.T) {
	in := deployingService()
	cpuOnlyCluster(in.Active)
	got := Service(in)
	if col := Column(got); col != "replica of deployment llm/Model asks {CPU: 1, GPU: 2}; no pod of RayCluster rc offers 2 GPU (the most is 0)" {
		t.Errorf("Column = %q", col)
	}
	if len(got) == 0 || got[0].Subject != "RayService ns/svc, deployment llm/Model" || got[0].Code != CodeServeDemand {
		t.Errorf("causes %+v", got)
	}
}
