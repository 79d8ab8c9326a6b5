package dashboard

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// recorded is one request the fake dashboard saw.
type recorded struct {
	Method, Path, Query string
	Header              http.Header
	Body                []byte
}

// fakeDashboard is an httptest server answering with canned responses keyed
// by "METHOD path", recording every request.
type fakeDashboard struct {
	t   *testing.T
	srv *httptest.Server

	mu      sync.Mutex
	reqs    []recorded
	answers map[string]answer
}

type answer struct {
	status int
	body   string
	ctype  string
}

func newFake(t *testing.T) *fakeDashboard {
	t.Helper()
	f := &fakeDashboard{t: t, answers: map[string]answer{}}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeDashboard) on(method, path string, status int, body string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.answers[method+" "+path] = answer{status: status, body: body}
}

func (f *fakeDashboard) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.reqs = append(f.reqs, recorded{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Header: r.Header.Clone(), Body: body})
	a, ok := f.answers[r.Method+" "+r.URL.Path]
	f.mu.Unlock()
	if !ok {
		http.Error(w, "404: Not Found", http.StatusNotFound)
		return
	}
	if a.ctype == "" {
		a.ctype = "application/json"
	}
	w.Header().Set("Content-Type", a.ctype)
	w.WriteHeader(a.status)
	io.WriteString(w, a.body)
}

func (f *fakeDashboard) last() recorded {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.reqs) == 0 {
		f.t.Fatal("no request recorded")
	}
	return f.reqs[len(f.reqs)-1]
}

func (f *fakeDashboard) client(opts ...Option) *Client {
	f.t.Helper()
	c, err := New(f.srv.URL, opts...)
	if err != nil {
		f.t.Fatal(err)
	}
	return c
}

// A job as Ray 2.x reports it (JobDetails), including the nulls Ray sends.
const rayJobJSON = `{"type":"SUBMISSION","job_id":"02000000","submission_id":"raysubmit_WNpAU4yqAjQ1cNaa",
"driver_info":{"id":"02000000","node_ip_address":"10.244.0.5","pid":"1234"},"status":"FAILED",
"entrypoint":"python /home/ray/samples/sample_code.py","message":"Job entrypoint command failed with exit code 1",
"error_type":"JOB_ENTRYPOINT_COMMAND_ERROR","start_time":1700000000000,"end_time":1700000012345,
"metadata":{"owner":"raydar"},"runtime_env":{"env_vars":{"A":"b"},"working_dir":"s3://x"},
"driver_agent_http_address":"http://10.244.0.5:52365","driver_node_id":"abc","driver_exit_code":1,
"entrypoint_num_cpus":1,"entrypoint_num_gpus":0.5,"entrypoint_memory":0,"entrypoint_resources":null}`

const rayPendingJobJSON = `{"type":"SUBMISSION","job_id":null,"submission_id":"raysubmit_2","driver_info":null,
"status":"PENDING","entrypoint":"sleep 1","message":"Job has not started yet.","error_type":null,
"start_time":1700000000000,"end_time":null,"metadata":{},"runtime_env":{}}`

func TestNewNormalizesBaseURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://h:8265":     "http://h:8265",
		"http://h:8265/":    "http://h:8265",
		"h.ns.svc:8265":     "http://h.ns.svc:8265",
		"https://api/x/y//": "https://api/x/y",
	} {
		c, err := New(in)
		if err != nil {
			t.Errorf("New(%q): %v", in, err)
			continue
		}
		if c.BaseURL() != want {
			t.Errorf("New(%q).BaseURL() = %q, want %q", in, c.BaseURL(), want)
		}
		if c.Timeout() != DefaultTimeout {
			t.Errorf("default timeout = %v", c.Timeout())
		}
	}
	for _, bad := range []string{"", "ftp://h", "http://", "http://h/?a=b"} {
		if _, err := New(bad); err == nil {
			t.Errorf("New(%q) accepted", bad)
		}
	}
}

