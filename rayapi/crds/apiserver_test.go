package crds

// Integration tests against a real kube-apiserver (see main_test.go): what
// `kubectl apply --server-side` and `kubectl get` see with these CRDs.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"
)

// resources maps each kind to its resource.
var resources = map[string]schema.GroupVersionResource{
	"RayCluster": {Group: "ray.io", Version: "v1", Resource: "rayclusters"},
	"RayJob":     {Group: "ray.io", Version: "v1", Resource: "rayjobs"},
	"RayService": {Group: "ray.io", Version: "v1", Resource: "rayservices"},
	"RayCronJob": {Group: "ray.io", Version: "v1", Resource: "raycronjobs"},
}

// testCtx bounds one test; generous, the machines are small and busy.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func dynamicClient(t *testing.T) dynamic.Interface {
	t.Helper()
	c, err := dynamic.NewForConfig(sandboxFor(t).Config)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// newNamespace creates a namespace for one test and returns its name.
func newNamespace(ctx context.Context, t *testing.T, prefix string) string {
	t.Helper()
	cs, err := kubernetes.NewForConfig(sandboxFor(t).Config)
	if err != nil {
		t.Fatal(err)
	}
	ns, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating a namespace: %v", err)
	}
	return ns.Name
}

// readManifest reads one ray.io object from ../v1/testdata/valid.
func readManifest(t *testing.T, file string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	if err := yaml.Unmarshal(b, &obj); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	if _, ok := resources[fmt.Sprint(obj["kind"])]; !ok {
		t.Fatalf("%s: unexpected kind %v", file, obj["kind"])
	}
	return obj
}

func validManifests(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("../v1/testdata/valid/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests in ../v1/testdata/valid: %v", err)
	}
	return files
}

// serverSideApply does what `kubectl apply --server-side` does with obj in ns.
func serverSideApply(ctx context.Context, c dynamic.Interface, ns string, obj map[string]any) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{Object: obj}
	u.SetNamespace(ns)
	body, err := json.Marshal(u.Object)
	if err != nil {
		return nil, err
	}
	force := true
	return c.Resource(resources[u.GetKind()]).Namespace(ns).Patch(ctx, u.GetName(), types.ApplyPatchType, body,
		metav1.PatchOptions{FieldManager: "kubectl", Force: &force})
}

func TestAPIServerRoundTrip(t *testing.T) {
	c := dynamicClient(t)
	ctx := testCtx(t)
	for _, file := range validManifests(t) {
		t.Run(filepath.Base(file), func(t *testing.T) {
			in := readManifest(t, file)
			ns := newNamespace(ctx, t, "roundtrip")
			if _, err := serverSideApply(ctx, c, ns, readManifest(t, file)); err != nil {
				t.Fatalf("server-side apply: %v", err)
			}
			u := &unstructured.Unstructured{Object: in}
			got, err := c.Resource(resources[u.GetKind()]).Namespace(ns).Get(ctx, u.GetName(), metav1.GetOptions{})
			if err != nil {
				t.Fatalf("get: %v", err)
			}
			for _, d := range subsetDiff("", in, got.Object) {
				t.Error(d)
			}
		})
	}
}

// subsetDiff reports every value of want that is missing from got or differs
// in it, with its path: maps are compared by key (got may have more keys:
// defaults), lists element by element.
func subsetDiff(path string, want, got any) []string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: stored %T %v, want an object", orRoot(path), got, got)}
		}
		var diffs []string
		for _, k := range sortedKeys(w) {
			p := path + "." + k
			gv, ok := g[k]
			if !ok {
				diffs = append(diffs, fmt.Sprintf("%s: missing from the stored object (pruned?), want %v", p, w[k]))
				continue
			}
			diffs = append(diffs, subsetDiff(p, w[k], gv)...)
		}
		return diffs
	case []any:
		g, ok := got.([]any)
		if !ok {
			return []string{fmt.Sprintf("%s: stored %T %v, want a list", orRoot(path), got, got)}
		}
		if len(g) != len(w) {
			return []string{fmt.Sprintf("%s: stored %d elements, want %d", orRoot(path), len(g), len(w))}
		}
		var diffs []string
		for i := range w {
			diffs = append(diffs, subsetDiff(fmt.Sprintf("%s[%d]", path, i), w[i], g[i])...)
		}
		return diffs
	}
	// Numbers: sigs.k8s.io/yaml decodes the input through encoding/json
	// (float64) while the dynamic client decodes whole numbers as int64, so
	// the same value has two Go types. Nothing else is normalised: the API
	// server stores quantities and strings as written.
	if wf, ok := toFloat(want); ok {
		if gf, ok := toFloat(got); ok && wf == gf {
			return nil
		}
	} else if reflect.DeepEqual(want, got) {
		return nil
	}
	return []string{fmt.Sprintf("%s: stored %T %v, want %T %v", orRoot(path), got, got, want, want)}
}

