package tui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/raydar/raydar/kube/watch"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// whyFixture is a world with something to diagnose, on three CPU nodes
// (known) without GPUs:
//   - ml/gpu-train, whose gpu group asks 4 nvidia.com/gpu per pod: its
//     two workers are Pending, unschedulable;
//   - ml/etl, a RayJob whose cluster ml/etl-raycluster never gets ready:
//     its head cannot pull its image;
//   - serve/chat, a RayService whose app llm is DEPLOY_FAILED;
//   - ml/notebook, healthy.
func whyFixture() *watch.Store {
	st := watch.NewStore()
	for i := range 3 {
		n := mkNode(fmt.Sprintf("kwok-node-%d", i), 0)
		n.Status.Allocatable = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("16"), corev1.ResourceMemory: resource.MustParse("64Gi")}
		st.Add(n)
	}
	st.SetNodesKnown(true)
	res := func(kv ...string) corev1.ResourceRequirements {
		l := corev1.ResourceList{}
		for i := 0; i+1 < len(kv); i += 2 {
			l[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
		}
		return corev1.ResourceRequirements{Requests: l, Limits: l}
	}
	tmpl := func(r corev1.ResourceRequirements, image string) corev1.PodTemplateSpec {
		return corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "ray", Image: image, Resources: r}}}}
	}
	withSpec := func(p *corev1.Pod, t corev1.PodTemplateSpec) *corev1.Pod {
		p.Spec.Containers = t.Spec.DeepCopy().Containers
		p.Status.ContainerStatuses[0].Name = "ray"
		return p
	}
	unschedulable := func(p *corev1.Pod, msg string) *corev1.Pod {
		p.Spec.NodeName = ""
		p.Status.ContainerStatuses = nil
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable, Message: msg}}
		return p
	}
	const image = "rayproject/ray:2.52.0"

	// A GPU group with no GPU node.
	gpuMsg := "0/3 nodes are available: 3 Insufficient nvidia.com/gpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod."
	gpu := group("gpu", 2, 0, 4)
	gpu.Template = tmpl(res("cpu", "4", "memory", "16Gi", "nvidia.com/gpu", "4"), image)
	rc := mkCluster("ml", "gpu-train", 20*time.Minute, gpu)
	rc.Spec.HeadGroupSpec.Template = tmpl(res("cpu", "2", "memory", "8Gi"), image)
	rc.Status.State = ""
	rc.Status.AvailableWorkerReplicas, rc.Status.ReadyWorkerReplicas = 0, 0
	rc.Status.DesiredGPU = resource.MustParse("8")
	rc.Status.Conditions = []metav1.Condition{cond(string(rayv1.HeadPodReady), "True", rayv1.HeadPodRunningAndReady),
		cond(string(rayv1.RayClusterProvisioned), "False", rayv1.RayClusterPodsProvisioning)}
	st.Add(rc, withSpec(mkPod(rc, "gpu-train-head-8kq2z", "head", rayv1.RayNodeHeadGroupLabelValue, 20*time.Minute, true, "10.0.4.10"), rc.Spec.HeadGroupSpec.Template))
	for _, name := range []string{"gpu-train-gpu-worker-5xk2p", "gpu-train-gpu-worker-t9m4d"} {
		p := unschedulable(withSpec(mkPod(rc, name, "worker", "gpu", 19*time.Minute, false, ""), gpu.Template), gpuMsg)
		st.Add(p, mkEvent(p, "Pod", "v1", "Warning", "FailedScheduling", gpuMsg, 30*time.Second))
	}

	// A job whose cluster never gets ready: its head cannot pull its image.
	bad := "rayproject/ray:2.52.0-py399"
	etlRC := mkCluster("ml", "etl-raycluster-k2x9w", 12*time.Minute, group("cpu", 1, 1, 2))
	etlRC.Spec.HeadGroupSpec.Template = tmpl(res("cpu", "1", "memory", "4Gi"), bad)
	etlRC.Status.State = ""
	etlRC.Status.AvailableWorkerReplicas, etlRC.Status.ReadyWorkerReplicas = 0, 0
	etlRC.Status.Conditions = []metav1.Condition{cond(string(rayv1.HeadPodReady), "False", rayv1.HeadPodNotFound),
		cond(string(rayv1.RayClusterProvisioned), "False", rayv1.RayClusterPodsProvisioning)}
	head := withSpec(mkPod(etlRC, "etl-raycluster-k2x9w-head-fq8vn", "head", rayv1.RayNodeHeadGroupLabelValue, 12*time.Minute, false, ""), etlRC.Spec.HeadGroupSpec.Template)
	head.Status.ContainerStatuses[0].Image = bad
	head.Status.ContainerStatuses[0].State.Waiting = &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff",
		Message: `Back-off pulling image "` + bad + `": not found`}
	head.Status.Conditions = append(head.Status.Conditions, corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue})
	st.Add(etlRC, head, mkEvent(head, "Pod", "v1", "Warning", "Failed", `Failed to pull image "`+bad+`": not found`, time.Minute))
	job := &rayv1.RayJob{ObjectMeta: om("ml", "etl", 12*time.Minute, nil)}
	job.Spec.Entrypoint = "python etl.py"
	job.Spec.SubmissionMode = rayv1.K8sJobMode
	job.Status = rayv1.RayJobStatus{RayClusterName: etlRC.Name, JobDeploymentStatus: rayv1.JobDeploymentStatusInitializing,
		StartTime: ptrTime(ago(12 * time.Minute))}
	st.Add(job)

	// A service whose app fails to deploy.
	chatRC := mkCluster("serve", "chat-raycluster-v7p2q", time.Hour, group("serve", 1, 1, 2))
	st.Add(chatRC, mkPod(chatRC, "chat-raycluster-v7p2q-head-j4k8s", "head", rayv1.RayNodeHeadGroupLabelValue, time.Hour, true, "10.0.5.10"),
		mkPod(chatRC, "chat-raycluster-v7p2q-serve-worker-c3d9f", "worker", "serve", time.Hour, true, "10.0.5.11"))
	svc := &rayv1.RayService{ObjectMeta: om("serve", "chat", time.Hour, nil)}
	svc.Status = rayv1.RayServiceStatuses{
		Conditions: []metav1.Condition{cond(string(rayv1.RayServiceReady), "False", string(rayv1.RayServiceInitializing))},
		ActiveServiceStatus: rayv1.RayServiceStatus{RayClusterName: chatRC.Name, Applications: map[string]rayv1.AppStatus{
			"llm": {Status: rayv1.ApplicationStatusDeployFailed, Message: "Deploying app 'llm' failed with exception:\nTraceback (most recent call last):\n  File \"serve_app.py\", line 3\nModuleNotFoundError: No module named 'vllm'",
				Deployments: map[string]rayv1.ServeDeploymentStatus{"LLMServer": {Status: rayv1.DeploymentStatusUnhealthy, Message: "replica failed to start"}}},
		}},
	}
	st.Add(svc)

	// Healthy.
	nb := mkCluster("ml", "notebook", 26*time.Hour, group("small", 1, 0, 2))
	st.Add(nb, mkPod(nb, "notebook-head-2b4c6", "head", rayv1.RayNodeHeadGroupLabelValue, 26*time.Hour, true, "10.0.1.10"),
		mkPod(nb, "notebook-small-worker-k9j8h", "worker", "small", 26*time.Hour, true, "10.0.1.11"))
	return st
}