func TestSubmitJob(t *testing.T) {
	f := newFake(t)
	f.on("POST", "/api/jobs/", 200, `{"job_id":"raysubmit_abc","submission_id":"raysubmit_abc"}`)
	id, err := f.client().SubmitJob(context.Background(), SubmitJobRequest{
		Entrypoint:   "python -c 'print(1)'",
		SubmissionID: "raysubmit_abc",
		RuntimeEnv:   map[string]any{"env_vars": map[string]string{"A": "1"}},
		Metadata:     map[string]string{"k": "v"},
		EntrypointReservation: EntrypointReservation{
			EntrypointNumCPUs:   1.5,
			EntrypointNumGPUs:   1,
			EntrypointResources: map[string]float64{"TPU": 4},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if id != "raysubmit_abc" {
		t.Fatalf("id = %q", id)
	}
	r := f.last()
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q", ct)
	}
	var got map[string]any
	if err := json.Unmarshal(r.Body, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"entrypoint":           "python -c 'print(1)'",
		"submission_id":        "raysubmit_abc",
		"runtime_env":          map[string]any{"env_vars": map[string]any{"A": "1"}},
		"metadata":             map[string]any{"k": "v"},
		"entrypoint_num_cpus":  1.5,
		"entrypoint_num_gpus":  1.0,
		"entrypoint_resources": map[string]any{"TPU": 4.0},
	}
	if g, w := mustJSON(t, got), mustJSON(t, want); g != w {
		t.Errorf("body\n got %s\nwant %s", g, w)
	}

	// Old Ray versions answer only job_id.
	f.on("POST", "/api/jobs/", 200, `{"job_id":"raysubmit_old"}`)
	id, err = f.client().SubmitJob(context.Background(), SubmitJobRequest{Entrypoint: "true"})
	if err != nil || id != "raysubmit_old" {
		t.Fatalf("id = %q, err = %v", id, err)
	}
	if b := string(f.last().Body); strings.Contains(b, "submission_id") || strings.Contains(b, "runtime_env") {
		t.Errorf("empty optional fields must be omitted: %s", b)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestGetJobInfo(t *testing.T) {
	f := newFake(t)
	f.on("GET", "/api/jobs/raysubmit_WNpAU4yqAjQ1cNaa", 200, rayJobJSON)
	info, err := f.client().GetJobInfo(context.Background(), "raysubmit_WNpAU4yqAjQ1cNaa")
	if err != nil {
		t.Fatal(err)
	}
	if info.Status != JobFailed || !info.Status.IsTerminal() || info.JobID != "02000000" ||
		info.SubmissionID != "raysubmit_WNpAU4yqAjQ1cNaa" || info.ErrorType != "JOB_ENTRYPOINT_COMMAND_ERROR" ||
		info.Type != JobTypeSubmission {
		t.Errorf("info = %+v", info)
	}
	if info.StartTime != 1700000000000 || info.EndTime != 1700000012345 {
		t.Errorf("times = %d, %d", info.StartTime, info.EndTime)
	}
	if !info.Started().Equal(time.UnixMilli(1700000000000)) || info.Ended().Sub(info.Started()) != 12345*time.Millisecond {
		t.Errorf("Started/Ended = %v, %v", info.Started(), info.Ended())
	}
	if info.DriverInfo == nil || info.DriverInfo.PID != "1234" || info.DriverInfo.NodeIPAddress != "10.244.0.5" {
		t.Errorf("driver_info = %+v", info.DriverInfo)
	}
	if info.DriverExitCode == nil || *info.DriverExitCode != 1 {
		t.Errorf("driver_exit_code = %v", info.DriverExitCode)
	}
	if info.Metadata["owner"] != "raydar" || info.RuntimeEnv["working_dir"] != "s3://x" || info.EntrypointNumGPUs != 0.5 {
		t.Errorf("info = %+v", info)
	}

	f.on("GET", "/api/jobs/raysubmit_2", 200, rayPendingJobJSON)
	info, err = f.client().GetJobInfo(context.Background(), "raysubmit_2")
	if err != nil {
		t.Fatal(err)
	}
	if info.Status != JobPending || info.Status.IsTerminal() || info.JobID != "" || info.DriverInfo != nil ||
		info.EndTime != 0 || !info.Ended().IsZero() {
		t.Errorf("pending info = %+v", info)
	}
}

func TestJobIDIsPathEscaped(t *testing.T) {
	f := newFake(t)
	f.on("GET", "/api/jobs/a b/c", 200, rayPendingJobJSON)
	if _, err := f.client().GetJobInfo(context.Background(), "a b/c"); err != nil {
		t.Fatal(err)
	}
}

func TestListStopDeleteLogs(t *testing.T) {
	f := newFake(t)
	f.on("GET", "/api/jobs/", 200, "["+rayJobJSON+","+rayPendingJobJSON+"]")
	f.on("POST", "/api/jobs/j1/stop", 200, `{"stopped":true}`)
	f.on("POST", "/api/jobs/j2/stop", 200, `{"stopped":false}`)
	f.on("DELETE", "/api/jobs/j1", 200, `{"deleted":true}`)
	f.on("GET", "/api/jobs/j1/logs", 200, `{"logs":"line 1\nline 2\n"}`)
	c := f.client()
	ctx := context.Background()

	jobs, err := c.ListJobs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 2 || jobs[0].Status != JobFailed || jobs[1].Status != JobPending {
		t.Errorf("jobs = %+v", jobs)
	}
	if stopped, err := c.StopJob(ctx, "j1"); err != nil || !stopped {
		t.Errorf("StopJob(j1) = %v, %v", stopped, err)
	}
	if r := f.last(); r.Method != "POST" || len(r.Body) != 0 {
		t.Errorf("stop request = %+v", r)
	}
	if stopped, err := c.StopJob(ctx, "j2"); err != nil || stopped {
		t.Errorf("StopJob(j2) = %v, %v", stopped, err)
	}
	if err := c.DeleteJob(ctx, "j1"); err != nil {
		t.Errorf("DeleteJob: %v", err)
	}
	if r := f.last(); r.Method != "DELETE" || r.Path != "/api/jobs/j1" {
		t.Errorf("delete request = %+v", r)
	}
	logs, err := c.GetJobLogs(ctx, "j1")
	if err != nil || logs != "line 1\nline 2\n" {
		t.Errorf("GetJobLogs = %q, %v", logs, err)
	}
}

const serveConfigV2 = `
proxy_location: EveryNode
http_options:
  port: 8000
applications:
  - name: fruit_app
    import_path: fruit.deployment_graph
    route_prefix: /fruit
    runtime_env:
      working_dir: "https://github.com/ray-project/test_dag/archive/78b4a5da38796123d9f9ffff59bab2792a043e95.zip"
    deployments:
      - name: MangoStand
        num_replicas: 1
        user_config:
          price: 3
        ray_actor_options:
          num_cpus: 0.1
`

// Ray's ServeInstanceDetails for one running application.
const rayServeJSON = `{"controller_info":{"node_id":"n1","node_ip":"10.0.0.1","actor_id":"a","actor_name":"SERVE_CONTROLLER_ACTOR"},
"proxy_location":"EveryNode","http_options":{"host":"0.0.0.0","port":8000},"grpc_options":{"port":9000,"grpc_servicer_functions":[]},
"proxies":{"n1":{"node_id":"n1","node_ip":"10.0.0.1","actor_id":"p","actor_name":"SERVE_PROXY","status":"HEALTHY"}},
"deploy_mode":"MULTI_APP",
"applications":{"fruit_app":{"name":"fruit_app","route_prefix":"/fruit","docs_path":null,"status":"RUNNING","message":"",
"last_deployed_time_s":1700000000.5,"deployed_app_config":{"name":"fruit_app","route_prefix":"/fruit","import_path":"fruit.deployment_graph"},
"source":"declarative","deployments":{"MangoStand":{"name":"MangoStand","status":"HEALTHY","status_trigger":"CONFIG_UPDATE_COMPLETED",
"message":"","deployment_config":{"name":"MangoStand","num_replicas":1},"target_num_replicas":1,"required_resources":{"CPU":0.1},
"replicas":[{"node_id":"n1","node_ip":"10.0.0.1","actor_id":"r","actor_name":"SERVE_REPLICA::fruit_app#MangoStand#abc",
"replica_id":"abc","state":"RUNNING","pid":4242,"start_time_s":1700000000.1}]}}}},"target_capacity":null}`

func TestServeConfigV2ToJSON(t *testing.T) {
	data, err := ServeConfigV2ToJSON(serveConfigV2)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		ProxyLocation string `json:"proxy_location"`
		Applications  []struct {
			Name        string `json:"name"`
			ImportPath  string `json:"import_path"`
			RoutePrefix string `json:"route_prefix"`
			Deployments []struct {
				Name           string         `json:"name"`
				NumReplicas    int            `json:"num_replicas"`
				UserConfig     map[string]any `json:"user_config"`
				RayActorOption map[string]any `json:"ray_actor_options"`
			} `json:"deployments"`
		} `json:"applications"`
	}
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	if got.ProxyLocation != "EveryNode" || len(got.Applications) != 1 {
		t.Fatalf("got %s", data)
	}
	a := got.Applications[0]
	if a.Name != "fruit_app" || a.ImportPath != "fruit.deployment_graph" || a.RoutePrefix != "/fruit" ||
		len(a.Deployments) != 1 || a.Deployments[0].NumReplicas != 1 || a.Deployments[0].UserConfig["price"] != 3.0 ||
		a.Deployments[0].RayActorOption["num_cpus"] != 0.1 {
		t.Errorf("got %s", data)
	}
	for _, bad := range []string{"", "  \n", "- a\n- b\n", "applications: [\n", "just a string"} {
		if _, err := ServeConfigV2ToJSON(bad); err == nil {
			t.Errorf("ServeConfigV2ToJSON(%q) accepted", bad)
		}
	}
}

func TestServeCalls(t *testing.T) {
	f := newFake(t)
	f.on("PUT", "/api/serve/applications/", 200, "")
	f.on("GET", "/api/serve/applications/", 200, rayServeJSON)
	f.on("DELETE", "/api/serve/applications/", 200, "")
	c := f.client()
	ctx := context.Background()

	if err := c.DeployServeConfigV2(ctx, serveConfigV2); err != nil {
		t.Fatal(err)
	}
	r := f.last()
	want, _ := ServeConfigV2ToJSON(serveConfigV2)
	if r.Method != "PUT" || string(r.Body) != string(want) || r.Header.Get("Content-Type") != "application/json" {
		t.Errorf("deploy request = %s %s %s", r.Method, r.Header.Get("Content-Type"), r.Body)
	}
	if err := c.DeployApplications(ctx, []byte(`[1,2]`)); err == nil {
		t.Error("DeployApplications accepted a JSON array")
	}
	if err := c.DeployServeConfigV2(ctx, "- not a mapping"); err == nil {
		t.Error("DeployServeConfigV2 accepted a YAML list")
	}

	d, err := c.GetServeApplications(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if r := f.last(); r.Query != "api_type=declarative" {
		t.Errorf("query = %q", r.Query)
	}
	app, ok := d.Applications["fruit_app"]
	if !ok || d.DeployMode != DeployModeMultiApp || app.Status != AppRunning || app.RoutePrefix != "/fruit" ||
		app.DocsPath != "" || app.Source != "declarative" {
		t.Fatalf("details = %+v", d)
	}
	dep := app.Deployments["MangoStand"]
	if dep.Status != DeploymentHealthy || dep.TargetNumReplicas != 1 || len(dep.Replicas) != 1 ||
		dep.Replicas[0].State != "RUNNING" || dep.Replicas[0].PID != 4242 {
		t.Errorf("deployment = %+v", dep)
	}
	if d.Proxies["n1"].Status != "HEALTHY" || !strings.Contains(string(app.DeployedAppConfig), "fruit.deployment_graph") {
		t.Errorf("details = %+v", d)
	}

	f.on("GET", "/api/serve/applications/", 200, `{"deploy_mode":"UNSET","applications":{}}`)
	d, err = c.GetServeApplications(ctx)
	if err != nil || d.Applications == nil || len(d.Applications) != 0 {
		t.Errorf("empty serve = %+v, %v", d, err)
	}
	f.on("GET", "/api/serve/applications/", 200, `{}`)
	if d, err = c.GetServeApplications(ctx); err != nil || d.Applications == nil {
		t.Errorf("applications must never be nil: %+v, %v", d, err)
	}

	if err := c.DeleteServeApplications(ctx); err != nil {
		t.Fatal(err)
	}
	if r := f.last(); r.Method != "DELETE" || r.Path != "/api/serve/applications/" {
		t.Errorf("delete request = %+v", r)
	}
}

func TestHealth(t *testing.T) {
	f := newFake(t)
	f.on("GET", "/api/gcs_healthz", 200, "success")
	f.on("GET", "/-/healthz", 200, "success")
	ctx := context.Background()
	if err := f.client().CheckGCSHealth(ctx); err != nil {
		t.Errorf("CheckGCSHealth: %v", err)
	}
	f.on("GET", "/api/gcs_healthz", 200, "nope")
	if err := f.client().CheckGCSHealth(ctx); !errors.Is(err, ErrUnavailable) {
		t.Errorf("CheckGCSHealth without success = %v", err)
	}
	f.on("GET", "/api/gcs_healthz", 503, "GCS down")
	if err := f.client().CheckGCSHealth(ctx); !errors.Is(err, ErrUnavailable) {
		t.Errorf("CheckGCSHealth 503 = %v", err)
	}

	for _, u := range []string{f.srv.URL, f.srv.URL + "/", f.srv.URL + "/-/healthz", strings.TrimPrefix(f.srv.URL, "http://")} {
		if err := ProxyHealthy(ctx, u); err != nil {
			t.Errorf("ProxyHealthy(%q): %v", u, err)
		}
		if r := f.last(); r.Path != "/-/healthz" {
			t.Errorf("ProxyHealthy(%q) asked %q", u, r.Path)
		}
	}
	f.on("GET", "/-/healthz", 503, "This node is being drained.")
	err := ProxyHealthy(ctx, f.srv.URL)
	var he *HTTPError
	if !errors.Is(err, ErrUnavailable) || !errors.As(err, &he) || he.StatusCode != 503 {
		t.Errorf("ProxyHealthy on 503 = %v", err)
	}
	if err := ProxyHealthy(ctx, closedAddr(t)); !errors.Is(err, ErrUnavailable) {
		t.Errorf("ProxyHealthy on a closed port = %v", err)
	}
}
