//go:build unix

package rayhead

import (
	"net/http"
	"testing"

	"github.com/raydar/raydar/rayapi/dashboard"
	"github.com/raydar/raydar/rayapi/raymetrics"
)

// scrapeNode reads one simulated node's metrics as kube/gauges does.
func scrapeNode(t *testing.T, h *Head, ip string) (*raymetrics.Exposition, int) {
	t.Helper()
	resp, err := http.Get(h.MetricsURL() + "/" + ip + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, resp.StatusCode
	}
	e, err := raymetrics.Parse(resp.Body, 0)
	if err != nil {
		t.Fatalf("the simulated exposition does not parse: %v", err)
	}
	return e, resp.StatusCode
}

// The simulated nodes serve Ray's gauges that follow the simulated work: a
// task holding one of a worker's two GPUs makes that GPU busy and leaves the
// other idle; a running job's driver uses a head core.
func TestNodeMetricsFollowTheWork(t *testing.T) {
	h, _ := startHead(t, Options{NodeIP: "10.0.0.5", Token: "secret"})
	if _, code := scrapeNode(t, h, "10.0.0.5"); code != http.StatusServiceUnavailable {
		t.Errorf("before the head knows its nodes: HTTP %d, want 503", code)
	}
	h.SetNodes([]Node{
		{Name: "head-uid", IP: "10.0.0.5", Head: true, Group: "headgroup", Total: dashboard.Resources{"CPU": 2, "memory": 8e9}},
		{Name: "w1-uid", IP: "10.0.0.7", Group: "gpu", Total: dashboard.Resources{"CPU": 8, "GPU": 2, "memory": 32e9}},
	})
	e, _ := scrapeNode(t, h, "10.0.0.7")
	w, ok := e.Node("10.0.0.7")
	if !ok || len(w.GPUs) != 2 || w.GPUs[0].UtilPct != 0 || w.GPUs[1].UtilPct != 0 || w.CPUCount != 8 {
		t.Fatalf("idle GPU worker: %+v", w)
	}
	id := submit(t, withToken(t, h), dashboard.SubmitJobRequest{Entrypoint: "python train.py",
		RuntimeEnv: map[string]any{"env_vars": map[string]any{"RAYDAR_SANDBOX_DURATION": "3600",
			TasksEnv: `[{"count": 1, "resources": {"GPU": 1}}]`}}})
	waitJob(t, withToken(t, h), id, dashboard.JobRunning)
	eventually(t, "one GPU busy", func() (bool, string) {
		e, _ := scrapeNode(t, h, "10.0.0.7")
		w, _ := e.Node("10.0.0.7")
		return w.GPUs[0].UtilPct >= 80 && w.GPUs[1].UtilPct == 0 && w.GPUs[0].GRAMUsedMiB > 0, ""
	})
	e, _ = scrapeNode(t, h, "10.0.0.5")
	head, ok := e.Node("10.0.0.5")
	if !ok || !head.IsHead || head.CPUPct < 40 { // one of two cores for the driver
		t.Errorf("head with a running job: %+v", head)
	}
	if _, other := e.Node("10.0.0.7"); other {
		t.Error("the head's exposition carries another node's gauges")
	}
	if _, code := scrapeNode(t, h, "10.0.0.99"); code != http.StatusServiceUnavailable {
		t.Errorf("unknown node: HTTP %d, want 503", code)
	}
}

func withToken(t *testing.T, h *Head) *dashboard.Client {
	return newClient(t, h, dashboard.WithToken("secret"))
}
