package inspect

import (
	"context"
	"errors"
	"slices"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/raydar/raydar/rayapi/podview"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// The head's ServiceAccount is asked about exactly what Ray's autoscaler
// does; a refused request is named, an unanswered review is a note.
func TestAutoscalerAccess(t *testing.T) {
	on := true
	rc := &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "rc"},
		Spec: rayv1.RayClusterSpec{EnableInTreeAutoscaling: &on}}
	head := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "rc-head",
		Labels: map[string]string{rayv1.RayNodeTypeLabelKey: string(rayv1.HeadNode)}},
		Spec: corev1.PodSpec{ServiceAccountName: "rc"}}
	var asked []string
	review := func(_ context.Context, sar *authorizationv1.SubjectAccessReview) (*authorizationv1.SubjectAccessReview, error) {
		ra := sar.Spec.ResourceAttributes
		asked = append(asked, sar.Spec.User+" "+ra.Verb+" "+ra.Resource+" "+ra.Name)
		sar.Status.Allowed = ra.Resource == "pods"
		return sar, nil
	}
	s := &gathering{g: &Gatherer{Review: review}, ctx: context.Background(), ns: "ns"}
	acc := s.autoscalerAccess(rc, []*podview.Pod{podview.Of(head)})
	if acc == nil || acc.ServiceAccount != "rc" || !slices.Equal(acc.Denied, []string{"patch rayclusters.ray.io"}) {
		t.Fatalf("access %+v", acc)
	}
	if want := []string{"system:serviceaccount:ns:rc patch rayclusters rc", "system:serviceaccount:ns:rc list pods "}; !slices.Equal(asked, want) {
		t.Errorf("asked %q, want %q", asked, want)
	}

	failed := 0
	s = &gathering{g: &Gatherer{Review: func(context.Context, *authorizationv1.SubjectAccessReview) (*authorizationv1.SubjectAccessReview, error) {
		failed++
		return nil, errors.New(`subjectaccessreviews.authorization.k8s.io is forbidden`)
	}}, ctx: context.Background(), ns: "ns"}
	if acc := s.autoscalerAccess(rc, []*podview.Pod{podview.Of(head)}); acc != nil || len(s.notes) != 1 {
		t.Errorf("unanswered: access %+v, notes %q", acc, s.notes)
	}
	// A second cluster of the same gathering (a RayService's pending one)
	// is not asked again: one failed review, one note.
	if acc := s.autoscalerAccess(rc, []*podview.Pod{podview.Of(head)}); acc != nil || len(s.notes) != 1 || failed != 1 {
		t.Errorf("unanswered twice: access %+v, notes %q, %d reviews", acc, s.notes, failed)
	}
	on = false
	if acc := s.autoscalerAccess(rc, []*podview.Pod{podview.Of(head)}); acc != nil {
		t.Errorf("autoscaling off: %+v", acc)
	}
}
