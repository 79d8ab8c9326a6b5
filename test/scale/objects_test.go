package scale

import (
	_ "embed"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// The perf-tests' objects, as KubeRay's benchmark/perf-tests fill them.
var (
	//go:embed testdata/raycluster.yaml
	rayClusterYAML []byte
	//go:embed testdata/pytorch-mnist-rayjob.yaml
	pytorchJobYAML []byte
	//go:embed testdata/ray-data-image-resize.yaml
	imageResizeJobYAML []byte
)

// perfTestCluster is the perf-tests' RayCluster named ns/name with
// workers replicas in its one group (maxReplicas raised to fit).
func perfTestCluster(b *testing.B, ns, name string, workers int32) *rayv1.RayCluster {
	b.Helper()
	rc := &rayv1.RayCluster{}
	if err := yaml.UnmarshalStrict(rayClusterYAML, rc); err != nil {
		b.Fatal(err)
	}
	rc.Namespace, rc.Name = ns, name
	g := &rc.Spec.WorkerGroupSpecs[0]
	g.Replicas = ptr.To(workers)
	g.MinReplicas = ptr.To(min(*g.MinReplicas, workers))
	g.MaxReplicas = ptr.To(max(*g.MaxReplicas, workers))
	return rc
}

// perfTestJob is the perf-tests' i-th RayJob: their two templates in turn
// (PyTorch MNIST, Ray Data image resize), named ns/name.
func perfTestJob(b *testing.B, i int, ns, name string) *rayv1.RayJob {
	b.Helper()
	src := pytorchJobYAML
	if i%2 == 1 {
		src = imageResizeJobYAML
	}
	rj := &rayv1.RayJob{}
	if err := yaml.UnmarshalStrict(src, rj); err != nil {
		b.Fatal(err)
	}
	rj.Namespace, rj.Name = ns, name
	return rj
}

func namespace(name string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
}

func clusterList() client.ObjectList { return &rayv1.RayClusterList{} }
func podList() client.ObjectList     { return &corev1.PodList{} }
func jobList() client.ObjectList     { return &rayv1.RayJobList{} }

// clusterReady: a RayCluster whose status says ready.
func clusterReady(obj client.Object) bool {
	rc, ok := obj.(*rayv1.RayCluster)
	return ok && rc.Status.State == rayv1.Ready
}

// key is namespace/name.
func key(obj client.Object) string { return obj.GetNamespace() + "/" + obj.GetName() }
