package diagnose

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
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

// autoscaled is a RayCluster ns/name with enableInTreeAutoscaling (UID
// name-uid) and its scheduled head, running as ServiceAccount sa with its
// autoscaler sidecar running.
func autoscaled(name, sa string) (*rayv1.RayCluster, *corev1.Pod) {
	rc := &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID(name + "-uid")},
		Spec: rayv1.RayClusterSpec{EnableInTreeAutoscaling: ptr.To(true)}}
	head := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name + "-head", UID: types.UID(name + "-head-uid"),
		Labels: map[string]string{rayv1.RayClusterLabelKey: name, rayv1.RayNodeTypeLabelKey: string(rayv1.HeadNode)}},
		Spec: corev1.PodSpec{ServiceAccountName: sa, NodeName: "n1",
			Containers: []corev1.Container{{Name: "ray-head"}, {Name: rayv1.AutoscalerContainerName}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{
			{Name: rayv1.AutoscalerContainerName, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}}}
	return rc, head
}

// forbiddenOf is the summary of the object's AutoscalerForbidden cause
// ("": none).
func forbiddenOf(d *Diagnoses, uid types.UID) string {
	for _, c := range d.Get(uid) {
		if c.Code == why.CodeAutoscalerForbidden {
			return c.Summary
		}
	}
	return ""
}

// The answer is about the ServiceAccount asked: when the head runs as
// another one, the refusal goes and that one is asked at once; an answer
// is asked again after AccessEvery, not before; an answer of an earlier
// session is dropped.
func TestAccessFollowsServiceAccount(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	rc, head := autoscaled("rc", "a")
	st := watch.NewStore()
	st.Add(rc, head)
	asked := 0
	d := NewDiagnoses(st, clock, "leader", nil)
	d.SetReview(context.Background(), func(_ context.Context, sar *authorizationv1.SubjectAccessReview) (*authorizationv1.SubjectAccessReview, error) {
		asked++
		sar.Status.Allowed = sar.Spec.User != "system:serviceaccount:ns:a" // a may do nothing, b everything
		return sar, nil
	})
	forbidden := func() string { return forbiddenOf(d, "rc-uid") }

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

// A 403 on creating a review (the user may not) drops the answers known
// (they can no longer be kept up to date) and stops asking about any
// cluster for AccessRefusedFor.
func TestAccessRefusedToTheUser(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	one, head1 := autoscaled("one", "a")
	two, head2 := autoscaled("two", "a")
	three, head3 := autoscaled("three", "a")
	st := watch.NewStore()
	st.Add(one, head1, two, head2, three, head3)
	d := NewDiagnoses(st, func() time.Time { return now }, "leader", nil)
	refuse, asked := false, 0
	d.SetReview(context.Background(), func(_ context.Context, sar *authorizationv1.SubjectAccessReview) (*authorizationv1.SubjectAccessReview, error) {
		asked++
		if refuse {
			return nil, apierrors.NewForbidden(schema.GroupResource{Group: "authorization.k8s.io", Resource: "subjectaccessreviews"}, "",
				errors.New("User \"alice\" cannot create resource"))
		}
		return sar, nil // nothing allowed
	})
	run(t, d, d.PollAccess([]*rayv1.RayCluster{one}))
	if forbiddenOf(d, "one-uid") == "" {
		t.Fatal("one: no refusal")
	}
	refuse = true
	run(t, d, d.PollAccess([]*rayv1.RayCluster{two}))
	if got := forbiddenOf(d, "one-uid"); got != "" {
		t.Errorf("one still refused after the user was refused reviews: %q", got)
	}
	if d.PollAccess([]*rayv1.RayCluster{three}) != nil || asked != 3 {
		t.Errorf("asked again after a 403 (%d reviews)", asked)
	}
	now = now.Add(AccessRefusedFor)
	refuse = false
	run(t, d, d.PollAccess([]*rayv1.RayCluster{three}))
	if forbiddenOf(d, "three-uid") == "" {
		t.Error("not asked again after AccessRefusedFor")
	}
}
