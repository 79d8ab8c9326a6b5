//go:build unix

package rayhead

import (
	"fmt"
	"strings"
	"testing"

	"github.com/raydar/raydar/rayapi/dashboard"
)

func demandOf(st AutoscalerState) map[string]int {
	m := map[string]int{}
	for _, d := range st.Demand {
		m[d.Shape.String()] += d.Count
	}
	return m
}

func worker(st AutoscalerState, name string) (AutoscalerNode, bool) {
	for _, n := range st.Nodes {
		if n.Name == name {
			return n, true
		}
	}
	return AutoscalerNode{}, false
}

// A job asking for 8 one-GPU tasks of 1 s on a 4-GPU node: 4 run, 4 are
// the autoscaler's demand; when the first 4 end the others run; then the
// node is idle while the job still runs.
func TestTasksAskForResourcesOverTime(t *testing.T) {
	h, c := startHead(t, Options{})
	h.SetNodes([]Node{
		{Name: "head", Head: true, Group: "headgroup", Total: dashboard.Resources{"CPU": 0}},
		{Name: "gpu-1", Group: "gpu", Total: dashboard.Resources{"CPU": 8, "GPU": 4}},
	})
	id := submit(t, c, dashboard.SubmitJobRequest{Entrypoint: "python train.py", RuntimeEnv: map[string]any{"env_vars": map[string]any{
		TasksEnv:    `[{"count": 8, "resources": {"GPU": 1}, "seconds": 1}]`,
		DurationEnv: "3600",
	}}})
	waitJob(t, c, id, dashboard.JobRunning)
	eventually(t, "4 tasks running and 4 demanded", func() (bool, string) {
		st := h.AutoscalerState()
		n, _ := worker(st, "gpu-1")
		return demandOf(st)["{GPU: 1}"] == 4 && n.Available["GPU"] == 0, fmt.Sprintf("demand %v, node %+v", demandOf(st), n)
	})
	eventually(t, "the second 4 running, nothing demanded", func() (bool, string) {
		st := h.AutoscalerState()
		n, _ := worker(st, "gpu-1")
		return len(st.Demand) == 0 && n.Available["GPU"] == 0, fmt.Sprintf("demand %v, node %+v", demandOf(st), n)
	})
	eventually(t, "the node idle with the job still running", func() (bool, string) {
		st := h.AutoscalerState()
		n, _ := worker(st, "gpu-1")
		return n.Idle > 0 && n.Available["GPU"] == 4, fmt.Sprintf("node %+v", n)
	})
	if info, err := c.GetJobInfo(t.Context(), id); err != nil || info.Status != dashboard.JobRunning {
		t.Errorf("job %+v (%v), want RUNNING after its tasks ended", info, err)
	}
}

// Later batches come "after" seconds; a job whose tasks never fit keeps
// demanding until it ends, then demands nothing.
func TestTaskBatchesAfterAndJobEnd(t *testing.T) {
	h, c := startHead(t, Options{})
	h.SetNodes([]Node{{Name: "head", Head: true, Group: "headgroup", Total: dashboard.Resources{"CPU": 1}}})
	id := submit(t, c, dashboard.SubmitJobRequest{Entrypoint: "python train.py", Metadata: map[string]string{
		TasksMetadata:    `[{"count": 2, "resources": {"GPU": 1}, "after": 0.5}]`,
		DurationMetadata: "3",
	}})
	waitJob(t, c, id, dashboard.JobRunning)
	if d := demandOf(h.AutoscalerState()); len(d) != 0 {
		t.Errorf("demand before the batch is due: %v, want none", d)
	}
	eventually(t, "the batch demanded", func() (bool, string) {
		d := demandOf(h.AutoscalerState())
		return d["{GPU: 1}"] == 2, fmt.Sprint(d)
	})
	waitJob(t, c, id, dashboard.JobSucceeded)
	if d := demandOf(h.AutoscalerState()); len(d) != 0 {
		t.Errorf("demand after the job ended: %v, want none", d)
	}
}

func TestTasksInvalidFailsTheJob(t *testing.T) {
	_, c := startHead(t, Options{})
	id := submit(t, c, dashboard.SubmitJobRequest{Entrypoint: "python train.py", Metadata: map[string]string{TasksMetadata: `{"count": 2}`}})
	info := waitJob(t, c, id, dashboard.JobFailed)
	if !strings.Contains(info.Message, TasksMetadata+": want a JSON list") {
		t.Errorf("message %q does not say what is wrong with %s", info.Message, TasksMetadata)
	}
}
