package watch

import (
	"context"
	"fmt"
	"time"

	authv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// NodeAccess reports whether the user may list and watch nodes, and if
// not, why (in words). Nodes are cluster-scoped: a user with only the
// `view` ClusterRole may not, and watching them anyway would leave an
// informer that never syncs (and the header "syncing" for ever).
type NodeAccess func(ctx context.Context) (ok bool, why string)

// SetNodeAccess makes Watch watch nodes when access allows it (call it
// before Watch). Without it nodes are not watched and NodesKnown is false.
func (s *Source) SetNodeAccess(access NodeAccess) {
	s.mu.Lock()
	s.nodeAccess = access
	s.mu.Unlock()
}

func (s *Source) mayWatchNodes(ctx context.Context) bool {
	s.mu.Lock()
	access := s.nodeAccess
	s.mu.Unlock()
	ok, why := false, "nodes not watched"
	if access != nil {
		ok, why = access(ctx)
	}
	s.mu.Lock()
	s.nodesWhy = why
	s.mu.Unlock()
	return ok
}

// NodesKnown reports whether the store's nodes are the cluster's: nodes
// are watched and their informer has delivered its initial list. When
// false, NodesUnknownWhy says why.
func (s *Source) NodesKnown() bool {
	s.mu.Lock()
	reg := s.nodeReg
	s.mu.Unlock()
	return reg != nil && reg.HasSynced()
}

// NodesUnknownWhy says why nodes are not known ("" once they are watched).
func (s *Source) NodesUnknownWhy() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.nodeReg != nil {
		return ""
	}
	return s.nodesWhy
}

// NodeAccessReview asks the API server (SelfSubjectAccessReview) whether
// the user may list and watch nodes.
func NodeAccessReview(cs kubernetes.Interface) NodeAccess {
	return func(ctx context.Context) (bool, string) {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		for _, verb := range []string{"list", "watch"} {
			r, err := cs.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authv1.SelfSubjectAccessReview{
				Spec: authv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authv1.ResourceAttributes{Verb: verb, Resource: "nodes"}},
			}, metav1.CreateOptions{})
			if err != nil {
				return false, fmt.Sprintf("cannot tell whether nodes may be read: %v", err)
			}
			if !r.Status.Allowed {
				return false, "not allowed to " + verb + " nodes"
			}
		}
		return true, ""
	}
}

// NodeAccessFor is NodeAccessReview on a rest.Config; a config that gives
// no client says nodes are not known.
func NodeAccessFor(cfg *rest.Config) NodeAccess {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return func(context.Context) (bool, string) { return false, "nodes: " + err.Error() }
	}
	return NodeAccessReview(cs)
}
