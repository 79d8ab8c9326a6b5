package metrics

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/raydar/raydar/rayapi/scheme"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

var t0 = time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)

func objMeta(name, uid string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: "team", Name: name, UID: k8stypes.UID(uid), CreationTimestamp: metav1.NewTime(t0)}
}

// series is what one scrape serves: metric name → label sets ("k=v,…").
func series(t *testing.T, m *Metrics) map[string][]string {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(m); err != nil {
		t.Fatal(err)
	}
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, f := range fams {
		if f.GetType() != dto.MetricType_GAUGE {
			t.Errorf("%s is a %s; KubeRay's are gauges", f.GetName(), f.GetType())
		}
		for _, mt := range f.Metric {
			var ls []string
			for _, l := range mt.Label {
				ls = append(ls, l.GetName()+"="+l.GetValue())
			}
			out[f.GetName()] = append(out[f.GetName()], strings.Join(ls, ","))
		}
	}
	return out
}

func fixture(t *testing.T) *Metrics {
	rc := &rayv1.RayCluster{ObjectMeta: objMeta("c", "u1")}
	rc.Labels = map[string]string{rayv1.RayOriginatedFromCRDLabelKey: "RayJob"}
	rc.Status.Conditions = []metav1.Condition{{Type: string(rayv1.RayClusterProvisioned), Status: metav1.ConditionTrue}}
	rj := &rayv1.RayJob{ObjectMeta: objMeta("j", "u2")}
	rj.Status.JobDeploymentStatus = rayv1.JobDeploymentStatusRunning
	rs := &rayv1.RayService{ObjectMeta: objMeta("s", "u3")}
	rs.Status.Conditions = []metav1.Condition{{Type: string(rayv1.RayServiceReady), Status: metav1.ConditionTrue}}
	c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(rc, rj, rs).Build()
	m := New(c, logr.Discard())
	m.now = func() time.Time { return t0.Add(42 * time.Second) }
	return m
}

// The scrape-time gauges: KubeRay v1.7.0's names and label sets, one series
// per object in the cache.
func TestCollectedGauges(t *testing.T) {
	got := series(t, fixture(t))
	want := map[string]string{
		"kuberay_cluster_info":                          "name=c,namespace=team,owner_kind=RayJob,uid=u1",
		"kuberay_cluster_condition_provisioned":         "condition=true,name=c,namespace=team,uid=u1",
		"kuberay_job_info":                              "name=j,namespace=team,uid=u2",
		"kuberay_job_deployment_status":                 "deployment_status=Running,name=j,namespace=team,uid=u2",
		"kuberay_service_info":                          "name=s,namespace=team,uid=u3",
		"kuberay_service_condition_ready":               "condition=true,name=s,namespace=team,uid=u3",
		"kuberay_service_condition_upgrade_in_progress": "condition=false,name=s,namespace=team,uid=u3",
	}
	for n, ls := range want {
		if !slices.Equal(got[n], []string{ls}) {
			t.Errorf("%s: %v, want [%s]", n, got[n], ls)
		}
	}
	if len(got) != len(want) {
		t.Errorf("families %v: no duration series before a transition", got)
	}
}

// The duration gauges: set on the transition only, deleted with the object.
func TestDurationsOnTransitions(t *testing.T) {
	m := fixture(t)
	pending := &rayv1.RayCluster{ObjectMeta: objMeta("c", "u1")}
	ready := pending.DeepCopy()
	ready.Status.Conditions = []metav1.Condition{{Type: string(rayv1.RayClusterProvisioned), Status: metav1.ConditionTrue}}
	m.ClusterChanged(ready, ready) // no transition
	if _, ok := series(t, m)["kuberay_cluster_provisioned_duration_seconds"]; ok {
		t.Fatal("a duration without a transition")
	}
	m.ClusterChanged(pending, ready)
	if v := gaugeValue(t, m.clusterProvisioned, "c", "team", "u1"); v != 42 {
		t.Errorf("kuberay_cluster_provisioned_duration_seconds = %v, want 42 (since creation)", v)
	}

	running := &rayv1.RayJob{ObjectMeta: objMeta("j", "u2")}
	running.Status.JobDeploymentStatus = rayv1.JobDeploymentStatusRunning
	running.Status.StartTime = ptr.To(metav1.NewTime(t0.Add(2 * time.Second)))
	running.Status.Failed = ptr.To[int32](1)
	done := running.DeepCopy()
	done.Status.JobDeploymentStatus = rayv1.JobDeploymentStatusComplete
	m.JobChanged(running, done)
	m.JobChanged(done, done) // terminal to terminal: nothing
	if v := gaugeValue(t, m.jobDuration, "j", "team", "u2", "Complete", "1"); v != 40 {
		t.Errorf("kuberay_job_execution_duration_seconds = %v, want 40 (since the job started)", v)
	}

	m.Forget(ready)
	m.Forget(done)
	got := series(t, m)
	for _, n := range []string{"kuberay_cluster_provisioned_duration_seconds", "kuberay_job_execution_duration_seconds"} {
		if len(got[n]) != 0 {
			t.Errorf("%s after the delete: %v", n, got[n])
		}
	}
}

func gaugeValue(t *testing.T, v *prometheus.GaugeVec, labels ...string) float64 {
	t.Helper()
	var m dto.Metric
	if err := v.WithLabelValues(labels...).Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetGauge().GetValue()
}
