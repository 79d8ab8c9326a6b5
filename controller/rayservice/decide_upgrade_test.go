package rayservice

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/raydar/raydar/controller/features"
	"github.com/raydar/raydar/controller/internal/fixture"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/raydar/raydar/rayapi/dashboard"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

func TestRayServiceDecideUpgrade(t *testing.T) {
	// serving sets up an active cluster that serves, with Services.
	serving := func(t *testing.T) (*testEnv, *rayv1.RayCluster) {
		e := newEnv(t, testService())
		rc := e.cluster("aaaaa", time.Hour)
		e.pods(rc, "true", "true", true)
		e.submitted(rc)
		e.services(rc)
		e.probe(rc, dashboard.AppRunning, true)
		e.probe(rc, dashboard.AppRunning, true).Active = true
		e.o.ServeEndpoints = 2
		e.o.Service.Status = decide(e.o).Status
		e.o.Service.Generation = 2
		return e, rc
	}

	t.Run("cluster spec change creates a pending cluster, the active keeps serving", func(t *testing.T) {
		e, active := serving(t)
		e.o.Service.Spec.RayClusterSpec.HeadGroupSpec.Template.Spec.Containers[0].Image = "rayproject/ray:2.53.0"
		p := decide(e.o)
		if p.CreateCluster == nil || p.CreateCluster.Name != "svc-abcde" {
			t.Fatalf("CreateCluster = %v", p.CreateCluster)
		}
		if len(p.Submit)+len(p.UpdateServices)+len(p.DeleteClusters)+len(p.UpdateClusters) != 0 {
			t.Fatalf("touched the active cluster: %+v", p)
		}
		st := p.Status
		if st.ActiveServiceStatus.RayClusterName != active.Name || st.PendingServiceStatus.RayClusterName != "svc-abcde" {
			t.Errorf("active/pending = %q/%q", st.ActiveServiceStatus.RayClusterName, st.PendingServiceStatus.RayClusterName)
		}
		if c := condOf(st, rayv1.UpgradeInProgress); c.Status != metav1.ConditionTrue || c.Reason != string(rayv1.BothActivePendingClustersExist) {
			t.Errorf("UpgradeInProgress = %+v", c)
		}
		if c := condOf(st, rayv1.RayServiceReady); c.Status != metav1.ConditionTrue {
			t.Errorf("Ready during the upgrade = %+v", c)
		}
		if !p.Urgent {
			t.Error("not urgent")
		}
	})

	for _, tc := range []struct {
		name   string
		change func(*rayv1.RayClusterSpec)
		want   []string
	}{
		{"replicas change applies in place", func(s *rayv1.RayClusterSpec) { s.WorkerGroupSpecs[0].Replicas = fixture.Ptr(int32(3)) }, []string{"replicas of group g"}},
		{"max change applies in place", func(s *rayv1.RayClusterSpec) { s.WorkerGroupSpecs[0].MaxReplicas = fixture.Ptr(int32(20)) }, []string{"replicas of group g"}},
		{"appended worker group applies in place", func(s *rayv1.RayClusterSpec) {
			s.WorkerGroupSpecs = append(s.WorkerGroupSpecs, fixture.Group("extra", 2))
		}, []string{"added worker group extra"}},
		{"workersToDelete is ignored", func(s *rayv1.RayClusterSpec) { s.WorkerGroupSpecs[0].ScaleStrategy.WorkersToDelete = []string{"x"} }, nil},
		{"tolerations are ignored", func(s *rayv1.RayClusterSpec) {
			s.HeadGroupSpec.Template.Spec.Tolerations = []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists}}
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, active := serving(t)
			tc.change(&e.o.Service.Spec.RayClusterSpec)
			p := decide(e.o)
			if p.CreateCluster != nil {
				t.Fatalf("created a new cluster")
			}
			if tc.want == nil {
				if len(p.UpdateClusters) != 0 {
					t.Fatalf("UpdateClusters = %+v", p.UpdateClusters)
				}
				return
			}
			if len(p.UpdateClusters) != 1 || p.UpdateClusters[0].Cluster.Name != active.Name || strings.Join(p.UpdateClusters[0].What, ",") != strings.Join(tc.want, ",") {
				t.Fatalf("UpdateClusters = %+v", p.UpdateClusters)
			}
			upd := p.UpdateClusters[0].Cluster
			if n := len(e.o.Service.Spec.RayClusterSpec.WorkerGroupSpecs); len(upd.Spec.WorkerGroupSpecs) != n || upd.Annotations[rayv1.NumWorkerGroupsKey] != strconv.Itoa(n) {
				t.Errorf("groups %d, annotation %s", len(upd.Spec.WorkerGroupSpecs), upd.Annotations[rayv1.NumWorkerGroupsKey])
			}
			last := upd.Spec.WorkerGroupSpecs[len(upd.Spec.WorkerGroupSpecs)-1]
			groups := e.o.Service.Spec.RayClusterSpec.WorkerGroupSpecs
			if want := groups[len(groups)-1]; !equality.Semantic.DeepEqual(last, want) {
				t.Errorf("added worker group %+v, want the RayService's as written %+v", last, want)
			}
			// Applied once: the cluster with the update matches and needs nothing more.
			e.o.Clusters[0] = upd
			if p := decide(e.o); len(p.UpdateClusters) != 0 || p.CreateCluster != nil {
				t.Errorf("second pass: %+v", p)
			}
		})
	}

	t.Run("autoscaler-changed replicas are left alone while the RayService's stay the same", func(t *testing.T) {
		e, active := serving(t)
		active.Spec.WorkerGroupSpecs[0].Replicas = fixture.Ptr(int32(7))
		if p := decide(e.o); len(p.UpdateClusters) != 0 {
			t.Fatalf("UpdateClusters = %+v", p.UpdateClusters)
		}
	})

	t.Run("upgradeStrategy None never creates a new cluster", func(t *testing.T) {
		e, _ := serving(t)
		none := rayv1.None
		e.o.Service.Spec.UpgradeStrategy = &rayv1.RayServiceUpgradeStrategy{Type: &none}
		e.o.Service.Spec.RayClusterSpec.HeadGroupSpec.Template.Spec.Containers[0].Image = "rayproject/ray:2.53.0"
		p := decide(e.o)
		if p.CreateCluster != nil || len(p.UpdateClusters) != 0 {
			t.Fatalf("plan = %+v", p)
		}
		if got := eventReasons(p); len(got) != 1 || got[0] != reasonUpgradeSkipped {
			t.Errorf("events = %v", got)
		}
	})

	t.Run("NewClusterWithIncrementalUpgrade with the gate off: no upgrade starts, as KubeRay v1.6.2", func(t *testing.T) {
		e, _ := serving(t)
		e.o.Config.Build.Features = features.MustParse("RayServiceIncrementalUpgrade=false")
		inc := rayv1.NewClusterWithIncrementalUpgrade
		e.o.Service.Spec.RayClusterSpec.EnableInTreeAutoscaling = fixture.Ptr(true)
		e.o.Service.Spec.UpgradeStrategy = &rayv1.RayServiceUpgradeStrategy{Type: &inc, ClusterUpgradeOptions: &rayv1.ClusterUpgradeOptions{
			StepSizePercent: fixture.Ptr(int32(10)), IntervalSeconds: fixture.Ptr(int32(30)), GatewayClassName: "istio"}}
		e.o.Service.Spec.RayClusterSpec.HeadGroupSpec.Template.Spec.Containers[0].Image = "rayproject/ray:2.53.0"
		p := decide(e.o)
		if p.CreateCluster != nil || len(p.DeleteClusters) != 0 || len(p.UpdateClusters) != 0 || len(p.UpdateServices) != 0 ||
			len(p.DeleteServices) != 0 || len(p.Submit) != 0 || p.Incr.Gateway != nil || p.Incr.HTTPRoute != nil {
			t.Fatalf("an upgrade with the gate off changed something: %+v", p)
		}
		if got := eventReasons(p); len(got) != 1 || got[0] != reasonUpgradeSkipped || !strings.Contains(p.Events[0].Message, "RayServiceIncrementalUpgrade is off") {
			t.Errorf("events = %v", p.Events)
		}
	})

	// upgrading: the active cluster serves, the pending one has the new spec.
	upgrading := func(t *testing.T) (*testEnv, *rayv1.RayCluster, *rayv1.RayCluster) {
		e, active := serving(t)
		e.o.Service.Spec.RayClusterSpec.HeadGroupSpec.Template.Spec.Containers[0].Image = "rayproject/ray:2.53.0"
		pending := e.cluster("bbbbb", time.Minute)
		e.o.Service.Status = decide(e.o).Status
		return e, active, pending
	}

	t.Run("pending cluster running the config with a healthy proxy: traffic switches, old one retires", func(t *testing.T) {
		e, active, pending := upgrading(t)
		e.pods(pending, "false", "true", true)
		e.submitted(pending)
		e.probe(pending, dashboard.AppRunning, true)
		p := decide(e.o)
		if len(p.UpdateServices) != 2 {
			t.Fatalf("UpdateServices = %d", len(p.UpdateServices))
		}
		for _, s := range p.UpdateServices {
			if s.Spec.Selector[rayv1.RayClusterLabelKey] != pending.Name {
				t.Errorf("%s selector = %v", s.Name, s.Spec.Selector)
			}
			// KubeRay's labels: the selector, not a label, names the cluster.
			if _, has := s.Labels[rayv1.RayClusterLabelKey]; has || s.Labels[rayv1.RayOriginatedFromCRNameLabelKey] != "svc" {
				t.Errorf("%s labels = %v", s.Name, s.Labels)
			}
		}
		if len(p.PodLabels) != 1 || p.PodLabels[0].Pod.Name != pending.Name+"-head-x" || p.PodLabels[0].Value != "true" {
			t.Errorf("PodLabels = %+v", p.PodLabels)
		}
		if len(p.Annotate) != 1 || p.Annotate[0].Cluster.Name != active.Name || *p.Annotate[0].Set[DeleteAfterKey] != fixture.T0.Add(time.Minute).Format(time.RFC3339) {
			t.Fatalf("Annotate = %+v", p.Annotate)
		}
		if len(p.DeleteClusters) != 0 {
			t.Fatalf("deleted at once: %v", deletedNames(p))
		}
		if p.RequeueAfter != time.Minute && p.RequeueAfter > time.Minute {
			t.Errorf("RequeueAfter = %v", p.RequeueAfter)
		}
		st := p.Status
		if st.ActiveServiceStatus.RayClusterName != pending.Name || st.PendingServiceStatus.RayClusterName != "" {
			t.Errorf("active/pending = %q/%q", st.ActiveServiceStatus.RayClusterName, st.PendingServiceStatus.RayClusterName)
		}
		if c := condOf(st, rayv1.UpgradeInProgress); c.Status != metav1.ConditionFalse || c.Reason != string(rayv1.NoPendingCluster) {
			t.Errorf("UpgradeInProgress = %+v", c)
		}
		if !p.Urgent {
			t.Error("switch not urgent")
		}
	})

	t.Run("no switch to a cluster without a serving pod while the active serves", func(t *testing.T) {
		e, _, pending := upgrading(t)
		e.pods(pending, "false", "false", true)
		e.submitted(pending)
		e.probe(pending, dashboard.AppRunning, false)
		p := decide(e.o)
		if len(p.UpdateServices) != 0 || len(p.Annotate) != 0 {
			t.Fatalf("switched: %+v", p)
		}
		if p.RequeueAfter > time.Second {
			t.Errorf("RequeueAfter = %v; a pending cluster without a healthy proxy is watched closely", p.RequeueAfter)
		}
	})

	t.Run("delay 0 deletes the old cluster in the same pass, after the switch", func(t *testing.T) {
		e, active, pending := upgrading(t)
		e.o.Service.Spec.RayClusterDeletionDelaySeconds = fixture.Ptr(int32(0))
		e.pods(pending, "false", "true", true)
		e.submitted(pending)
		e.probe(pending, dashboard.AppRunning, true)
		p := decide(e.o)
		if len(p.UpdateServices) != 2 || len(p.DeleteClusters) != 1 || p.DeleteClusters[0].Cluster.Name != active.Name {
			t.Fatalf("plan: services %d, deleted %v", len(p.UpdateServices), deletedNames(p))
		}
	})

	t.Run("config changed again during the upgrade: the pending cluster gets the new config", func(t *testing.T) {
		e, active, pending := upgrading(t)
		e.pods(pending, "false", "true", true)
		e.submitted(pending)
		e.probe(pending, dashboard.AppRunning, true)
		e.o.Service.Spec.ServeConfigV2 = strings.Replace(testServeConfig, "/fruit", "/fruits", 1)
		p := decide(e.o)
		if len(p.Submit) != 1 || p.Submit[0].Cluster.Name != pending.Name {
			t.Fatalf("Submit = %+v", p.Submit)
		}
		if len(p.UpdateServices) != 0 {
			t.Fatal("switched before the new config runs")
		}
		_ = active
	})

	t.Run("spec changed again before the pending cluster served: it is replaced", func(t *testing.T) {
		e, _, pending := upgrading(t)
		e.o.Service.Spec.RayClusterSpec.HeadGroupSpec.Template.Spec.Containers[0].Image = "rayproject/ray:2.54.0"
		p := decide(e.o)
		if got := deletedNames(p); len(got) != 1 || got[0] != pending.Name {
			t.Fatalf("deleted %v", got)
		}
		if p.CreateCluster == nil {
			t.Fatal("no replacement")
		}
	})

	t.Run("spec reverted during the upgrade: the pending cluster goes", func(t *testing.T) {
		e, _, pending := upgrading(t)
		e.o.Service.Spec.RayClusterSpec.HeadGroupSpec.Template.Spec.Containers[0].Image = "rayproject/ray:2.52.0"
		p := decide(e.o)
		if got := deletedNames(p); len(got) != 1 || got[0] != pending.Name || p.CreateCluster != nil {
			t.Fatalf("deleted %v, created %v", got, p.CreateCluster)
		}
	})

	t.Run("retiring cluster is deleted at its deadline, not before", func(t *testing.T) {
		e, active := serving(t)
		old := e.cluster("zzzzz", 2*time.Hour)
		at := fixture.T0.Add(5 * time.Second).Format(time.RFC3339)
		old.Annotations[DeleteAfterKey] = at
		p := decide(e.o)
		if len(p.DeleteClusters) != 0 {
			t.Fatalf("deleted early: %v", deletedNames(p))
		}
		if p.RequeueAfter != 5*time.Second {
			t.Errorf("RequeueAfter = %v, want the deadline", p.RequeueAfter)
		}
		if p.Status.PendingServiceStatus.RayClusterName != "" || p.Status.ActiveServiceStatus.RayClusterName != active.Name {
			t.Errorf("retiring cluster shows as pending: %+v", p.Status)
		}
		e.o.Now = fixture.T0.Add(6 * time.Second)
		if got := deletedNames(decide(e.o)); len(got) != 1 || got[0] != old.Name {
			t.Fatalf("deleted %v", got)
		}
	})

	t.Run("the serving cluster is never deleted, a stale delete-after is dropped", func(t *testing.T) {
		e, active := serving(t)
		active.Annotations[DeleteAfterKey] = fixture.T0.Add(-time.Minute).Format(time.RFC3339)
		p := decide(e.o)
		if len(p.DeleteClusters) != 0 {
			t.Fatalf("deleted the active cluster")
		}
		if len(p.Annotate) != 1 || p.Annotate[0].Set[DeleteAfterKey] != nil {
			t.Fatalf("Annotate = %+v", p.Annotate)
		}
	})

	t.Run("superseded clusters that never served are deleted at once", func(t *testing.T) {
		e, active := serving(t)
		e.o.Service.Spec.RayClusterSpec.HeadGroupSpec.Template.Spec.Containers[0].Image = "rayproject/ray:2.53.0"
		older := e.cluster("ooooo", 10*time.Minute)
		newer := e.cluster("nnnnn", time.Minute)
		p := decide(e.o)
		if got := deletedNames(p); len(got) != 1 || got[0] != older.Name {
			t.Fatalf("deleted %v", got)
		}
		if p.Status.PendingServiceStatus.RayClusterName != newer.Name || p.Status.ActiveServiceStatus.RayClusterName != active.Name {
			t.Errorf("status = %+v", p.Status)
		}
	})
}
