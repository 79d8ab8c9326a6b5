package headsim

import (
	"context"
	"net/http"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// Kubernetes token auth (authOptions.enableK8sTokenAuth, Ray >= 2.55): a real
// Ray head asks the API server about every caller's bearer token, with its
// pod's ServiceAccount: a TokenReview (who is it?), then a
// SubjectAccessReview (may that identity use the verb ray:write on
// rayclusters/<cluster> of group ray.io in the cluster's namespace?). The
// simulated head asks the sandbox's API server the same two questions, so a
// caller without a Kubernetes token, with an invalid one or without
// ray:write is refused as by Ray (401, 401, 403).

// rayWriteVerb is the custom verb Ray's Kubernetes token auth checks.
const rayWriteVerb = "ray:write"

// reviewTimeout bounds the two reviews of one call.
const reviewTimeout = 10 * time.Second

// k8sTokenAuthorizer is the rayhead.Options.Authorize of rc's head.
func (s *Sim) k8sTokenAuthorizer(rc *rayv1.RayCluster) func(ctx context.Context, token string) int {
	ns, name := rc.Namespace, rc.Name
	return func(ctx context.Context, token string) int {
		ctx, cancel := context.WithTimeout(ctx, reviewTimeout)
		defer cancel()
		tr, err := s.cs.AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{
			Spec: authenticationv1.TokenReviewSpec{Token: token},
		}, metav1.CreateOptions{})
		if err != nil {
			s.opts.Logf("headsim: %s/%s: TokenReview: %v", ns, name, err)
			return http.StatusServiceUnavailable
		}
		if !tr.Status.Authenticated {
			return http.StatusUnauthorized
		}
		u := tr.Status.User
		extra := map[string]authorizationv1.ExtraValue{}
		for k, v := range u.Extra {
			extra[k] = authorizationv1.ExtraValue(v)
		}
		sar, err := s.cs.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
			Spec: authorizationv1.SubjectAccessReviewSpec{
				User: u.Username, Groups: u.Groups, UID: u.UID, Extra: extra,
				ResourceAttributes: &authorizationv1.ResourceAttributes{
					Namespace: ns, Verb: rayWriteVerb, Group: rayv1.GroupVersion.Group, Resource: "rayclusters", Name: name,
				},
			},
		}, metav1.CreateOptions{})
		if err != nil {
			s.opts.Logf("headsim: %s/%s: SubjectAccessReview: %v", ns, name, err)
			return http.StatusServiceUnavailable
		}
		if !sar.Status.Allowed {
			return http.StatusForbidden
		}
		return 0
	}
}