func toFloat(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case int64:
		return float64(n), true
	case int:
		return float64(n), true
	}
	return 0, false
}

func orRoot(path string) string {
	if path == "" {
		return "."
	}
	return path
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func TestAPIServerPrinterColumns(t *testing.T) {
	s := sandboxFor(t)
	c := dynamicClient(t)
	ctx := testCtx(t)
	ns := newNamespace(ctx, t, "columns")

	// What `kubectl get` shows for KubeRay's CRDs (docs/kuberay-reference.md):
	// the server adds Name; the CRDs name their age column "age" (lower
	// case, as KubeRay does; kubectl upper-cases every header). Columns
	// with priority > 0 appear only with -o wide and are not checked.
	want := map[string][]string{
		"rayclusters": {"Name", "desired workers", "available workers", "cpus", "memory", "gpus", "status", "age"},
		"rayjobs":     {"Name", "job status", "deployment status", "ray cluster name", "start time", "end time", "age"},
		"rayservices": {"Name", "service status", "num serve endpoints", "age"},
		"raycronjobs": {"Name", "schedule", "timezone", "last schedule", "age", "suspend"},
	}

	// One object of each kind, so that the tables have rows.
	created := map[string][]string{}
	for _, file := range validManifests(t) {
		obj := readManifest(t, file)
		u, err := serverSideApply(ctx, c, ns, obj)
		if err != nil {
			t.Fatalf("%s: server-side apply: %v", filepath.Base(file), err)
		}
		r := resources[u.GetKind()].Resource
		created[r] = append(created[r], u.GetName())
	}

	hc, err := rest.HTTPClientFor(s.Config)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []string{"rayclusters", "rayjobs", "rayservices", "raycronjobs"} {
		t.Run(r, func(t *testing.T) {
			url := strings.TrimSuffix(s.Config.Host, "/") + "/apis/ray.io/v1/namespaces/" + ns + "/" + r
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
			resp, err := hc.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("GET %s: %s: %s", url, resp.Status, body)
			}
			var table metav1.Table
			if err := json.Unmarshal(body, &table); err != nil {
				t.Fatalf("decoding the table: %v\n%s", err, body)
			}
			if table.Kind != "Table" {
				t.Fatalf("got kind %q, want Table", table.Kind)
			}
			var names []string
			for _, col := range table.ColumnDefinitions {
				if col.Priority == 0 {
					names = append(names, col.Name)
				}
			}
			if !slices.Equal(names, want[r]) {
				t.Errorf("columns (priority 0):\n got %q\nwant %q", names, want[r])
			}
			// The same names must come from the embedded CRD, so that the
			// expectation above and bases/ cannot drift apart silently.
			if fromCRD := crdColumns(t, r); !slices.Equal(fromCRD, want[r][1:]) {
				t.Errorf("bases/ printer columns %q, want %q", fromCRD, want[r][1:])
			}
			var rows []string
			for _, row := range table.Rows {
				if len(row.Cells) != len(table.ColumnDefinitions) {
					t.Errorf("row %v: %d cells for %d columns", row.Cells, len(row.Cells), len(table.ColumnDefinitions))
				}
				if len(row.Cells) > 0 {
					rows = append(rows, fmt.Sprint(row.Cells[0]))
				}
			}
			for _, name := range created[r] {
				if !slices.Contains(rows, name) {
					t.Errorf("no row for %s; rows: %q", name, rows)
				}
			}
		})
	}
}

// crdColumns returns the names of the priority-0 printer columns of the
// embedded CRD for resource r.
func crdColumns(t *testing.T, r string) []string {
	t.Helper()
	objs, err := Objects()
	if err != nil {
		t.Fatal(err)
	}
	for _, crd := range objs {
		if crd.Spec.Names.Plural != r {
			continue
		}
		var names []string
		for _, col := range crd.Spec.Versions[0].AdditionalPrinterColumns {
			if col.Priority == 0 {
				names = append(names, col.Name)
			}
		}
		return names
	}
	t.Fatalf("no CRD for %s", r)
	return nil
}

