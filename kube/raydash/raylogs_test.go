package raydash

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/raydar/raydar/rayapi/dashboard"
	"github.com/raydar/raydar/rayapi/podview"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

func TestExplainRayJob(t *testing.T) {
	job := func(js rayv1.JobStatus, ds rayv1.JobDeploymentStatus, id string) *rayv1.RayJob {
		j := &rayv1.RayJob{}
		j.Status.RayClusterName, j.Status.JobStatus, j.Status.JobDeploymentStatus, j.Status.JobId = "rc", js, ds, id
		return j
	}
	cases := []struct {
		name     string
		job      *rayv1.RayJob
		ok       bool
		known    bool
		sub, why string
	}{
		{"failed", job(rayv1.JobStatusFailed, rayv1.JobDeploymentStatusFailed, "j1"), true, true, "j1", "driver log of job j1 (FAILED)"},
		{"pending", job(rayv1.JobStatusPending, rayv1.JobDeploymentStatusRunning, "j2"), true, false, "", "runtime env setup of job j2 (PENDING)"},
		{"running", job(rayv1.JobStatusRunning, rayv1.JobDeploymentStatusRunning, "j3"), true, true, "j3", "driver log of job j3"},
		{"not submitted", job("", rayv1.JobDeploymentStatusInitializing, ""), false, false, "", ""},
	}
	for _, tc := range cases {
		e, ok := ExplainRayJob(tc.job)
		if ok != tc.ok || e.Known() != tc.known || e.Req.SubmissionID != tc.sub || e.Why != tc.why {
			t.Errorf("%s: %+v, %v", tc.name, e, ok)
		}
		if ok && e.Cluster != "rc" {
			t.Errorf("%s: cluster %q", tc.name, e.Cluster)
		}
	}
}

func TestExplanationPick(t *testing.T) {
	files := dashboard.LogFiles{
		"internal": {"runtime_env_setup-01000000.log", "runtime_env_setup-03000000.log", "job-driver-j2.log", "serve/"},
		"agent":    {"runtime_env_agent.log"},
	}
	pending := Explanation{Glob: dashboard.RuntimeEnvSetupPrefix + "*", Prefer: []string{"j2"}, Fallback: "runtime_env_agent.log"}
	if got, ok := pending.Pick(files); !ok || got != "runtime_env_setup-03000000.log" {
		t.Errorf("newest: %q %v", got, ok)
	}
	files["internal"] = append(files["internal"], "runtime_env_setup-j2.log")
	if got, _ := pending.Pick(files); got != "runtime_env_setup-j2.log" {
		t.Errorf("the job's own: %q", got)
	}
	if got, ok := pending.Pick(dashboard.LogFiles{"agent": {"runtime_env_agent.log"}}); !ok || got != "runtime_env_agent.log" {
		t.Errorf("fallback: %q %v", got, ok)
	}
	serve := Explanation{Glob: "serve/controller_*"}
	if _, ok := serve.Pick(files); ok {
		t.Error("a controller log picked from a listing without one")
	}
	if got, ok := serve.Pick(dashboard.LogFiles{"internal": {"serve/controller_12.log", "serve/proxy_1.log"}}); !ok || got != "serve/controller_12.log" {
		t.Errorf("controller: %q %v", got, ok)
	}
}

func TestExplainRayService(t *testing.T) {
	s := &rayv1.RayService{}
	if _, ok := ExplainRayService(s); ok {
		t.Error("a RayService without a cluster explained")
	}
	s.Status.ActiveServiceStatus.RayClusterName = "active"
	s.Status.PendingServiceStatus = rayv1.RayServiceStatus{RayClusterName: "pending", Applications: map[string]rayv1.AppStatus{
		"b": {Status: rayv1.ApplicationStatusDeployFailed}, "a": {Status: "RUNNING"}}}
	e, ok := ExplainRayService(s)
	if !ok || e.Cluster != "pending" || e.Why != "Serve controller log (b failed)" || e.Glob != "serve/controller_*" {
		t.Errorf("failed pending: %+v", e)
	}
	s.Status.PendingServiceStatus.Applications["b"] = rayv1.AppStatus{Status: "RUNNING"}
	if e, _ := ExplainRayService(s); e.Cluster != "active" || e.Why != "Serve controller log" {
		t.Errorf("healthy: %+v", e)
	}
}

func TestNodeForPodAndHeadPod(t *testing.T) {
	pod := func(name, typ, ip string) *podview.Pod {
		p := &podview.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{rayv1.RayNodeTypeLabelKey: typ}}}
		p.Status.PodIP = ip
		return p
	}
	c := &dashboard.Capacity{Nodes: []dashboard.RayNode{{ID: "dead", IP: "10.0.0.2"}, {ID: "n2", IP: "10.0.0.2", Alive: true}}}
	if n := NodeForPod(pod("w", "worker", "10.0.0.2"), c); n != (dashboard.LogNode{ID: "n2", IP: "10.0.0.2"}) {
		t.Errorf("mapped: %+v", n)
	}
	if n := NodeForPod(pod("w", "worker", "10.0.0.3"), c); n != (dashboard.LogNode{IP: "10.0.0.3"}) {
		t.Errorf("unmapped: %+v", n)
	}
	if n := NodeForPod(pod("w", "worker", ""), nil); n != (dashboard.LogNode{}) {
		t.Errorf("no IP: %+v", n)
	}
	pods := []*podview.Pod{pod("w", "worker", "10.0.0.2"), pod("h-old", "head", ""), pod("h", "head", "10.0.0.1")}
	if h := HeadPod(pods); h == nil || h.Name != "h" {
		t.Errorf("head: %v", h)
	}
}

func TestRayLogsOpen(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case dashboard.LogsPath:
			io.WriteString(w, `{"result": true, "msg": "", "data": {"result": {"internal": ["serve/controller_9.log"]}}}`)
		case dashboard.LogFilePath:
			io.WriteString(w, "file:"+r.URL.Query().Get("filename"))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	res, err := New(Options{AddressBook: bookFunc(func(ns, name string) (string, bool) { return srv.URL, name == "rc" })})
	if err != nil {
		t.Fatal(err)
	}
	l := &RayLogs{Resolver: res, Cluster: func(ns, name string) (*rayv1.RayCluster, error) {
		if name == "gone" {
			return nil, nil
		}
		return &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}, nil
	}}
	ctx := context.Background()
	head := dashboard.LogNode{IP: "10.0.0.1"}
	req, err := l.Resolve(ctx, "ns", Explanation{Cluster: "rc", Glob: "serve/controller_*"}, head)
	if err != nil || req.Filename != "serve/controller_9.log" || req.Node != head {
		t.Fatalf("resolve: %+v, %v", req, err)
	}
	rc, err := l.Open(ctx, "ns", "rc", req, false)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(rc)
	if string(b) != "file:serve/controller_9.log" {
		t.Errorf("read %q", b)
	}
	if _, err := l.List(ctx, "ns", "gone", head); !errors.Is(err, ErrNoCluster) {
		t.Errorf("gone cluster: %v", err)
	}
	if _, err := l.List(ctx, "ns", "other", head); !errors.Is(err, dashboard.ErrUnavailable) || !strings.Contains(err.Error(), "no dashboard") {
		t.Errorf("cluster without a dashboard: %v", err)
	}
}
