//go:build unix

package rayhead

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/raydar/raydar/rayapi/dashboard"
)

const twoApps = `
proxy_location: EveryNode
http_options:
  host: 0.0.0.0
  port: 8000
applications:
  - name: fruit_app
    import_path: fruit.deployment_graph
    route_prefix: /fruit
    deployments:
      - name: MangoStand
        num_replicas: 2
      - name: FruitMarket
        num_replicas: 1
  - name: math_app
    import_path: conditional_dag.serve_dag
    route_prefix: /calc
`

func allRunning(d *dashboard.ServeDetails, names ...string) bool {
	if len(d.Applications) != len(names) {
		return false
	}
	for _, n := range names {
		if d.Applications[n].Status != dashboard.AppRunning {
			return false
		}
	}
	return true
}

func proxyGet(t *testing.T, h *Head, path string) (int, string) {
	t.Helper()
	resp, err := http.Get(h.ProxyURL() + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestServeDeploy(t *testing.T) {
	h, c := startHead(t, Options{})
	ctx := context.Background()

	// Before any deploy: no applications, no proxy.
	d, err := c.GetServeApplications(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Applications) != 0 || d.DeployMode != dashboard.DeployModeUnset {
		t.Errorf("initial details = %+v", d)
	}
	if err := dashboard.ProxyHealthy(ctx, h.ProxyURL()); !errors.Is(err, dashboard.ErrUnavailable) {
		t.Errorf("proxy healthy before Serve started: %v", err)
	}

	if err := c.DeployServeConfigV2(ctx, twoApps); err != nil {
		t.Fatal(err)
	}
	d = waitServe(t, c, "both apps RUNNING", func(d *dashboard.ServeDetails) bool { return allRunning(d, "fruit_app", "math_app") })
	fruit := d.Applications["fruit_app"]
	if fruit.RoutePrefix != "/fruit" || fruit.Source != "declarative" || fruit.LastDeployedTimeS == 0 || d.DeployMode != dashboard.DeployModeMultiApp {
		t.Errorf("fruit_app = %+v", fruit)
	}
	if len(fruit.Deployments) != 2 {
		t.Fatalf("deployments = %+v", fruit.Deployments)
	}
	for name, dep := range fruit.Deployments {
		if dep.Status != dashboard.DeploymentHealthy {
			t.Errorf("deployment %s = %s", name, dep.Status)
		}
	}
	if m := fruit.Deployments["MangoStand"]; m.TargetNumReplicas != 2 || len(m.Replicas) != 2 || m.Replicas[0].State != "RUNNING" {
		t.Errorf("MangoStand = %+v", m)
	}
	var cfg map[string]any
	if err := json.Unmarshal(fruit.DeployedAppConfig, &cfg); err != nil || cfg["import_path"] != "fruit.deployment_graph" {
		t.Errorf("deployed_app_config = %s", fruit.DeployedAppConfig)
	}
	if dep, ok := d.Applications["math_app"].Deployments["serve_dag"]; !ok || dep.Status != dashboard.DeploymentHealthy {
		t.Errorf("math_app deployments = %+v", d.Applications["math_app"].Deployments)
	}

	eventually(t, "the proxy to be healthy", func() (bool, string) {
		err := dashboard.ProxyHealthy(ctx, h.ProxyURL())
		return err == nil, errString(err)
	})
	if code, body := proxyGet(t, h, "/fruit/mango"); code != 200 || !strings.Contains(body, "fruit_app") {
		t.Errorf("GET /fruit/mango = %d %q", code, body)
	}
	if code, _ := proxyGet(t, h, "/nowhere"); code != 404 {
		t.Errorf("GET /nowhere = %d", code)
	}
	if code, body := proxyGet(t, h, "/-/routes"); code != 200 || !strings.Contains(body, `"/calc":"math_app"`) {
		t.Errorf("GET /-/routes = %d %q", code, body)
	}

	// Same config again: nothing is redeployed.
	if err := c.DeployServeConfigV2(ctx, twoApps); err != nil {
		t.Fatal(err)
	}
	d2, _ := c.GetServeApplications(ctx)
	if a := d2.Applications["fruit_app"]; a.Status != dashboard.AppRunning || a.LastDeployedTimeS != fruit.LastDeployedTimeS {
		t.Errorf("unchanged app redeployed: %+v", a)
	}

	// Dropping math_app deletes it; changing fruit_app redeploys it.
	oneApp := `
applications:
  - name: fruit_app
    import_path: fruit.deployment_graph
    route_prefix: /fruit
    deployments:
      - name: MangoStand
        num_replicas: 1
`
	if err := c.DeployServeConfigV2(ctx, oneApp); err != nil {
		t.Fatal(err)
	}
	d2, _ = c.GetServeApplications(ctx)
	if s := d2.Applications["math_app"].Status; s != dashboard.AppDeleting && s != "" {
		t.Errorf("math_app right after removal = %q", s)
	}
	d = waitServe(t, c, "math_app gone, fruit_app redeployed", func(d *dashboard.ServeDetails) bool {
		return allRunning(d, "fruit_app") && d.Applications["fruit_app"].LastDeployedTimeS != fruit.LastDeployedTimeS
	})
	if m := d.Applications["fruit_app"].Deployments; len(m) != 1 || m["MangoStand"].TargetNumReplicas != 1 {
		t.Errorf("deployments = %+v", m)
	}

	// Shutting Serve down removes everything and stops the proxy.
	if err := c.DeleteServeApplications(ctx); err != nil {
		t.Fatal(err)
	}
	d, _ = c.GetServeApplications(ctx)
	if len(d.Applications) != 0 || d.DeployMode != dashboard.DeployModeUnset {
		t.Errorf("after delete = %+v", d)
	}
	if err := dashboard.ProxyHealthy(ctx, h.ProxyURL()); err == nil {
		t.Error("proxy healthy after Serve shut down")
	}
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

func TestServeDeployFailed(t *testing.T) {
	_, c := startHead(t, Options{})
	ctx := context.Background()
	cfg := `
applications:
  - name: good
    import_path: good.app
    route_prefix: /good
  - name: bad
    import_path: failing_module:app
    route_prefix: /bad
`
	if err := c.DeployServeConfigV2(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	d := waitServe(t, c, "bad to fail and good to run", func(d *dashboard.ServeDetails) bool {
		return d.Applications["bad"].Status == dashboard.AppDeployFailed && d.Applications["good"].Status == dashboard.AppRunning
	})
	if msg := d.Applications["bad"].Message; !strings.Contains(msg, "Deploying app 'bad' failed") ||
		!strings.Contains(msg, "No module named 'failing_module'") {
		t.Errorf("message = %q", msg)
	}

	// A custom notion of failing imports.
	_, c = startHead(t, Options{ImportFails: func(p string) bool { return p == "broken.app" }})
	if err := c.DeployServeConfigV2(ctx, "applications:\n  - name: x\n    import_path: broken.app\n"); err != nil {
		t.Fatal(err)
	}
	waitServe(t, c, "x DEPLOY_FAILED", func(d *dashboard.ServeDetails) bool {
		return d.Applications["x"].Status == dashboard.AppDeployFailed
	})
}

func TestServeInvalidConfig(t *testing.T) {
	_, c := startHead(t, Options{})
	ctx := context.Background()
	if err := c.DeployServeConfigV2(ctx, "applications:\n  - name: keep\n    import_path: keep.app\n"); err != nil {
		t.Fatal(err)
	}
	waitServe(t, c, "keep RUNNING", func(d *dashboard.ServeDetails) bool { return allRunning(d, "keep") })

	cases := map[string]struct{ yaml, want string }{
		"no applications":     {"proxy_location: EveryNode\n", "applications\n  field required"},
		"applications null":   {"applications: null\n", "applications\n  field required"},
		"applications not []": {"applications: {a: 1}\n", "not a valid list"},
		"no import_path":      {"applications:\n  - name: a\n    route_prefix: /a\n", "applications -> 0 -> import_path\n  field required"},
		"bad import_path":     {"applications:\n  - name: a\n    import_path: nodots\n", "invalid import path"},
		"empty name":          {"applications:\n  - name: ''\n    import_path: a.b\n", "applications -> 0 -> name"},
		"duplicate prefix": {"applications:\n  - {name: a, import_path: a.b, route_prefix: /x}\n  - {name: b, import_path: a.b, route_prefix: /x}\n",
			`duplicate applications for route prefix "/x"`},
		"duplicate default prefix": {"applications:\n  - {name: a, import_path: a.b}\n  - {name: b, import_path: a.b}\n",
			`route prefix "/"`},
		"duplicate name": {"applications:\n  - {name: a, import_path: a.b, route_prefix: /x}\n  - {name: a, import_path: a.b, route_prefix: /y}\n",
			`multiple configs for application "a"`},
		"bad route prefix":   {"applications:\n  - {name: a, import_path: a.b, route_prefix: x}\n", `must start with "/"`},
		"deployment no name": {"applications:\n  - name: a\n    import_path: a.b\n    deployments:\n      - num_replicas: 1\n", "deployments -> 0 -> name"},
		"bad num_replicas":   {"applications:\n  - name: a\n    import_path: a.b\n    deployments:\n      - {name: d, num_replicas: many}\n", "num_replicas"},
		"bad target":         {"target_capacity: 150\napplications: []\n", "target_capacity"},
	}
	for name, tc := range cases {
		err := c.DeployServeConfigV2(ctx, tc.yaml)
		var he *dashboard.HTTPError
		if !errors.Is(err, dashboard.ErrBadRequest) || !errors.As(err, &he) {
			t.Errorf("%s: err = %v", name, err)
			continue
		}
		if !strings.Contains(he.Body, "for ServeDeploySchema") || !strings.Contains(he.Body, tc.want) {
			t.Errorf("%s: body = %q, want it to contain %q", name, he.Body, tc.want)
		}
	}
	// A rejected config changes nothing.
	d, err := c.GetServeApplications(ctx)
	if err != nil || !allRunning(d, "keep") {
		t.Errorf("after rejected configs: %+v, %v", d, err)
	}

	// An empty list is valid: it deletes every application.
	if err := c.DeployServeConfigV2(ctx, "applications: []\n"); err != nil {
		t.Fatal(err)
	}
	waitServe(t, c, "no applications", func(d *dashboard.ServeDetails) bool { return len(d.Applications) == 0 })
}

func TestServeTargetCapacity(t *testing.T) {
	_, c := startHead(t, Options{})
	if err := c.DeployServeConfigV2(context.Background(), "target_capacity: 40\napplications:\n  - {name: a, import_path: a.b}\n"); err != nil {
		t.Fatal(err)
	}
	d := waitServe(t, c, "a RUNNING", func(d *dashboard.ServeDetails) bool { return allRunning(d, "a") })
	if d.TargetCapacity == nil || *d.TargetCapacity != 40 {
		t.Errorf("target_capacity = %v", d.TargetCapacity)
	}
}
