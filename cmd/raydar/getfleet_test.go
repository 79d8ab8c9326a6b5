package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crfake "sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/raydar/raydar/rayapi/scheme"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// fleetOf is what fetchContexts gives for contexts whose API servers hold
// objs (by context; an error instead for those in failing), each listed
// in namespace ns ("" for all) by get's own fetch.
func fleetOf(t *testing.T, res, ns string, contexts []string, objs map[string][]client.Object, failing map[string]error) []contextResult {
	t.Helper()
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	return fetchContexts(context.Background(), contexts, time.Minute, func(ctx context.Context, i int) (*getter, []client.Object, error) {
		name := contexts[i]
		if err := failing[name]; err != nil {
			return nil, nil, err
		}
		c := crfake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(objs[name]...).Build()
		g := &getter{c: c, ns: ns, now: now}
		got, err := g.fetch(ctx, res)
		return g, got, err
	})
}

func clusterAt(ns, name string, created time.Time) *rayv1.RayCluster {
	rc := testCluster(ns, name)
	rc.CreationTimestamp = metav1.NewTime(created)
	return rc
}

// TestFleetTable: with several contexts the table's first column is
// CONTEXT; rows come by context in the order given (not by name), then in
// get's order within a context; a context that failed has no rows and its
// error is a "context NAME: …" line on stderr, with an error naming it.
func TestFleetTable(t *testing.T) {
	created := time.Date(2026, 12, 2, 11, 0, 0, 0, time.UTC)
	objs := map[string][]client.Object{
		"prod": {clusterAt("team-a", "zeta", created), clusterAt("team-a", "alpha", created)},
		"dev":  {clusterAt("team-b", "mid", created)},
	}
	results := fleetOf(t, getClusters, "", []string{"prod", "down", "dev"}, objs,
		map[string]error{"down": errors.New(`Get "https://127.0.0.1:1/apis": connection refused`)})
	var out, errOut bytes.Buffer
	if err := writeFleetTable(&out, &errOut, getClusters, results); err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		{"CONTEXT", "NAMESPACE", "NAME", "STATUS", "WORKERS", "GROUPS", "AGE"},
		{"prod", "team-a", "alpha"},
		{"prod", "team-a", "zeta"},
		{"dev", "team-b", "mid"},
	}
	rows := columns(out.String())
	if len(rows) != len(want) {
		t.Fatalf("table:\n%s", out.String())
	}
	for i, w := range want {
		if strings.Join(rows[i][:len(w)], " ") != strings.Join(w, " ") {
			t.Errorf("row %d %q, want it to start %q\n%s", i, rows[i], w, out.String())
		}
	}
	err := fleetErrors(&errOut, results)
	if err == nil || err.Error() != "1 of 3 contexts could not be listed: down" {
		t.Errorf("error %v", err)
	}
	if errOut.String() != "context down: Get \"https://127.0.0.1:1/apis\": connection refused\n" {
		t.Errorf("stderr %q", errOut.String())
	}
}

// TestFleetTableEmpty: no row in any context that answered says where
// nothing was found, on stderr, and prints no table.
func TestFleetTableEmpty(t *testing.T) {
	results := fleetOf(t, getJobs, "ns", []string{"a", "b"}, nil, nil)
	var out, errOut bytes.Buffer
	if err := writeFleetTable(&out, &errOut, getJobs, results); err != nil {
		t.Fatal(err)
	}
	if out.Len() != 0 || errOut.String() != "No jobs found in namespace ns of context a, namespace ns of context b.\n" {
		t.Errorf("stdout %q stderr %q", out.String(), errOut.String())
	}
	if err := fleetErrors(&errOut, results); err != nil {
		t.Errorf("every context answered: %v", err)
	}
}

