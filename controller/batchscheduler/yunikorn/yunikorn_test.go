package yunikorn

import (
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/raydar/raydar/controller/internal/fixture"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// KubeRay v1.6.2's sample ray-cluster.yunikorn-scheduler.yaml, as its
// task groups: the head (requests over limits), 2 workers of minReplicas 2.
func sampleCluster() *rayv1.RayCluster {
	rc := fixture.Cluster("test-yunikorn-0", fixture.Group("worker", 2))
	rc.Labels = map[string]string{rayv1.RayGangSchedulingEnabled: "true", AppIDLabelKey: "test-yunikorn-0", QueueLabelKey: "root.test"}
	head := &rc.Spec.HeadGroupSpec.Template.Spec.Containers[0].Resources
	head.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("5Gi")}
	head.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("2Gi")}
	w := &rc.Spec.WorkerGroupSpecs[0]
	w.MinReplicas = fixture.Ptr(int32(2))
	w.Template.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")}
	w.Template.Spec.Tolerations = []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists}}
	return rc
}

// A pod of a gang-labelled cluster: schedulerName yunikorn, YuniKorn's
// legacy labels, the task groups as KubeRay writes them (byte for byte)
// and its own task group's name.
func TestDecoratePod(t *testing.T) {
	rc := sampleCluster()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"ray.io/group": "worker"}}}
	Scheduler{}.Decorate(rc, pod, "worker")
	if pod.Spec.SchedulerName != "yunikorn" || pod.Labels[PodApplicationIDLabelKey] != "test-yunikorn-0" || pod.Labels[PodQueueLabelKey] != "root.test" ||
		pod.Labels["ray.io/group"] != "worker" || pod.Annotations[TaskGroupNameAnnotationKey] != "worker" {
		t.Errorf("pod %q %v %v", pod.Spec.SchedulerName, pod.Labels, pod.Annotations)
	}
	want := `[{"minResource":{"cpu":"1","memory":"2Gi"},"name":"headgroup","minMember":1},` +
		`{"minResource":{"cpu":"1","memory":"1Gi"},"name":"worker","tolerations":[{"key":"k","operator":"Exists"}],"minMember":2}]`
	if got := pod.Annotations[TaskGroupsAnnotationKey]; got != want {
		t.Errorf("task groups\n got %s\nwant %s", got, want)
	}
}

// Without ray.io/gang-scheduling-enabled: labels and schedulerName, no
// task groups; empty app-id or queue labels are not copied.
func TestDecorateWithoutGang(t *testing.T) {
	rc := sampleCluster()
	rc.Labels = map[string]string{AppIDLabelKey: "", QueueLabelKey: "root.q"}
	pod := &corev1.Pod{}
	Scheduler{}.Decorate(rc, pod, "headgroup")
	if _, ok := pod.Labels[PodApplicationIDLabelKey]; ok || pod.Labels[PodQueueLabelKey] != "root.q" || pod.Spec.SchedulerName != "yunikorn" || len(pod.Annotations) != 0 {
		t.Errorf("pod %q %v %v", pod.Spec.SchedulerName, pod.Labels, pod.Annotations)
	}
}

// A RayJob's cluster carries the RayJob's task groups, submitter
// included; its pods then take the cluster's annotation as it is.
func TestRayJobTaskGroups(t *testing.T) {
	rc := sampleCluster()
	rj := &rayv1.RayJob{ObjectMeta: metav1.ObjectMeta{Name: "job", Labels: rc.Labels},
		Spec: rayv1.RayJobSpec{RayClusterSpec: &rc.Spec, SubmissionMode: rayv1.HTTPMode}}
	cluster := &rayv1.RayCluster{}
	Scheduler{}.Decorate(rj, cluster, "")
	var groups []TaskGroup
	if err := json.Unmarshal([]byte(cluster.Annotations[TaskGroupsAnnotationKey]), &groups); err != nil {
		t.Fatal(err)
	}
	sub := groups[len(groups)-1]
	cpu, mem := sub.MinResource["cpu"], sub.MinResource["memory"]
	if len(groups) != 3 || sub.Name != "submittergroup" || sub.MinMember != 1 || cpu.String() != "500m" || mem.String() != "200Mi" {
		t.Errorf("groups %+v", groups)
	}
	if _, ok := cluster.Annotations[TaskGroupNameAnnotationKey]; ok || cluster.Labels[PodQueueLabelKey] != "root.test" {
		t.Errorf("cluster %v %v", cluster.Labels, cluster.Annotations)
	}
	cluster.Labels = rj.Labels
	pod := &corev1.Pod{}
	Scheduler{}.Decorate(cluster, pod, "headgroup")
	if pod.Annotations[TaskGroupsAnnotationKey] != cluster.Annotations[TaskGroupsAnnotationKey] {
		t.Errorf("pod's task groups %s", pod.Annotations[TaskGroupsAnnotationKey])
	}
	// A custom submitter template counts as written.
	rj.Spec.SubmitterPodTemplate = &corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{fixture.RayContainer("3", "")}}}
	if g := JobTaskGroups(&rj.Spec); len(g) != 3 || g[2].MinResource["cpu"] != resource.MustParse("3") || len(g[2].MinResource) != 1 {
		t.Errorf("custom submitter %+v", g[2])
	}
}

// No gang object, nothing to refuse or clean up.
func TestNoGroup(t *testing.T) {
	s := Scheduler{}
	if g, err := s.ClusterGroup(sampleCluster()); g != nil || err != nil {
		t.Error(g, err)
	}
	if g, err := s.JobGroup(&rayv1.RayJob{}); g != nil || err != nil {
		t.Error(g, err)
	}
	if _, ok, _ := s.FinishedJobGroup(&rayv1.RayJob{}, nil); ok || !s.GroupKind().Empty() || s.NewGroup() != nil {
		t.Error("a gang object")
	}
}
