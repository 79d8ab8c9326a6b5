package mutation

import (
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/json"

	"github.com/raydar/raydar/test/conformance"
)

func manifest(t *testing.T, kind, specJSON string) conformance.Manifest {
	t.Helper()
	var spec map[string]any
	if err := json.Unmarshal([]byte(specJSON), &spec); err != nil {
		t.Fatal(err)
	}
	o := unstructured.Unstructured{Object: map[string]any{"apiVersion": "ray.io/v1", "kind": kind,
		"metadata": map[string]any{"name": "sample"}, "spec": spec}}
	return conformance.Manifest{Name: kind, Objects: []unstructured.Unstructured{o}}
}

const sampleSpec = `{"headGroupSpec":{"rayStartParams":{},"template":{"spec":{"containers":[{"name":"ray-head","image":"ray"}]}}},
"workerGroupSpecs":[{"groupName":"small","replicas":1,"minReplicas":0,"maxReplicas":3,"template":{"spec":{"containers":[{"name":"w","image":"ray"}]}}}]}`

// TestMutationsNameTheirField: each mutation changes the object and names
// a field path; the harmless ones name none; each applies to some kind.
func TestMutationsNameTheirField(t *testing.T) {
	used := map[string]bool{}
	for _, m := range []conformance.Manifest{
		manifest(t, "RayCluster", sampleSpec),
		manifest(t, "RayJob", `{"entrypoint":"python x.py","rayClusterSpec":`+sampleSpec+`}`),
		manifest(t, "RayService", `{"rayClusterConfig":`+sampleSpec+`}`),
	} {
		for _, mu := range All() {
			o := m.Objects[0].DeepCopy()
			field, ok := mu.Apply(o)
			if !ok {
				continue
			}
			used[mu.Name] = true
			if equal(o, &m.Objects[0]) {
				t.Errorf("%s %s: the object is unchanged", m.Name, mu.Name)
			}
			switch {
			case mu.Harmless() && field != "":
				t.Errorf("%s %s: harmless but names %q", m.Name, mu.Name, field)
			case !mu.Harmless() && !(strings.HasPrefix(field, "spec") || strings.HasPrefix(field, "metadata.")):
				t.Errorf("%s %s: names %q, not a field path", m.Name, mu.Name, field)
			}
		}
	}
	for _, mu := range All() {
		if !used[mu.Name] {
			t.Errorf("%s applies to no kind", mu.Name)
		}
	}
}

func equal(a, b *unstructured.Unstructured) bool {
	ja, _ := a.MarshalJSON()
	jb, _ := b.MarshalJSON()
	return string(ja) == string(jb)
}

// TestPlanIsSeeded: a seed always picks the same mutations; another seed
// picks others; no manifest gets more than perManifest.
func TestPlanIsSeeded(t *testing.T) {
	ms := []conformance.Manifest{manifest(t, "RayCluster", sampleSpec), manifest(t, "RayService", `{"rayClusterConfig":`+sampleSpec+`}`)}
	names := func(seed uint64) []string {
		var out []string
		for _, c := range Plan(seed, ms, 3) {
			out = append(out, c.String())
		}
		return out
	}
	a, b := names(1), names(1)
	if !slices.Equal(a, b) || len(a) != 6 {
		t.Fatalf("seed 1 gave %v then %v", a, b)
	}
	differ := false
	for s := uint64(2); s < 10; s++ {
		differ = differ || !slices.Equal(a, names(s))
	}
	if !differ {
		t.Fatalf("seeds 1..9 all picked %v", a)
	}
}

// TestWithoutRemovesOnlyTheMutation: huge-env-value's Without takes its
// variable out of every container of an object raydar made (a pod, a
// cluster's template), and with it the spec hashes, and leaves the rest;
// applied to the unmutated object it changes nothing but the hashes.
func TestWithoutRemovesOnlyTheMutation(t *testing.T) {
	var mu Mutation
	for _, m := range All() {
		if m.Name == "huge-env-value" {
			mu = m
		}
	}
	if mu.Without == nil {
		t.Fatal("huge-env-value has no Without")
	}
	pod := func(env ...string) map[string]any {
		var l []any
		for _, e := range env {
			l = append(l, map[string]any{"name": e, "value": "v"})
		}
		c := map[string]any{"name": "ray-head"}
		if l != nil {
			c["env"] = l
		}
		return map[string]any{"metadata": map[string]any{"annotations": map[string]any{
			"ray.io/hash-without-replicas-and-workers-to-delete": "h1", "other": "kept"}},
			"spec": map[string]any{"containers": []any{c}}}
	}
	mutated, unmutated := pod("A", PadEnv, "B"), pod("A", "B")
	mu.Without(mutated)
	mu.Without(unmutated)
	if !equal(&unstructured.Unstructured{Object: mutated}, &unstructured.Unstructured{Object: unmutated}) {
		t.Errorf("after Without: %v, unmutated %v", mutated, unmutated)
	}
	if got := mapAt(mutated, []string{"metadata", "annotations"})["other"]; got != "kept" {
		t.Errorf("another annotation became %v", got)
	}
	onlyPad, none := pod(PadEnv), pod()
	mu.Without(onlyPad)
	mu.Without(none)
	if !equal(&unstructured.Unstructured{Object: onlyPad}, &unstructured.Unstructured{Object: none}) {
		t.Errorf("a container with only %s: %v, want as without env %v", PadEnv, onlyPad, none)
	}
	changed := pod("A", "C")
	mu.Without(changed)
	if equal(&unstructured.Unstructured{Object: changed}, &unstructured.Unstructured{Object: unmutated}) {
		t.Error("Without hides a difference that is not the mutation's (env C for B)")
	}
}

// idGroup strips only the "#N" that numbers equal IDs, so a failure report
// shows every worker its difference could have been paired with.
func TestIDGroup(t *testing.T) {
	for id, want := range map[string]string{
		"Pod c-worker-g-#####2": "Pod c-worker-g-####",
		"Pod c-worker-g-#####":  "Pod c-worker-g-#####",
		"Pod c-head":            "Pod c-head",
		"Service c-head-svc#1":  "Service c-head-svc",
		"Pod c-worker-#abc":     "Pod c-worker-#abc",
	} {
		if got := idGroup(id); got != want {
			t.Errorf("idGroup(%q) = %q, want %q", id, got, want)
		}
	}
}