// TestFleetJSON: -o json over several contexts is {"items": [{context,
// object}]}, in the table's order, each object whole with its apiVersion
// and kind; a failed context adds no item.
func TestFleetJSON(t *testing.T) {
	created := time.Date(2026, 12, 2, 11, 0, 0, 0, time.UTC)
	objs := map[string][]client.Object{
		"b": {clusterAt("ns", "rc", created)},
		"a": {clusterAt("ns", "rc", created), clusterAt("ns", "other", created)},
	}
	results := fleetOf(t, getClusters, "ns", []string{"b", "a", "c"}, objs, map[string]error{"c": errors.New("forbidden")})
	var out bytes.Buffer
	if err := writeFleetObjects(&out, outputJSON, results); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Items []struct {
			Context string `json:"context"`
			Object  struct {
				APIVersion string            `json:"apiVersion"`
				Kind       string            `json:"kind"`
				Metadata   metav1.ObjectMeta `json:"metadata"`
			} `json:"object"`
		} `json:"items"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	var seen []string
	for _, it := range got.Items {
		if it.Object.APIVersion != "ray.io/v1" || it.Object.Kind != "RayCluster" {
			t.Errorf("item %+v: no apiVersion/kind", it)
		}
		seen = append(seen, it.Context+"/"+it.Object.Metadata.Name)
	}
	if strings.Join(seen, " ") != "b/rc a/other a/rc" {
		t.Errorf("items %q\n%s", seen, out.String())
	}
	var keys map[string]json.RawMessage
	_ = json.Unmarshal(out.Bytes(), &keys)
	if len(keys) != 1 {
		t.Errorf("top-level keys of %s: want items only", out.String())
	}
}

// TestFetchContextsEachOnItsOwnTimeout: a context that never answers ends
// at its own timeout, saying so, while the others' results are kept, in the
// contexts' order whatever order they finished in.
func TestFetchContextsEachOnItsOwnTimeout(t *testing.T) {
	order := make(chan int, 3)
	results := fetchContexts(context.Background(), []string{"slow", "fast", "hung"}, 200*time.Millisecond,
		func(ctx context.Context, i int) (*getter, []client.Object, error) {
			switch i {
			case 0: // answers after the fast one
				<-order
			case 2: // never answers
				<-ctx.Done()
				return nil, nil, ctx.Err()
			}
			order <- i
			return &getter{}, nil, nil
		})
	if results[0].context != "slow" || results[1].context != "fast" || results[2].context != "hung" {
		t.Errorf("results out of order: %+v", results)
	}
	if results[0].err != nil || results[1].err != nil {
		t.Errorf("answering contexts failed: %v, %v", results[0].err, results[1].err)
	}
	if err := results[2].err; err == nil || !strings.Contains(err.Error(), "no answer within 200ms") {
		t.Errorf("hung context: %v", err)
	}
}

// TestFleetTableEveryKind: every word of get, cronjobs (getcronjobs.go)
// and the Ray pods among them, has the CONTEXT column first over several
// contexts, then the columns the one-context table has.
func TestFleetTableEveryKind(t *testing.T) {
	const ns = "ns"
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "rc-head",
		Labels: map[string]string{rayv1.RayNodeTypeLabelKey: string(rayv1.HeadNode), rayv1.RayClusterLabelKey: "rc"}}}
	objs := []client.Object{testCluster(ns, "rc"), testJob(ns, "job", true), testService(ns, "svc"), testCronJob(ns, "cron", "* * * * *"), pod}
	for _, res := range getWords() {
		t.Run(res, func(t *testing.T) {
			results := fleetOf(t, res, ns, []string{"a", "b"}, map[string][]client.Object{"a": objs, "b": objs}, nil)
			var out, errOut bytes.Buffer
			if err := writeFleetTable(&out, &errOut, res, results); err != nil {
				t.Fatal(err)
			}
			var one bytes.Buffer
			if err := results[0].g.writeTable(&one, res, results[0].objs); err != nil {
				t.Fatal(err)
			}
			fleet, single := columns(out.String()), columns(one.String())
			if len(fleet) != 3 || len(single) != 2 || fleet[0][0] != "CONTEXT" || fleet[1][0] != "a" || fleet[2][0] != "b" ||
				strings.Join(fleet[0][1:], " ") != strings.Join(single[0], " ") || strings.Join(fleet[1][1:], " ") != strings.Join(single[1], " ") {
				t.Errorf("over two contexts:\n%s\none context:\n%s", out.String(), one.String())
			}
		})
	}
}

// --all-contexts opens the contexts the config file lists (contexts:), not
// every context of the kubeconfig; --context a,b is not narrowed by it.
func TestGetAllContextsFollowsTheConfigFile(t *testing.T) {
	dir := t.TempDir()
	kc := clientcmdapi.NewConfig()
	for _, n := range []string{"dev", "prod-eu", "prod-us"} {
		// A closed port: each context fails at once, naming itself.
		kc.Clusters[n] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:1"}
		kc.AuthInfos[n] = &clientcmdapi.AuthInfo{Token: "t"}
		kc.Contexts[n] = &clientcmdapi.Context{Cluster: n, AuthInfo: n}
	}
	kc.CurrentContext = "dev"
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, kubeconfig); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "raydar"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "raydar", "config.yaml"), []byte("contexts: [\"dev\", \"prod-e*\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_CONFIG_HOME", dir)
	r := raydar(t, "", "--kubeconfig", kubeconfig, "get", "clusters", "--all-contexts")
	if r.err == nil || !strings.Contains(r.stderr, "context dev: ") || !strings.Contains(r.stderr, "context prod-eu: ") || strings.Contains(r.stderr, "prod-us") {
		t.Fatalf("get --all-contexts = %v, stderr:\n%s\nwant dev and prod-eu tried, prod-us not", r.err, r.stderr)
	}
	r = raydar(t, "", "--kubeconfig", kubeconfig, "get", "clusters", "--context", "dev,prod-us")
	if !strings.Contains(r.stderr, "context prod-us: ") {
		t.Fatalf("get --context dev,prod-us: stderr:\n%s\nwant prod-us tried", r.stderr)
	}
}
