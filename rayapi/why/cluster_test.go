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

// lines renders causes as "Code: Summary", the part users read first.
func lines(cs []Cause) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Code + ": " + c.Summary
	}
	return out
}

func sameLines(t *testing.T, got []Cause, want []string) {
	t.Helper()
	g := lines(got)
	if strings.Join(g, "\n") != strings.Join(want, "\n") {
		t.Errorf("causes:\n  got  %q\n  want %q", g, want)
		for _, c := range got {
			t.Logf("%s [%s] %q evidence %q fix %q", c.Code, c.Subject, c.Summary, c.Evidence, c.Fix)
		}
	}
}

// hasEvidence fails unless some cause's evidence line contains s.
// clusterCase is one case of a table of cluster causes: readyCluster with
// healthyPods, changed by change, has the causes want (nil: none), each
// of evidence among their evidence, and the first one's fix says fix.
func clusterCase(t *testing.T, change func(in *ClusterInput), want, evidence []string, fix string) {
	t.Helper()
	in := ClusterInput{Cluster: readyCluster(), Pods: healthyPods(), Reconciler: active(), Now: now}
	change(&in)
	got := Cluster(in)
	sameLines(t, got, want)
	for _, e := range evidence {
		hasEvidence(t, got, e)
	}
	if fix != "" && (len(got) == 0 || !strings.Contains(got[0].Fix, fix)) {
		t.Errorf("fix of the first cause does not say %q: %+v", fix, got)
	}
	if want == nil && got != nil {
		t.Errorf("want nil, got %#v", got)
	}
}

func hasEvidence(t *testing.T, cs []Cause, s string) {
	t.Helper()
	for _, c := range cs {
		for _, e := range c.Evidence {
			if strings.Contains(e, s) {
				return
			}
		}
	}
	t.Errorf("no evidence line contains %q in %+v", s, cs)
}

