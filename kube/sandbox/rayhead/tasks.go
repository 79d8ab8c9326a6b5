package rayhead

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/raydar/raydar/rayapi/dashboard"
)

// A played-out job may ask for resources over time, as a Ray driver
// submits tasks: TasksEnv (a runtime_env env var) or TasksMetadata (a job
// metadata key) holds a JSON list of batches,
//
//	[{"count": 8, "resources": {"GPU": 1}, "seconds": 30, "after": 0}]
//
// each batch being count tasks of that shape submitted "after" seconds
// into the job's RUNNING time, each running "seconds" once placed on a node
// (until the job ends when 0). A task waits for a node with room, and
// while it waits its shape is the autoscaler's demand, as a Ray task's; a
// running task keeps its node busy (not idle). When the job ends its tasks
// go. "8 GPUs for 30 s, then nothing": one batch of 8 {"GPU": 1} for 30 s
// in a job that runs longer.
const (
	TasksEnv      = "RAYDAR_SANDBOX_TASKS"
	TasksMetadata = "raydar.io/sandbox-tasks"
)

// TaskBatch is one entry of TasksEnv.
type TaskBatch struct {
	Count     int                 `json:"count"`
	Resources dashboard.Resources `json:"resources"`
	Seconds   float64             `json:"seconds,omitempty"`
	After     float64             `json:"after,omitempty"`
}

// parseTasks reads a TasksEnv value.
func parseTasks(s string) ([]TaskBatch, error) {
	var bs []TaskBatch
	if err := json.Unmarshal([]byte(s), &bs); err != nil {
		return nil, fmt.Errorf("want a JSON list such as [{\"count\": 8, \"resources\": {\"GPU\": 1}, \"seconds\": 30}]: %v", err)
	}
	for i, b := range bs {
		if b.Count < 0 || b.Seconds < 0 || b.After < 0 {
			return nil, fmt.Errorf("batch %d: count, seconds and after must not be negative", i)
		}
		for k, v := range b.Resources {
			if v < 0 {
				return nil, fmt.Errorf("batch %d: resource %s is negative", i, k)
			}
		}
	}
	return bs, nil
}

// task is one simulated Ray task of a job. Guarded by Head.mu.
type task struct {
	shape  dashboard.Resources
	run    time.Duration // 0: until the job ends
	placed bool
	done   bool
	timer  *time.Timer // ends a placed task after run
}

// startTasksLocked schedules the job's batches once it runs. h.mu must be
// held.
func (h *Head) startTasksLocked(j *job, batches []TaskBatch) {
	for _, b := range batches {
		if b.Count == 0 {
			continue
		}
		submit := func() {
			if j.info.Status.IsTerminal() {
				return
			}
			for range b.Count {
				j.tasks = append(j.tasks, &task{shape: dashboard.CleanResources(b.Resources), run: time.Duration(b.Seconds * float64(time.Second))})
			}
			logLine(h.raylet, "I", "raylet", "core_worker.cc:1] Job %s submitted %d tasks of %v", j.info.SubmissionID, b.Count, dashboard.CleanResources(b.Resources))
			h.placeLocked()
		}
		if b.After <= 0 {
			submit()
			continue
		}
		j.taskTimers = append(j.taskTimers, h.after(time.Duration(b.After*float64(time.Second)), submit))
	}
}

// dropTasksLocked ends every task of a job that ended. h.mu must be held.
func (h *Head) dropTasksLocked(j *job) {
	for i := range j.taskTimers {
		h.cancelTimer(&j.taskTimers[i])
	}
	for _, t := range j.tasks {
		h.cancelTimer(&t.timer)
		t.done = true
	}
	j.tasks = nil
}

// taskPlacedLocked starts a newly placed task's clock. h.mu must be held.
func (h *Head) taskPlacedLocked(t *task) {
	t.placed = true
	if t.run > 0 {
		t.timer = h.after(t.run, func() {
			t.timer = nil
			t.done = true
			h.placeLocked()
		})
	}
}
