package rayservice

import (
	"strings"
	"testing"
	"time"

	"github.com/raydar/raydar/controller/internal/fixture"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/raydar/raydar/rayapi/dashboard"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

func TestRayServiceInitializingTimeout(t *testing.T) {
	// initializing is a RayService with the annotation whose one cluster
	// never becomes ready, as its status says after a first pass at t0.
	initializing := func(t *testing.T, timeout string) (*testEnv, *rayv1.RayCluster) {
		rs := testService()
		rs.Annotations = map[string]string{rayv1.RayServiceInitializingTimeoutAnnotation: timeout}
		e := newEnv(t, rs)
		rc := e.cluster("aaaaa", time.Minute)
		e.pods(rc, "false", "false", false)
		e.o.Service.Status = decide(e.o).Status
		if c := condOf(e.o.Service.Status, rayv1.RayServiceReady); c.Reason != string(rayv1.RayServiceInitializing) {
			t.Fatalf("setup: Ready %+v", c)
		}
		return e, rc
	}

	t.Run("within the timeout: nothing happens, a pass is due when it ends", func(t *testing.T) {
		e, _ := initializing(t, "10m")
		e.o.Now = fixture.T0.Add(9 * time.Minute)
		p := decide(e.o)
		if c := condOf(p.Status, rayv1.RayServiceReady); c.Reason != string(rayv1.RayServiceInitializing) {
			t.Fatalf("Ready %+v", c)
		}
		if p.RequeueAfter <= 0 || p.RequeueAfter > time.Minute {
			t.Errorf("requeue after %s, want at most the minute left", p.RequeueAfter)
		}
	})

	for _, timeout := range []string{"10m", "600"} {
		t.Run("past the timeout ("+timeout+"): failed, clusters scheduled for deletion", func(t *testing.T) {
			e, rc := initializing(t, timeout)
			e.o.Now = fixture.T0.Add(10*time.Minute + time.Second)
			p := decide(e.o)
			c := condOf(p.Status, rayv1.RayServiceReady)
			if c.Status != metav1.ConditionFalse || c.Reason != string(rayv1.RayServiceInitializingTimeout) || !strings.Contains(c.Message, "10m0s") {
				t.Fatalf("Ready %+v", c)
			}
			if p.Status.ActiveServiceStatus.RayClusterName != "" || p.Status.PendingServiceStatus.RayClusterName != "" {
				t.Errorf("the status still names clusters: %+v %+v", p.Status.ActiveServiceStatus, p.Status.PendingServiceStatus)
			}
			if got := eventReasons(p); len(got) != 1 || got[0] != "RayServiceInitializingTimeout" {
				t.Errorf("events %v", got)
			}
			if p.CreateCluster != nil || len(p.DeleteClusters) != 0 || len(p.Annotate) != 1 || p.Annotate[0].Cluster != rc ||
				*p.Annotate[0].Set[DeleteAfterKey] != e.o.Now.Add(time.Minute).UTC().Format(time.RFC3339) {
				t.Fatalf("plan: create %v delete %v annotate %+v", p.CreateCluster != nil, p.DeleteClusters, p.Annotate)
			}
			if !p.Urgent {
				t.Error("the failure is not written at once")
			}
		})
	}

	t.Run("failed is final: no new cluster after a spec change, the old one goes when due", func(t *testing.T) {
		e, rc := initializing(t, "10m")
		e.o.Now = fixture.T0.Add(11 * time.Minute)
		e.o.Service.Status = decide(e.o).Status
		at := e.o.Now.Add(time.Minute).UTC().Format(time.RFC3339)
		rc.Annotations[DeleteAfterKey] = at
		e.o.Service.Spec.RayClusterSpec.HeadGroupSpec.Template.Spec.Containers[0].Image = "rayproject/ray:2.53.0"
		e.o.Service.Generation = 2
		e.o.Now = e.o.Now.Add(2 * time.Minute)
		p := decide(e.o)
		if p.CreateCluster != nil || len(p.DeleteClusters) != 1 || p.DeleteClusters[0].Cluster != rc {
			t.Fatalf("create %v delete %+v", p.CreateCluster != nil, p.DeleteClusters)
		}
		if c := condOf(p.Status, rayv1.RayServiceReady); c.Reason != string(rayv1.RayServiceInitializingTimeout) {
			t.Fatalf("Ready %+v", c)
		}
		if got := eventReasons(p); len(got) != 0 {
			t.Errorf("events again: %v", got)
		}
	})

	t.Run("a RayService that served once never times out", func(t *testing.T) {
		rs := testService()
		rs.Annotations = map[string]string{rayv1.RayServiceInitializingTimeoutAnnotation: "1m"}
		e := newEnv(t, rs)
		rc := e.cluster("aaaaa", time.Hour)
		e.pods(rc, "true", "true", true)
		e.submitted(rc)
		e.services(rc)
		e.probe(rc, dashboard.AppRunning, true).Active = true
		e.o.ServeEndpoints = 1 // served: Ready
		e.o.Service.Status = decide(e.o).Status
		if c := condOf(e.o.Service.Status, rayv1.RayServiceReady); c.Status != metav1.ConditionTrue {
			t.Fatalf("Ready %+v", c)
		}
		e.o.ServeEndpoints = 0 // endpoints dropped: ZeroServeEndpoints, not Initializing
		e.o.Service.Status = decide(e.o).Status
		e.o.Now = fixture.T0.Add(time.Hour)
		p := decide(e.o)
		if c := condOf(p.Status, rayv1.RayServiceReady); c.Reason == string(rayv1.RayServiceInitializingTimeout) {
			t.Fatalf("Ready %+v", c)
		}
	})
}
