package why

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/raydar/raydar/rayapi/dashboard"
	"github.com/raydar/raydar/rayapi/podview"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// sidecarDown makes the head's autoscaler container wait for reason after
// restarts, its last run ended with exit code and message; the head pod
// is then not Ready.
func sidecarDown(in *ClusterInput, reason string, restarts int32, exit int32, msg string) {
	h := in.Pods[0]
	h.Status.Conditions = []podview.Condition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue},
		{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady"}}
	st := containerStatus(h, rayv1.AutoscalerContainerName)
	st.Ready, st.RestartCount = false, restarts
	st.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: "back-off 2m40s restarting failed container"}}
	st.LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: exit, Reason: "Error", Message: msg}}
}

// gpuPending is Ray's view of 3 tasks wanting a GPU each, which group gpu
// (1 of max 4 pods) would hold.
func gpuPending(in *ClusterInput, since time.Duration) {
	in.Capacity = &dashboard.Capacity{DemandKnown: true, FetchedAt: now,
		Pending: []dashboard.Demand{{Shape: dashboard.Resources{"GPU": 1}, Count: 3}}}
	in.DemandSince = now.Add(-since)
}

// idleGPU is Ray's view of worker rc-gpu-a idle for d (known: Ray says
// for how long), as the dashboard answered at now.
func idleGPU(in *ClusterInput, d time.Duration, known bool) {
	n := dashboard.RayNode{ID: "g", Alive: true, Idle: true, Pod: "rc-gpu-a"}
	if known {
		n.IdleFor, n.IdleKnown = d, true
	}
	in.Capacity = &dashboard.Capacity{DemandKnown: true, FetchedAt: now, Nodes: []dashboard.RayNode{n}}
}

