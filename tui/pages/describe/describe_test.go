package describe

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/raydar/raydar/kube/watch"
	"github.com/raydar/raydar/rayapi/scheme"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/tui/internal/tuitest"
)

func TestObjectYAMLStripsManagedFields(t *testing.T) {
	rc := tuitest.Fixture().List(watch.RayCluster)[0].(*rayv1.RayCluster).DeepCopy()
	rc.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply}}
	y, err := objectYAML(scheme.New(), rc)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(y, "managedFields") || strings.Contains(y, "kubectl") {
		t.Fatalf("managedFields kept:\n%s", y)
	}
	if !strings.HasPrefix(y, "apiVersion: ray.io/v1\nkind: RayCluster\n") {
		t.Fatalf("no apiVersion/kind:\n%s", y)
	}
	if len(rc.ManagedFields) != 1 || rc.Kind != "" {
		t.Fatal("the original was modified")
	}
}
