package diagnose

import (
	"context"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/raydar/raydar/kube/watch"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/rayapi/why"
)

// run runs a PollAccess command (one cluster's or a batch) and hands its
// answers to d, as the App does.
func run(t *testing.T, d *Diagnoses, cmd tea.Cmd) {
	t.Helper()
	if cmd == nil {
		t.Fatal("nothing asked")
	}
	switch m := cmd().(type) {
	case tea.BatchMsg:
		for _, c := range m {
			run(t, d, c)
		}
	case AccessMsg:
		d.ReceiveAccess(m)
	default:
		t.Fatalf("message %T", m)
	}
}

// The answer is about the ServiceAccount asked: when the head runs as
// another one, the refusal goes and that one is asked at once; an answer
// is asked again after AccessEvery, not before; an answer of an earlier
// session is dropped.
func TestAccessFollowsServiceAccount(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	rc := &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "rc", UID: "rc-uid"},
		Spec: rayv1.RayClusterSpec{EnableInTreeAutoscaling: ptr.To(true)}}
	head := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "rc-head", UID: "head-uid",
		Labels: map[string]string{rayv1.RayClusterLabelKey: "rc", rayv1.RayNodeTypeLabelKey: string(rayv1.HeadNode)}},
		Spec: corev1.PodSpec{ServiceAccountName: "a", NodeName: "n1",
			Containers: []corev1.Container{{Name: "ray-head"}, {Name: rayv1.AutoscalerContainerName}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{
			{Name: rayv1.AutoscalerContainerName, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}}}
	st := watch.NewStore()
	st.Add(rc, head)
	asked := 0
	d := NewDiagnoses(st, clock, "leader", nil)
	d.SetReview(context.Background(), func(_ context.Context, sar *authorizationv1.SubjectAccessReview) (*authorizationv1.SubjectAccessReview, error) {
		asked++
		sar.Status.Allowed = sar.Spec.User != "system:serviceaccount:ns:a" // a may do nothing, b everything
		return sar, nil
	})
	forbidden := func() string {
		for _, c := range d.Get("rc-uid") {
			if c.Code == why.CodeAutoscalerForbidden {
				return c.Summary
			}
		}
		return ""
	}

	run(t, d, d.PollAccess([]*rayv1.RayCluster{rc}))
	if got := forbidden(); !strings.Contains(got, "ServiceAccount a may not patch rayclusters.ray.io, list pods") || asked != 2 {
		t.Fatalf("after the answer: %q, %d reviews", got, asked)
	}
	if d.PollAccess([]*rayv1.RayCluster{rc}) != nil {
		t.Fatal("asked again before AccessEvery")
	}

	moved := head.DeepCopy()
	moved.Spec.ServiceAccountName = "b"
	ch := st.Add(moved)
	d.Update(&ch)
	if got := forbidden(); got != "" {
		t.Fatalf("the answer about a is applied to b: %q", got)
	}
	run(t, d, d.PollAccess([]*rayv1.RayCluster{rc}))
	if got := forbidden(); got != "" || asked != 4 {
		t.Fatalf("b asked: %q, %d reviews", got, asked)
	}

	now = now.Add(AccessEvery - time.Second)
	if d.PollAccess([]*rayv1.RayCluster{rc}) != nil {
		t.Fatal("asked again before AccessEvery")
	}
	now = now.Add(time.Second)
	cmd := d.PollAccess([]*rayv1.RayCluster{rc})
	if cmd == nil {
		t.Fatal("not asked again after AccessEvery")
	}
	// The session changed meanwhile: its answer is not the new session's.
	other := NewDiagnoses(st, clock, "leader", nil)
	other.SetReview(context.Background(), func(context.Context, *authorizationv1.SubjectAccessReview) (*authorizationv1.SubjectAccessReview, error) {
		t.Fatal("the new session asked")
		return nil, nil
	})
	run(t, other, cmd)
	if other.access.byUID["rc-uid"] != nil {
		t.Fatal("an earlier session's answer was taken")
	}
}