func TestClusterCauses(t *testing.T) {
	gpuMsg := "0/2 nodes are available: 2 Insufficient nvidia.com/gpu. preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod."
	cpuNodes := Nodes{Known: true, List: []*corev1.Node{
		node("n1", rl("cpu", "16", "memory", "64Gi"), map[string]string{"pool": "cpu"}),
		node("n2", rl("cpu", "8", "memory", "32Gi"), map[string]string{"pool": "cpu"}),
	}}
	tests := []struct {
		name     string
		in       func(in *ClusterInput)
		want     []string
		evidence []string
		fix      string
	}{
		{name: "healthy", in: func(in *ClusterInput) {}},
		{name: "gpu workers unschedulable, nodes known", in: func(in *ClusterInput) {
			tmpl := in.Cluster.Spec.WorkerGroupSpecs[1].Template
			in.Pods[3] = unschedulablePod(pod("rc-gpu-a", false, "gpu", tmpl), gpuMsg)
			in.Pods = append(in.Pods, unschedulablePod(pod("rc-gpu-b", false, "gpu", tmpl), gpuMsg))
			in.Nodes = cpuNodes
		}, want: []string{"Unschedulable: 2 gpu workers Pending: each asks nvidia.com/gpu 4, the most any node offers is 0"},
			evidence: []string{"scheduler: 0/2 nodes are available: 2 Insufficient nvidia.com/gpu.", "pods rc-gpu-a, rc-gpu-b"},
			fix:      "add nodes with nvidia.com/gpu 4 free"},
		{name: "head unschedulable, nodes unknown, message from the Event", in: func(in *ClusterInput) {
			p := unschedulablePod(pod("rc-head", true, "", in.Cluster.Spec.HeadGroupSpec.Template), "")
			p.Spec.Containers[0].Resources.Requests = rl("cpu", "64")
			in.Pods[0] = p
			in.Events = append(in.Events, warn("Pod", "rc-head", "FailedScheduling", "0/2 nodes are available: 2 Insufficient cpu."))
		}, want: []string{"Unschedulable: head Pending: asks cpu 64"},
			evidence: []string{"scheduler: 0/2 nodes are available: 2 Insufficient cpu."}},
		{name: "node selector matches no node", in: func(in *ClusterInput) {
			p := pod("rc-cpu-b", false, "cpu", in.Cluster.Spec.WorkerGroupSpecs[0].Template)
			p.Spec.NodeSelector = map[string]string{"pool": "cpu", "zone": "eu-1"}
			in.Pods[2] = unschedulablePod(p, "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector.")
			in.Nodes = cpuNodes
		}, want: []string{"Unschedulable: 1 cpu worker Pending: nodeSelector zone=eu-1 matches no node"},
			fix: "label a node zone=eu-1"},
		{name: "required node affinity matches no node", in: func(in *ClusterInput) {
			p := pod("rc-gpu-a", false, "gpu", in.Cluster.Spec.WorkerGroupSpecs[0].Template)
			p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{
					{Key: "pool", Operator: corev1.NodeSelectorOpIn, Values: []string{"gpu", "tpu"}}}}}}}}
			in.Pods[3] = unschedulablePod(p, "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector.")
			in.Nodes = cpuNodes
		}, want: []string{"Unschedulable: 1 gpu worker Pending: required node affinity matches no node"}},
		{name: "taint no node lacks", in: func(in *ClusterInput) {
			p := pod("rc-cpu-b", false, "cpu", in.Cluster.Spec.WorkerGroupSpecs[0].Template)
			p.Spec.Tolerations = []corev1.Toleration{{Key: "other", Operator: corev1.TolerationOpExists}}
			in.Pods[2] = unschedulablePod(p, "0/2 nodes are available: 2 node(s) had untolerated taint {dedicated: infra}.")
			taint := corev1.Taint{Key: "dedicated", Value: "infra", Effect: corev1.TaintEffectNoSchedule}
			in.Nodes = Nodes{Known: true, List: []*corev1.Node{
				node("n1", rl("cpu", "16", "memory", "64Gi"), nil, taint),
				node("n2", rl("cpu", "16", "memory", "64Gi"), nil, taint, corev1.Taint{Key: "other", Effect: corev1.TaintEffectNoExecute}),
			}}
		}, want: []string{"Unschedulable: 1 cpu worker Pending: every node has taint dedicated=infra:NoSchedule, not tolerated"}},
		{name: "unschedulable for a reason raydar does not explain: the scheduler's words", in: func(in *ClusterInput) {
			in.Pods[2] = unschedulablePod(in.Pods[2], "0/3 nodes are available: 3 node(s) had volume node affinity conflict. preemption: not helpful.")
			in.Nodes = cpuNodes
		}, want: []string{"Unschedulable: 1 cpu worker Pending: 3 node(s) had volume node affinity conflict"}},
		{name: "unschedulable without any message", in: func(in *ClusterInput) {
			in.Pods[2] = unschedulablePod(in.Pods[2], "")
		}, want: []string{"Unschedulable: 1 cpu worker Pending: unschedulable"}},
		{name: "image pull", in: func(in *ClusterInput) {
			in.Pods[1] = waiting(in.Pods[1], corev1.PodPending, "ImagePullBackOff", `Back-off pulling image "rayproject/ray:2.9.0"`)
			in.Pods[2] = waiting(in.Pods[2], corev1.PodPending, "ErrImagePull", `rpc error: not found`)
		}, want: []string{"ImagePull: 2 cpu workers can't pull rayproject/ray:2.9.0"},
			evidence: []string{`pod rc-cpu-a container ray: ImagePullBackOff: Back-off pulling image "rayproject/ray:2.9.0"`}},
		{name: "invalid image name on the head", in: func(in *ClusterInput) {
			in.Pods[0] = waiting(in.Pods[0], corev1.PodPending, "InvalidImageName", `Failed to apply default image tag "Ray:Bad": invalid reference format`)
			in.Pods[0].Status.ContainerStatuses[0].Image = "Ray:Bad"
		}, want: []string{"ImagePull: head can't pull Ray:Bad"}, fix: "fix the image name or tag in the group's template"},
		{name: "image pull needs credentials", in: func(in *ClusterInput) {
			in.Pods[0] = waiting(in.Pods[0], corev1.PodPending, "ErrImagePull", `failed to pull "registry.example.com/ray:1": 401 Unauthorized`)
		}, want: []string{"ImagePull: head can't pull rayproject/ray:2.9.0"}, fix: "give the pods an imagePullSecret"},
		{name: "crash loop, OOMKilled with the memory limit", in: func(in *ClusterInput) {
			p := waiting(in.Pods[0], corev1.PodRunning, "CrashLoopBackOff", "back-off 5m0s restarting failed container")
			p.Status.ContainerStatuses[0].RestartCount = 7
			p.Status.ContainerStatuses[0].LastTerminationState.Terminated = &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled"}
		}, want: []string{"CrashLoop: head crash-looping: OOMKilled (memory limit 2Gi)"},
			evidence: []string{"pod rc-head container ray: CrashLoopBackOff, restarted 7 times, last exit code 137 (OOMKilled)"},
			fix:      "raise the container's memory limit"},
		{name: "crash loop, exit code", in: func(in *ClusterInput) {
			p := waiting(in.Pods[3], corev1.PodRunning, "CrashLoopBackOff", "")
			p.Status.ContainerStatuses[0].RestartCount = 3
			p.Status.ContainerStatuses[0].LastTerminationState.Terminated = &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error", Message: "ImportError: no module named torch"}
		}, want: []string{"CrashLoop: 1 gpu worker crash-looping: exit 1"},
			evidence: []string{"last message: ImportError: no module named torch"}},
		{name: "workers wait for the GCS while the head is not ready", in: func(in *ClusterInput) {
			in.Pods[0] = waiting(in.Pods[0], corev1.PodPending, "ImagePullBackOff", "back-off")
			for _, p := range in.Pods[1:] {
				p.Spec.NodeName = "node-1"
				p.Status = podview.Status{Phase: corev1.PodPending,
					Conditions: []podview.Condition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}},
					InitContainerStatuses: []podview.ContainerStatus{{Name: "wait-gcs-ready",
						State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}}
			}
		}, want: []string{"ImagePull: head can't pull rayproject/ray:2.9.0", "WaitingForGCS: 3 workers wait for the GCS: head not ready"},
			evidence: []string{"head pod rc-head is not ready", "pods rc-cpu-a, rc-cpu-b, rc-gpu-a: init container waits for the head's GCS"}},
		{name: "missing ConfigMap, Secret key and PVC", in: func(in *ClusterInput) {
			in.Pods[0] = waiting(in.Pods[0], corev1.PodPending, "CreateContainerConfigError", `configmap "ray-cfg" not found`)
			in.Pods[1] = waiting(in.Pods[1], corev1.PodPending, "CreateContainerConfigError", `configmap "ray-cfg" not found`)
			in.Pods[2] = waiting(in.Pods[2], corev1.PodPending, "CreateContainerConfigError", `couldn't find key token in Secret ns/creds`)
			in.Pods[3] = unschedulablePod(in.Pods[3], `0/2 nodes are available: persistentvolumeclaim "data" not found. preemption: 0/2 nodes are available.`)
		}, want: []string{
			"MissingConfig: ConfigMap ray-cfg missing (head, 1 cpu worker)",
			"MissingConfig: Secret creds has no key token (1 cpu worker)",
			"MissingConfig: PersistentVolumeClaim data missing (1 gpu worker)",
		}, fix: "create ConfigMap ray-cfg in namespace ns"},
		{name: "missing Secret from a FailedMount Event", in: func(in *ClusterInput) {
			p := in.Pods[3]
			p.Status = podview.Status{Phase: corev1.PodPending,
				Conditions: []podview.Condition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}}}
			in.Events = append(in.Events, warn("Pod", p.Name, "FailedMount", `MountVolume.SetUp failed for volume "tls" : secret "ray-tls" not found`))
		}, want: []string{"MissingConfig: Secret ray-tls missing (1 gpu worker)"}},
		{name: "quota refuses worker pods", in: func(in *ClusterInput) {
			in.Events = append(in.Events, warn("RayCluster", "rc", rayv1.EventFailedToCreateWorkerPod,
				`Failed to create worker Pod for the cluster ns/rc, pods "rc-gpu-x" is forbidden: exceeded quota: gpu-quota, requested: requests.nvidia.com/gpu=4, used: requests.nvidia.com/gpu=4, limited: requests.nvidia.com/gpu=4`))
		}, want: []string{"CreateRefused: quota gpu-quota refuses to create worker pods"},
			evidence: []string{"quota gpu-quota: requested requests.nvidia.com/gpu=4, used requests.nvidia.com/gpu=4, limited requests.nvidia.com/gpu=4"}},
		{name: "admission webhook refuses the head pod", in: func(in *ClusterInput) {
			in.Events = append(in.Events, warn("RayCluster", "rc", rayv1.EventFailedToCreateHeadPod,
				`Failed to create head Pod ns/rc-head, admission webhook "policy.example.com" denied the request: images must come from registry.example.com`))
		}, want: []string{"CreateRefused: webhook policy.example.com refuses to create the head pod: images must come from registry.example.com"}},
		{name: "a refusal answered by a later success says nothing", in: func(in *ClusterInput) {
			in.Events = append(in.Events,
				warn("RayCluster", "rc", rayv1.EventFailedToCreateWorkerPod, `Failed to create worker Pod, pods "x" is forbidden: exceeded quota: q, requested: cpu=1`),
				normal("RayCluster", "rc", rayv1.EventCreatedWorkerPod, "Created worker Pod ns/rc-cpu-b"))
		}},
		{name: "RBAC: raydar may not create pods", in: func(in *ClusterInput) {
			in.Cluster.Status.Conditions = append(in.Cluster.Status.Conditions, metav1.Condition{Type: string(rayv1.RayClusterReplicaFailure),
				Status: metav1.ConditionTrue, Reason: rayv1.FailedCreateWorkerPod,
				Message: `Failed to create worker Pod for the cluster ns/rc, pods is forbidden: User "system:serviceaccount:raydar-system:raydar" cannot create resource "pods" in API group "" in the namespace "ns"`})
		}, want: []string{"WriteFailed: raydar may not create pods in namespace ns (RBAC)"},
			fix: `grant system:serviceaccount:raydar-system:raydar create on pods`},
		{name: "invalid spec names the field", in: func(in *ClusterInput) {
			in.Cluster.Status.Conditions = append(in.Cluster.Status.Conditions, metav1.Condition{Type: string(rayv1.RayClusterReplicaFailure),
				Status: metav1.ConditionTrue, Reason: string(rayv1.ValidationFailed),
				Message: `spec.workerGroupSpecs[1].groupName: Duplicate value: "cpu"`})
		}, want: []string{"InvalidSpec: invalid spec.workerGroupSpecs[1].groupName"}},
		{name: "invalid spec from the Event before any status", in: func(in *ClusterInput) {
			in.Cluster.Status = rayv1.RayClusterStatus{}
			in.Pods = nil
			in.Events = append(in.Events, warn("RayCluster", "rc", rayv1.EventInvalidRayClusterSpec,
				"Invalid spec, nothing is created or deleted until it is fixed: [spec.headGroupSpec.template.spec.containers: Required value, spec.x: Invalid value]"))
		}, want: []string{"InvalidSpec: invalid spec.headGroupSpec.template.spec.containers"}},
		{name: "suspended", in: func(in *ClusterInput) {
			in.Cluster.Spec.Suspend = ptr(true)
			in.Pods = nil
		}, want: []string{"Suspended: suspended (spec.suspend)"}},
		{name: "queued by Kueue", in: func(in *ClusterInput) {
			in.Cluster.Spec.Suspend = ptr(true)
			in.Cluster.Labels = map[string]string{"kueue.x-k8s.io/queue-name": "team-a"}
			in.Pods = nil
		}, want: []string{"Suspended: queued by Kueue (queue team-a)"}},
		{name: "managed by KubeRay, status lags", in: func(in *ClusterInput) {
			in.Cluster.Spec.ManagedBy = ptr(rayv1.KubeRayController)
			in.Cluster.Generation = 2
			in.Pods = nil
		}, want: []string{"OtherOperator: managed by KubeRay, not raydar"}},
		{name: "managed by KubeRay and healthy says nothing", in: func(in *ClusterInput) {
			in.Cluster.Spec.ManagedBy = ptr(rayv1.KubeRayController)
		}},
		{name: "raydar's gate left it to a running KubeRay", in: func(in *ClusterInput) {
			in.Cluster.Status = rayv1.RayClusterStatus{}
			in.Pods = nil
			in.Events = append(in.Events, warn("RayCluster", "rc", reasonOtherOperator, "a KubeRay operator is running (kuberay/kuberay-operator-1): raydar leaves ray.io objects to it"))
		}, want: []string{"OtherOperator: left to the running KubeRay operator"}},
		{name: "raydar's gate Event answered by a later reconcile says nothing", in: func(in *ClusterInput) {
			in.Events = append(in.Events, warn("RayCluster", "rc", reasonManagedElsewhere, "spec.managedBy is ..."),
				normal("RayCluster", "rc", rayv1.EventCreatedHeadPod, "Created head Pod ns/rc-head"))
		}},
		{name: "workers wait for the GCS and there is no head pod", in: func(in *ClusterInput) {
			for _, p := range in.Pods[1:] {
				p.Status = podview.Status{Phase: corev1.PodPending,
					Conditions: []podview.Condition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}},
					InitContainerStatuses: []podview.ContainerStatus{{Name: "wait-gcs-ready",
						State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}}}}
			}
			in.Pods = in.Pods[1:3]
		}, want: []string{"WaitingForGCS: 2 workers wait for the GCS: head not ready"},
			evidence: []string{"there is no head pod"}},
		{name: "not reconciled: no status", in: func(in *ClusterInput) {
			in.Cluster.Status = rayv1.RayClusterStatus{}
			in.Pods = nil
			in.Reconciler = Reconciler{Known: true, Who: "no leader: lease raydar-system/raydar expired 3m ago"}
		}, want: []string{"NotReconciled: not reconciled: no leader: lease raydar-system/raydar expired 3m ago"}},
		{name: "not reconciled: status of an older generation", in: func(in *ClusterInput) {
			in.Cluster.Generation = 3
			in.Reconciler = Reconciler{Known: true, Who: "--readonly"}
		}, want: []string{"NotReconciled: not reconciled: --readonly"}},
		{name: "raydar only: a status never written is not reconciled", in: func(in *ClusterInput) {
			in.Cluster.Status = rayv1.RayClusterStatus{}
			in.Pods = nil
			in.Reconciler = Reconciler{Known: true, OnlyRaydar: true, Who: "no raydar operator runs here"}
		}, want: []string{"NotReconciled: not reconciled: no raydar operator runs here"},
			evidence: []string{"no operator has written its status (generation 1)"}},
		{name: "raydar only: an older generation may be KubeRay's status, says nothing", in: func(in *ClusterInput) {
			in.Cluster.Generation = 3
			in.Reconciler = Reconciler{Known: true, OnlyRaydar: true, Who: "no raydar operator runs here"}
		}},
		{name: "inactive reconciler, current status says nothing", in: func(in *ClusterInput) {
			in.Reconciler = Reconciler{Known: true, Who: "--readonly"}
		}},
		{name: "Ray infeasible demand", in: func(in *ClusterInput) {
			in.Capacity = &dashboard.Capacity{Infeasible: []dashboard.Demand{{Shape: dashboard.Resources{"GPU": 8}, Count: 4}}}
		}, want: []string{"RayInfeasible: 4 tasks want {GPU: 8}; no worker group offers 8 GPU per pod (the most is 4)"},
			fix: "add or change a worker group so one pod offers {GPU: 8}"},
		{name: "Ray pending demand a full group cannot grow for", in: func(in *ClusterInput) {
			in.Capacity = &dashboard.Capacity{Pending: []dashboard.Demand{{Shape: dashboard.Resources{"CPU": 2, "memory": 4 << 30}, Count: 1}}}
			in.Cluster.Spec.WorkerGroupSpecs[1].MaxReplicas = ptr(int32(1))
		}, want: []string{"RayInfeasible: 1 task wants {CPU: 2, memory: 4Gi}; group cpu: it is at maxReplicas 2"}},
		{name: "Ray pending demand a group may still grow for says nothing", in: func(in *ClusterInput) {
			in.Capacity = &dashboard.Capacity{Pending: []dashboard.Demand{{Shape: dashboard.Resources{"GPU": 1}, Count: 3}}}
			autoscaled(in)
		}},
		{name: "Ray pending demand with autoscaling off", in: func(in *ClusterInput) {
			in.Capacity = &dashboard.Capacity{Pending: []dashboard.Demand{{Shape: dashboard.Resources{"GPU": 1}, Count: 3}}}
		}, want: []string{"RayInfeasible: 3 tasks want {GPU: 1}; group gpu: autoscaling is off (replicas 1)"}},
		{name: "taint first when the scheduler names it, a resource second", in: func(in *ClusterInput) {
			p := pod("rc-cpu-b", false, "cpu", in.Cluster.Spec.WorkerGroupSpecs[0].Template)
			in.Pods[2] = unschedulablePod(p, "0/1 nodes are available: 1 node(s) had untolerated taint {dedicated: infra}.")
			in.Nodes = Nodes{Known: true, List: []*corev1.Node{node("n1", rl("cpu", "1", "memory", "64Gi"), nil,
				corev1.Taint{Key: "dedicated", Value: "infra", Effect: corev1.TaintEffectNoExecute})}}
		}, want: []string{"Unschedulable: 1 cpu worker Pending: every node has taint dedicated=infra:NoExecute, not tolerated"},
			evidence: []string{"asks cpu 2, the most any node offers is 1"}},
		{name: "Ray's gauges: a GPU below the threshold long enough is idle, a busy one and a short dip are not", in: func(in *ClusterInput) {
			in.GPUs = &GPUGauges{BelowPct: 5, IdleFor: 10 * time.Minute, GPUs: []GPUReading{
				{Pod: "rc-gpu-a", Index: 0, UtilPct: 93}, {Pod: "rc-gpu-a", Index: 1, UtilPct: 0, Below: 40 * time.Minute},
				{Pod: "rc-gpu-b", Index: 0, UtilPct: 2, Below: 3 * time.Minute}}}
		}, want: []string{"GPUsIdle: 1 of 3 GPUs held by the cluster's pods idle: below 5% for 10m or more"},
			evidence: []string{"pod rc-gpu-a GPU 1: 0% for 40m"}},
		{name: "Ray's gauges, one reading: below the threshold now", in: func(in *ClusterInput) {
			in.GPUs = &GPUGauges{BelowPct: 5, GPUs: []GPUReading{{Pod: "rc-gpu-a", Index: 0, UtilPct: 0}, {Pod: "rc-gpu-a", Index: 1, UtilPct: 90}}}
		}, want: []string{"GPUsIdle: 1 of 2 GPUs held by the cluster's pods idle: below 5% now (one reading)"}},
		{name: "Ray's gauges: every GPU busy says nothing", in: func(in *ClusterInput) {
			in.GPUs = &GPUGauges{BelowPct: 5, GPUs: []GPUReading{{Pod: "rc-gpu-a", Index: 0, UtilPct: 60}}}
		}},
		{name: "Pending gpu group and Ray's demand for it: one cause", in: func(in *ClusterInput) {
			tmpl := in.Cluster.Spec.WorkerGroupSpecs[1].Template
			in.Pods[3] = unschedulablePod(pod("rc-gpu-a", false, "gpu", tmpl), gpuMsg)
			in.Nodes = cpuNodes
			in.Capacity = &dashboard.Capacity{Infeasible: []dashboard.Demand{{Shape: dashboard.Resources{"GPU": 2}, Count: 4}}}
		}, want: []string{"Unschedulable: 1 gpu worker Pending: asks nvidia.com/gpu 4, the most any node offers is 0"},
			evidence: []string{"Ray: 4 tasks want {GPU: 2} (infeasible), which these pods would serve"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { clusterCase(t, tt.in, tt.want, tt.evidence, tt.fix) })
	}
}

