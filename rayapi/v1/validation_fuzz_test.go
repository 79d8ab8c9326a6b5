package v1_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/raydar/raydar/rayapi/scheme"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// FuzzDecodeValidate feeds arbitrary bytes through what a manifest goes
// through before raydar acts on it: the YAML/JSON stream is split into
// documents, each decoded strictly with raydar's one scheme, then defaulted
// and validated as its kind. The seeds are raydar's testdata (valid and
// invalid), the conformance suite's own manifests and a handful of KubeRay
// v1.5.0 samples (testdata/seeds, copied from the module's config/samples).
//
// Invariants: nothing panics; every refusal names a field under spec or
// metadata, and its message carries that path; validating the same object
// twice gives the same errors in the same order (the refusal condition's
// message must not flap between reconciles); an object survives a JSON
// round trip with the same errors (what the reconciler reads back from the
// API server is judged as what was decoded).
func FuzzDecodeValidate(f *testing.F) {
	for _, glob := range []string{
		"testdata/valid/*.yaml", "testdata/invalid/*.yaml", "testdata/kuberay/*.yaml", "testdata/seeds/*.yaml",
		"../../test/conformance/testdata/*.yaml",
	} {
		files, err := filepath.Glob(glob)
		if err != nil || len(files) == 0 {
			f.Fatalf("no seeds match %s: %v", glob, err)
		}
		for _, p := range files {
			b, err := os.ReadFile(p)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
		}
	}
	codecs := serializer.NewCodecFactory(scheme.New(), serializer.EnableStrict)
	dec := codecs.UniversalDeserializer()
	f.Fuzz(func(t *testing.T, data []byte) {
		for i, doc := range splitDocuments(data) {
			if i == 8 {
				return // a handful of documents per input keeps each execution short
			}
			obj, _, err := dec.Decode(doc, nil, nil)
			if err != nil {
				continue // not a known kind, or not strictly decodable: nothing to validate
			}
			checkValidation(t, obj)
		}
	})
}

// splitDocuments splits a YAML or JSON stream into its documents, as JSON
// (what the decoder and the API server see); it stops at the first error.
func splitDocuments(data []byte) [][]byte {
	d := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out [][]byte
	for {
		var raw json.RawMessage
		if err := d.Decode(&raw); err != nil {
			return out // io.EOF, or the rest is not YAML
		}
		if len(bytes.TrimSpace(raw)) > 0 && !bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
			out = append(out, raw)
		}
	}
}

// validateObject defaults obj (as the API server would) and validates it as
// its kind; ok is false for kinds that are not ray.io/v1.
func validateObject(obj runtime.Object) (errs field.ErrorList, ok bool) {
	switch o := obj.(type) {
	case *rayv1.RayCluster:
		o.Default()
		errs = append(rayv1.ValidateRayCluster(o), rayv1.ValidateRayClusterStatus(&o.Status)...)
		// The helpers the reconciler and the TUI call on any spec.
		_, _, _ = o.Spec.DesiredPods(), o.Spec.MinWorkerPods(), o.Spec.MaxWorkerPods()
		_ = o.Spec.EffectiveAutoscalerVersion()
	case *rayv1.RayJob:
		o.Default()
		errs = append(rayv1.ValidateRayJob(o), rayv1.ValidateRayJobStatus(o)...)
	case *rayv1.RayService:
		o.Default()
		errs = rayv1.ValidateRayService(o)
	case *rayv1.RayCronJob:
		o.Default()
		errs = rayv1.ValidateRayCronJob(o)
	default:
		return nil, false
	}
	return errs, true
}

func checkValidation(t *testing.T, obj runtime.Object) {
	t.Helper()
	first := obj.DeepCopyObject()
	errs, ok := validateObject(first)
	if !ok {
		return
	}
	for _, e := range errs {
		if !namesField(e) {
			t.Fatalf("refusal does not name a field under spec, status or metadata: %q (field %q)", e.Error(), e.Field)
		}
	}
	again, _ := validateObject(obj.DeepCopyObject())
	if a, b := errorStrings(errs), errorStrings(again); !slices.Equal(a, b) {
		t.Fatalf("validating the same object twice gave different errors:\n%q\n%q", a, b)
	}
	// JSON round trip of the defaulted object.
	b, err := json.Marshal(first)
	if err != nil {
		t.Fatalf("encoding a decoded %T: %v", first, err)
	}
	back := first.DeepCopyObject()
	if err := resetAndUnmarshal(b, back); err != nil {
		t.Fatalf("decoding a %T raydar encoded: %v\n%s", first, err, b)
	}
	rt, _ := validateObject(back)
	if a, b := errorStrings(errs), errorStrings(rt); !slices.Equal(a, b) {
		t.Fatalf("after a JSON round trip the errors differ:\nbefore %q\nafter  %q", a, b)
	}
}

// resetAndUnmarshal decodes b into a zero value of obj's type.
func resetAndUnmarshal(b []byte, obj runtime.Object) error {
	switch o := obj.(type) {
	case *rayv1.RayCluster:
		*o = rayv1.RayCluster{}
	case *rayv1.RayJob:
		*o = rayv1.RayJob{}
	case *rayv1.RayService:
		*o = rayv1.RayService{}
	case *rayv1.RayCronJob:
		*o = rayv1.RayCronJob{}
	}
	return json.Unmarshal(b, obj)
}

// namesField reports whether e names a field path rooted at an object's
// top-level field and its message starts with that path.
func namesField(e *field.Error) bool {
	if e.Field == "" || !strings.HasPrefix(e.Error(), e.Field) {
		return false
	}
	for _, root := range []string{"spec", "metadata", "status"} {
		if e.Field == root || strings.HasPrefix(e.Field, root+".") || strings.HasPrefix(e.Field, root+"[") {
			return true
		}
	}
	return false
}

func errorStrings(errs field.ErrorList) []string {
	out := make([]string, len(errs))
	for i, e := range errs {
		out[i] = e.Error()
	}
	return out
}

// TestFuzzSeedsReachValidation keeps FuzzDecodeValidate honest: its seeds
// decode into ray.io kinds (so the validators run), the valid manifests pass
// and every invalid one is refused.
func TestFuzzSeedsReachValidation(t *testing.T) {
	dec := serializer.NewCodecFactory(scheme.New(), serializer.EnableStrict).UniversalDeserializer()
	for _, dir := range []string{"valid", "invalid", "seeds"} {
		files, _ := filepath.Glob(filepath.Join("testdata", dir, "*.yaml"))
		for _, p := range files {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			var kinds int
			var errs field.ErrorList
			var decodeErr error
			for _, doc := range splitDocuments(b) {
				obj, _, err := dec.Decode(doc, nil, nil)
				if err != nil {
					decodeErr = err
					continue
				}
				if e, ok := validateObject(obj); ok {
					kinds++
					errs = append(errs, e...)
				}
			}
			switch {
			case dir == "invalid" && len(errs) == 0 && decodeErr == nil:
				t.Errorf("%s: accepted", p)
			case dir != "invalid" && kinds == 0:
				t.Errorf("%s: no ray.io object decoded (%v)", p, decodeErr)
			case dir != "invalid" && len(errs) > 0:
				t.Errorf("%s: refused: %v", p, errs)
			}
		}
	}
}
