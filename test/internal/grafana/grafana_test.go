package grafana

import (
	"os"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	q, err := Parse([]byte(`{"panels":[{"targets":[
		{"expr":"count(kuberay_cluster_info) by (namespace)"},
		{"expr":"histogram_quantile(0.99, sum(rate(controller_runtime_reconcile_time_seconds_bucket{namespace=\"$ns\", controller=~\"$c\"}[5m])) by (le, controller))"},
		{"expr":"kuberay_job_deployment_status{namespace=~\"$ns\"}"}]}],
		"templating":{"list":[{"definition":"label_values(controller_runtime_active_workers{namespace=\"$ns\"},controller)"}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"kuberay_cluster_info":                      "namespace",
		"controller_runtime_reconcile_time_seconds": "controller,namespace",
		"kuberay_job_deployment_status":             "namespace",
		"controller_runtime_active_workers":         "controller,namespace",
	}
	if len(q) != len(want) {
		t.Errorf("metrics %v, want %d", q.Names(), len(want))
	}
	for n, ls := range want {
		if got := strings.Join(q[n], ","); got != ls {
			t.Errorf("%s: labels %q, want %q", n, got, ls)
		}
	}
}

// KubeRay's own dashboard: the metrics it is known to query are found.
func TestParseKubeRaysDashboard(t *testing.T) {
	b, err := os.ReadFile("testdata/KubeRay-Operator.json")
	if err != nil {
		t.Fatal(err)
	}
	q, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"kuberay_cluster_info", "kuberay_service_condition_upgrade_in_progress", "workqueue_depth", "controller_runtime_reconcile_total"} {
		if _, ok := q[n]; !ok {
			t.Errorf("%s not found among %v", n, q.Names())
		}
	}
	for _, n := range q.Names() {
		if strings.Contains(n, "$") || n == "sum" || n == "rate" || n == "count" {
			t.Errorf("%q taken for a metric", n)
		}
	}
}
