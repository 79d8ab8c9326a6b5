package actions

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/raydar/raydar/kube/portforward"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/tui/host"
)

// TestForwardTarget: what shift-f forwards to from each kind of row.
func TestForwardTarget(t *testing.T) {
	rc := &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "c"}}
	head := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "c-head-x", Labels: map[string]string{
		rayv1.RayClusterLabelKey: "c", rayv1.RayNodeTypeLabelKey: string(rayv1.HeadNode)}}}
	worker := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "c-cpu-1", Labels: map[string]string{
		rayv1.RayClusterLabelKey: "c", rayv1.RayNodeTypeLabelKey: string(rayv1.WorkerNode)}}}
	for _, c := range []struct {
		name string
		tg   host.Target
		want portforward.Spec
	}{
		{"cluster row", host.Target{Selected: rc}, portforward.Spec{Namespace: "ml", Cluster: "c"}},
		{"cluster detail, group row", host.Target{Owner: rc}, portforward.Spec{Namespace: "ml", Cluster: "c"}},
		{"head pod row follows the cluster's head", host.Target{Selected: head, Owner: rc}, portforward.Spec{Namespace: "ml", Cluster: "c"}},
		{"worker pod row", host.Target{Selected: worker}, portforward.Spec{Namespace: "ml", Pod: "c-cpu-1"}},
	} {
		got, _, err := forwardTarget(c.tg)
		if err != nil || got.Namespace != c.want.Namespace || got.Cluster != c.want.Cluster || got.Pod != c.want.Pod {
			t.Errorf("%s: %+v, %v; want %+v", c.name, got, err, c.want)
		}
	}
	if _, _, err := forwardTarget(host.Target{}); err == nil {
		t.Error("nothing selected: no error")
	}
}
