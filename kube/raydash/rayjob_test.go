package raydash

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrlfake "sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/raydar/raydar/rayapi/scheme"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

type bookFunc func(ns, name string) (string, bool)

func (f bookFunc) DashboardURL(ns, name string) (string, bool) { return f(ns, name) }

func TestClientForRayJob(t *testing.T) {
	job := func(name, cluster string, selector map[string]string) *rayv1.RayJob {
		j := &rayv1.RayJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
		j.Status.RayClusterName = cluster
		j.Spec.ClusterSelector = selector
		return j
	}
	c := ctrlfake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(
		job("running", "rc-a", nil),
		job("selector", "", map[string]string{rayv1.RayClusterLabelKey: "shared"}),
		job("new", "", nil),
		job("orphan", "rc-gone", nil),
		&rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "rc-a"}},
		&rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "shared"}},
	).Build()
	var asked []string
	res, err := New(Options{AddressBook: bookFunc(func(ns, name string) (string, bool) {
		asked = append(asked, ns+"/"+name)
		return "http://127.0.0.1:1", true
	})})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	for name, want := range map[string]string{"running": "ns/rc-a", "selector": "ns/shared"} {
		asked = nil
		dc, j, err := ClientForRayJob(ctx, c, res, "ns", name)
		if err != nil || dc == nil || j.Name != name {
			t.Fatalf("%s: client %v job %v err %v", name, dc, j, err)
		}
		if len(asked) != 1 || asked[0] != want {
			t.Fatalf("%s: dashboard looked up for %v, want %s", name, asked, want)
		}
	}
	if _, _, err := ClientForRayJob(ctx, c, res, "ns", "new"); err == nil || !strings.Contains(err.Error(), "has no RayCluster yet") {
		t.Fatalf("job without a cluster: %v", err)
	}
	if _, _, err := ClientForRayJob(ctx, c, res, "ns", "orphan"); err == nil || !strings.Contains(err.Error(), "RayCluster rc-gone of RayJob ns/orphan is gone") {
		t.Fatalf("job whose cluster is gone: %v", err)
	}
	if _, _, err := ClientForRayJob(ctx, c, res, "ns", "missing"); !apierrors.IsNotFound(err) {
		t.Fatalf("missing RayJob: %v", err)
	}
}
