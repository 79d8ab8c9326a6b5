package scheme

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

func TestNewKnowsCoreAndRayKinds(t *testing.T) {
	s := New()
	for _, obj := range []runtime.Object{&corev1.Pod{}, &corev1.Service{}, &corev1.Event{}, &rayv1.RayCluster{}, &rayv1.RayJob{}, &rayv1.RayService{}} {
		if _, _, err := s.ObjectKinds(obj); err != nil {
			t.Errorf("%T: %v", obj, err)
		}
	}
	if New() == s {
		t.Error("New returned a shared scheme; each caller must get its own")
	}
}
