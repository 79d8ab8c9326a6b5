package dashboard

import (
	"context"
	"net/http"
	"net/url"
	"time"
)

// JobStatus is a Ray job's status (ray.job_submission.JobStatus).
type JobStatus string

// Job statuses. STOPPED, SUCCEEDED and FAILED are terminal.
const (
	JobPending   JobStatus = "PENDING"
	JobRunning   JobStatus = "RUNNING"
	JobStopped   JobStatus = "STOPPED"
	JobSucceeded JobStatus = "SUCCEEDED"
	JobFailed    JobStatus = "FAILED"
)

// IsTerminal reports whether the job has finished for good.
func (s JobStatus) IsTerminal() bool {
	return s == JobStopped || s == JobSucceeded || s == JobFailed
}

// Job types in JobInfo.Type.
const (
	JobTypeSubmission = "SUBMISSION" // submitted through the Jobs API
	JobTypeDriver     = "DRIVER"     // a driver started by hand on the cluster
)

// SubmitJobRequest is the body of POST /api/jobs/.
type SubmitJobRequest struct {
	// Entrypoint is the shell command Ray runs on the head (required).
	Entrypoint string `json:"entrypoint"`
	// SubmissionID is the job's ID; Ray generates "raysubmit_…" when empty.
	SubmissionID string `json:"submission_id,omitempty"`
	// RuntimeEnv is Ray's runtime_env (env_vars, working_dir, pip, …).
	RuntimeEnv map[string]any `json:"runtime_env,omitempty"`
	// Metadata is free-form string metadata shown with the job.
	Metadata map[string]string `json:"metadata,omitempty"`
	EntrypointReservation
}

// EntrypointReservation is what Ray reserves for a job's entrypoint (its
// driver): asked for in SubmitJobRequest, reported back in JobInfo.
type EntrypointReservation struct {
	EntrypointNumCPUs   float64            `json:"entrypoint_num_cpus,omitempty"`
	EntrypointNumGPUs   float64            `json:"entrypoint_num_gpus,omitempty"`
	EntrypointMemory    int64              `json:"entrypoint_memory,omitempty"`
	EntrypointResources map[string]float64 `json:"entrypoint_resources,omitempty"`
}

// SubmitJobResponse is the answer to POST /api/jobs/. Ray sets both fields to
// the submission ID (job_id is kept for old clients).
type SubmitJobResponse struct {
	JobID        string `json:"job_id"`
	SubmissionID string `json:"submission_id,omitempty"`
}

// DriverInfo describes the driver process of a running job.
type DriverInfo struct {
	ID            string `json:"id"`
	NodeIPAddress string `json:"node_ip_address"`
	PID           string `json:"pid"`
}

// JobInfo is one job as GET /api/jobs/<id> and GET /api/jobs/ report it (Ray's
// JobDetails).
type JobInfo struct {
	Type string `json:"type,omitempty"`
	// JobID is Ray's job ID (hex, e.g. "02000000"), known once the driver
	// runs; empty (null on the wire) before.
	JobID        string    `json:"job_id,omitempty"`
	SubmissionID string    `json:"submission_id,omitempty"`
	Status       JobStatus `json:"status"`
	Message      string    `json:"message,omitempty"`
	// ErrorType classifies a failure, e.g. "JOB_ENTRYPOINT_COMMAND_ERROR".
	ErrorType  string            `json:"error_type,omitempty"`
	Entrypoint string            `json:"entrypoint"`
	StartTime  int64             `json:"start_time,omitempty"` // ms since the epoch
	EndTime    int64             `json:"end_time,omitempty"`   // ms since the epoch; 0 while not terminal
	Metadata   map[string]string `json:"metadata,omitempty"`
	RuntimeEnv map[string]any    `json:"runtime_env,omitempty"`

	DriverInfo             *DriverInfo `json:"driver_info,omitempty"`
	DriverAgentHTTPAddress string      `json:"driver_agent_http_address,omitempty"`
	DriverNodeID           string      `json:"driver_node_id,omitempty"`
	// DriverExitCode is the entrypoint's exit code once it has exited (a
	// negative value -N: killed by signal N).
	DriverExitCode *int `json:"driver_exit_code,omitempty"`

	EntrypointReservation
}

