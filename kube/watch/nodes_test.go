package watch

import (
	"context"
	"strings"
	"testing"

	authv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache/informertest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/rayapi/scheme"
)

// noNodeInformer fails the test if the bridge asks for a Node informer.
type noNodeInformer struct {
	*informertest.FakeInformers
	t *testing.T
}

func (c noNodeInformer) GetInformer(ctx context.Context, obj client.Object, opts ...cache.InformerGetOption) (cache.Informer, error) {
	if _, ok := obj.(*corev1.Node); ok {
		c.t.Error("a Node informer was started although nodes may not be listed")
	}
	return c.FakeInformers.GetInformer(ctx, obj, opts...)
}

// TestWatchWithoutNodeAccess: a user who may not list nodes (only the
// `view` ClusterRole) gets everything else watched and synced; the nodes
// are not known, with the reason, and no Node informer is started (it
// would never sync).
func TestWatchWithoutNodeAccess(t *testing.T) {
	c := noNodeInformer{&informertest.FakeInformers{Scheme: scheme.New()}, t}
	s := NewSource(0)
	s.SetNodeAccess(func(context.Context) (bool, string) { return false, "not allowed to list nodes" })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := s.Watch(ctx, c); err != nil {
		t.Fatal(err)
	}
	if err := s.WaitSynced(ctx); err != nil {
		t.Fatal(err)
	}
	if s.NodesKnown() || s.NodesUnknownWhy() != "not allowed to list nodes" {
		t.Fatalf("NodesKnown %v, why %q", s.NodesKnown(), s.NodesUnknownWhy())
	}
	inf, err := c.FakeInformerFor(ctx, cluster("c"))
	if err != nil {
		t.Fatal(err)
	}
	inf.Add(cluster("c"))
	b, err := s.Next(ctx)
	if err != nil || len(b) != 1 || b[0].Kind != RayCluster {
		t.Fatalf("batch %+v, %v; want the RayCluster", b, err)
	}
	st := NewStore()
	st.Apply(b)
	st.SetNodesKnown(s.NodesKnown())
	if nodes, known := st.Nodes(); known || len(nodes) != 0 {
		t.Fatalf("store nodes %v known %v", nodes, known)
	}
	// Without SetNodeAccess nodes are not watched either.
	plain := NewSource(0)
	if err := plain.Watch(ctx, noNodeInformer{&informertest.FakeInformers{Scheme: scheme.New()}, t}); err != nil {
		t.Fatal(err)
	}
	if plain.NodesKnown() || plain.NodesUnknownWhy() != "nodes not watched" {
		t.Fatalf("no access given: known %v, why %q", plain.NodesKnown(), plain.NodesUnknownWhy())
	}
}

func TestNodeAccessReview(t *testing.T) {
	for _, c := range []struct {
		allowed map[string]bool
		ok      bool
		why     string
	}{
		{map[string]bool{"list": true, "watch": true}, true, ""},
		{map[string]bool{"list": true}, false, "not allowed to watch nodes"},
		{nil, false, "not allowed to list nodes"},
	} {
		cs := fake.NewClientset()
		cs.PrependReactor("create", "selfsubjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
			r := a.(k8stesting.CreateAction).GetObject().(*authv1.SelfSubjectAccessReview)
			ra := r.Spec.ResourceAttributes
			if ra.Resource != "nodes" || ra.Group != "" {
				t.Errorf("review of %+v", ra)
			}
			r.Status.Allowed = c.allowed[ra.Verb]
			return true, r, nil
		})
		ok, why := NodeAccessReview(cs)(context.Background())
		if ok != c.ok || why != c.why {
			t.Errorf("allowed %v: got %v %q, want %v %q", c.allowed, ok, why, c.ok, c.why)
		}
	}
	cs := fake.NewClientset()
	cs.PrependReactor("create", "selfsubjectaccessreviews", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, &metav1StatusErr{}
	})
	if ok, why := NodeAccessReview(cs)(context.Background()); ok || !strings.Contains(why, "cannot tell") {
		t.Errorf("review error: %v %q", ok, why)
	}
}

type metav1StatusErr struct{}

func (*metav1StatusErr) Error() string { return "connection refused" }
