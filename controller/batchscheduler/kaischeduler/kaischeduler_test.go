package kaischeduler

import (
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/raydar/raydar/controller/internal/fixture"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// Pods get schedulerName kai-scheduler and the parent's queue; without a
// queue label, schedulerName alone.
func TestDecorate(t *testing.T) {
	rc := fixture.Cluster("raycluster-half-gpu")
	rc.Labels = map[string]string{QueueLabelKey: "team-a"}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{"gpu-fraction": "0.5"}}}
	Scheduler{}.Decorate(rc, pod, "shared-gpu")
	if pod.Spec.SchedulerName != "kai-scheduler" || pod.Labels[QueueLabelKey] != "team-a" || pod.Annotations["gpu-fraction"] != "0.5" {
		t.Errorf("pod %q %v %v", pod.Spec.SchedulerName, pod.Labels, pod.Annotations)
	}
	rc.Labels = nil
	pod = &corev1.Pod{}
	Scheduler{}.Decorate(rc, pod, "headgroup")
	if pod.Spec.SchedulerName != "kai-scheduler" || len(pod.Labels) != 0 {
		t.Errorf("no queue: %q %v", pod.Spec.SchedulerName, pod.Labels)
	}
}

// A K8sJobMode RayJob is refused, the other modes pass; clusters have no
// gang object.
func TestJobGroup(t *testing.T) {
	for mode, refused := range map[rayv1.JobSubmissionMode]bool{rayv1.K8sJobMode: true, "": true, rayv1.HTTPMode: false, rayv1.SidecarMode: false, rayv1.InteractiveMode: false} {
		_, err := Scheduler{}.JobGroup(&rayv1.RayJob{Spec: rayv1.RayJobSpec{SubmissionMode: mode}})
		if errors.Is(err, ErrK8sJobMode) != refused {
			t.Errorf("%q: %v", mode, err)
		}
	}
	if g, err := (Scheduler{}).ClusterGroup(fixture.Cluster("c")); g != nil || err != nil || !(Scheduler{}).GroupKind().Empty() {
		t.Error(g, err)
	}
}
