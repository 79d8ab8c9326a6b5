package conformance

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// KubeRay's operator module: the oracle's version, and where its samples
// live inside the module.
const (
	KubeRayModule  = "github.com/ray-project/kuberay/ray-operator"
	KubeRayVersion = "v1.6.2"
	samplesDir     = "config/samples"
)

// Manifest is one file of the corpus: its name in reports and its objects.
type Manifest struct {
	Name    string
	Objects []unstructured.Unstructured
}

// KubeRayModuleDir returns the directory of KubeRay's operator module in the
// Go module cache (`make tools` downloads it when it builds the operator).
func KubeRayModuleDir() (string, error) {
	cmd := exec.Command("go", "mod", "download", "-json", KubeRayModule+"@"+KubeRayVersion)
	cmd.Dir = os.TempDir() // outside any module: the answer must not depend on ours
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("locating %s@%s in the module cache (run `make tools`): %v: %s", KubeRayModule, KubeRayVersion, err, stderr.String())
	}
	var info struct{ Dir, Error string }
	if err := json.Unmarshal(out, &info); err != nil {
		return "", err
	}
	if info.Error != "" || info.Dir == "" {
		return "", fmt.Errorf("locating %s@%s: %s", KubeRayModule, KubeRayVersion, info.Error)
	}
	return info.Dir, nil
}

// LoadSamples reads every sample manifest of KubeRay's module, named
// "samples/<path>".
func LoadSamples(moduleDir string) ([]Manifest, error) {
	return loadDir(filepath.Join(moduleDir, samplesDir), "samples/")
}

// LoadDir reads every manifest of a directory, named prefix+<path>.
func LoadDir(dir, prefix string) ([]Manifest, error) { return loadDir(dir, prefix) }

func loadDir(dir, prefix string) ([]Manifest, error) {
	var out []Manifest
	if _, err := os.Stat(dir); err != nil {
		return nil, err
	}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !(strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml")) {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		objs, err := decodeAll(b)
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		out = append(out, Manifest{Name: prefix + filepath.ToSlash(rel), Objects: objs})
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, err
}

// decodeAll splits a YAML stream into objects, skipping empty documents.
func decodeAll(b []byte) ([]unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 4096)
	var out []unstructured.Unstructured
	for {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, err
		}
		if len(m) == 0 {
			continue
		}
		out = append(out, unstructured.Unstructured{Object: m})
	}
}

// HasRayObject reports whether m creates a RayCluster, RayJob, RayService or
// RayCronJob (other manifests, e.g. Kueue's queues alone, have nothing to
// compare).
func (m Manifest) HasRayObject() bool {
	for _, o := range m.Objects {
		if isRayKind(o.GetKind()) && o.GroupVersionKind().Group == "ray.io" {
			return true
		}
	}
	return false
}

func isRayKind(k string) bool {
	return k == "RayCluster" || k == "RayJob" || k == "RayService" || k == "RayCronJob"
}