func TestClusterRanksMostDecisiveFirst(t *testing.T) {
	in := ClusterInput{Cluster: readyCluster(), Pods: healthyPods(), Reconciler: active(), Now: now}
	in.Pods[3] = waiting(in.Pods[3], corev1.PodRunning, "CrashLoopBackOff", "")
	in.Pods[1] = waiting(in.Pods[1], corev1.PodPending, "ImagePullBackOff", "")
	in.Pods[0] = waiting(in.Pods[0], corev1.PodRunning, "CrashLoopBackOff", "")
	in.Events = []*corev1.Event{warn("RayCluster", "rc", rayv1.EventFailedToCreateWorkerPod, `pods "x" is forbidden: exceeded quota: q, requested: cpu=2`)}
	in.Cluster.Generation = 2
	in.Reconciler = Reconciler{Known: true, Who: "--readonly"}
	got := Cluster(in)
	var codes []string
	for _, c := range got {
		codes = append(codes, c.Code+" "+c.Subject)
	}
	want := []string{"NotReconciled RayCluster ns/rc", "CreateRefused RayCluster ns/rc", "CrashLoop pod rc-head", "ImagePull group cpu", "CrashLoop group gpu"}
	if strings.Join(codes, "|") != strings.Join(want, "|") {
		t.Errorf("order:\n got  %q\n want %q", codes, want)
	}
	if c := Column(got); c != "not reconciled: --readonly (+4)" {
		t.Errorf("Column = %q", c)
	}
}

