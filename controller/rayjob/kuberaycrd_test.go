package rayjob

// raydar on KubeRay's CRDs: the RayJob status raydar writes, walked against
// the openAPI schema of KubeRay's RayJob CRD (kubeRayVersion) (read from the module
// cache at test time), and the stop protocol with that schema's pruning.

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/raydar/raydar/controller/internal/fixture"
	"github.com/raydar/raydar/rayapi/dashboard"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// kubeRayVersion is the KubeRay release whose CRD raydar's RayJob status
// is walked against: the conformance suite's oracle (test/conformance).
const kubeRayVersion = "v1.6.2"

// kubeRayRayJobStatusSchema is the status schema of ray.io/v1 RayJob in
// KubeRay's CRD, read from its module (`go mod download` fetches it from
// the module proxy when the cache lacks it; `make tools` has it there).
func kubeRayRayJobStatusSchema(t *testing.T) *apiextensionsv1.JSONSchemaProps {
	t.Helper()
	cmd := exec.Command("go", "mod", "download", "-json", "github.com/ray-project/kuberay/ray-operator@"+kubeRayVersion)
	cmd.Dir = os.TempDir() // outside any module: the answer must not depend on ours
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go mod download of KubeRay %s: %v", kubeRayVersion, err)
	}
	var mod struct{ Dir, Error string }
	if err := json.Unmarshal(out, &mod); err != nil || mod.Dir == "" {
		t.Fatalf("go mod download of KubeRay %s: %v %s", kubeRayVersion, err, mod.Error)
	}
	data, err := os.ReadFile(filepath.Join(mod.Dir, "config/crd/bases/ray.io_rayjobs.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(data, crd); err != nil {
		t.Fatal(err)
	}
	for _, v := range crd.Spec.Versions {
		if v.Name == "v1" {
			st := v.Schema.OpenAPIV3Schema.Properties["status"]
			return &st
		}
	}
	t.Fatal("no v1 in KubeRay's RayJob CRD")
	return nil
}

