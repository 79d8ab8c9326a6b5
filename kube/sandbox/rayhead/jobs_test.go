//go:build unix

package rayhead

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/raydar/raydar/rayapi/dashboard"
)

func TestJobSucceeds(t *testing.T) {
	h, c := startHead(t, Options{})
	ctx := context.Background()
	id := submit(t, c, dashboard.SubmitJobRequest{
		Entrypoint:   `echo hello; echo oops >&2; echo "$GREETING from $(pwd)"`,
		SubmissionID: "raysubmit_ok",
		RuntimeEnv:   map[string]any{"env_vars": map[string]string{"GREETING": "hi"}},
		Metadata:     map[string]string{"owner": "raydar"},
	})
	if id != "raysubmit_ok" {
		t.Fatalf("id = %q", id)
	}
	info := waitJob(t, c, id, dashboard.JobSucceeded)
	if info.Message != "Job finished successfully." || info.ErrorType != "" {
		t.Errorf("message = %q, error_type = %q", info.Message, info.ErrorType)
	}
	if info.StartTime == 0 || info.EndTime < info.StartTime || time.Since(info.Ended()) > time.Hour {
		t.Errorf("start_time = %d, end_time = %d", info.StartTime, info.EndTime)
	}
	if info.DriverExitCode == nil || *info.DriverExitCode != 0 {
		t.Errorf("driver_exit_code = %v", info.DriverExitCode)
	}
	if info.JobID == "" || info.DriverInfo == nil || info.DriverInfo.ID != info.JobID || info.DriverInfo.PID == "" ||
		info.DriverInfo.NodeIPAddress != "127.0.0.1" || info.Type != dashboard.JobTypeSubmission {
		t.Errorf("info = %+v, driver_info = %+v", info, info.DriverInfo)
	}
	if info.Metadata["owner"] != "raydar" || info.Entrypoint == "" {
		t.Errorf("info = %+v", info)
	}
	// The Ray job ID works as well as the submission ID.
	if byJobID, err := c.GetJobInfo(ctx, info.JobID); err != nil || byJobID.SubmissionID != id {
		t.Errorf("GetJobInfo(%s) = %+v, %v", info.JobID, byJobID, err)
	}

	logs, err := c.GetJobLogs(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(logs), "\n")
	if len(lines) != 3 || lines[0] != "hello" || lines[1] != "oops" || !strings.HasPrefix(lines[2], "hi from "+h.workDir+"/job-") {
		t.Errorf("logs = %q", logs)
	}
}

func TestJobFailsWithExitCode(t *testing.T) {
	_, c := startHead(t, Options{})
	id := submit(t, c, dashboard.SubmitJobRequest{Entrypoint: "echo boom; exit 3"})
	if !strings.HasPrefix(id, "raysubmit_") || len(id) <= len("raysubmit_") {
		t.Errorf("generated id = %q", id)
	}
	info := waitJob(t, c, id, dashboard.JobFailed)
	if !strings.HasPrefix(info.Message, "Job entrypoint command failed with exit code 3, last available logs") ||
		!strings.Contains(info.Message, "boom") {
		t.Errorf("message = %q", info.Message)
	}
	if info.ErrorType != "JOB_ENTRYPOINT_COMMAND_ERROR" || info.DriverExitCode == nil || *info.DriverExitCode != 3 || info.EndTime == 0 {
		t.Errorf("info = %+v", info)
	}

	// A command the shell runs and does not find is the shell's 127.
	id = submit(t, c, dashboard.SubmitJobRequest{Entrypoint: "true; no-such-command-rayhead"})
	info = waitJob(t, c, id, dashboard.JobFailed)
	if !strings.Contains(info.Message, "exit code 127") {
		t.Errorf("message = %q", info.Message)
	}
}

func TestGeneratedIDsAreUnique(t *testing.T) {
	_, c := startHead(t, Options{})
	seen := map[string]bool{}
	for range 5 {
		id := submit(t, c, dashboard.SubmitJobRequest{Entrypoint: "true"})
		if seen[id] {
			t.Fatalf("duplicate generated id %q", id)
		}
		seen[id] = true
	}
}

