package why

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

func readyService() *rayv1.RayService {
	return &rayv1.RayService{
		ObjectMeta: metav1.ObjectMeta{Name: "svc", Namespace: "ns", Generation: 1},
		Status: rayv1.RayServiceStatuses{ObservedGeneration: 1, NumServeEndpoints: 2, ServiceStatus: rayv1.Running,
			Conditions: []metav1.Condition{{Type: string(rayv1.RayServiceReady), Status: metav1.ConditionTrue, Reason: string(rayv1.NonZeroServeEndpoints)}},
			ActiveServiceStatus: rayv1.RayServiceStatus{RayClusterName: "rc", Applications: map[string]rayv1.AppStatus{
				"llm": {Status: rayv1.ApplicationStatusRunning, Deployments: map[string]rayv1.ServeDeploymentStatus{
					"Model": {Status: rayv1.DeploymentStatusHealthy}}}}}},
	}
}

func TestServiceCauses(t *testing.T) {
	tests := []struct {
		name     string
		in       func(in *ServiceInput)
		want     []string
		evidence []string
	}{
		{name: "ready", in: func(in *ServiceInput) {}},
		{name: "app DEPLOY_FAILED", in: func(in *ServiceInput) {
			in.Service.Status.ActiveServiceStatus.Applications["llm"] = rayv1.AppStatus{Status: rayv1.ApplicationStatusDeployFailed,
				Message: "Deploying app 'llm' failed with exception:\nModuleNotFoundError: No module named 'vllm'"}
		}, want: []string{"AppDeployFailed: app llm DEPLOY_FAILED: Deploying app 'llm' failed with exception:"},
			evidence: []string{"No module named 'vllm'"}},
		{name: "deployment UNHEALTHY", in: func(in *ServiceInput) {
			in.Service.Status.ActiveServiceStatus.Applications["llm"] = rayv1.AppStatus{Status: rayv1.ApplicationStatusUnhealthy,
				Deployments: map[string]rayv1.ServeDeploymentStatus{
					"Model":  {Status: rayv1.DeploymentStatusUnhealthy, Message: "The health check failed 3 times"},
					"Router": {Status: rayv1.DeploymentStatusHealthy}}}
		}, want: []string{"DeploymentUnhealthy: deployment llm/Model UNHEALTHY: The health check failed 3 times"}},
		{name: "no serve endpoints while the active cluster is ready", in: func(in *ServiceInput) {
			in.Service.Status.NumServeEndpoints = 0
		}, want: []string{"NoServeEndpoints: no serve endpoints"}},
		{name: "no serve endpoints while the cluster is not ready says the cluster's cause", in: func(in *ServiceInput) {
			in.Service.Status.NumServeEndpoints = 0
			in.Active.Cluster.Status.State = ""
			in.Active.Pods[0] = waiting(in.Active.Pods[0], corev1.PodPending, "ErrImagePull", "")
		}, want: []string{"ImagePull: head can't pull rayproject/ray:2.9.0"}},
		{name: "pending cluster's cause", in: func(in *ServiceInput) {
			rc := readyCluster()
			rc.Name, rc.Status.State = "rc-new", ""
			pods := healthyPods()
			pods[3] = unschedulablePod(pods[3], "0/2 nodes are available: 2 Insufficient nvidia.com/gpu.")
			in.Pending = &ClusterInput{Cluster: rc, Pods: pods, Reconciler: active(), Now: now}
		}, want: []string{"Unschedulable: new cluster: 1 gpu worker Pending: asks nvidia.com/gpu 4"}},
		{name: "pending cluster not ready, no cause of its own", in: func(in *ServiceInput) {
			rc := readyCluster()
			rc.Name, rc.Status.State = "rc-new", ""
			in.Pending = &ClusterInput{Cluster: rc, Pods: healthyPods(), Reconciler: active(), Now: now}
		}, want: []string{"PendingClusterNotReady: new cluster rc-new not ready (pending)"}},
		{name: "labelled pending cluster not ready: the ignored label does not stand in for not ready", in: func(in *ServiceInput) {
			rc := readyCluster()
			rc.Name, rc.Status.State = "rc-new", ""
			rc.Labels = map[string]string{rayv1.KaiQueueLabelKey: "team-a"}
			in.Pending = &ClusterInput{Cluster: rc, Pods: healthyPods(), Reconciler: active(), Now: now}
		}, want: []string{"PendingClusterNotReady: new cluster rc-new not ready (pending)",
			"GangSchedulingIgnored: new cluster: no gang scheduling: raydar ignores kai.scheduler/queue (no PodGroup; pods are scheduled one by one)"}},
		{name: "dashboard unreachable", in: func(in *ServiceInput) {
			in.Events = append(in.Events, warn("RayService", "svc", reasonDashboardUnreachable, "Cannot read Serve applications of RayCluster rc: timeout"))
		}, want: []string{"DashboardUnreachable: dashboard unreachable"}, evidence: []string{"timeout"}},
		{name: "suspended", in: func(in *ServiceInput) {
			in.Service.Spec.Suspend = true
			in.Active = nil
		}, want: []string{"Suspended: suspended (spec.suspend)"}},
		{name: "invalid spec", in: func(in *ServiceInput) {
			in.Service.Status.Conditions = []metav1.Condition{{Type: string(rayv1.RayServiceReady), Status: metav1.ConditionFalse,
				Reason: string(rayv1.RayServiceValidationFailed), Message: "spec.serveConfigV2: Invalid value: not YAML"}}
		}, want: []string{"InvalidSpec: invalid spec.serveConfigV2"}},
		{name: "not reconciled", in: func(in *ServiceInput) {
			in.Service.Generation = 4
			in.Reconciler = Reconciler{Known: true, Who: "no leader"}
		}, want: []string{"NotReconciled: not reconciled: no leader"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := ServiceInput{Service: readyService(), Reconciler: active(), Now: now,
				Active: &ClusterInput{Cluster: readyCluster(), Pods: healthyPods(), Reconciler: active(), Now: now}}
			tt.in(&in)
			got := Service(in)
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
