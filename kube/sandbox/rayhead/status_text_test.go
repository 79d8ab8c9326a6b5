//go:build unix

package rayhead

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/raydar/raydar/rayapi/dashboard"
)

// TestStatusTextIsWhatRayStatusPrints: /api/cluster_status?format=1
// answers `ray status`'s text from the head's nodes, their use and the
// demand that fits nowhere.
func TestStatusTextIsWhatRayStatusPrints(t *testing.T) {
	h, c := startHead(t, Options{NodeIP: "10.0.0.5"})
	h.SetNodes([]Node{
		{Name: "head-uid", IP: "10.0.0.5", Head: true, Group: "headgroup", Total: dashboard.Resources{"CPU": 2}},
		{Name: "w1-uid", IP: "10.0.0.7", Group: "cpu", Total: dashboard.Resources{"CPU": 4, "memory": 8e9}},
	})
	submit(t, c, dashboard.SubmitJobRequest{Entrypoint: "python train.py",
		EntrypointReservation: dashboard.EntrypointReservation{EntrypointNumGPUs: 2}})
	cpuJob := submit(t, c, dashboard.SubmitJobRequest{Entrypoint: "python etl.py",
		RuntimeEnv:            map[string]any{"env_vars": map[string]any{"RAYDAR_SANDBOX_DURATION": "3600"}},
		EntrypointReservation: dashboard.EntrypointReservation{EntrypointNumCPUs: 3}})
	waitJob(t, c, cpuJob, dashboard.JobRunning)

	text, err := c.StatusText(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"Node status\n" + separator + "\nActive:\n 1 cpu\nIdle:\n 1 headgroup\nPending:\n (no pending nodes)\n",
		"Total Usage:\n 3.0/6.0 CPU\n 0B/7.45GiB memory\n",
		"Total Demands:\n {'GPU': 2.0}: 1+ pending tasks/actors\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the status text has no\n%s\nit is:\n%s", want, text)
		}
	}
	if !regexp.MustCompile(`^======== Autoscaler status: \d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6} ========\n`).MatchString(text) {
		t.Errorf("no Autoscaler status title line:\n%s", text)
	}
	// The structured answer is still the default.
	if got := capacityOf(t, c); len(got.Nodes) != 2 {
		t.Fatalf("structured capacity: %+v", got.Nodes)
	}
}