func TestAutoscalerCauses(t *testing.T) {
	tests := []struct {
		name     string
		in       func(in *ClusterInput)
		want     []string
		evidence []string
		fix      string
	}{
		{name: "healthy sidecar, demand just seen: nothing", in: func(in *ClusterInput) {
			autoscaled(in)
			gpuPending(in, 20*time.Second)
		}},
		{name: "sidecar crash-looping (kuberay#1108: the autoscaler dies at start)", in: func(in *ClusterInput) {
			autoscaled(in)
			sidecarDown(in, "CrashLoopBackOff", 4, 1, "")
			gpuPending(in, 5*time.Minute)
		}, want: []string{"AutoscalerDown: autoscaler crash-looping: exit 1"},
			evidence: []string{"pod rc-head container autoscaler: CrashLoopBackOff, restarted 4 times, last exit code 1 (Error)"},
			fix:      "kubectl logs rc-head -c autoscaler -n ns --previous"},
		{name: "a container named autoscaler crash-looping without autoscaling: the head pod's crash loop", in: func(in *ClusterInput) {
			autoscaled(in)
			in.Cluster.Spec.EnableInTreeAutoscaling = ptr(false) // the user's own container of that name
			sidecarDown(in, "CrashLoopBackOff", 4, 1, "")
		}, want: []string{"CrashLoop: head crash-looping: exit 1"},
			evidence: []string{"pod rc-head container autoscaler: CrashLoopBackOff, restarted 4 times"}},
		{name: "sidecar's last exit was a 403: refused by RBAC", in: func(in *ClusterInput) {
			autoscaled(in)
			sidecarDown(in, "CrashLoopBackOff", 2, 1,
				`kubernetes.client.exceptions.ApiException: (403) Reason: Forbidden: rayclusters.ray.io "rc" is forbidden: User "system:serviceaccount:ns:rc" cannot patch resource "rayclusters"`)
		}, want: []string{"AutoscalerForbidden: autoscaler refused by RBAC: ServiceAccount rc (403 in its last exit)"},
			evidence: []string{"last message: kubernetes.client.exceptions.ApiException: (403) Reason: Forbidden"},
			fix:      "let ServiceAccount rc get, list, watch and patch rayclusters.ray.io and pods in ns"},
		{name: "SubjectAccessReview: the ServiceAccount may not patch the RayCluster", in: func(in *ClusterInput) {
			autoscaled(in)
			in.AutoscalerAccess = &AutoscalerAccess{ServiceAccount: "rc", Denied: []string{"patch rayclusters.ray.io"}}
			gpuPending(in, 5*time.Minute)
		}, want: []string{"AutoscalerForbidden: autoscaler refused by RBAC: ServiceAccount rc may not patch rayclusters.ray.io"},
			evidence: []string{"SubjectAccessReview: system:serviceaccount:ns:rc may not patch rayclusters.ray.io"}},
		{name: "SubjectAccessReview allows it: nothing", in: func(in *ClusterInput) {
			autoscaled(in)
			in.AutoscalerAccess = &AutoscalerAccess{ServiceAccount: "rc"}
		}},
		{name: "no sidecar in the head pod", in: func(in *ClusterInput) {
			in.Cluster.Spec.EnableInTreeAutoscaling = ptr(true)
		}, want: []string{"AutoscalerDown: autoscaling is on but head pod rc-head has no autoscaler container"},
			evidence: []string{"containers of pod rc-head: ray"}},
		{name: "sidecar terminated, not restarted", in: func(in *ClusterInput) {
			autoscaled(in)
			st := containerStatus(in.Pods[0], rayv1.AutoscalerContainerName)
			st.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "Error"}}
		}, want: []string{"AutoscalerDown: autoscaler not running: terminated, exit code 137 (Error)"}},
		{name: "autoscaling off: no sidecar is expected", in: func(in *ClusterInput) {}},
		{name: "pending demand a group could hold, for 3m, replicas not raised (ray#35411: a hung autoscaler)", in: func(in *ClusterInput) {
			autoscaled(in)
			gpuPending(in, 3*time.Minute)
			in.Cluster.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: autoscalerManager, Operation: metav1.ManagedFieldsOperationUpdate,
				Time: &metav1.Time{Time: now.Add(-40 * time.Minute)}}}
		}, want: []string{"AutoscalerNotActing: the autoscaler is not acting: 3 tasks want {GPU: 1} for 3m, group gpu could grow"},
			evidence: []string{"Ray autoscaler: 3 tasks want {GPU: 1}, pending for 3m (as raydar saw it)",
				"group gpu: replicas 1, 1 pod, maxReplicas 4: replicas not raised",
				"the autoscaler last wrote the RayCluster 40m ago (field manager python-requests)"},
			fix: "kubectl logs rc-head -c autoscaler -n ns"},
		{name: "replicas raised, the pod on its way: acting", in: func(in *ClusterInput) {
			autoscaled(in)
			gpuPending(in, 3*time.Minute)
			in.Cluster.Spec.WorkerGroupSpecs[1].Replicas = ptr(int32(2))
		}},
		{name: "how long it waited unknown (one look): not said", in: func(in *ClusterInput) {
			autoscaled(in)
			gpuPending(in, 0)
			in.DemandSince = time.Time{}
		}},
		{name: "a worker idle 3m past idleTimeoutSeconds 60, replicas not lowered (ray#16549: idle workers never removed)", in: func(in *ClusterInput) {
			autoscaled(in)
			idleGPU(in, 190*time.Second, true)
		}, want: []string{"ScaleDownStalled: scale-down stalled: worker rc-gpu-a idle 3m10s, past idleTimeoutSeconds, still there"},
			evidence: []string{"Ray: worker rc-gpu-a of group gpu idle 3m10s, idleTimeoutSeconds 60",
				"group gpu: replicas 1, 1 pod, minReplicas 0: replicas not lowered, workersToDelete names no pod"},
			fix: "kubectl logs rc-head -c autoscaler -n ns"},
		{name: "idle 1m50s of 60s: within the grace, the autoscaler may still act", in: func(in *ClusterInput) {
			autoscaled(in)
			idleGPU(in, 110*time.Second, true)
		}},
		{name: "idle long but the group is at minReplicas: kept on purpose", in: func(in *ClusterInput) {
			autoscaled(in)
			idleGPU(in, 10*time.Minute, true)
			in.Cluster.Spec.WorkerGroupSpecs[1].MinReplicas = ptr(int32(1))
		}},
		{name: "idle long, workersToDelete names it: the operator's deletion is awaited", in: func(in *ClusterInput) {
			autoscaled(in)
			idleGPU(in, 10*time.Minute, true)
			in.Cluster.Spec.WorkerGroupSpecs[1].ScaleStrategy.WorkersToDelete = []string{"rc-gpu-a"}
		}},
		{name: "idle long, replicas already lowered: the operator's deletion is awaited", in: func(in *ClusterInput) {
			autoscaled(in)
			idleGPU(in, 10*time.Minute, true)
			in.Cluster.Spec.WorkerGroupSpecs[1].Replicas = ptr(int32(0))
		}},
		{name: "idle, for how long unknown (autoscaler v2): not said", in: func(in *ClusterInput) {
			autoscaled(in)
			idleGPU(in, 10*time.Minute, false)
		}},
		{name: "idle long but autoscaling off: the user's replicas", in: func(in *ClusterInput) {
			idleGPU(in, 10*time.Minute, true)
		}},
		{name: "the group that would hold it is at max: RayInfeasible, not the autoscaler", in: func(in *ClusterInput) {
			autoscaled(in)
			gpuPending(in, 3*time.Minute)
			in.Cluster.Spec.WorkerGroupSpecs[1].MaxReplicas = ptr(int32(1))
		}, want: []string{"RayInfeasible: 3 tasks want {GPU: 1}; group gpu: it is at maxReplicas 1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { clusterCase(t, tt.in, tt.want, tt.evidence, tt.fix) })
	}
}
