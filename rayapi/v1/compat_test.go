package v1

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"
)

// decodeStrict decodes a KubeRay-style manifest into the Go type of its kind,
// refusing unknown and duplicate fields.
func decodeStrict(t *testing.T, data []byte) (runtime.Object, error) {
	t.Helper()
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(data, &tm); err != nil {
		return nil, err
	}
	if tm.APIVersion != SchemeGroupVersion.String() {
		t.Fatalf("apiVersion %q, want %q", tm.APIVersion, SchemeGroupVersion)
	}
	var obj runtime.Object
	switch tm.Kind {
	case KindRayCluster:
		obj = &RayCluster{}
	case KindRayJob:
		obj = &RayJob{}
	case KindRayService:
		obj = &RayService{}
	case KindRayCronJob:
		obj = &RayCronJob{}
	default:
		t.Fatalf("unexpected kind %q", tm.Kind)
	}
	return obj, yaml.UnmarshalStrict(data, obj)
}

func validate(obj runtime.Object) field.ErrorList {
	switch o := obj.(type) {
	case *RayCluster:
		return ValidateRayCluster(o)
	case *RayJob:
		return ValidateRayJob(o)
	case *RayService:
		return ValidateRayService(o)
	case *RayCronJob:
		return ValidateRayCronJob(o)
	}
	panic("unreachable")
}

func manifests(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests in testdata/%s: %v", dir, err)
	}
	return files
}

// prune drops nulls, zero scalars, empty maps and empty lists: omitempty does
// not write them back, and KubeRay's Go types cannot tell them from unset either.
func prune(v any) any {
	switch x := v.(type) {
	case float64:
		if x == 0 {
			return nil
		}
	case bool:
		if !x {
			return nil
		}
	case string:
		if x == "" {
			return nil
		}
	case map[string]any:
		for k, e := range x {
			e = prune(e)
			if e == nil {
				delete(x, k)
				continue
			}
			x[k] = e
		}
		if len(x) == 0 {
			return nil
		}
	case []any:
		for i := range x {
			x[i] = prune(x[i])
		}
		if len(x) == 0 {
			return nil
		}
	}
	return v
}

// TestKubeRayManifestsDecodeValidateRoundTrip decodes every valid manifest
// strictly, validates it, and checks that nothing is lost on the way back.
func TestKubeRayManifestsDecodeValidateRoundTrip(t *testing.T) {
	for _, file := range manifests(t, "valid") {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			checkManifest(t, data)
		})
	}
}

// checkManifest decodes one manifest strictly, validates it, checks that
// nothing is lost on the way back and that defaulting keeps it valid.
func checkManifest(t *testing.T, data []byte) {
	t.Helper()
	obj, err := decodeStrict(t, data)
	if err != nil {
		t.Fatalf("strict decode: %v", err)
	}
	if errs := validate(obj); len(errs) > 0 {
		t.Fatalf("validation: %v", errs.ToAggregate())
	}

	// Typed round trip.
	out, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	again, err := decodeStrict(t, out)
	if err != nil {
		t.Fatalf("strict decode of our own output: %v", err)
	}
	if !equality.Semantic.DeepEqual(obj, again) {
		t.Fatalf("round trip changed the object:\nbefore %+v\nafter  %+v", obj, again)
	}

	// Untyped: every field of the manifest survives.
	var want, got any
	if err := yaml.Unmarshal(data, &want); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	// Zero status quantities (desiredCPU "0") are always written, as by KubeRay.
	if _, ok := want.(map[string]any)["status"]; !ok {
		delete(got.(map[string]any), "status")
	}
	want, got = prune(want), prune(got)
	if !reflect.DeepEqual(want, got) {
		wj, _ := json.MarshalIndent(want, "", " ")
		gj, _ := json.MarshalIndent(got, "", " ")
		t.Fatalf("marshalled object differs from the manifest:\nwant %s\ngot  %s", wj, gj)
	}

	// Defaulting keeps the object valid and is idempotent.
	def := obj.DeepCopyObject()
	def.(interface{ Default() }).Default()
	if errs := validate(def); len(errs) > 0 {
		t.Fatalf("validation after Default: %v", errs.ToAggregate())
	}
	twice := def.DeepCopyObject()
	twice.(interface{ Default() }).Default()
	if !equality.Semantic.DeepEqual(def, twice) {
		t.Fatal("Default is not idempotent")
	}
}

