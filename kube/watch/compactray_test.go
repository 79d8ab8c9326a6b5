package watch

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer"

	"github.com/raydar/raydar/rayapi/scheme"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// rayClusterJSON is a RayCluster as the API server serves it: a head and
// two worker groups, the kind of containers KubeRay's samples have (env,
// ports, mounts, lifecycle), and managedFields.
func rayClusterJSON(name, workerMemory string) string {
	return `{"apiVersion":"ray.io/v1","kind":"RayCluster","metadata":{"name":"` + name + `","namespace":"team-a","uid":"uid-` + name + `",
 "labels":{"app":"ray","team":"a"},
 "managedFields":[{"manager":"kubectl","operation":"Apply","apiVersion":"ray.io/v1","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{}}}]},
"spec":{"rayVersion":"2.52.0",
 "headGroupSpec":{"rayStartParams":{"dashboard-host":"0.0.0.0","num-cpus":"0"},"template":{"metadata":{"labels":{"app":"ray"}},"spec":{
  "serviceAccountName":"ray","nodeSelector":{"pool":"cpu"},
  "tolerations":[{"key":"dedicated","operator":"Equal","value":"ray","effect":"NoSchedule"}],
  "containers":[{"name":"ray-head","image":"rayproject/ray:2.52.0",
   "env":[{"name":"RAY_GRAFANA_HOST","value":"http://grafana:3000"}],
   "ports":[{"containerPort":6379,"name":"gcs"},{"containerPort":8265,"name":"dashboard"}],
   "lifecycle":{"preStop":{"exec":{"command":["/bin/sh","-c","ray stop"]}}},
   "volumeMounts":[{"mountPath":"/tmp/ray","name":"ray-logs"}],
   "resources":{"limits":{"cpu":"2","memory":"8Gi"},"requests":{"cpu":"2","memory":"8Gi"}}}],
  "volumes":[{"name":"ray-logs","emptyDir":{}}]}}},
 "workerGroupSpecs":[
  {"groupName":"small","replicas":2,"minReplicas":1,"maxReplicas":10,"numOfHosts":1,"rayStartParams":{},"template":{"spec":{
   "containers":[{"name":"ray-worker","image":"rayproject/ray:2.52.0",
    "resources":{"limits":{"cpu":"1","memory":"` + workerMemory + `"},"requests":{"cpu":"500m","memory":"` + workerMemory + `"}}}]}}},
  {"groupName":"gpu","replicas":0,"minReplicas":0,"maxReplicas":4,"numOfHosts":1,"rayStartParams":{"num-gpus":"1"},"template":{"spec":{
   "containers":[{"name":"ray-worker","image":"rayproject/ray-ml:2.52.0-gpu",
    "resources":{"limits":{"cpu":"8","memory":"32Gi","nvidia.com/gpu":"1"},"requests":{"cpu":"8","memory":"32Gi","nvidia.com/gpu":"1"}}}]}}}]},
"status":{"state":"ready","readyWorkerReplicas":2}}`
}

// sameRef says whether two maps or slices are one.
func sameRef(x, y any) bool {
	return reflect.ValueOf(x).UnsafePointer() == reflect.ValueOf(y).UnsafePointer()
}

