package fleet

import (
	"encoding/json"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// TestScaleReachesOnlyItsContext: both sandboxes have RayCluster
// NS/shared; `raydar scale shared small --replicas 3 --context B` changes
// the second's and leaves the first's untouched (not even rewritten).
func TestScaleReachesOnlyItsContext(t *testing.T) {
	ctx := needFleet(t)
	ns := seedClusters(t, ctx)
	key := client.ObjectKey{Namespace: ns, Name: "shared"}
	var beforeA rayv1.RayCluster
	if err := clientA.Get(ctx, key, &beforeA); err != nil {
		t.Fatal(err)
	}

	r := raydarRun(t, ctx, fleetKubeconfig, "scale", "shared", "small", "--replicas", "3", "--yes", "-n", ns, "--context", contextB, "-o", "json")
	if r.exitCode != 0 {
		t.Fatalf("scale: exit %d\n%s%s", r.exitCode, r.stdout, r.stderr)
	}
	var res struct {
		Context string `json:"context"`
		Outcome string `json:"outcome"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil || res.Context != contextB || res.Outcome != "applied" {
		t.Errorf("scale's result %+v (%v), want applied in context %s:\n%s", res, err, contextB, r.stdout)
	}
	var a, b rayv1.RayCluster
	if err := clientB.Get(ctx, key, &b); err != nil {
		t.Fatal(err)
	}
	if err := clientA.Get(ctx, key, &a); err != nil {
		t.Fatal(err)
	}
	if got := *b.Spec.WorkerGroupSpecs[0].Replicas; got != 3 {
		t.Errorf("%s's %s: replicas %d, want 3", contextB, key, got)
	}
	if got := *a.Spec.WorkerGroupSpecs[0].Replicas; got != 1 || a.ResourceVersion != beforeA.ResourceVersion {
		t.Errorf("%s's %s: replicas %d, resourceVersion %s → %s; want it untouched", contextA, key, got, beforeA.ResourceVersion, a.ResourceVersion)
	}

	// A list is refused before anything is written anywhere.
	r = raydarRun(t, ctx, fleetKubeconfig, "scale", "shared", "small", "--replicas", "5", "--yes", "-n", ns, "--context", contextA+","+contextB)
	if r.exitCode == 0 || !strings.Contains(r.stderr, "this command acts on one context") {
		t.Errorf("scale with a list of contexts: exit %d\n%s", r.exitCode, r.stderr)
	}
	for c, want := range map[client.Client]int32{clientA: 1, clientB: 3} {
		var rc rayv1.RayCluster
		if err := c.Get(ctx, key, &rc); err != nil {
			t.Fatal(err)
		}
		if got := *rc.Spec.WorkerGroupSpecs[0].Replicas; got != want {
			t.Errorf("after the refused scale: replicas %d, want %d", got, want)
		}
	}
}
