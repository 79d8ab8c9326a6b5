package tui

import (
	"context"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/kube/watch"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// TestSandboxViewUserWithoutNodes: a user with only the `view` ClusterRole
// (and read access to ray.io) may not list nodes. (The sandbox runs no
// clusterrole-aggregation controller, so the user is bound to
// system:aggregate-to-view, the rules `view` aggregates.) The TUI's feed then
// does not watch them — it syncs, the header leaves "syncing", objects
// show — and the store says the nodes are not known.
func TestSandboxViewUserWithoutNodes(t *testing.T) {
	s := sandboxFor(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	admin, _ := sandboxFeed(t, ctx, s)
	ns := sandboxNamespace(t, ctx, admin)
	user := "viewer-" + ns
	for _, o := range []client.Object{
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: user + "-ray"}, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{rayv1.GroupName}, Resources: []string{"*"}, Verbs: []string{"get", "list", "watch"}}}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user + "-view"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "system:aggregate-to-view"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user + "-ray"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: user + "-ray"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}},
	} {
		if err := admin.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = admin.Delete(context.Background(), o) })
	}
	cfg := rest.CopyConfig(s.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	sch := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, rayv1.AddToScheme} {
		if err := add(sch); err != nil {
			t.Fatal(err)
		}
	}
	// The authorizer learns of the bindings within moments.
	eventually(t, ctx, "the viewer may list RayClusters, pods and Events", func() (bool, string) {
		c, err := client.New(cfg, client.Options{Scheme: sch})
		if err != nil {
			return false, err.Error()
		}
		for _, l := range []client.ObjectList{&rayv1.RayClusterList{}, &corev1.PodList{}, &corev1.EventList{}} {
			if err := c.List(ctx, l); err != nil {
				return false, err.Error()
			}
		}
		return true, ""
	})
	if ok, why := watch.NodeAccessFor(cfg)(ctx); ok || why != "not allowed to list nodes" {
		t.Fatalf("the viewer's node access: %v %q", ok, why)
	}
	c, err := cache.New(cfg, cache.Options{Scheme: sch})
	if err != nil {
		t.Fatal(err)
	}
	src := watch.NewSource(watch.DefaultWindow)
	src.SetNodeAccess(watch.NodeAccessFor(cfg))
	if err := src.Watch(ctx, c); err != nil {
		t.Fatal(err)
	}
	go func() { _ = c.Start(ctx) }()
	if err := src.WaitSynced(ctx); err != nil {
		t.Fatalf("the viewer's feed never synced: %v", err)
	}
	if src.NodesKnown() || src.NodesUnknownWhy() != "not allowed to list nodes" {
		t.Fatalf("nodes known %v, why %q", src.NodesKnown(), src.NodesUnknownWhy())
	}
	store := watch.NewStore()
	tm, _ := start(t, Options{Store: store, Session: Session{Feed: src, Synced: src.Synced}}, 120, 30)
	rc := &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "seen-by-viewer"}, Spec: testClusterSpec(1)}
	if err := admin.Create(ctx, rc); err != nil {
		t.Fatal(err)
	}
	screen := waitScreen(t, tm, "seen-by-viewer")
	if strings.Contains(screen, "syncing") {
		t.Fatalf("still syncing:\n%s", screen)
	}
	finalScreen(t, tm)
	if _, known := store.Nodes(); known {
		t.Fatal("the store says the nodes are known")
	}
}

// TestSandboxWhyGPUGroupWithoutGPUNode provokes a cause for real: raydar's
// reconciler creates a RayCluster's pods, the scheduler cannot place the
// worker that asks 8 nvidia.com/gpu (the sandbox's one GPU node has 4),
// and the TUI names it, from the pods, their Events and the nodes, in the
// WHY column and in the Why block of the cluster's page.
func TestSandboxWhyGPUGroupWithoutGPUNode(t *testing.T) {
	s := sandboxFor(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cl, src := sandboxFeed(t, ctx, s)
	if !src.NodesKnown() {
		t.Fatalf("admin's feed: nodes not known (%s)", src.NodesUnknownWhy())
	}
	ns := sandboxNamespace(t, ctx, cl)
	startOperator(t, s, ns, nil)
	spec := testClusterSpec(1)
	spec.WorkerGroupSpecs[0].GroupName = "gpu"
	// The head and the workers share testClusterSpec's resource maps.
	w := &spec.WorkerGroupSpecs[0].Template.Spec.Containers[0]
	w.Resources = *w.Resources.DeepCopy()
	w.Resources.Requests["nvidia.com/gpu"] = resource.MustParse("8")
	w.Resources.Limits = corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("8")}
	rc := &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "no-gpu-fits"}, Spec: spec}
	if err := cl.Create(ctx, rc); err != nil {
		t.Fatal(err)
	}
	tm, _ := start(t, Options{Store: watch.NewStore(), Now: time.Now, Session: Session{Namespace: ns, Feed: src, Synced: src.Synced}}, 120, 30)
	waitScreen(t, tm, "1 gpu worker Pending")
	typeKeys(tm, "<enter>")
	screen := waitScreen(t, tm, "Why: 1 gpu worker Pending: asks nvidia.com/gpu 8, the most any node offers is 4")
	mustContain(t, screen, "Insufficient nvidia.com/gpu")
	finalScreen(t, tm)
}

// TestSandboxAutoscalerRefusedByRBAC: the head of a cluster with in-tree
// autoscaling runs as a ServiceAccount whose Role only lets it get pods
// (made before the cluster: the operator makes the autoscaler's Role only
// when it is missing). The TUI asks the API server's authorizer, as
// `raydar why` does (cmd/raydar TestWhyAutoscalerRefusedByRBAC), and the
// cluster's page names both refusals.
func TestSandboxAutoscalerRefusedByRBAC(t *testing.T) {
	s := sandboxFor(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cl, src := sandboxFeed(t, ctx, s)
	ns := sandboxNamespace(t, ctx, cl)
	for _, o := range []client.Object{
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bare"}},
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "refused"},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get"}}}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "refused"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "bare", Namespace: ns}},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "refused"}},
	} {
		if err := cl.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	startOperator(t, s, ns, nil)
	spec := testClusterSpec(0)
	spec.EnableInTreeAutoscaling = ptr.To(true)
	spec.HeadGroupSpec.Template.Spec.ServiceAccountName = "bare"
	if err := cl.Create(ctx, &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "refused"}, Spec: spec}); err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(s.Config)
	if err != nil {
		t.Fatal(err)
	}
	review := func(ctx context.Context, sar *authorizationv1.SubjectAccessReview) (*authorizationv1.SubjectAccessReview, error) {
		return cs.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
	}
	tm, _ := start(t, Options{Store: watch.NewStore(), Now: time.Now,
		Session: Session{Namespace: ns, Feed: src, Synced: src.Synced, Review: review}}, 200, 40)
	waitScreen(t, tm, "refused")
	typeKeys(tm, "<enter>")
	screen := waitScreen(t, tm, "autoscaler refused by RBAC: ServiceAccount bare may not patch rayclusters.ray.io, list pods")
	mustContain(t, screen, "SubjectAccessReview: system:serviceaccount:"+ns+":bare may not patch rayclusters.ray.io")
	finalScreen(t, tm)
}
