package rayservice

import (
	"strings"
	"testing"
	"time"

	"github.com/raydar/raydar/controller/internal/fixture"

	"github.com/raydar/raydar/rayapi/dashboard"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

func TestRayServiceDecideServe(t *testing.T) {
	t.Run("head restarted and lost the applications: re-submit", func(t *testing.T) {
		e := newEnv(t, testService())
		rc := e.cluster("aaaaa", time.Minute)
		e.pods(rc, "true", "true", true)
		e.submitted(rc)
		e.services(rc)
		e.probe(rc, "", false)
		p := decide(e.o)
		if len(p.Submit) != 1 || !strings.Contains(p.Submit[0].Why, "lost applications app1") {
			t.Fatalf("Submit = %+v", p.Submit)
		}
	})

	t.Run("applications missing right after our own submission: wait, do not re-submit", func(t *testing.T) {
		e := newEnv(t, testService())
		rc := e.cluster("aaaaa", time.Minute)
		e.pods(rc, "false", "true", true)
		e.submitted(rc)
		e.probe(rc, "", false)
		e.o.Submissions[rc.Name] = &submission{Hash: rc.Annotations[ServeConfigHashKey], At: fixture.T0.Add(-time.Second)}
		if p := decide(e.o); len(p.Submit) != 0 {
			t.Fatalf("Submit = %+v", p.Submit)
		}
	})

	t.Run("after a restart: hash recorded and applications live, nothing is re-submitted", func(t *testing.T) {
		e := newEnv(t, testService())
		rc := e.cluster("aaaaa", time.Minute)
		e.pods(rc, "true", "true", true)
		e.submitted(rc)
		e.services(rc)
		e.probe(rc, dashboard.AppRunning, true)
		if p := decide(e.o); len(p.Submit) != 0 {
			t.Fatalf("Submit = %+v", p.Submit)
		}
	})

	t.Run("serveConfigV2 change alone is submitted to the active cluster, no new cluster", func(t *testing.T) {
		e := newEnv(t, testService())
		rc := e.cluster("aaaaa", time.Minute)
		e.pods(rc, "true", "true", true)
		e.submitted(rc)
		e.services(rc)
		e.probe(rc, dashboard.AppRunning, true)
		e.o.Service.Spec.ServeConfigV2 = strings.Replace(testServeConfig, "/fruit", "/fruits", 1)
		e.o.Service.Generation = 2
		p := decide(e.o)
		if p.CreateCluster != nil || len(p.DeleteClusters) != 0 {
			t.Fatalf("config change touched clusters: %+v", p)
		}
		if len(p.Submit) != 1 || p.Submit[0].Cluster.Name != rc.Name || p.Submit[0].Why != "serveConfigV2 changed" {
			t.Fatalf("Submit = %+v", p.Submit)
		}
	})

	t.Run("formatting-only change of serveConfigV2 is not a change", func(t *testing.T) {
		e := newEnv(t, testService())
		rc := e.cluster("aaaaa", time.Minute)
		e.pods(rc, "true", "true", true)
		e.submitted(rc)
		e.services(rc)
		e.probe(rc, dashboard.AppRunning, true)
		e.o.Service.Spec.ServeConfigV2 = "# comment\napplications:\n- {name: app1, route_prefix: /fruit, import_path: fruit.deployment_graph}\n"
		if p := decide(e.o); len(p.Submit) != 0 {
			t.Fatalf("Submit = %+v", p.Submit)
		}
	})

	t.Run("DEPLOY_FAILED surfaces with its message and never switches traffic", func(t *testing.T) {
		e := newEnv(t, testService())
		rc := e.cluster("aaaaa", time.Minute)
		e.pods(rc, "false", "true", true)
		e.submitted(rc)
		e.probe(rc, dashboard.AppDeployFailed, true)
		p := decide(e.o)
		if len(p.CreateServices) != 0 {
			t.Fatal("switched to a cluster whose application failed")
		}
		a := p.Status.PendingServiceStatus.Applications["app1"]
		if a.Status != rayv1.ApplicationStatusDeployFailed || !strings.Contains(a.Message, "ModuleNotFoundError") {
			t.Errorf("app status = %+v", a)
		}
		if m := condOf(p.Status, rayv1.RayServiceReady).Message; !strings.Contains(m, "DEPLOY_FAILED") {
			t.Errorf("Ready message = %q", m)
		}
		e.o.Service.Status.ObservedGeneration = 1
		e.o.Service.Status.PendingServiceStatus.RayClusterName = rc.Name
		if !statusUrgent(e.o.Service.Status, p.Status) {
			t.Error("a failed application is urgent")
		}
	})

	t.Run("rejected submission waits out its back-off and says why", func(t *testing.T) {
		e := newEnv(t, testService())
		rc := e.cluster("aaaaa", time.Minute)
		e.pods(rc, "false", "true", true)
		e.probe(rc, "", false)
		cfg, _ := parseServeConfig(testServeConfig)
		e.o.Submissions[rc.Name] = &submission{Hash: cfg.Hash, At: fixture.T0.Add(-time.Second), Err: "400 Bad Request: 1 validation error", Attempts: 1}
		p := decide(e.o)
		if len(p.Submit) != 0 {
			t.Fatalf("re-submitted within the back-off: %+v", p.Submit)
		}
		if m := condOf(p.Status, rayv1.RayServiceReady).Message; !strings.Contains(m, "rejected serveConfigV2: 400") {
			t.Errorf("Ready message = %q", m)
		}
		if p.RequeueAfter != time.Second {
			t.Errorf("RequeueAfter = %v, want the rest of the 2 s back-off", p.RequeueAfter)
		}
		e.o.Now = fixture.T0.Add(5 * time.Second)
		if p := decide(e.o); len(p.Submit) != 1 {
			t.Fatalf("no retry after the back-off")
		}
	})

	t.Run("dashboard refusing: old application statuses are kept; reported only after the grace period", func(t *testing.T) {
		e := newEnv(t, testService())
		rc := e.cluster("aaaaa", time.Minute)
		e.pods(rc, "false", "true", true)
		e.submitted(rc)
		e.o.Service.Status.PendingServiceStatus = rayv1.RayServiceStatus{RayClusterName: rc.Name,
			Applications: map[string]rayv1.AppStatus{"app1": {Status: "DEPLOYING"}}}
		e.o.Probes[rc.Name] = &serveProbe{At: fixture.T0, Err: "connection refused", FailingSince: fixture.T0.Add(-2 * time.Second)}
		p := decide(e.o)
		if len(p.Submit) != 0 {
			t.Fatal("submitted to a dashboard that refuses")
		}
		if a := p.Status.PendingServiceStatus.Applications["app1"]; a.Status != "DEPLOYING" {
			t.Errorf("applications = %+v", p.Status.PendingServiceStatus.Applications)
		}
		if m := condOf(p.Status, rayv1.RayServiceReady).Message; strings.Contains(m, "not answering") {
			t.Errorf("reported before the grace period: %q", m)
		}
		if p.RequeueAfter != time.Second {
			t.Errorf("RequeueAfter = %v", p.RequeueAfter)
		}
		e.o.Probes[rc.Name].FailingSince = fixture.T0.Add(-6 * time.Second)
		if m := condOf(decide(e.o).Status, rayv1.RayServiceReady).Message; !strings.Contains(m, "not answering") {
			t.Errorf("Ready message after the grace period = %q", m)
		}
	})

	t.Run("excludeHeadPodFromServeSvc keeps the head out", func(t *testing.T) {
		rs := testService()
		rs.Spec.ExcludeHeadPodFromServeSvc = true
		e := newEnv(t, rs)
		rc := e.cluster("aaaaa", time.Minute)
		e.pods(rc, "true", "false", true)
		e.submitted(rc)
		e.probe(rc, dashboard.AppRunning, true)
		p := decide(e.o)
		got := map[string]string{}
		for _, l := range p.PodLabels {
			got[l.Pod.Name] = l.Value
		}
		if got[rc.Name+"-head-x"] != "false" || got[rc.Name+"-g-worker-y"] != "true" {
			t.Fatalf("labels = %v", got)
		}
	})

	t.Run("a proxy that stops answering loses its serve label", func(t *testing.T) {
		e := newEnv(t, testService())
		rc := e.cluster("aaaaa", time.Minute)
		e.pods(rc, "true", "true", true)
		e.submitted(rc)
		e.services(rc)
		pr := e.probe(rc, dashboard.AppRunning, true)
		pr.Proxies[rc.Name+"-g-worker-y"] = proxyHealth{Err: "connection refused"}
		p := decide(e.o)
		if len(p.PodLabels) != 1 || p.PodLabels[0].Pod.Name != rc.Name+"-g-worker-y" || p.PodLabels[0].Value != "false" {
			t.Fatalf("PodLabels = %+v", p.PodLabels)
		}
	})
}

// TestRayServiceProbeTimings: how soon Serve is looked at again, and the
// back-off of a rejected submission (pure).
func TestRayServiceProbeTimings(t *testing.T) {
	cfg := defaultConfig()
	running := map[string]dashboard.ServeApplication{"app1": {Status: dashboard.AppRunning}}
	deploying := map[string]dashboard.ServeApplication{"app1": {Status: dashboard.AppDeploying}}
	healthy := map[string]proxyHealth{"head": {Healthy: true}}
	for _, tc := range []struct {
		name string
		p    *serveProbe
		want time.Duration
	}{
		{"no probe yet", nil, 0},
		{"dashboard refuses, briefly", &serveProbe{At: fixture.T0, FailingSince: fixture.T0.Add(-time.Second)}, cfg.DeployPoll},
		{"dashboard refuses, for long", &serveProbe{At: fixture.T0, FailingSince: fixture.T0.Add(-3 * cfg.UnreachableGrace)}, cfg.UnreachablePoll},
		{"active cluster, applications running", &serveProbe{OK: true, Active: true, Apps: running}, cfg.SteadyPoll},
		{"active cluster, applications deploying", &serveProbe{OK: true, Active: true, Apps: deploying}, cfg.DeployPoll},
		{"active cluster, no applications", &serveProbe{OK: true, Active: true}, cfg.DeployPoll},
		{"pending cluster, running, no healthy proxy", &serveProbe{OK: true, Apps: running}, cfg.DeployPoll},
		{"pending cluster, running, healthy proxy", &serveProbe{OK: true, Apps: running, Proxies: healthy}, cfg.SteadyPoll},
	} {
		if got := probeInterval(tc.p, cfg); got != tc.want {
			t.Errorf("%s: probeInterval = %v, want %v", tc.name, got, tc.want)
		}
	}
	for attempts, want := range map[int]time.Duration{1: cfg.SubmitBackoff, 2: 2 * cfg.SubmitBackoff, 3: 4 * cfg.SubmitBackoff, 50: 6 * cfg.SteadyPoll} {
		if got := submitBackoff(cfg, attempts); got != want {
			t.Errorf("submitBackoff(%d) = %v, want %v", attempts, got, want)
		}
	}
}
