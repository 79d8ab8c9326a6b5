// Package crds owns the CustomResourceDefinitions of ray.io/v1 (RayCluster,
// RayJob, RayService, RayCronJob). The manifests in bases/ are generated from rayapi/v1 by
// `make generate` and embedded in the binary; `raydar crds` prints them.
package crds

import (
	"bytes"
	"embed"
	"fmt"
	"io/fs"
	"sort"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

//go:embed bases/*.yaml
var bases embed.FS

// files returns the embedded manifests in a stable (lexical) order.
func files() []string {
	names, err := fs.Glob(bases, "bases/*.yaml")
	if err != nil { // only for a malformed pattern
		panic(err)
	}
	sort.Strings(names)
	return names
}

// YAML returns every CRD as one multi-document YAML stream, in a stable order,
// ready for `kubectl apply -f -`.
func YAML() []byte {
	var buf bytes.Buffer
	for _, name := range files() {
		b, err := bases.ReadFile(name)
		if err != nil {
			panic(err) // embedded; cannot fail
		}
		b = bytes.TrimPrefix(b, []byte("---\n"))
		buf.WriteString("---\n")
		buf.Write(b)
		if !bytes.HasSuffix(b, []byte("\n")) {
			buf.WriteByte('\n')
		}
	}
	return buf.Bytes()
}

// Objects returns the CRDs decoded, in the same order as YAML.
func Objects() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, name := range files() {
		b, err := bases.ReadFile(name)
		if err != nil {
			return nil, err
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(b, crd); err != nil {
			return nil, fmt.Errorf("decode %s: %w", name, err)
		}
		out = append(out, crd)
	}
	return out, nil
}