func decodeRay[T any](t testing.TB, s string) T {
	t.Helper()
	obj, _, err := serializer.NewCodecFactory(scheme.New()).UniversalDeserializer().Decode([]byte(s), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	o, ok := obj.(T)
	if !ok {
		t.Fatalf("decoded a %T", obj)
	}
	return o
}

// CompactRay changes no value a reader sees (managedFields aside), and two
// clusters made from one template share their templates' containers and
// resource lists; what differs is not shared.
func TestCompactRaySharesAndKeepsEveryValue(t *testing.T) {
	compact := func(rc *rayv1.RayCluster) *rayv1.RayCluster {
		t.Helper()
		got, err := CompactRay(rc)
		if err != nil || got != any(rc) {
			t.Fatalf("CompactRay = %v, %v", got, err)
		}
		return rc
	}
	a := compact(decodeRay[*rayv1.RayCluster](t, rayClusterJSON("a", "4Gi")))
	b := compact(decodeRay[*rayv1.RayCluster](t, rayClusterJSON("b", "4Gi")))
	for _, c := range []struct {
		got  *rayv1.RayCluster
		name string
	}{{a, "a"}, {b, "b"}} {
		want := decodeRay[*rayv1.RayCluster](t, rayClusterJSON(c.name, "4Gi"))
		want.ManagedFields = nil
		if d := cmp.Diff(want, c.got); d != "" {
			t.Errorf("cluster %s changed (-want +got):\n%s", c.name, d)
		}
	}
	same := func(what string, x, y any) {
		t.Helper()
		if !sameRef(x, y) {
			t.Errorf("%s not shared", what)
		}
	}
	ha, hb := a.Spec.HeadGroupSpec.Template.Spec, b.Spec.HeadGroupSpec.Template.Spec
	same("head containers", ha.Containers, hb.Containers)
	same("head limits", ha.Containers[0].Resources.Limits, hb.Containers[0].Resources.Limits)
	same("head node selector", ha.NodeSelector, hb.NodeSelector)
	same("head tolerations", ha.Tolerations, hb.Tolerations)
	same("head rayStartParams", a.Spec.HeadGroupSpec.RayStartParams, b.Spec.HeadGroupSpec.RayStartParams)
	same("template labels", a.Spec.HeadGroupSpec.Template.Labels, b.Spec.HeadGroupSpec.Template.Labels)
	for i := range a.Spec.WorkerGroupSpecs {
		same("worker containers", a.Spec.WorkerGroupSpecs[i].Template.Spec.Containers, b.Spec.WorkerGroupSpecs[i].Template.Spec.Containers)
	}
	// Within one cluster: the head's limits and requests are equal, and
	// so are one map.
	same("equal limits and requests", ha.Containers[0].Resources.Limits, ha.Containers[0].Resources.Requests)

	// 4Gi written in bytes is equal in value, but a reader shows it as
	// written: not shared, and kept as written.
	c := compact(decodeRay[*rayv1.RayCluster](t, rayClusterJSON("c", "4294967296")))
	wa, wc := a.Spec.WorkerGroupSpecs[0].Template.Spec.Containers, c.Spec.WorkerGroupSpecs[0].Template.Spec.Containers
	if sameRef(wa, wc) || sameRef(wa[0].Resources.Limits, wc[0].Resources.Limits) {
		t.Error("4Gi and 4294967296 shared one container or list")
	}
	if got := wc[0].Resources.Limits.Memory().String(); got != "4294967296" {
		t.Errorf("c's worker memory reads %s; want 4294967296", got)
	}
	if got := wa[0].Resources.Limits.Memory().String(); got != "4Gi" {
		t.Errorf("a's worker memory reads %s; want 4Gi", got)
	}
	same("the gpu group, equal in a and c", a.Spec.WorkerGroupSpecs[1].Template.Spec.Containers, c.Spec.WorkerGroupSpecs[1].Template.Spec.Containers)
	if sameRef(a.Spec.WorkerGroupSpecs[0].Template.Spec.Containers, a.Spec.WorkerGroupSpecs[1].Template.Spec.Containers) {
		t.Error("two groups with other images share a container")
	}
}

// The cluster specs inside a RayJob, a RayService and a RayCronJob are
// compacted too, and every kind loses its managedFields.
func TestCompactRayOtherKinds(t *testing.T) {
	rc := decodeRay[*rayv1.RayCluster](t, rayClusterJSON("a", "4Gi"))
	CompactRay(rc)
	spec := rayClusterJSON("x", "4Gi")
	spec = strings.TrimRight(spec[strings.Index(spec, `"spec":{`)+len(`"spec":`):strings.LastIndex(spec, `"status"`)], ",\n")
	meta := `"metadata":{"name":"x","namespace":"team-a","managedFields":[{"manager":"m","operation":"Update"}]}`
	job := decodeRay[*rayv1.RayJob](t, `{"apiVersion":"ray.io/v1","kind":"RayJob",`+meta+`,"spec":{"entrypoint":"python x.py","rayClusterSpec":`+spec+`}}`)
	svc := decodeRay[*rayv1.RayService](t, `{"apiVersion":"ray.io/v1","kind":"RayService",`+meta+`,"spec":{"rayClusterConfig":`+spec+`}}`)
	cron := decodeRay[*rayv1.RayCronJob](t, `{"apiVersion":"ray.io/v1","kind":"RayCronJob",`+meta+`,"spec":{"schedule":"* * * * *","jobTemplate":{"entrypoint":"python x.py","rayClusterSpec":`+spec+`}}}`)
	ev := &corev1.Event{}
	ev.ManagedFields = job.ManagedFields
	specs := map[string]*rayv1.RayClusterSpec{"RayJob": job.Spec.RayClusterSpec, "RayService": &svc.Spec.RayClusterSpec, "RayCronJob": cron.Spec.JobTemplate.RayClusterSpec}
	for _, o := range []any{job, svc, cron, ev} {
		if _, err := CompactRay(o); err != nil {
			t.Fatal(err)
		}
	}
	for kind, s := range specs {
		if !sameRef(s.HeadGroupSpec.Template.Spec.Containers, rc.Spec.HeadGroupSpec.Template.Spec.Containers) {
			t.Errorf("%s's head containers not shared with the RayCluster's", kind)
		}
	}
	if len(job.ManagedFields)+len(svc.ManagedFields)+len(cron.ManagedFields)+len(ev.ManagedFields) > 0 {
		t.Error("managedFields kept")
	}
}

// BenchmarkRayClusterDecode: 1,000 RayClusters of the e2e data set's shape
// (test/internal/testobj.Cluster as the API server serves it), decoded from
// JSON as the TUI's cache does, with and without CompactRay: what each
// keeps on the heap.
func BenchmarkRayClusterDecode(b *testing.B) {
	const n = 1000
	var items []string
	for i := range n {
		items = append(items, fmt.Sprintf(`{"apiVersion":"ray.io/v1","kind":"RayCluster","metadata":{"name":"c-%05d","namespace":"bench-00","uid":"u-%d","resourceVersion":"%d","generation":1,"creationTimestamp":"2026-12-03T20:49:22Z"},
"spec":{"rayVersion":"2.52.0","headGroupSpec":{"rayStartParams":{},"template":{"metadata":{},"spec":{"containers":[{"image":"rayproject/ray:2.52.0","name":"ray-head","resources":{"limits":{"cpu":"1","memory":"1Gi"},"requests":{"cpu":"100m","memory":"128Mi"}}}]}}},
"workerGroupSpecs":[{"groupName":"small","maxReplicas":100,"minReplicas":0,"numOfHosts":1,"priority":0,"rayStartParams":{},"replicas":9,"scaleStrategy":{},"template":{"metadata":{},"spec":{"containers":[{"image":"rayproject/ray:2.52.0","name":"ray-worker","resources":{"limits":{"cpu":"1","memory":"1Gi"},"requests":{"cpu":"100m","memory":"128Mi"}}}]}}}]}}`, i, i, i))
	}
	body := []byte(`{"apiVersion":"ray.io/v1","kind":"RayClusterList","metadata":{"resourceVersion":"1"},"items":[` + strings.Join(items, ",") + `]}`)
	dec := serializer.NewCodecFactory(scheme.New()).UniversalDeserializer()
	decode := func(b *testing.B, compact bool) []rayv1.RayCluster {
		obj, _, err := dec.Decode(body, nil, nil)
		if err != nil {
			b.Fatal(err)
		}
		l := obj.(*rayv1.RayClusterList).Items
		if compact {
			for i := range l {
				CompactRay(&l[i])
			}
		}
		return l
	}
	for _, compact := range []bool{false, true} {
		b.Run(fmt.Sprintf("compact=%v", compact), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				decode(b, compact)
			}
			b.ReportMetric(float64(heapKept(func() any { return decode(b, compact) }))/n, "kept-B/cluster")
		})
	}
}
