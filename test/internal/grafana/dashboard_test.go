package grafana_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/raydar/raydar/controller/metrics"
	"github.com/raydar/raydar/rayapi/scheme"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/test/internal/grafana"
)

// TestKubeRayDashboardOnRaydarsMetrics: every kuberay_* metric KubeRay's
// Grafana dashboard (v1.7.0, testdata) queries is served by raydar's
// controller/metrics, with every label the dashboard selects or groups it
// by. (Its controller_runtime_* and workqueue_* series are
// controller-runtime's, checked on a running operator by test/deploy;
// kube_pod_* are kube-state-metrics'.)
func TestKubeRayDashboardOnRaydarsMetrics(t *testing.T) {
	b, err := os.ReadFile("testdata/KubeRay-Operator.json")
	if err != nil {
		t.Fatal(err)
	}
	q, err := grafana.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	om := func(name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Namespace: "team", Name: name, UID: types.UID("u-" + name), CreationTimestamp: metav1.NewTime(time.Now())}
	}
	provisioned := []metav1.Condition{{Type: string(rayv1.RayClusterProvisioned), Status: metav1.ConditionTrue}}
	rc := &rayv1.RayCluster{ObjectMeta: om("c")}
	rj := &rayv1.RayJob{ObjectMeta: om("j")}
	rs := &rayv1.RayService{ObjectMeta: om("s")}
	m := metrics.New(fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(rc, rj, rs).Build(), logr.Discard())
	m.ClusterChanged(rc, &rayv1.RayCluster{ObjectMeta: om("c"), Status: rayv1.RayClusterStatus{Conditions: provisioned}})
	m.JobChanged(&rayv1.RayJob{ObjectMeta: om("j"), Status: rayv1.RayJobStatus{JobDeploymentStatus: rayv1.JobDeploymentStatusRunning}},
		&rayv1.RayJob{ObjectMeta: om("j"), Status: rayv1.RayJobStatus{JobDeploymentStatus: rayv1.JobDeploymentStatusFailed}})
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(m); err != nil {
		t.Fatal(err)
	}
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	served := map[string]map[string]bool{}
	for _, f := range fams {
		served[f.GetName()] = map[string]bool{}
		for _, l := range f.Metric[0].Label {
			served[f.GetName()][l.GetName()] = true
		}
	}
	n := 0
	for _, name := range q.Names() {
		if !strings.HasPrefix(name, "kuberay_") {
			continue
		}
		n++
		labels, ok := served[name]
		if !ok {
			t.Errorf("the dashboard queries %s, which raydar does not serve", name)
			continue
		}
		for _, l := range q[name] {
			if !labels[l] {
				t.Errorf("the dashboard selects or groups %s by %q, which raydar's has not", name, l)
			}
		}
	}
	if n != 9 {
		t.Errorf("the dashboard queries %d kuberay_* metrics, KubeRay v1.7.0's queries 9", n)
	}
}
