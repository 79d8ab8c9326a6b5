//go:build unix

package rayhead

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/raydar/raydar/rayapi/dashboard"
)

// The head answers in rayapi/dashboard's own types: what it serves, the
// client reads back field for field.
func TestHeadSpeaksTheClientsWire(t *testing.T) {
	h, _ := startHead(t, Options{Token: "s3cret", NodeIP: "10.0.0.7"})
	ctx := context.Background()

	// /api/version needs no token, as in Ray.
	v, err := newClient(t, h).GetVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if v.RayVersion != RayVersion || v.Version == "" {
		t.Errorf("GetVersion = %+v, want ray_version %s", v, RayVersion)
	}

	c := newClient(t, h, dashboard.WithToken("s3cret"))
	d, err := c.GetServeApplications(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d.ControllerInfo != (dashboard.ServeActorDetails{}) || len(d.Proxies) != 0 {
		t.Errorf("before Serve started: controller_info %+v, proxies %+v; want none", d.ControllerInfo, d.Proxies)
	}
	if err := c.DeployServeConfigV2(ctx, twoApps); err != nil {
		t.Fatal(err)
	}
	d = waitServe(t, c, "both apps RUNNING", func(d *dashboard.ServeDetails) bool { return allRunning(d, "fruit_app", "math_app") })
	if ci := d.ControllerInfo; ci.ActorName != "SERVE_CONTROLLER_ACTOR" || ci.NodeIP != "10.0.0.7" || ci.NodeID == "" {
		t.Errorf("controller_info = %+v", ci)
	}
	if len(d.Proxies) != 1 {
		t.Fatalf("proxies = %+v, want one (one node)", d.Proxies)
	}
	for id, p := range d.Proxies {
		if p.NodeID != id || p.NodeIP != "10.0.0.7" || p.Status == "" {
			t.Errorf("proxy %s = %+v", id, p)
		}
	}

	eventually(t, "the proxy to be healthy", func() (bool, string) {
		err := dashboard.ProxyHealthy(ctx, h.ProxyURL())
		return err == nil, errString(err)
	})
	code, body := proxyGet(t, h, dashboard.ProxyRoutesPath)
	var routes dashboard.ServeRoutes
	if err := json.Unmarshal([]byte(body), &routes); code != 200 || err != nil {
		t.Fatalf("GET %s = %d %q (%v)", dashboard.ProxyRoutesPath, code, body, err)
	}
	if routes["/fruit"] != "fruit_app" || routes["/calc"] != "math_app" {
		t.Errorf("routes = %v, want /fruit -> fruit_app, /calc -> math_app", routes)
	}
}