// schemaUnknown lists the JSON paths of v that the schema does not declare
// (what a structural schema prunes).
func schemaUnknown(path string, v any, s *apiextensionsv1.JSONSchemaProps) []string {
	if s == nil || (s.XPreserveUnknownFields != nil && *s.XPreserveUnknownFields) {
		return nil
	}
	var out []string
	switch x := v.(type) {
	case map[string]any:
		for k, sub := range x {
			p := path + "." + k
			switch {
			case s.Properties != nil:
				ps, ok := s.Properties[k]
				if !ok {
					out = append(out, p)
					continue
				}
				out = append(out, schemaUnknown(p, sub, &ps)...)
			case s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil:
				out = append(out, schemaUnknown(p, sub, s.AdditionalProperties.Schema)...)
			case s.AdditionalProperties == nil:
				out = append(out, p)
			}
		}
	case []any:
		if s.Items != nil && s.Items.Schema != nil {
			for _, sub := range x {
				out = append(out, schemaUnknown(path+"[]", sub, s.Items.Schema)...)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// fillAll sets every field of v (a pointer) to a non-zero value, so that
// marshalling it shows every JSON field the type can write.
func fillAll(v reflect.Value, depth int) {
	if depth > 8 {
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		fillAll(v.Elem(), depth+1)
	case reflect.Struct:
		switch v.Addr().Interface().(type) {
		case *metav1.Time:
			v.Set(reflect.ValueOf(metav1.NewTime(fixture.T0)))
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fillAll(v.Field(i), depth+1)
			}
		}
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 1, 1)
		fillAll(s.Index(0), depth+1)
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k := reflect.New(v.Type().Key()).Elem()
		fillAll(k, depth+1)
		e := reflect.New(v.Type().Elem()).Elem()
		fillAll(e, depth+1)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(1)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(1)
	}
}

func toJSONMap(t *testing.T, v any) map[string]any {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// pruneTo drops what the schema does not declare, as the API server does.
func pruneTo(t *testing.T, st rayv1.RayJobStatus, s *apiextensionsv1.JSONSchemaProps) rayv1.RayJobStatus {
	t.Helper()
	m := toJSONMap(t, st)
	var prune func(v any, s *apiextensionsv1.JSONSchemaProps)
	prune = func(v any, s *apiextensionsv1.JSONSchemaProps) {
		if s == nil || (s.XPreserveUnknownFields != nil && *s.XPreserveUnknownFields) {
			return
		}
		switch x := v.(type) {
		case map[string]any:
			for k, sub := range x {
				switch {
				case s.Properties != nil:
					ps, ok := s.Properties[k]
					if !ok {
						delete(x, k)
						continue
					}
					prune(sub, &ps)
				case s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil:
					prune(sub, s.AdditionalProperties.Schema)
				}
			}
		case []any:
			if s.Items != nil && s.Items.Schema != nil {
				for _, sub := range x {
					prune(sub, s.Items.Schema)
				}
			}
		}
	}
	prune(m, s)
	data, _ := json.Marshal(m)
	var out rayv1.RayJobStatus
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// Every field raydar can write into a RayJob's status is in KubeRay
// KubeRay's schema, except two that raydar does not rely on the stored
// object for: its conditions (display; the stop record is an annotation),
// and the dashboard failure clock (KubeRay v1.7.0's field; the reconciler
// keeps it in memory when the CRD prunes it).
func TestRayJobStatusFitsKubeRayCRD(t *testing.T) {
	schema := kubeRayRayJobStatusSchema(t)
	var st rayv1.RayJobStatus
	fillAll(reflect.ValueOf(&st), 0)
	got := schemaUnknown("status", toJSONMap(t, st), schema)
	tolerated := []string{"status.conditions", "status.jobStatusCheckFailureStartTime"}
	var bad []string
	for _, p := range got {
		if !slices.Contains(tolerated, p) {
			bad = append(bad, p)
		}
	}
	if len(bad) > 0 {
		t.Fatalf("status fields that KubeRay's RayJob CRD prunes: %v", bad)
	}
	// The walk sees what it should: the tolerated fields are indeed
	// outside the schema (if KubeRay adds them, this list shrinks).
	if !slices.Equal(got, tolerated) {
		t.Fatalf("fields outside the schema %v, want exactly %v", got, tolerated)
	}
}

// The stop protocol under KubeRay's CRD: the record lives in an annotation,
// so a status pruned of its conditions still says the stop was sent: the
// next pass sends nothing, writes nothing, and a restarted process (no
// memory) neither.
func TestRayJobStopRecordSurvivesKubeRayPruning(t *testing.T) {
	schema := kubeRayRayJobStatusSchema(t)
	run := inPhase(rayv1.JobDeploymentStatusRunning, rayv1.JobStatusRunning)
	req := func(j *rayv1.RayJob) { j.Annotations = map[string]string{rayv1.StopRequestedAnnotationKey: "alice@1"} }
	rc := withCluster(newCluster(true))
	now := fixture.T0.Add(time.Minute)

	j := newJob(run, req)
	p := Decide(observe(j, now, rc, withDash(info(dashboard.JobRunning))))
	if p.Stop == nil {
		t.Fatalf("no stop planned: %+v", p)
	}
	// The reconciler sent it and the dashboard confirmed: it records the
	// annotation; the status it writes loses its conditions.
	SetStopRecord(j, StopRecord{JobID: "rj-id001", Request: "alice@1", Confirmed: true}, "the dashboard is stopping it", now)
	j.Status = pruneTo(t, j.Status, schema)
	if len(j.Status.Conditions) != 0 {
		t.Fatal("pruning kept the conditions")
	}
	for _, dash := range []*DashAnswer{info(dashboard.JobRunning), info(dashboard.JobStopped)} {
		o := observe(j, now.Add(time.Second), rc, withDash(dash), func(o *Observed) { o.StatusPrunesConditions = true })
		p := Decide(o)
		if p.Stop != nil {
			t.Fatalf("stop sent again after pruning (dashboard %s)", dash.Info.Status)
		}
		if dash.Info.Status == dashboard.JobStopped {
			if p.Status.JobDeploymentStatus != rayv1.JobDeploymentStatusComplete {
				t.Fatalf("%+v", p.Status)
			}
			// Once finished, the pruned status is stable: no write loop.
			j2 := j.DeepCopy()
			j2.Status = pruneTo(t, p.Status, schema)
			p2 := Decide(observe(j2, now.Add(time.Minute), rc, func(o *Observed) { o.StatusPrunesConditions = true }))
			if p2.WriteStatus || p2.Stop != nil || p2.StopRecord != "" {
				t.Fatalf("a finished, pruned RayJob is written again: %+v", p2)
			}
		}
	}
	// A running job whose status is pruned writes nothing either (the
	// conditions are not compared).
	j3 := newJob(run)
	p3 := Decide(observe(j3, now, rc, withDash(info(dashboard.JobRunning))))
	j3.Status = pruneTo(t, p3.Status, schema)
	if p4 := Decide(observe(j3, now, rc, withDash(info(dashboard.JobRunning)), func(o *Observed) { o.StatusPrunesConditions = true })); p4.WriteStatus {
		t.Fatalf("status written on every pass under KubeRay's CRD: %+v vs %+v", p4.Status, j3.Status)
	}
}
