package sandbox

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMissingBinaries(t *testing.T) {
	empty := t.TempDir()
	_, err := Start(context.Background(), Options{ToolsDir: empty, Scheduler: true})
	if err == nil {
		t.Fatal("Start without binaries succeeded")
	}
	for _, want := range []string{"make tools", filepath.Join(empty, "etcd"), filepath.Join(empty, "kube-scheduler")} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "kwok") {
		t.Errorf("error mentions kwok, which was not asked for: %v", err)
	}
}

func TestFindToolsDir(t *testing.T) {
	t.Setenv(ToolsDirEnv, "/somewhere/tools")
	if d, err := FindToolsDir(); err != nil || d != "/somewhere/tools" {
		t.Errorf("with %s: %q, %v", ToolsDirEnv, d, err)
	}
	t.Setenv(ToolsDirEnv, "")
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "bin", "k8s"), 0o755); err != nil {
		t.Fatal(err)
	}
	deep := filepath.Join(root, "a", "b", "c")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(deep)
	if d, err := FindToolsDir(); err != nil || d != filepath.Join(root, "bin", "k8s") {
		t.Errorf("walking up: %q, %v", d, err)
	}
}

func TestOptionsValidation(t *testing.T) {
	for name, o := range map[string]Options{
		"nodes without kwok": {ToolsDir: "/x", Nodes: []NodePool{{Count: 1}}},
		"bad cpu":            {ToolsDir: "/x", Kwok: true, Nodes: []NodePool{{Count: 1, CPU: "lots"}}},
		"duplicate pools":    {ToolsDir: "/x", Kwok: true, Nodes: []NodePool{{Count: 1, NamePrefix: "a"}, {Count: 1, NamePrefix: "a"}}},
	} {
		if _, err := o.withDefaults(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	o, err := Options{ToolsDir: "/x", Kwok: true, Nodes: []NodePool{{Count: 1}, {Count: 2}}}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if o.Nodes[0].NamePrefix != "kwok-node" || o.Nodes[1].NamePrefix != "kwok-pool1" || o.Nodes[1].CPU != "16" {
		t.Errorf("defaults: %+v", o.Nodes)
	}
}

func TestParseCRDs(t *testing.T) {
	crds, err := ParseCRDs([]byte(testCRDs), nil, []byte("---\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(crds) != 2 || crds[0].Name != "widgets.sandbox-test.raydar.io" || crds[1].Name != "gadgets.sandbox-test.raydar.io" {
		t.Errorf("parsed %d CRDs", len(crds))
	}
	for name, bad := range map[string]string{
		"not a CRD":     "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n",
		"unknown field": "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nspek: {}\n",
		"bad yaml":      "apiVersion: [\n",
	} {
		if _, err := ParseCRDs([]byte(bad)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestStages checks the embedded kwok configuration: Stage documents with
// unique names, and the annotation keys of PhaseAnnotation and of the
// fault annotations (faults.go), so that a renamed constant cannot leave
// the stages reading the old key.
func TestStages(t *testing.T) {
	docs := strings.Split(string(stagesYAML), "\n---\n")
	seen := map[string]bool{}
	for _, d := range docs {
		if !strings.Contains(d, "kind: Stage") {
			t.Errorf("document without kind Stage:\n%s", d)
		}
		i := strings.Index(d, "\n  name: ")
		name := strings.Fields(d[i+len("\n  name: "):])[0]
		if seen[name] {
			t.Errorf("duplicate stage %s", name)
		}
		seen[name] = true
	}
	for _, want := range []string{"raydar-pod-running", "raydar-pod-failed", "raydar-pod-succeeded",
		"raydar-pod-crashloop", "raydar-pod-image-pull", "raydar-pod-config-error", "raydar-pod-remove", "raydar-node-ready",
		"raydar-container-exited"} {
		if !seen[want] {
			t.Errorf("no stage %s", want)
		}
	}
	if len(seen) != 9 {
		t.Errorf("%d stages: %v", len(seen), seen)
	}
	for _, key := range []string{PhaseAnnotation, CrashAnnotation, ImagePullAnnotation, ConfigCheckAnnotation, ConfigErrorAnnotation,
		ExitedContainerAnnotation, ExitCodeAnnotation} {
		if !bytes.Contains(stagesYAML, []byte(`["`+key+`"]`)) {
			t.Errorf("stages do not read %s", key)
		}
	}
	for _, v := range []string{ConfigErrorReason, MountErrorReason, `"` + ConfigOK + `"`} {
		if !bytes.Contains(stagesYAML, []byte(v)) {
			t.Errorf("stages do not mention %s", v)
		}
	}
}

// BenchmarkSandboxStart measures Start and Stop of the sandbox that the
// integration tests use (everything, one node) and of etcd+apiserver alone.