// TestAPIServerRejectsInvalid: variants of valid manifests that the CRDs'
// OpenAPI and CEL rules refuse, so that `kubectl apply` fails before any
// controller sees them. Rules that only rayapi/v1's Go validation checks are
// not here.
func TestAPIServerRejectsInvalid(t *testing.T) {
	c := dynamicClient(t)
	ctx := testCtx(t)
	ns := newNamespace(ctx, t, "invalid")
	const (
		cluster = "../v1/testdata/valid/raycluster-autoscaler-ft.yaml"
		job     = "../v1/testdata/valid/rayjob-cluster-spec.yaml"
		service = "../v1/testdata/valid/rayservice-newcluster.yaml"
		cron    = "../v1/testdata/valid/raycronjob-berlin.yaml"
	)
	cases := []struct {
		name   string
		file   string
		change func(t *testing.T, spec map[string]any)
		want   []string // substrings of the error message
	}{
		{"minReplicas above maxReplicas", cluster, func(t *testing.T, spec map[string]any) {
			set(t, spec, int64(5), "workerGroupSpecs", 0, "minReplicas")
			set(t, spec, int64(1), "workerGroupSpecs", 0, "maxReplicas")
		}, []string{"spec.workerGroupSpecs[0]", "minReplicas must be less than or equal to maxReplicas"}},
		{"negative replicas", cluster, func(t *testing.T, spec map[string]any) {
			set(t, spec, int64(-1), "workerGroupSpecs", 0, "replicas")
		}, []string{"spec.workerGroupSpecs[0].replicas"}},
		{"numOfHosts 0", cluster, func(t *testing.T, spec map[string]any) {
			set(t, spec, int64(0), "workerGroupSpecs", 0, "numOfHosts")
		}, []string{"spec.workerGroupSpecs[0].numOfHosts"}},
		{"two worker groups of one name", cluster, func(t *testing.T, spec map[string]any) {
			dupGroup(t, spec)
		}, []string{"spec.workerGroupSpecs", "worker group names must be unique"}},
		{"two worker groups of one name in a RayJob", job, func(t *testing.T, spec map[string]any) {
			dupGroup(t, spec["rayClusterSpec"].(map[string]any))
		}, []string{"spec.rayClusterSpec.workerGroupSpecs", "worker group names must be unique"}},
		{"two worker groups of one name in a RayService", service, func(t *testing.T, spec map[string]any) {
			dupGroup(t, spec["rayClusterConfig"].(map[string]any))
		}, []string{"spec.rayClusterConfig.workerGroupSpecs", "worker group names must be unique"}},
		{"rayClusterSpec and clusterSelector", job, func(t *testing.T, spec map[string]any) {
			spec["clusterSelector"] = map[string]any{"ray.io/cluster": "shared"}
		}, []string{"rayClusterSpec", "clusterSelector"}},
		{"neither rayClusterSpec nor clusterSelector", job, func(t *testing.T, spec map[string]any) {
			delete(spec, "rayClusterSpec")
			delete(spec, "clusterSelector")
		}, []string{"rayClusterSpec", "clusterSelector"}},
		{"unknown submissionMode", job, func(t *testing.T, spec map[string]any) {
			spec["submissionMode"] = "BatchMode"
		}, []string{"spec.submissionMode", "BatchMode"}},
		{"negative rayClusterDeletionDelaySeconds", service, func(t *testing.T, spec map[string]any) {
			spec["rayClusterDeletionDelaySeconds"] = int64(-1)
		}, []string{"spec.rayClusterDeletionDelaySeconds"}},
		{"RayCronJob without a schedule", cron, func(t *testing.T, spec map[string]any) {
			delete(spec, "schedule")
		}, []string{"spec.schedule", "Required"}},
		{"empty schedule", cron, func(t *testing.T, spec map[string]any) {
			spec["schedule"] = ""
		}, []string{"spec.schedule"}},
		{"schedule of three fields", cron, func(t *testing.T, spec map[string]any) {
			spec["schedule"] = "invalid cron string"
		}, []string{"spec.schedule", "must be five fields"}},
		{"time zone in the schedule", cron, func(t *testing.T, spec map[string]any) {
			spec["schedule"] = "CRON_TZ=Asia/Taipei 0 9 * * *"
		}, []string{"spec.schedule", "set spec.timeZone instead"}},
		{"empty timeZone", cron, func(t *testing.T, spec map[string]any) {
			spec["timeZone"] = ""
		}, []string{"spec.timeZone"}},
		{"RayCronJob without a jobTemplate", cron, func(t *testing.T, spec map[string]any) {
			delete(spec, "jobTemplate")
		}, []string{"spec.jobTemplate", "Required"}},
		{"jobTemplate with both targets", cron, func(t *testing.T, spec map[string]any) {
			set(t, spec, map[string]any{"ray.io/cluster": "shared"}, "jobTemplate", "clusterSelector")
		}, []string{"spec.jobTemplate", "exactly one of rayClusterSpec or clusterSelector"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			obj := readManifest(t, tc.file)
			spec, ok := obj["spec"].(map[string]any)
			if !ok {
				t.Fatalf("%s has no spec", tc.file)
			}
			tc.change(t, spec)
			_, err := serverSideApply(ctx, c, ns, obj)
			if err == nil {
				t.Fatal("the API server accepted it")
			}
			if !apierrors.IsInvalid(err) {
				t.Fatalf("got %v (reason %q), want an Invalid error", err, apierrors.ReasonForError(err))
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("the error does not mention %q: %v", w, err)
				}
			}
		})
	}
}

