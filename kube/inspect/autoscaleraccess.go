package inspect

import (
	"context"
	"fmt"

	authorizationv1 "k8s.io/api/authorization/v1"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/rayapi/why"
)

// What Ray's autoscaler does with the KubeRay provider, as
// SubjectAccessReviews: raydar why asks them (AskAutoscalerAccess), the TUI
// asks them for the clusters on screen (tui/diagnose's Access) and the
// sandbox's simulated autoscaler (kube/sandbox/autoscaler) asks the same,
// so the sandbox refuses to scale exactly when raydar why and the TUI say
// the autoscaler is refused.

// Review asks the API server one SubjectAccessReview (a clientset's
// AuthorizationV1().SubjectAccessReviews().Create).
type Review func(ctx context.Context, sar *authorizationv1.SubjectAccessReview) (*authorizationv1.SubjectAccessReview, error)

// AskAutoscalerAccess asks review whether the ServiceAccount ns/sa may do
// what Ray's autoscaler does for the RayCluster ns/name
// (AutoscalerAccessReviews) and puts the answers in why's words. The first
// review not answered ends it with its error (the user may not create
// SubjectAccessReviews, the API server is away): no answer, never a
// refusal.
func AskAutoscalerAccess(ctx context.Context, review Review, ns, name, sa string) (*why.AutoscalerAccess, error) {
	out := &why.AutoscalerAccess{ServiceAccount: sa}
	for _, sar := range AutoscalerAccessReviews(ns, name, sa) {
		got, err := review(ctx, sar)
		if err != nil {
			return nil, fmt.Errorf("whether ServiceAccount %s/%s may %s (autoscaler): %w", ns, sa, ReviewAction(sar), err)
		}
		if !got.Status.Allowed {
			out.Denied = append(out.Denied, ReviewAction(sar))
		}
	}
	return out, nil
}

// ServiceAccountUser is the user name and the groups the API server gives
// a token of the ServiceAccount ns/sa.
func ServiceAccountUser(ns, sa string) (user string, groups []string) {
	return "system:serviceaccount:" + ns + ":" + sa, []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"}
}

// AutoscalerAccessReviews ask whether the ServiceAccount ns/sa may do what
// Ray's autoscaler does for the RayCluster ns/name: patch the RayCluster,
// list pods.
func AutoscalerAccessReviews(ns, name, sa string) []*authorizationv1.SubjectAccessReview {
	user, groups := ServiceAccountUser(ns, sa)
	var out []*authorizationv1.SubjectAccessReview
	for _, ra := range []authorizationv1.ResourceAttributes{
		{Namespace: ns, Verb: "patch", Group: rayv1.GroupVersion.Group, Resource: rayv1.ResourceRayClusters, Name: name},
		{Namespace: ns, Verb: "list", Resource: "pods"},
	} {
		out = append(out, &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User: user, Groups: groups, ResourceAttributes: &ra}})
	}
	return out
}

// ReviewAction names what a review asks about as why.AutoscalerAccess's
// Denied does: "patch rayclusters.ray.io", "list pods".
func ReviewAction(sar *authorizationv1.SubjectAccessReview) string {
	ra := sar.Spec.ResourceAttributes
	what := ra.Verb + " " + ra.Resource
	if ra.Group != "" {
		what += "." + ra.Group
	}
	return what
}
