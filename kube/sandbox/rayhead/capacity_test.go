//go:build unix

package rayhead

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/raydar/raydar/rayapi/dashboard"
)

const gpuServe = `
applications:
  - name: llm
    import_path: llm.app:deployment
    route_prefix: /llm
    deployments:
      - name: LLM
        num_replicas: 2
        ray_actor_options:
          num_gpus: 1
          num_cpus: 1
`

func capacityOf(t *testing.T, c *dashboard.Client) *dashboard.Capacity {
	t.Helper()
	got, err := c.Capacity(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestCapacityFollowsNodesJobsAndReplicas(t *testing.T) {
	h, c := startHead(t, Options{NodeIP: "10.0.0.5"})
	ctx := context.Background()

	// Standalone (no SetNodes): one head node, nothing constrained.
	if got := capacityOf(t, c); len(got.Nodes) != 1 || !got.Nodes[0].Head || !got.Nodes[0].Alive {
		t.Fatalf("standalone head: want one alive head node, got %+v", got.Nodes)
	}

	h.SetNodes([]Node{
		{Name: "head-uid", IP: "10.0.0.5", Head: true, Group: "headgroup", Total: dashboard.Resources{"CPU": 2}},
		{Name: "w1-uid", IP: "10.0.0.7", Group: "cpu", Total: dashboard.Resources{"CPU": 4, "memory": 8e9}},
	})
	// A job asking for 2 GPUs on a CPU-only cluster stays PENDING; its
	// demand shows in the autoscaler's report.
	gpuJob := submit(t, c, dashboard.SubmitJobRequest{Entrypoint: "python train.py",
		EntrypointReservation: dashboard.EntrypointReservation{EntrypointNumGPUs: 2}})
	cpuJob := submit(t, c, dashboard.SubmitJobRequest{Entrypoint: "python etl.py",
		RuntimeEnv:            map[string]any{"env_vars": map[string]any{"RAYDAR_SANDBOX_DURATION": "3600"}},
		EntrypointReservation: dashboard.EntrypointReservation{EntrypointNumCPUs: 3}})
	waitJob(t, c, cpuJob, dashboard.JobRunning)
	if err := c.DeployServeConfigV2(ctx, gpuServe); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the GPU app's replicas to be demanded", func() (bool, string) {
		got := capacityOf(t, c)
		for _, d := range got.Pending {
			if d.Shape.Equal(dashboard.Resources{"CPU": 1, "GPU": 1}) && d.Count == 2 {
				return true, ""
			}
		}
		return false, "pending " + fmtDemand(got.Pending)
	})
	got := capacityOf(t, c)
	if len(got.Nodes) != 2 || got.Total["CPU"] != 6 || got.Used["CPU"] != 3 || got.Nodes[1].Used["CPU"] != 3 || !got.Nodes[0].Idle {
		t.Errorf("want the 3-CPU job on the worker (the head has 2), head idle; got total %v used %v nodes %+v", got.Total, got.Used, got.Nodes)
	}
	if got.RunningJobs != 1 || got.Actors < 2 {
		t.Errorf("running jobs %d (want 1), actors %d (want ≥ 2: the job's supervisor, the Serve controller)", got.RunningJobs, got.Actors)
	}
	got.SplitInfeasible([]dashboard.Resources{{"CPU": 4}})
	if len(got.Infeasible) != 2 || len(got.Pending) != 0 {
		t.Errorf("with CPU-only groups both GPU demands are infeasible; pending %s infeasible %s", fmtDemand(got.Pending), fmtDemand(got.Infeasible))
	}
	if info, _ := c.GetJobInfo(ctx, gpuJob); info.Status != dashboard.JobPending {
		t.Errorf("GPU job %s, want PENDING", info.Status)
	}
	waitServe(t, c, "llm DEPLOYING, waiting for resources", func(d *dashboard.ServeDetails) bool {
		app := d.Applications["llm"]
		if app.Status != dashboard.AppDeploying && app.Status != "" {
			t.Fatalf("llm app %s, want DEPLOYING while no node offers a GPU", app.Status)
		}
		return app.Message == msgReplicasUnplaced
	})

	// A GPU node appears (a Ready GPU pod): the app runs, then the job.
	h.SetNodes([]Node{
		{Name: "head-uid", IP: "10.0.0.5", Head: true, Group: "headgroup", Total: dashboard.Resources{"CPU": 2}},
		{Name: "w1-uid", IP: "10.0.0.7", Group: "cpu", Total: dashboard.Resources{"CPU": 4, "memory": 8e9}},
		{Name: "g1-uid", IP: "10.0.0.9", Group: "gpu", Total: dashboard.Resources{"CPU": 8, "GPU": 4}},
	})
	waitServe(t, c, "llm RUNNING", func(d *dashboard.ServeDetails) bool { return allRunning(d, "llm") })
	waitJob(t, c, gpuJob, dashboard.JobRunning)
	if got := capacityOf(t, c); len(got.Pending) != 0 || got.Used["GPU"] != 4 {
		t.Errorf("all placed: want no demand and 4 GPUs used; pending %s used %v", fmtDemand(got.Pending), got.Used)
	}

	// The GPU pod goes: its node is DEAD, the app back to DEPLOYING.
	h.SetNodes([]Node{
		{Name: "head-uid", IP: "10.0.0.5", Head: true, Group: "headgroup", Total: dashboard.Resources{"CPU": 2}},
		{Name: "w1-uid", IP: "10.0.0.7", Group: "cpu", Total: dashboard.Resources{"CPU": 4, "memory": 8e9}},
	})
	got = capacityOf(t, c)
	if len(got.Nodes) != 3 || got.Nodes[2].Alive || got.Nodes[2].IP != "10.0.0.9" || got.Total["GPU"] != 0 {
		t.Errorf("want the GPU node listed DEAD and out of the totals; got %+v total %v", got.Nodes, got.Total)
	}
	waitServe(t, c, "llm back to DEPLOYING", func(d *dashboard.ServeDetails) bool { return d.Applications["llm"].Status == dashboard.AppDeploying })
}