func ptrTime(t metav1.Time) *metav1.Time { return &t }

// TestWhySnapshots: the diagnosis where the user looks, at 80×24 and
// 120×40: the cluster list's WHY cell (a GPU group with no GPU node), that
// cluster's detail with its Why block, the detail of a job whose cluster
// never gets ready, and of a service whose app failed to deploy. A healthy
// object's row and page say nothing.
// `go test ./tui -run TestWhySnapshots -update` after an intended change.
func TestWhySnapshots(t *testing.T) {
	cases := []struct {
		name string
		keys []string
		want []string
		not  []string
	}{
		{"clusters", nil, []string{"gpu-train", "2 gpu workers"}, nil},
		{"cluster_detail", []string{"j", "j", "<enter>"}, []string{"Why: ", "nvidia.com/gpu"}, nil},
		{"job_detail", []string{":rj", "<enter>", "<enter>"}, []string{"Why: ", "etl-raycluster-k2x9w"}, nil},
		{"service_detail", []string{":rs", "<enter>", "<enter>"}, []string{"Why: ", "DEPLOY_FAILED"}, nil},
		{"healthy_cluster_detail", []string{"G", "<enter>"}, []string{"RayCluster ml/notebook"}, []string{"Why:"}},
	}
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		for _, c := range cases {
			name := fmt.Sprintf("%s_%dx%d", c.name, size[0], size[1])
			t.Run(name, func(t *testing.T) {
				tm, _ := start(t, Options{Store: whyFixture()}, size[0], size[1])
				typeKeys(tm, c.keys...)
				screen, _ := finalScreen(t, tm)
				requireSize(t, screen, size[0], size[1])
				mustContain(t, screen, c.want...)
				for _, n := range c.not {
					if strings.Contains(screen, n) {
						t.Fatalf("screen shows %q:\n%s", n, screen)
					}
				}
				requireGolden(t, screen)
			})
		}
	}
}
