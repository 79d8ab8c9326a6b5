package podforward

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

type book map[string][2]string // cluster -> dashboard, serve

func (b book) DashboardURL(_, c string) (string, bool)  { e, ok := b[c]; return e[0], ok && e[0] != "" }
func (b book) ServeProxyURL(_, c string) (string, bool) { e, ok := b[c]; return e[1], ok && e[1] != "" }

func headPod(cluster string, phase corev1.PodPhase, ready bool) *corev1.Pod {
	st := corev1.ConditionFalse
	if ready {
		st = corev1.ConditionTrue
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: cluster + "-head", Namespace: "ns", Labels: map[string]string{
			rayv1.RayClusterLabelKey: cluster, rayv1.RayNodeTypeLabelKey: string(rayv1.HeadNode)}},
		Status: corev1.PodStatus{Phase: phase, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: st}}},
	}
}

func fwd(port, target int64) map[string]any {
	return map[string]any{"ports": []any{port}, "target": map[string]any{"address": "127.0.0.1", "port": target}}
}

func TestDesired(t *testing.T) {
	heads := book{"c": {"http://127.0.0.1:41000", "http://127.0.0.1:42000"}, "dash-only": {"http://127.0.0.1:41001", ""}}
	for _, c := range []struct {
		name string
		pod  *corev1.Pod
		want map[string]any
	}{
		{"ready head", headPod("c", corev1.PodRunning, true),
			map[string]any{"forwards": []any{fwd(DashboardPort, 41000), fwd(ServePort, 42000)}}},
		{"no serve proxy", headPod("dash-only", corev1.PodRunning, true),
			map[string]any{"forwards": []any{fwd(DashboardPort, 41001)}}},
		{"not ready", headPod("c", corev1.PodRunning, false), nil},
		{"pending", headPod("c", corev1.PodPending, false), nil},
		{"no simulated head yet", headPod("other", corev1.PodRunning, true), nil},
	} {
		got, ok := Desired(c.pod, heads)
		if ok != (c.want != nil) || !cmp.Equal(got, c.want) {
			t.Errorf("%s: %v %v, want %v", c.name, got, ok, c.want)
		}
	}
	worker := headPod("c", corev1.PodRunning, true)
	worker.Labels[rayv1.RayNodeTypeLabelKey] = string(rayv1.WorkerNode)
	if _, ok := Desired(worker, heads); ok {
		t.Error("a worker pod got a forward")
	}
}