func fmtDemand(ds []dashboard.Demand) string {
	s := "["
	for _, d := range ds {
		s += d.Shape.String() + "×" + string(rune('0'+d.Count%10)) + " "
	}
	return s + "]"
}

// TestCapacityReportsIdleTimes: the simulated head writes each alive
// node's idle time into idleTimeMap as Ray does (ms; 0 while something
// runs on it), the same times its simulated autoscaler compares with
// idleTimeoutSeconds (AutoscalerState), so raydar shows how long a worker
// has been idle in the sandbox too.
func TestCapacityReportsIdleTimes(t *testing.T) {
	h, c := startHead(t, Options{NodeIP: "10.0.0.5"})
	h.SetNodes([]Node{
		{Name: "head-uid", IP: "10.0.0.5", Head: true, Group: "headgroup", Total: dashboard.Resources{"CPU": 0}},
		{Name: "w1-uid", IP: "10.0.0.7", Group: "cpu", Total: dashboard.Resources{"CPU": 4}},
		{Name: "w2-uid", IP: "10.0.0.8", Group: "cpu", Total: dashboard.Resources{"CPU": 4}},
	})
	job := submit(t, c, dashboard.SubmitJobRequest{Entrypoint: "python etl.py",
		RuntimeEnv:            map[string]any{"env_vars": map[string]any{"RAYDAR_SANDBOX_DURATION": "3600"}},
		EntrypointReservation: dashboard.EntrypointReservation{EntrypointNumCPUs: 3}})
	waitJob(t, c, job, dashboard.JobRunning)
	var idle, busy dashboard.RayNode
	eventually(t, "one worker idle for 100ms or more, the other busy", func() (bool, string) {
		got := capacityOf(t, c)
		idle, busy = dashboard.RayNode{}, dashboard.RayNode{}
		for _, n := range got.Nodes {
			switch {
			case n.Head:
			case n.Idle:
				idle = n
			default:
				busy = n
			}
		}
		return idle.IdleFor >= 100*time.Millisecond && busy.ID != "", fmt.Sprintf("nodes %+v", got.Nodes)
	})
	if !idle.IdleKnown || !busy.IdleKnown || busy.IdleFor != 0 {
		t.Errorf("want both workers' idle times known, the busy one 0; idle %+v busy %+v", idle, busy)
	}
	st := h.AutoscalerState()
	for _, n := range st.Nodes {
		if n.Head {
			continue
		}
		if (n.Idle > 0) != (nodeIDFor(n.Name) == idle.ID) {
			t.Errorf("AutoscalerState node %s idle %v, the dashboard says %s is the idle one", n.Name, n.Idle, idle.ID)
		}
		if nodeIDFor(n.Name) == idle.ID && n.Idle < idle.IdleFor {
			t.Errorf("AutoscalerState, read later, has %s idle %v < the dashboard's %v: not the same clock", n.Name, n.Idle, idle.IdleFor)
		}
	}
}