// Started is StartTime as a time.Time (zero when unset).
func (j *JobInfo) Started() time.Time { return msTime(j.StartTime) }

// Ended is EndTime as a time.Time (zero when unset).
func (j *JobInfo) Ended() time.Time { return msTime(j.EndTime) }

func msTime(ms int64) time.Time {
	if ms <= 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}

// StopJobResponse is the answer to POST /api/jobs/<id>/stop.
type StopJobResponse struct {
	Stopped bool `json:"stopped"`
}

// DeleteJobResponse is the answer to DELETE /api/jobs/<id>.
type DeleteJobResponse struct {
	Deleted bool `json:"deleted"`
}

// JobLogsResponse is the answer to GET /api/jobs/<id>/logs.
type JobLogsResponse struct {
	Logs string `json:"logs"`
}

func jobPath(id string, suffix string) string {
	return JobsPath + url.PathEscape(id) + suffix
}

// SubmitJob submits a job (POST /api/jobs/) and returns its submission ID.
// A reused SubmissionID gives ErrSubmissionIDInUse; a request Ray rejects
// (no entrypoint, bad runtime_env) gives ErrBadRequest.
func (c *Client) SubmitJob(ctx context.Context, req SubmitJobRequest) (string, error) {
	var resp SubmitJobResponse
	if err := c.callJSON(ctx, http.MethodPost, JobsPath, nil, req, &resp); err != nil {
		return "", err
	}
	if resp.SubmissionID != "" {
		return resp.SubmissionID, nil
	}
	return resp.JobID, nil
}

// GetJobInfo returns one job (GET /api/jobs/<id>); id is a submission ID or a
// Ray job ID. An unknown job gives ErrNotFound.
func (c *Client) GetJobInfo(ctx context.Context, id string) (*JobInfo, error) {
	var info JobInfo
	if err := c.callJSON(ctx, http.MethodGet, jobPath(id, ""), nil, nil, &info); err != nil {
		return nil, err
	}
	return &info, nil
}

// ListJobs returns every job the head knows (GET /api/jobs/).
func (c *Client) ListJobs(ctx context.Context) ([]JobInfo, error) {
	var jobs []JobInfo
	if err := c.callJSON(ctx, http.MethodGet, JobsPath, nil, nil, &jobs); err != nil {
		return nil, err
	}
	return jobs, nil
}

// StopJob asks Ray to stop a job (POST /api/jobs/<id>/stop). It reports
// whether the job was still running; stopping is asynchronous, so poll
// GetJobInfo for STOPPED. An unknown job gives ErrNotFound.
func (c *Client) StopJob(ctx context.Context, id string) (bool, error) {
	var resp StopJobResponse
	if err := c.callJSON(ctx, http.MethodPost, jobPath(id, "/stop"), nil, nil, &resp); err != nil {
		return false, err
	}
	return resp.Stopped, nil
}

// DeleteJob deletes a terminal job and its logs (DELETE /api/jobs/<id>). Ray
// refuses (500) to delete a job that is not terminal. An unknown job gives
// ErrNotFound.
func (c *Client) DeleteJob(ctx context.Context, id string) error {
	return c.callJSON(ctx, http.MethodDelete, jobPath(id, ""), nil, nil, nil)
}

// GetJobLogs returns a job's driver logs (GET /api/jobs/<id>/logs).
func (c *Client) GetJobLogs(ctx context.Context, id string) (string, error) {
	var resp JobLogsResponse
	if err := c.callJSON(ctx, http.MethodGet, jobPath(id, "/logs"), nil, nil, &resp); err != nil {
		return "", err
	}
	return resp.Logs, nil
}