func TestDuplicateSubmissionID(t *testing.T) {
	_, c := startHead(t, Options{})
	submit(t, c, dashboard.SubmitJobRequest{Entrypoint: "true", SubmissionID: "dup"})
	_, err := c.SubmitJob(context.Background(), dashboard.SubmitJobRequest{Entrypoint: "true", SubmissionID: "dup"})
	var he *dashboard.HTTPError
	if !errors.Is(err, dashboard.ErrSubmissionIDInUse) || !errors.As(err, &he) || he.StatusCode != 500 {
		t.Fatalf("err = %v", err)
	}
	if !strings.Contains(he.Body, "Please use a different submission_id") {
		t.Errorf("body = %q", he.Body)
	}
	// Still refused once the first one has finished.
	waitJob(t, c, "dup", dashboard.JobSucceeded)
	if _, err := c.SubmitJob(context.Background(), dashboard.SubmitJobRequest{Entrypoint: "true", SubmissionID: "dup"}); !errors.Is(err, dashboard.ErrSubmissionIDInUse) {
		t.Fatalf("err = %v", err)
	}
}

func TestSubmitBadRequest(t *testing.T) {
	_, c := startHead(t, Options{})
	for name, req := range map[string]dashboard.SubmitJobRequest{
		"no entrypoint":   {SubmissionID: "x"},
		"env_vars number": {Entrypoint: "true", RuntimeEnv: map[string]any{"env_vars": map[string]any{"A": 1}}},
		"env_vars list":   {Entrypoint: "true", RuntimeEnv: map[string]any{"env_vars": []string{"A=1"}}},
	} {
		if _, err := c.SubmitJob(context.Background(), req); !errors.Is(err, dashboard.ErrBadRequest) {
			t.Errorf("%s: err = %v", name, err)
		}
	}
	jobs, err := c.ListJobs(context.Background())
	if err != nil || len(jobs) != 0 {
		t.Errorf("rejected submissions left jobs: %+v, %v", jobs, err)
	}
}

func TestStopJob(t *testing.T) {
	_, c := startHead(t, Options{StopGracePeriod: 300 * time.Millisecond})
	ctx := context.Background()

	id := submit(t, c, dashboard.SubmitJobRequest{Entrypoint: "echo started; sleep 300"})
	running := waitJob(t, c, id, dashboard.JobRunning)
	if running.Message != "Job is currently running." || running.EndTime != 0 {
		t.Errorf("running info = %+v", running)
	}
	eventually(t, "the job's output", func() (bool, string) {
		logs, err := c.GetJobLogs(ctx, id)
		return err == nil && strings.Contains(logs, "started"), logs
	})
	if stopped, err := c.StopJob(ctx, id); err != nil || !stopped {
		t.Fatalf("StopJob = %v, %v", stopped, err)
	}
	info := waitJob(t, c, id, dashboard.JobStopped)
	if info.Message != "Job was intentionally stopped." || info.EndTime == 0 {
		t.Errorf("stopped info = %+v", info)
	}
	if stopped, err := c.StopJob(ctx, id); err != nil || stopped {
		t.Errorf("second StopJob = %v, %v", stopped, err)
	}
	if _, err := c.StopJob(ctx, "nope"); !errors.Is(err, dashboard.ErrNotFound) {
		t.Errorf("StopJob(unknown) = %v", err)
	}

	// A job that ignores SIGTERM is killed after the grace period.
	id = submit(t, c, dashboard.SubmitJobRequest{Entrypoint: `trap "" TERM; echo trapped; while :; do sleep 1; done`})
	waitJob(t, c, id, dashboard.JobRunning)
	eventually(t, "the trap to be set", func() (bool, string) {
		logs, _ := c.GetJobLogs(ctx, id)
		return strings.Contains(logs, "trapped"), logs
	})
	if stopped, err := c.StopJob(ctx, id); err != nil || !stopped {
		t.Fatalf("StopJob = %v, %v", stopped, err)
	}
	info = waitJob(t, c, id, dashboard.JobStopped)
	if info.DriverExitCode == nil || *info.DriverExitCode != -9 {
		t.Errorf("driver_exit_code = %v, want -9 (SIGKILL)", info.DriverExitCode)
	}
}