// TestAPIServerAcceptsKubeRayCronJobSamples: KubeRay v1.7.0's two RayCronJob
// samples (in ../v1/testdata/kuberay, with their ConfigMaps) apply unchanged
// and are stored with every field they set.
func TestAPIServerAcceptsKubeRayCronJobSamples(t *testing.T) {
	c := dynamicClient(t)
	ctx := testCtx(t)
	files, err := filepath.Glob("../v1/testdata/kuberay/ray-cronjob*.yaml")
	if err != nil || len(files) != 2 {
		t.Fatalf("want KubeRay's two RayCronJob samples, got %v (%v)", files, err)
	}
	configMaps := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			ns := newNamespace(ctx, t, "kuberay-sample")
			var kinds []string
			for _, doc := range strings.Split(string(data), "\n---\n") {
				var obj map[string]any
				if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
					t.Fatal(err)
				}
				u := &unstructured.Unstructured{Object: obj}
				kinds = append(kinds, u.GetKind())
				gvr, ok := resources[u.GetKind()]
				if u.GetKind() == "ConfigMap" {
					gvr, ok = configMaps, true
				}
				if !ok {
					t.Fatalf("unexpected kind %q", u.GetKind())
				}
				body, err := json.Marshal(obj)
				if err != nil {
					t.Fatal(err)
				}
				force := true
				if _, err := c.Resource(gvr).Namespace(ns).Patch(ctx, u.GetName(), types.ApplyPatchType, body,
					metav1.PatchOptions{FieldManager: "kubectl", Force: &force}); err != nil {
					t.Fatalf("server-side apply of %s %s: %v", u.GetKind(), u.GetName(), err)
				}
				got, err := c.Resource(gvr).Namespace(ns).Get(ctx, u.GetName(), metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				for _, d := range subsetDiff("", obj, got.Object) {
					t.Error(d)
				}
			}
			if !slices.Equal(kinds, []string{"RayCronJob", "ConfigMap"}) {
				t.Errorf("documents %v, want a RayCronJob and its ConfigMap", kinds)
			}
		})
	}
}

// dupGroup appends a copy of the first worker group of a cluster spec, so
// two groups share a name.
func dupGroup(t *testing.T, clusterSpec map[string]any) {
	t.Helper()
	groups, ok := clusterSpec["workerGroupSpecs"].([]any)
	if !ok || len(groups) == 0 {
		t.Fatal("no worker groups to duplicate")
	}
	b, _ := json.Marshal(groups[0])
	var cp map[string]any
	if err := json.Unmarshal(b, &cp); err != nil {
		t.Fatal(err)
	}
	clusterSpec["workerGroupSpecs"] = append(groups, cp)
}

// set sets the value at path (map keys and list indices) under m; every step
// but the last must exist.
func set(t *testing.T, m map[string]any, v any, path ...any) {
	t.Helper()
	var cur any = m
	for i, step := range path {
		last := i == len(path)-1
		switch s := step.(type) {
		case string:
			mm, ok := cur.(map[string]any)
			if !ok {
				t.Fatalf("set %v: step %d is not an object", path, i)
			}
			if last {
				mm[s] = v
				return
			}
			cur = mm[s]
		case int:
			l, ok := cur.([]any)
			if !ok || s >= len(l) {
				t.Fatalf("set %v: step %d is not a list with index %d", path, i, s)
			}
			if last {
				l[s] = v
				return
			}
			cur = l[s]
		}
	}
}
