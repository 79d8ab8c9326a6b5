package crds

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

type column struct {
	name, typ, path string
	priority        int32
}

func TestObjects(t *testing.T) {
	objs, err := Objects()
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		name, kind, list, plural, singular string
		columns                            []column
	}{
		{"rayclusters.ray.io", "RayCluster", "RayClusterList", "rayclusters", "raycluster", []column{
			{"desired workers", "integer", ".status.desiredWorkerReplicas", 0},
			{"available workers", "integer", ".status.availableWorkerReplicas", 0},
			{"cpus", "string", ".status.desiredCPU", 0},
			{"memory", "string", ".status.desiredMemory", 0},
			{"gpus", "string", ".status.desiredGPU", 0},
			{"tpus", "string", ".status.desiredTPU", 1},
			{"status", "string", ".status.state", 0},
			{"age", "date", ".metadata.creationTimestamp", 0},
			{"head pod IP", "string", ".status.head.podIP", 1},
			{"head service IP", "string", ".status.head.serviceIP", 1},
		}},
		{"raycronjobs.ray.io", "RayCronJob", "RayCronJobList", "raycronjobs", "raycronjob", []column{
			{"schedule", "string", ".spec.schedule", 0},
			{"timezone", "string", ".spec.timeZone", 0},
			{"last schedule", "date", ".status.lastScheduleTime", 0},
			{"age", "date", ".metadata.creationTimestamp", 0},
			{"suspend", "boolean", ".spec.suspend", 0},
		}},
		{"rayjobs.ray.io", "RayJob", "RayJobList", "rayjobs", "rayjob", []column{
			{"job status", "string", ".status.jobStatus", 0},
			{"deployment status", "string", ".status.jobDeploymentStatus", 0},
			{"ray cluster name", "string", ".status.rayClusterName", 0},
			{"start time", "string", ".status.startTime", 0},
			{"end time", "string", ".status.endTime", 0},
			{"age", "date", ".metadata.creationTimestamp", 0},
		}},
		{"rayservices.ray.io", "RayService", "RayServiceList", "rayservices", "rayservice", []column{
			{"service status", "string", ".status.serviceStatus", 0},
			{"num serve endpoints", "string", ".status.numServeEndpoints", 0},
			{"age", "date", ".metadata.creationTimestamp", 0},
		}},
	}
	if len(objs) != len(want) {
		t.Fatalf("got %d CRDs, want %d", len(objs), len(want))
	}
	for i, w := range want {
		c := objs[i]
		if c.Name != w.name || c.Spec.Group != "ray.io" || c.Spec.Scope != apiextensionsv1.NamespaceScoped {
			t.Errorf("CRD %d: name %q group %q scope %q", i, c.Name, c.Spec.Group, c.Spec.Scope)
		}
		n := c.Spec.Names
		if n.Kind != w.kind || n.ListKind != w.list || n.Plural != w.plural || n.Singular != w.singular {
			t.Errorf("%s: names %+v", w.name, n)
		}
		if len(n.Categories) != 1 || n.Categories[0] != "all" {
			t.Errorf("%s: categories %v, want [all]", w.name, n.Categories)
		}
		if len(c.Spec.Versions) != 1 {
			t.Fatalf("%s: %d versions, want 1", w.name, len(c.Spec.Versions))
		}
		v := c.Spec.Versions[0]
		if v.Name != "v1" || !v.Served || !v.Storage {
			t.Errorf("%s: version %q served=%v storage=%v", w.name, v.Name, v.Served, v.Storage)
		}
		if v.Subresources == nil || v.Subresources.Status == nil {
			t.Errorf("%s: no status subresource", w.name)
		}
		if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			t.Fatalf("%s: no schema", w.name)
		}
		var got []column
		for _, col := range v.AdditionalPrinterColumns {
			got = append(got, column{col.Name, col.Type, col.JSONPath, col.Priority})
		}
		if len(got) != len(w.columns) {
			t.Errorf("%s: columns %v, want %v", w.name, got, w.columns)
			continue
		}
		for j := range got {
			if got[j] != w.columns[j] {
				t.Errorf("%s: column %d = %v, want %v", w.name, j, got[j], w.columns[j])
			}
		}
	}
}