func TestListAndDelete(t *testing.T) {
	h, c := startHead(t, Options{})
	ctx := context.Background()
	done := submit(t, c, dashboard.SubmitJobRequest{Entrypoint: "true", SubmissionID: "a"})
	long := submit(t, c, dashboard.SubmitJobRequest{Entrypoint: "sleep 300", SubmissionID: "b"})
	waitJob(t, c, done, dashboard.JobSucceeded)
	waitJob(t, c, long, dashboard.JobRunning)

	jobs, err := c.ListJobs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 2 {
		t.Fatalf("jobs = %+v", jobs)
	}
	got := map[string]dashboard.JobStatus{}
	for _, j := range jobs {
		got[j.SubmissionID] = j.Status
	}
	if got["a"] != dashboard.JobSucceeded || got["b"] != dashboard.JobRunning {
		t.Errorf("statuses = %v", got)
	}

	// A running job cannot be deleted.
	err = c.DeleteJob(ctx, long)
	var he *dashboard.HTTPError
	if !errors.As(err, &he) || he.StatusCode != 500 || !strings.Contains(he.Body, "non-terminal state RUNNING") {
		t.Fatalf("DeleteJob(running) = %v", err)
	}

	h.mu.Lock()
	dir := h.jobs[done].dir
	h.mu.Unlock()
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("job dir: %v", err)
	}
	if err := c.DeleteJob(ctx, done); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetJobInfo(ctx, done); !errors.Is(err, dashboard.ErrNotFound) {
		t.Errorf("GetJobInfo after delete = %v", err)
	}
	if _, err := c.GetJobLogs(ctx, done); !errors.Is(err, dashboard.ErrNotFound) {
		t.Errorf("GetJobLogs after delete = %v", err)
	}
	if err := c.DeleteJob(ctx, done); !errors.Is(err, dashboard.ErrNotFound) {
		t.Errorf("second DeleteJob = %v", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("job dir %s still there: %v", dir, err)
	}

	if _, err := c.StopJob(ctx, long); err != nil {
		t.Fatal(err)
	}
	waitJob(t, c, long, dashboard.JobStopped)
	if err := c.DeleteJob(ctx, long); err != nil {
		t.Errorf("DeleteJob(stopped) = %v", err)
	}
	if jobs, err := c.ListJobs(ctx); err != nil || len(jobs) != 0 {
		t.Errorf("jobs after delete = %+v, %v", jobs, err)
	}
}

func TestLogsAreBounded(t *testing.T) {
	_, c := startHead(t, Options{MaxLogBytes: 1000})
	id := submit(t, c, dashboard.SubmitJobRequest{Entrypoint: `i=0; while [ $i -lt 2000 ]; do echo "line $i"; i=$((i+1)); done; exit 1`})
	info := waitJob(t, c, id, dashboard.JobFailed)
	logs, err := c.GetJobLogs(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if len(logs) > 1000 || !strings.HasSuffix(logs, "line 1999\n") || !strings.HasPrefix(logs, "line ") {
		t.Errorf("logs (%d bytes) = %q…", len(logs), logs[:min(len(logs), 40)])
	}
	if !strings.HasSuffix(info.Message, "line 1999\n") {
		t.Errorf("message tail = %q", info.Message[max(0, len(info.Message)-40):])
	}
}

func TestLogBuffer(t *testing.T) {
	b := newLogBuffer(10)
	b.Write([]byte("abc\n"))
	if b.String() != "abc\n" {
		t.Errorf("String = %q", b.String())
	}
	for i := range 20 {
		b.Write([]byte(strconv.Itoa(i%10) + "\n"))
	}
	if s := b.String(); len(s) > 10 || !strings.HasSuffix(s, "8\n9\n") || strings.HasPrefix(s, "\n") {
		t.Errorf("String = %q", s)
	}
	if b.tail(4) != "8\n9\n" {
		t.Errorf("tail = %q", b.tail(4))
	}
	b.Write([]byte(strings.Repeat("x", 100)))
	if s := b.String(); s != strings.Repeat("x", 10) {
		t.Errorf("String after a big write = %q", s)
	}
}

func TestJobWorkingDirAndEnv(t *testing.T) {
	_, c := startHead(t, Options{Env: []string{"PATH=" + os.Getenv("PATH"), "BASE=1", "OVERRIDE=base"}})
	id := submit(t, c, dashboard.SubmitJobRequest{
		Entrypoint: `echo "$BASE $OVERRIDE" > out.txt; cat out.txt; env | grep -c '^OVERRIDE='`,
		RuntimeEnv: map[string]any{"env_vars": map[string]string{"OVERRIDE": "job"}},
	})
	waitJob(t, c, id, dashboard.JobSucceeded)
	logs, _ := c.GetJobLogs(context.Background(), id)
	if logs != "1 job\n1\n" {
		t.Errorf("logs = %q", logs)
	}
}

func TestCloseRemovesWorkDir(t *testing.T) {
	h := New(Options{TempDir: t.TempDir()})
	if err := h.Start(""); err != nil {
		t.Fatal(err)
	}
	dir := h.workDir
	if filepath.Dir(dir) != h.opts.TempDir {
		t.Errorf("work dir %s not under %s", dir, h.opts.TempDir)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("work dir left: %v", err)
	}
	if err := h.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := h.Start(""); err == nil {
		t.Error("Start after Close succeeded")
	}
}
