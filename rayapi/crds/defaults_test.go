package crds

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/yaml"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// coreTypes are the properties holding embedded Kubernetes types, whose
// schema defaults (e.g. containerPort protocol TCP) belong to Kubernetes,
// not to ray.io, and are not applied by rayv1's Default methods.
var coreTypes = map[string]bool{
	"template": true, "submitterPodTemplate": true, "headService": true, "serveService": true,
	"ingressRules": true, "egressRules": true, "tls": true, "env": true, "envFrom": true,
	"volumeMounts": true, "securityContext": true, "valueFrom": true,
}

// applySchemaDefaults sets, like the API server, every missing property that
// has a default in the schema, recursing into present objects and arrays.
func applySchemaDefaults(t *testing.T, v any, s *apiextensionsv1.JSONSchemaProps) {
	switch x := v.(type) {
	case map[string]any:
		for name, prop := range s.Properties {
			if coreTypes[name] {
				continue
			}
			if _, ok := x[name]; !ok && prop.Default != nil {
				var d any
				if err := json.Unmarshal(prop.Default.Raw, &d); err != nil {
					t.Fatal(err)
				}
				x[name] = d
			}
			if child, ok := x[name]; ok {
				applySchemaDefaults(t, child, &prop)
			}
		}
		if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
			for _, child := range x {
				applySchemaDefaults(t, child, s.AdditionalProperties.Schema)
			}
		}
	case []any:
		if s.Items != nil && s.Items.Schema != nil {
			for _, child := range x {
				applySchemaDefaults(t, child, s.Items.Schema)
			}
		}
	}
}

// defaulter is any of the ray.io/v1 kinds.
type defaulter interface{ Default() }

// TestGoDefaultsMatchSchemaDefaults checks that rayv1's Default methods set
// exactly what the CRD schema defaults set, on every testdata manifest and on
// one that has every optional parent of a defaulted field.
func TestGoDefaultsMatchSchemaDefaults(t *testing.T) {
	objs, err := Objects()
	if err != nil {
		t.Fatal(err)
	}
	schemas := map[string]*apiextensionsv1.JSONSchemaProps{}
	for _, c := range objs {
		spec := c.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
		schemas[c.Spec.Names.Kind] = &spec
	}
	files, err := filepath.Glob("../v1/testdata/valid/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata: %v", err)
	}
	docs := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		docs[filepath.Base(f)] = b
	}
	docs["every-defaulted-parent"] = []byte(`
kind: RayService
spec:
  upgradeStrategy:
    clusterUpgradeOptions: {stepSizePercent: 5, intervalSeconds: 5, gatewayClassName: g}
  rayClusterConfig:
    networkPolicy: {}
    headGroupSpec:
      ingressOptions: {}
      template: {}
    workerGroupSpecs:
    - groupName: a
      template: {}
`)
	docs["rayjob-every-defaulted-parent"] = []byte(`
kind: RayJob
spec:
  deletionStrategy:
    deletionRules:
    - policy: DeleteSelf
      condition: {jobStatus: FAILED}
  rayClusterSpec:
    headGroupSpec:
      template: {}
    workerGroupSpecs:
    - groupName: a
      template: {}
`)
	docs["raycronjob-every-defaulted-parent"] = []byte(`
kind: RayCronJob
spec:
  schedule: "@daily"
  jobTemplate:
    rayClusterSpec:
      headGroupSpec:
        template: {}
      workerGroupSpecs:
      - groupName: a
        template: {}
`)
	for name, data := range docs {
		t.Run(name, func(t *testing.T) {
			var u map[string]any
			if err := yaml.Unmarshal(data, &u); err != nil {
				t.Fatal(err)
			}
			kind := u["kind"].(string)
			var byGo, bySchema defaulter
			switch kind {
			case rayv1.KindRayCluster:
				byGo, bySchema = &rayv1.RayCluster{}, &rayv1.RayCluster{}
			case rayv1.KindRayJob:
				byGo, bySchema = &rayv1.RayJob{}, &rayv1.RayJob{}
			case rayv1.KindRayService:
				byGo, bySchema = &rayv1.RayService{}, &rayv1.RayService{}
			case rayv1.KindRayCronJob:
				byGo, bySchema = &rayv1.RayCronJob{}, &rayv1.RayCronJob{}
			}
			if err := yaml.Unmarshal(data, byGo); err != nil {
				t.Fatal(err)
			}
			byGo.Default()

			applySchemaDefaults(t, u["spec"], schemas[kind])
			b, err := json.Marshal(u)
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b, bySchema); err != nil {
				t.Fatal(err)
			}
			if !equality.Semantic.DeepEqual(byGo, bySchema) {
				g, _ := json.Marshal(byGo)
				t.Errorf("Go defaults differ from schema defaults:\nGo     %s\nschema %s", g, b)
			}
		})
	}
}
