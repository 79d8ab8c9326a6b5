package schedulerplugins

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	spv1alpha1 "sigs.k8s.io/scheduler-plugins/apis/scheduling/v1alpha1"

	"github.com/raydar/raydar/controller/internal/fixture"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// A labelled cluster's PodGroup: named after it, owned (not controlled)
// by it, its desired pods and their resources, autoscaling or not.
func TestClusterGroup(t *testing.T) {
	rc := fixture.Cluster("test-podgroup-0", fixture.Group("worker", 2))
	if g, err := (Scheduler{}).ClusterGroup(rc); g != nil || err != nil {
		t.Fatalf("unlabelled: %v %v", g, err)
	}
	rc.Labels = map[string]string{rayv1.RayGangSchedulingEnabled: "false"} // any value
	rc.Spec.EnableInTreeAutoscaling = fixture.Ptr(true)
	obj, err := Scheduler{}.ClusterGroup(rc)
	g, ok := obj.(*spv1alpha1.PodGroup)
	if err != nil || !ok {
		t.Fatalf("%T %v", obj, err)
	}
	cpu, mem := g.Spec.MinResources[corev1.ResourceCPU], g.Spec.MinResources[corev1.ResourceMemory]
	if g.Name != "test-podgroup-0" || g.Namespace != "ns" || g.Spec.MinMember != 3 || cpu.String() != "4" || mem.String() != "8Gi" {
		t.Errorf("%s/%s %d %v", g.Namespace, g.Name, g.Spec.MinMember, g.Spec.MinResources)
	}
	ref := g.OwnerReferences[0]
	if ref.Kind != "RayCluster" || ref.APIVersion != "ray.io/v1" || ref.UID != rc.UID || ref.Controller != nil || ref.BlockOwnerDeletion != nil {
		t.Errorf("owner %+v", ref)
	}
	if up := (Scheduler{}).UpdateGroup(g, g); up != nil {
		t.Errorf("updated %v", up)
	}
}

// Pods of a labelled parent name its PodGroup; every pod gets the
// chart's scheduler name.
func TestDecorate(t *testing.T) {
	rc := fixture.Cluster("c")
	pod := &corev1.Pod{}
	Scheduler{}.Decorate(rc, pod, "headgroup")
	if pod.Spec.SchedulerName != "scheduler-plugins-scheduler" || len(pod.Labels) != 0 {
		t.Errorf("unlabelled: %q %v", pod.Spec.SchedulerName, pod.Labels)
	}
	rc.Labels = map[string]string{rayv1.RayGangSchedulingEnabled: "true"}
	tmpl := &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"a": "b"}}}
	Scheduler{}.Decorate(rc, tmpl, "")
	if tmpl.Spec.SchedulerName != SchedulerName || tmpl.Labels[PodGroupLabelKey] != "c" || tmpl.Labels["a"] != "b" || PodGroupLabelKey != "scheduling.x-k8s.io/pod-group" {
		t.Errorf("labelled: %q %v", tmpl.Spec.SchedulerName, tmpl.Labels)
	}
}

// Every RayJob is refused, as KubeRay v1.6.2 refuses it.
func TestJobGroup(t *testing.T) {
	_, err := Scheduler{}.JobGroup(&rayv1.RayJob{})
	if err == nil || !strings.Contains(err.Error(), "currently only RayCluster is supported, got *v1.RayJob") {
		t.Errorf("%v", err)
	}
}