// TestSchemeDecodesManifests decodes through a runtime.Scheme, the way
// client-go and controller-runtime do.
func TestSchemeDecodesManifests(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	codecs := serializer.NewCodecFactory(scheme, serializer.EnableStrict)
	for _, file := range manifests(t, "valid") {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		obj, gvk, err := codecs.UniversalDeserializer().Decode(data, nil, nil)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if gvk.Group != GroupName || gvk.Version != Version {
			t.Errorf("%s: decoded as %v", file, gvk)
		}
		if _, ok := obj.(interface{ Default() }); !ok {
			t.Errorf("%s: decoded into %T", file, obj)
		}
	}
}

// TestMalformedManifests checks that broken manifests are refused, with the
// exact field paths in the errors.
func TestMalformedManifests(t *testing.T) {
	want := map[string][]string{
		"raycluster-min-gt-max.yaml": {
			"spec.workerGroupSpecs[1].minReplicas: Invalid value: 5: must be <= maxReplicas (3)",
		},
		"raycluster-duplicate-group.yaml": {
			"spec.headGroupSpec.template.spec.containers: Required value: the head pod needs at least one container; containers[0] runs Ray",
			`spec.workerGroupSpecs[1].groupName: Duplicate value: "workers"`,
			"spec.workerGroupSpecs[1].replicas: Invalid value: -1: must be greater than or equal to 0",
		},
		"raycluster-unknown-field.yaml": {
			`decode: error unmarshaling JSON: while decoding JSON: json: unknown field "replica"`,
		},
		"rayjob-both-targets.yaml": {
			"spec.clusterSelector: Forbidden: must not be set together with spec.rayClusterSpec; set exactly one",
			"spec.suspend: Forbidden: not supported when spec.clusterSelector is set",
			"spec.suspend: Forbidden: a RayJob can be suspended only with shutdownAfterJobFinishes: true",
		},
		"rayjob-bad-deletion-rules.yaml": {
			"spec.shutdownAfterJobFinishes: Forbidden: must not be true together with spec.deletionStrategy.deletionRules; use a DeleteCluster rule",
			"spec.deletionStrategy.deletionRules[0].condition.jobDeploymentStatus: Forbidden: must not be set together with jobStatus; set exactly one",
			`spec.deletionStrategy.deletionRules[2]: Duplicate value: "jobStatus SUCCEEDED, policy DeleteSelf"`,
		},
		"raycronjob-bad-schedule.yaml": {
			`spec.timeZone: Invalid value: "Mars/Olympus_Mons": must be an IANA time zone name such as Europe/Berlin: unknown time zone Mars/Olympus_Mons`,
			`spec.schedule: Invalid value: "every 5 minutes": not a cron schedule: expected exactly 5 fields, found 3: [every 5 minutes]`,
			"spec.jobTemplate.rayClusterSpec: Required value: exactly one of spec.jobTemplate.rayClusterSpec or spec.jobTemplate.clusterSelector must be set",
		},
		"rayservice-bad-config.yaml": {
			"spec.rayClusterDeletionDelaySeconds: Invalid value: -5: must be greater than or equal to 0",
			`spec.serveConfigV2: Invalid value: must be a YAML mapping (its text is not repeated: it may hold secrets): error converting YAML to JSON: yaml: line 1: did not find expected ',' or ']'`,
			`spec.upgradeStrategy.type: Unsupported value: "BlueGreen": supported values: "NewCluster", "NewClusterWithIncrementalUpgrade", "None"`,
		},
	}
	files := manifests(t, "invalid")
	if len(files) != len(want) {
		t.Fatalf("%d files in testdata/invalid, %d expectations", len(files), len(want))
	}
	for _, file := range files {
		name := filepath.Base(file)
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			obj, err := decodeStrict(t, data)
			if err != nil {
				got = []string{"decode: " + err.Error()}
			} else {
				for _, e := range validate(obj) {
					got = append(got, e.Error())
				}
			}
			if strings.Join(got, "\n") != strings.Join(want[name], "\n") {
				t.Fatalf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want[name], "\n"))
			}
		})
	}
}
