package main

import (
	"encoding/json"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/rayapi/why"
)

// TestWhyIncrementalUpgradeGateway: raydar why on a RayService with
// NewClusterWithIncrementalUpgrade reads its Gateway API objects from a
// real API server: one that does not serve the Gateway API is said as
// such (GatewayAPIMissing), not as a failed read; one that does, without
// the class asked for, names the missing GatewayClass.
func TestWhyIncrementalUpgradeGateway(t *testing.T) {
	ctx := needSandbox(t)
	ns := newNamespace(t, ctx)
	svc := testService(ns, "inc")
	svc.Spec.RayClusterSpec.EnableInTreeAutoscaling = ptr.To(true)
	svc.Spec.UpgradeStrategy = &rayv1.RayServiceUpgradeStrategy{Type: ptr.To(rayv1.NewClusterWithIncrementalUpgrade),
		ClusterUpgradeOptions: &rayv1.ClusterUpgradeOptions{StepSizePercent: ptr.To(int32(10)), IntervalSeconds: ptr.To(int32(30)),
			GatewayClassName: "no-such-class"}}
	create(t, ctx, svc)

	want := why.CodeGatewayClassMissing
	_, err := cl.RESTMapper().RESTMapping(schema.GroupKind{Group: "gateway.networking.k8s.io", Kind: "GatewayClass"}, "v1")
	if meta.IsNoMatchError(err) {
		want = why.CodeGatewayAPIMissing
	} else if err != nil {
		t.Fatal(err)
	}
	r := raydar(t, "", "why", "service", "inc", "-n", ns, "-o", "json")
	if r.err != nil {
		t.Fatalf("raydar why: %v\n%s", r.err, r.stderr)
	}
	var got whyOutput
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, r.stdout)
	}
	found := false
	for _, c := range got.Causes {
		found = found || c.Code == want
	}
	if !found {
		t.Fatalf("no %s cause:\n%s\n%s", want, r.stdout, r.stderr)
	}
	human := raydar(t, "", "why", "service", "inc", "-n", ns)
	t.Logf("raydar why service inc (%s):\n%s%s", want, human.stdout, human.stderr)
	if strings.Contains(human.stdout+human.stderr, "Gateway API objects:") {
		t.Errorf("the read failed into a note:\n%s%s", human.stdout, human.stderr)
	}
}
