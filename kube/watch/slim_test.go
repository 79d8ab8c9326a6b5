package watch

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// SlimPod keeps every field a reader of the TUI's cache reads and drops
// the bulk of a KubeRay pod's spec.
func TestSlimPod(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	res := corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("4Gi")}}
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "c-head", Namespace: "ns", Labels: map[string]string{rayv1.RayClusterLabelKey: "c"},
			Annotations: map[string]string{"a": "b"}, ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m"}},
			OwnerReferences: []metav1.OwnerReference{{Kind: "RayCluster", Name: "c"}}},
		Spec: corev1.PodSpec{
			NodeName: "n1", NodeSelector: map[string]string{"gpu": "a100"},
			Tolerations:    []corev1.Toleration{{Key: "k"}},
			Affinity:       &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{}},
			Volumes:        []corev1.Volume{{Name: "log"}},
			Overhead:       corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")},
			InitContainers: []corev1.Container{{Name: "init", Image: "busybox", Command: []string{"sh"}, RestartPolicy: &always}},
			Containers: []corev1.Container{{Name: "ray-head", Image: "rayproject/ray", Resources: res,
				Env: []corev1.EnvVar{{Name: "RAY_ADDRESS", Value: "x"}}, Args: []string{"ray start --head"},
				ReadinessProbe: &corev1.Probe{}, VolumeMounts: []corev1.VolumeMount{{Name: "log"}}}},
		},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0.1",
			ContainerStatuses: []corev1.ContainerStatus{{Name: "ray-head", RestartCount: 3}}},
	}
	out, err := SlimPod(p)
	if err != nil {
		t.Fatal(err)
	}
	s := out.(*corev1.Pod)
	c := s.Spec.Containers[0]
	switch {
	case s.ManagedFields != nil:
		t.Error("managedFields kept")
	case s.Name != "c-head" || s.Labels[rayv1.RayClusterLabelKey] != "c" || s.Annotations["a"] != "b" || len(s.OwnerReferences) != 1:
		t.Errorf("metadata lost: %+v", s.ObjectMeta)
	case s.Spec.NodeName != "n1" || s.Spec.NodeSelector["gpu"] != "a100" || len(s.Spec.Tolerations) != 1 || s.Spec.Affinity == nil:
		t.Errorf("scheduling fields lost: %+v", s.Spec)
	case c.Name != "ray-head" || c.Image != "rayproject/ray" || !c.Resources.Limits.Memory().Equal(resource.MustParse("4Gi")):
		t.Errorf("container lost name, image or resources: %+v", c)
	case s.Spec.Overhead.Cpu().String() != "250m":
		t.Errorf("overhead lost: %v", s.Spec.Overhead)
	case len(s.Spec.InitContainers) != 1 || s.Spec.InitContainers[0].Image != "busybox" || s.Spec.InitContainers[0].Command != nil ||
		s.Spec.InitContainers[0].RestartPolicy == nil:
		t.Errorf("init containers: %+v", s.Spec.InitContainers)
	case c.Env != nil || c.Args != nil || c.ReadinessProbe != nil || c.VolumeMounts != nil || s.Spec.Volumes != nil:
		t.Errorf("bulk kept: %+v", s.Spec)
	case s.Status.PodIP != "10.0.0.1" || s.Status.ContainerStatuses[0].RestartCount != 3:
		t.Errorf("status lost: %+v", s.Status)
	}
	// A ready pod's containers drop their resources (nothing reads them).
	p.Spec.Containers[0].Resources = res
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	out, _ = SlimPod(p)
	if c := out.(*corev1.Pod).Spec.Containers[0]; c.Resources.Limits != nil || c.Name != "ray-head" {
		t.Errorf("a ready pod's container: %+v", c)
	}
	rc := &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Name: "c", ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m"}}}}
	if out, _ := SlimPod(rc); out.(*rayv1.RayCluster).ManagedFields != nil || out.(*rayv1.RayCluster).Name != "c" {
		t.Error("a RayCluster keeps its managedFields or loses its name")
	}
}