func TestColumn(t *testing.T) {
	if c := Column(nil); c != "" {
		t.Errorf("Column(nil) = %q", c)
	}
	if c := Column([]Cause{{Summary: "a"}}); c != "a" {
		t.Errorf("Column(one) = %q", c)
	}
	if c := Column([]Cause{{Summary: "a"}, {Summary: "b"}, {Summary: "c"}}); c != "a (+2)" {
		t.Errorf("Column(three) = %q", c)
	}
}

func TestPodRequests(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	spec := corev1.PodSpec{
		InitContainers: []corev1.Container{
			{Name: "big-init", Resources: corev1.ResourceRequirements{Requests: rl("cpu", "8", "memory", "1Gi")}},
			{Name: "sidecar", RestartPolicy: &always, Resources: corev1.ResourceRequirements{Requests: rl("cpu", "1")}},
		},
		Containers: []corev1.Container{
			{Name: "ray", Resources: corev1.ResourceRequirements{Requests: rl("cpu", "2", "memory", "4Gi", "nvidia.com/gpu", "1")}},
			{Name: "log", Resources: corev1.ResourceRequirements{Requests: rl("cpu", "500m", "memory", "1Gi")}},
		},
		Overhead: rl("memory", "128Mi"),
	}
	got := podRequests(templateSpec(&spec))
	want := map[string]string{"cpu": "8", "memory": "5248Mi", "nvidia.com/gpu": "1"}
	for name, w := range want {
		q := got[corev1.ResourceName(name)]
		if q.String() != w {
			t.Errorf("%s = %s, want %s", name, q.String(), w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("got %v", got)
	}
}

func TestInsufficient(t *testing.T) {
	for msg, want := range map[string]string{
		"0/3 nodes are available: 3 Insufficient nvidia.com/gpu. preemption: x": "nvidia.com/gpu",
		"0/3 nodes are available: 1 Insufficient cpu, 2 Insufficient memory.":   "cpu,memory",
		"0/1 nodes are available: 1 Insufficient google.com/tpu":                "google.com/tpu",
		"0/1 nodes are available: 1 node(s) had untolerated taint":              "",
	} {
		if got := strings.Join(insufficient(msg), ","); got != want {
			t.Errorf("insufficient(%q) = %q, want %q", msg, got, want)
		}
	}
}
