//go:build unix

package rayhead

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/raydar/raydar/rayapi/dashboard"
)

func TestFirstCommand(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"python /home/ray/samples/sample_code.py", []string{"python", "/home/ray/samples/sample_code.py"}},
		{"  python -c \"import ray; print(1)\" ; echo x", []string{"python", "-c", "import ray; print(1)"}},
		{"python -c '\nimport ray\nray.init()\n'\n", []string{"python", "-c", "\nimport ray\nray.init()\n"}},
		{`echo "a \"b\" c"|wc`, []string{"echo", `a "b" c`}},
		{`FOO=1 BAR='x y' python run.py`, []string{"FOO=1", "BAR=x y", "python", "run.py"}},
		{"a\\ b c", []string{"a b", "c"}},
		{"\n\nsleep 1", []string{"sleep", "1"}},
		{"", nil},
	} {
		got := firstCommand(tc.in)
		if strings.Join(got, "\x00") != strings.Join(tc.want, "\x00") || len(got) != len(tc.want) {
			t.Errorf("firstCommand(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// fakeHost has sh, sleep and python3 (not python), and one script.
var fakeHost = host{
	lookPath: func(f string) (string, error) {
		switch f {
		case "sh", "sleep", "python3", "/usr/bin/env":
			return "/usr/bin/" + f, nil
		}
		return "", errors.New("not found")
	},
	exists: func(p string) bool { return p == "/opt/jobs/hello.py" },
}

func TestPlanJob(t *testing.T) {
	const sample = "python /home/ray/samples/sample_code.py"
	for _, tc := range []struct {
		name       string
		entrypoint string
		env        []string
		metadata   map[string]string
		play       bool
		reason     string // substring
		outcome    dashboard.JobStatus
		duration   time.Duration
	}{
		{name: "KubeRay's sample: python is not here", entrypoint: sample, play: true, reason: "python is not on this host",
			outcome: dashboard.JobSucceeded, duration: DefaultPlayDuration},
		{name: "python3 here, the sample script is not", entrypoint: "python3 /home/ray/samples/sample_code.py", play: true,
			reason: "/home/ray/samples/sample_code.py does not exist on this host", outcome: dashboard.JobSucceeded},
		{name: "a relative script never exists in the job's fresh directory", entrypoint: "python3 -u train.py --epochs 3",
			play: true, reason: "train.py does not exist"},
		{name: "a script the host has runs", entrypoint: "python3 /opt/jobs/hello.py"},
		{name: "python -c importing ray", entrypoint: "python3 -c \"\nimport time\nimport ray\nray.init()\n\"", play: true,
			reason: "imports ray"},
		{name: "from ray.util import …", entrypoint: `python3 -c "from ray.util import x"`, play: true, reason: "imports ray"},
		{name: "python -c without ray runs", entrypoint: `python3 -c "print(sum(range(10)))"`},
		{name: "a word that merely starts with ray is no import", entrypoint: `python3 -c "import rayon"`},
		{name: "python -m ray.…", entrypoint: "python3 -m ray.scripts.scripts status", play: true, reason: "module ray.scripts.scripts"},
		{name: "the ray CLI", entrypoint: "ray job submit -- python x.py", play: true, reason: "ray is not on this host"},
		{name: "assignments before the command", entrypoint: "OMP_NUM_THREADS=1 python /x.py", play: true, reason: "python is not on this host"},
		{name: "shell builtins run", entrypoint: `echo "counting"; sleep 1`},
		{name: "a compound command runs", entrypoint: `for i in 1 2; do echo $i; done`},
		{name: "the demo's sh -c scripts run", entrypoint: `sh -c 'echo hi; sleep 1'`},
		{name: "a missing command after the first runs (and fails in the shell)", entrypoint: "true; python x.py"},

		{name: "failure asked for in env_vars", entrypoint: sample, env: []string{"RAYDAR_SANDBOX_OUTCOME=failed"}, play: true,
			reason: "asked for by RAYDAR_SANDBOX_OUTCOME=failed", outcome: dashboard.JobFailed, duration: DefaultPlayDuration},
		{name: "failure asked for in metadata", entrypoint: sample, metadata: map[string]string{OutcomeMetadata: "FAILED"}, play: true,
			outcome: dashboard.JobFailed},
		{name: "env_vars win over metadata", entrypoint: sample, env: []string{"RAYDAR_SANDBOX_OUTCOME=SUCCEEDED"},
			metadata: map[string]string{OutcomeMetadata: "FAILED"}, play: true, outcome: dashboard.JobSucceeded},
		{name: "a duration in seconds", entrypoint: sample, env: []string{"RAYDAR_SANDBOX_DURATION=30"}, play: true,
			outcome: dashboard.JobSucceeded, duration: 30 * time.Second},
		{name: "a Go duration in metadata", entrypoint: sample, metadata: map[string]string{DurationMetadata: "2m"}, play: true,
			duration: 2 * time.Minute},
		{name: "asking plays even what the host could run", entrypoint: "sleep 1", env: []string{"RAYDAR_SANDBOX_OUTCOME=FAILED"},
			play: true, reason: "asked for by", outcome: dashboard.JobFailed},
		{name: "a bad outcome fails at once, naming it", entrypoint: sample, env: []string{"RAYDAR_SANDBOX_OUTCOME=maybe"}, play: true,
			reason: `RAYDAR_SANDBOX_OUTCOME="maybe": want SUCCEEDED or FAILED`, outcome: dashboard.JobFailed},
		{name: "a bad duration fails at once, naming it", entrypoint: sample, metadata: map[string]string{DurationMetadata: "soon"},
			play: true, reason: `raydar.io/sandbox-duration="soon"`, outcome: dashboard.JobFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := planJob(tc.entrypoint, tc.env, tc.metadata, fakeHost)
			if p.play != tc.play {
				t.Fatalf("play = %v (reason %q), want %v", p.play, p.reason, tc.play)
			}
			if !strings.Contains(p.reason, tc.reason) {
				t.Errorf("reason %q, want it to contain %q", p.reason, tc.reason)
			}
			if tc.outcome != "" && p.outcome != tc.outcome {
				t.Errorf("outcome %s, want %s", p.outcome, tc.outcome)
			}
			if tc.duration != 0 && p.duration != tc.duration {
				t.Errorf("duration %s, want %s", p.duration, tc.duration)
			}
		})
	}
}

// TestPlayedJob: KubeRay's sample entrypoint goes PENDING → RUNNING (with
// log lines, the first saying what happened) → SUCCEEDED.
func TestPlayedJob(t *testing.T) {
	_, c := startHead(t, Options{Env: []string{"PATH=" + t.TempDir()}}) // a PATH without python
	ctx := context.Background()
	id := submit(t, c, dashboard.SubmitJobRequest{
		Entrypoint: "python /home/ray/samples/sample_code.py",
		RuntimeEnv: map[string]any{"env_vars": map[string]any{DurationEnv: "1s"}},
	})
	if info, err := c.GetJobInfo(ctx, id); err != nil || info.Status != dashboard.JobPending {
		t.Fatalf("right after the submission: %+v %v; want PENDING", info, err)
	}
	running := waitJob(t, c, id, dashboard.JobRunning)
	if running.JobID == "" || running.DriverInfo == nil {
		t.Errorf("a running played job has a Ray job ID and a driver: %+v", running)
	}
	info := waitJob(t, c, id, dashboard.JobSucceeded)
	if info.Message != msgSucceeded || info.DriverExitCode == nil || *info.DriverExitCode != 0 {
		t.Errorf("info = %+v", info)
	}
	logs, _ := c.GetJobLogs(ctx, id)
	lines := strings.Split(strings.TrimSpace(logs), "\n")
	if len(lines) < 3 || lines[0] != "raydar sandbox: this entrypoint was not executed (asked for by RAYDAR_SANDBOX_DURATION=1s); playing it out: SUCCEEDED after 1s" ||
		!strings.Contains(logs, "step 1/1") || lines[len(lines)-1] != "raydar sandbox: played out: SUCCEEDED" {
		t.Errorf("logs = %q", logs)
	}

	// Without a duration: the default, and the first line says why.
	id = submit(t, c, dashboard.SubmitJobRequest{Entrypoint: "python /home/ray/samples/sample_code.py"})
	eventually(t, "the first log line", func() (bool, string) {
		logs, _ := c.GetJobLogs(ctx, id)
		return strings.HasPrefix(logs, "raydar sandbox: this entrypoint was not executed (python is not on this host); playing it out: SUCCEEDED after 5s\n"), logs
	})
}

func TestPlayedFailure(t *testing.T) {
	_, c := startHead(t, Options{})
	id := submit(t, c, dashboard.SubmitJobRequest{
		Entrypoint: "python /home/ray/samples/sample_code.py",
		Metadata:   map[string]string{OutcomeMetadata: "FAILED", DurationMetadata: "0.2"},
	})
	info := waitJob(t, c, id, dashboard.JobFailed)
	if info.ErrorType != errTypeEntrypoint || info.DriverExitCode == nil || *info.DriverExitCode != 1 ||
		!strings.HasPrefix(info.Message, "Job entrypoint command failed with exit code 1") || !strings.Contains(info.Message, "played out: FAILED") {
		t.Errorf("info = %+v", info)
	}

	id = submit(t, c, dashboard.SubmitJobRequest{Entrypoint: "python x.py", Metadata: map[string]string{OutcomeMetadata: "sometimes"}})
	info = waitJob(t, c, id, dashboard.JobFailed)
	if !strings.Contains(info.Message, `raydar.io/sandbox-outcome="sometimes": want SUCCEEDED or FAILED`) {
		t.Errorf("a bad value is named in the message: %q", info.Message)
	}
}

// TestPlayedJobStops: a stop ends a played job at once, STOPPED, as one
// whose driver obeys SIGTERM; so does the head's Close.
func TestPlayedJobStops(t *testing.T) {
	h, c := startHead(t, Options{})
	ctx := context.Background()
	ep := "python /home/ray/samples/sample_code.py"
	env := map[string]any{"env_vars": map[string]any{DurationEnv: "10m"}}
	id := submit(t, c, dashboard.SubmitJobRequest{Entrypoint: ep, RuntimeEnv: env})
	waitJob(t, c, id, dashboard.JobRunning)
	if stopped, err := c.StopJob(ctx, id); err != nil || !stopped {
		t.Fatalf("StopJob = %v, %v", stopped, err)
	}
	if info, _ := c.GetJobInfo(ctx, id); info.Status != dashboard.JobStopped || info.Message != msgStopped {
		t.Fatalf("after the stop: %+v", info)
	}

	other := submit(t, c, dashboard.SubmitJobRequest{Entrypoint: ep, RuntimeEnv: env})
	waitJob(t, c, other, dashboard.JobRunning)
	done := make(chan error, 1)
	go func() { done <- h.Close() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(waitTimeout):
		t.Fatal("Close waits for a played job's whole duration")
	}
}

// TestExecutedJobIsAnnounced: what the host can run is executed, its logs
// are its output, after one line saying so when asked.
func TestExecutedJobIsAnnounced(t *testing.T) {
	_, c := startHead(t, Options{AnnounceExecution: true, Env: []string{"PATH=" + os.Getenv("PATH")}})
	id := submit(t, c, dashboard.SubmitJobRequest{Entrypoint: `sh -c 'echo "shard 1/3 done"'`})
	waitJob(t, c, id, dashboard.JobSucceeded)
	logs, _ := c.GetJobLogs(context.Background(), id)
	if logs != "raydar sandbox: executing the entrypoint on this host (/bin/sh -c, in a fresh working directory)\nshard 1/3 done\n" {
		t.Errorf("logs = %q", logs)
	}
}
