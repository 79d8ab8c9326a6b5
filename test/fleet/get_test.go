package fleet

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/test/internal/testobj"
)

// seedClusters creates, in a new namespace of both sandboxes, the
// RayClusters "only-a" in the first, "only-b" in the second and "shared"
// in both, and returns the namespace.
func seedClusters(t *testing.T, ctx context.Context) string {
	t.Helper()
	ns := newNamespace(t, ctx)
	for c, names := range map[client.Client][]string{clientA: {"only-a", "shared"}, clientB: {"only-b", "shared"}} {
		for _, n := range names {
			if err := c.Create(ctx, testobj.Cluster(ns, n, 1)); err != nil {
				t.Fatal(err)
			}
		}
	}
	return ns
}

// rows are the table's lines split into cells, the header first.
func rows(out string) [][]string {
	var rs [][]string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		rs = append(rs, strings.Fields(l))
	}
	return rs
}

// wantRows checks the table's header and, per row, its CONTEXT and NAME.
func wantRows(t *testing.T, r result, want ...string) {
	t.Helper()
	rs := rows(r.stdout)
	if len(rs) == 0 || !slices.Equal(rs[0][:3], []string{"CONTEXT", "NAME", "STATUS"}) {
		t.Fatalf("header of\n%s\nwant CONTEXT NAME STATUS …", r.stdout)
	}
	var got []string
	for _, row := range rs[1:] {
		got = append(got, row[0]+" "+row[1])
	}
	if !slices.Equal(got, want) {
		t.Errorf("rows (context name) %q, want %q; stdout:\n%s\nstderr:\n%s", got, want, r.stdout, r.stderr)
	}
}