// The RayJob and RayCronJob schemas carry raydar's status.conditions and the
// RayService schema its suspend field, all absent from KubeRay's.
func TestSchemaHasRaydarAdditions(t *testing.T) {
	objs, err := Objects()
	if err != nil {
		t.Fatal(err)
	}
	byKind := map[string]*apiextensionsv1.JSONSchemaProps{}
	for _, c := range objs {
		byKind[c.Spec.Names.Kind] = c.Spec.Versions[0].Schema.OpenAPIV3Schema
	}
	conds, ok := byKind["RayJob"].Properties["status"].Properties["conditions"]
	if !ok || conds.Items == nil || conds.Items.Schema.Properties["type"].Type != "string" {
		t.Errorf("RayJob status.conditions missing or malformed: %+v", conds)
	}
	spec := byKind["RayJob"].Properties["spec"]
	if d := spec.Properties["submissionMode"].Default; d == nil || string(d.Raw) != `"K8sJobMode"` {
		t.Errorf("RayJob submissionMode default = %v", d)
	}
	cron := byKind["RayCronJob"]
	if conds, ok := cron.Properties["status"].Properties["conditions"]; !ok || conds.Items == nil {
		t.Errorf("RayCronJob status.conditions missing or malformed: %+v", conds)
	}
	tmpl := cron.Properties["spec"].Properties["jobTemplate"]
	if d := tmpl.Properties["submissionMode"].Default; d == nil || string(d.Raw) != `"K8sJobMode"` {
		t.Errorf("RayCronJob jobTemplate.submissionMode default = %v: the template must be a whole RayJobSpec", d)
	}
	if sch := cron.Properties["spec"].Properties["schedule"]; len(sch.XValidations) != 2 {
		t.Errorf("RayCronJob spec.schedule has %d CEL rules, want 2 (no TZ, five fields or a descriptor)", len(sch.XValidations))
	}
	wg := byKind["RayCluster"].Properties["spec"].Properties["workerGroupSpecs"].Items.Schema
	for field, def := range map[string]string{"minReplicas": "0", "maxReplicas": "2147483647", "numOfHosts": "1", "replicas": "0"} {
		if d := wg.Properties[field].Default; d == nil || string(d.Raw) != def {
			t.Errorf("workerGroupSpecs[].%s default = %v, want %s", field, d, def)
		}
	}
	if len(wg.XValidations) == 0 {
		t.Error("workerGroupSpecs[] has no CEL rule (minReplicas <= maxReplicas)")
	}
	// Embedded object metadata keeps its fields (generateEmbeddedObjectMeta);
	// otherwise the API server prunes pod template labels and annotations.
	head := byKind["RayCluster"].Properties["spec"].Properties["headGroupSpec"]
	for _, path := range []struct {
		what   string
		schema apiextensionsv1.JSONSchemaProps
	}{
		{"head template", head.Properties["template"].Properties["metadata"]},
		{"headService", head.Properties["headService"].Properties["metadata"]},
		{"worker template", wg.Properties["template"].Properties["metadata"]},
		{"submitter template", byKind["RayJob"].Properties["spec"].Properties["submitterPodTemplate"].Properties["metadata"]},
		{"serveService", byKind["RayService"].Properties["spec"].Properties["serveService"].Properties["metadata"]},
	} {
		for _, f := range []string{"labels", "annotations", "name"} {
			if _, ok := path.schema.Properties[f]; !ok {
				t.Errorf("%s metadata has no %s property: it would be pruned", path.what, f)
			}
		}
	}
	rs := byKind["RayService"].Properties["spec"]
	// KubeRay's schema defaults neither rayClusterDeletionDelaySeconds nor
	// the Ingress path and pathType (its operator does): a default here
	// would put values into stored objects that KubeRay's CRD leaves out.
	if d := rs.Properties["rayClusterDeletionDelaySeconds"].Default; d != nil {
		t.Errorf("rayClusterDeletionDelaySeconds default = %s, want none (as KubeRay)", d.Raw)
	}
	ing := head.Properties["ingressOptions"]
	for _, f := range []string{"path", "pathType"} {
		if d := ing.Properties[f].Default; d != nil {
			t.Errorf("ingressOptions.%s default = %s, want none (as KubeRay)", f, d.Raw)
		}
	}
}

func TestYAMLIsAllDocuments(t *testing.T) {
	y := YAML()
	docs := bytes.Split(y, []byte("\n---\n"))
	if !bytes.HasPrefix(y, []byte("---\n")) || len(docs) != 4 {
		t.Fatalf("YAML() has %d documents", len(docs))
	}
	for i, d := range docs {
		c := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(bytes.TrimPrefix(d, []byte("---\n")), c); err != nil {
			t.Fatalf("document %d: %v", i, err)
		}
		if !strings.HasSuffix(c.Name, ".ray.io") {
			t.Errorf("document %d is %q", i, c.Name)
		}
	}
	if !bytes.Equal(y, YAML()) {
		t.Error("YAML() is not stable")
	}
}

// Client-side `kubectl apply` stores the whole object in the
// last-applied-configuration annotation, and annotations are limited to
// 256KiB in total: each CRD must stay below that for
// `raydar crds | kubectl apply -f -` to work.
func TestCRDsFitClientSideApply(t *testing.T) {
	objs, err := Objects()
	if err != nil {
		t.Fatal(err)
	}
	const limit = 256 * 1024
	for _, c := range objs {
		b, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) >= limit {
			t.Errorf("%s is %d bytes of JSON; kubectl apply needs < %d", c.Name, len(b), limit)
		}
	}
}