// TestGetBothContexts: `raydar get rayclusters --context A,B` lists the
// clusters of both sandboxes, CONTEXT first, the contexts in the order
// given; -o json says each object's context.
func TestGetBothContexts(t *testing.T) {
	ctx := needFleet(t)
	ns := seedClusters(t, ctx)

	r := raydarRun(t, ctx, fleetKubeconfig, "get", "rayclusters", "-n", ns, "--context", contextB+","+contextA)
	if r.exitCode != 0 || r.stderr != "" {
		t.Fatalf("exit %d, stderr:\n%s", r.exitCode, r.stderr)
	}
	wantRows(t, r, contextB+" only-b", contextB+" shared", contextA+" only-a", contextA+" shared")

	r = raydarRun(t, ctx, fleetKubeconfig, "get", "rayclusters", "-n", ns, "--context", contextA+","+contextB, "-o", "json")
	if r.exitCode != 0 {
		t.Fatalf("-o json: exit %d, stderr:\n%s", r.exitCode, r.stderr)
	}
	var list struct {
		Items []struct {
			Context string `json:"context"`
			Object  struct {
				Kind     string `json:"kind"`
				Metadata struct {
					Namespace string `json:"namespace"`
					Name      string `json:"name"`
				} `json:"metadata"`
			} `json:"object"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil {
		t.Fatalf("-o json: %v\n%s", err, r.stdout)
	}
	var got []string
	for _, it := range list.Items {
		got = append(got, it.Context+" "+it.Object.Kind+" "+it.Object.Metadata.Namespace+"/"+it.Object.Metadata.Name)
	}
	want := []string{contextA + " RayCluster " + ns + "/only-a", contextA + " RayCluster " + ns + "/shared",
		contextB + " RayCluster " + ns + "/only-b", contextB + " RayCluster " + ns + "/shared"}
	if !slices.Equal(got, want) {
		t.Errorf("-o json items %q, want %q", got, want)
	}

	// One context is get as it always was: no CONTEXT column.
	r = raydarRun(t, ctx, fleetKubeconfig, "get", "rayclusters", "-n", ns, "--context", contextB)
	if rs := rows(r.stdout); r.exitCode != 0 || len(rs) != 3 || rs[0][0] != "NAME" || rs[1][0] != "only-b" {
		t.Errorf("one context: exit %d\n%s%s", r.exitCode, r.stdout, r.stderr)
	}
}

// TestGetAllContexts: --all-contexts opens every context of the
// kubeconfigs KUBECONFIG=A:B names (in name order), as kubectl merges them.
func TestGetAllContexts(t *testing.T) {
	ctx := needFleet(t)
	ns := seedClusters(t, ctx)
	r := raydarRun(t, ctx, fleetKUBECONFIG, "get", "clusters", "-n", ns, "--all-contexts")
	if r.exitCode != 0 || r.stderr != "" {
		t.Fatalf("exit %d, stderr:\n%s", r.exitCode, r.stderr)
	}
	first, second := contextA, contextB
	if second < first {
		first, second = second, first
	}
	byContext := map[string][]string{contextA: {"only-a", "shared"}, contextB: {"only-b", "shared"}}
	var want []string
	for _, c := range []string{first, second} {
		for _, n := range byContext[c] {
			want = append(want, c+" "+n)
		}
	}
	wantRows(t, r, want...)
}

// TestGetWithAContextDown: a context whose API server is unreachable costs
// only its own rows: the others' are printed, its error is a "context
// NAME: …" line on stderr, and raydar exits 1, as kubectl does with partial
// results.
func TestGetWithAContextDown(t *testing.T) {
	ctx := needFleet(t)
	ns := seedClusters(t, ctx)
	kc := fleetKubeconfig + string(filepath.ListSeparator) + downKubeconfig
	r := raydarRun(t, ctx, kc, "get", "clusters", "-n", ns, "--context", contextA+","+contextDown+","+contextB)
	if r.exitCode != 1 {
		t.Errorf("exit %d, want 1", r.exitCode)
	}
	wantRows(t, r, contextA+" only-a", contextA+" shared", contextB+" only-b", contextB+" shared")
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "context "+contextDown+": ") || !strings.Contains(lines[0], "connection refused") ||
		lines[1] != "error: 1 of 3 contexts could not be listed: "+contextDown {
		t.Errorf("stderr:\n%s\nwant a line \"context %s: … connection refused\" and the error naming it", r.stderr, contextDown)
	}
}

// TestGetWithAContextForbidden: a context whose user may not list
// RayClusters (a ServiceAccount without RBAC, in the kubeconfig the second
// sandbox writes for its token, whose context is that sandbox's name) costs
// only its own rows, as an unreachable one does.
func TestGetWithAContextForbidden(t *testing.T) {
	ctx := needFleet(t)
	ns := seedClusters(t, ctx)
	if err := clientB.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nobody"}}); err != nil {
		t.Fatal(err)
	}
	token, err := fleetB.ServiceAccountToken(ctx, ns, "nobody", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "nobody.kubeconfig")
	if err := fleetB.WriteTokenKubeconfig(path, token, ns); err != nil {
		t.Fatal(err)
	}
	kc, err := clientcmd.LoadFromFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if kc.CurrentContext != contextB || kc.Contexts[contextB] == nil || kc.Clusters[contextB] == nil {
		t.Fatalf("the token kubeconfig's context is %q (contexts %v), want %s", kc.CurrentContext, kc.Contexts, contextB)
	}
	// Beside the admin context of the same sandbox it needs a name of its own.
	const nobody = "nobody-on-b"
	kc.Contexts[nobody], kc.Clusters[nobody] = kc.Contexts[contextB], kc.Clusters[contextB]
	kc.Contexts[nobody].Cluster = nobody
	delete(kc.Contexts, contextB)
	delete(kc.Clusters, contextB)
	kc.CurrentContext = nobody
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}

	r := raydarRun(t, ctx, fleetKubeconfig+string(filepath.ListSeparator)+path, "get", "clusters", "-n", ns, "--context", nobody+","+contextA)
	if r.exitCode != 1 {
		t.Errorf("exit %d, want 1", r.exitCode)
	}
	wantRows(t, r, contextA+" only-a", contextA+" shared")
	if first, _, _ := strings.Cut(r.stderr, "\n"); !strings.HasPrefix(first, "context "+nobody+": ") || !strings.Contains(first, "forbidden") {
		t.Errorf("stderr:\n%s\nwant a first line \"context %s: … forbidden …\"", r.stderr, nobody)
	}
}
