package headsim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"mvdan.cc/sh/v3/interp"

	"github.com/raydar/raydar/kube/sandbox/raycli"
	"github.com/raydar/raydar/rayapi/dashboard"
)

// Ray's CLI for the stand-in submitter: `ray job …` parsed and checked by
// kube/sandbox/raycli as Ray's click commands would, then done against the
// simulated head the address leads to, printing what Ray prints and exiting
// as it does (python/ray/dashboard/modules/job/cli.py; the client is
// python/ray/dashboard/modules/job/sdk.py JobSubmissionClient).

// ray runs `ray …`. Its words were expanded by the shell.
func (r *run) ray(ctx context.Context, args []string) error {
	env, stdout, stderr := stdio(ctx)
	call, perr := raycli.Parse(args[1:])
	if perr != nil {
		if perr.Code == 0 {
			return unsupportedf("run `%s` (only `ray job`)", strings.TrimSpace(perr.Output))
		}
		fmt.Fprint(stderr, perr.Output)
		return interp.NewExitStatus(uint8(perr.Code))
	}
	if call.Help {
		if call.Command == "" {
			fmt.Fprintln(stdout, "Usage: ray job [OPTIONS] COMMAND [ARGS]...")
		} else {
			fmt.Fprintln(stdout, call.Usage())
		}
		return nil
	}
	c := &rayCall{run: r, call: call, stdout: stdout, stderr: stderr, getenv: func(k string) string { return env.Get(k).String() }}
	return c.do(ctx)
}

// rayCall is one `ray job` command being run.
type rayCall struct {
	*run
	call           *raycli.Call
	stdout, stderr io.Writer
	getenv         func(string) string
	address        string
}

// fail prints a Python exception's last line and exits 1.
func (c *rayCall) fail(ctx context.Context, format string, args ...any) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	fmt.Fprintf(c.stderr, "Traceback (most recent call last):\n  File \"ray/dashboard/modules/job/cli.py\", in %s\n", c.call.Command)
	fmt.Fprintf(c.stderr, format+"\n", args...)
	return interp.NewExitStatus(1)
}

// sdkError is how the SDK reports a failed request: a non-2xx answer is a
// RuntimeError with the status and body (sdk.py _raise_error), anything
// else a lost connection.
func (c *rayCall) sdkError(ctx context.Context, err error) error {
	var he *dashboard.HTTPError
	if errors.As(err, &he) {
		return c.fail(ctx, "RuntimeError: Request failed with status code %d: %s.", he.StatusCode, strings.TrimSpace(he.Body))
	}
	return c.fail(ctx, "ConnectionError: Failed to connect to Ray at address: %s.", c.address)
}

// connect is JobSubmissionClient(address): --address, else
// RAY_API_SERVER_ADDRESS, else RAY_ADDRESS (an address without a scheme is
// http://), then a GET of /api/version.
func (c *rayCall) connect(ctx context.Context) (*dashboard.Client, error) {
	addr, ok := c.call.String("address")
	if !ok || addr == "" {
		addr = c.getenv("RAY_API_SERVER_ADDRESS")
	}
	if addr == "" {
		addr = c.getenv("RAY_ADDRESS")
	}
	if addr == "" {
		return nil, c.fail(ctx, "ConnectionError: Could not find any running Ray instance. Please specify the one to connect to by setting `--address` flag or `RAY_ADDRESS` environment variable.")
	}
	if !strings.Contains(addr, "://") {
		addr = "http://" + addr
	}
	c.address = addr
	host, port, _, err := splitURL(addr)
	if err != nil {
		return nil, c.fail(ctx, "ConnectionError: Failed to connect to Ray at address: %s (%v).", addr, err)
	}
	ep, err := c.s.resolve(ctx, c.where, host, port)
	if err != nil {
		return nil, c.fail(ctx, "ConnectionError: Failed to connect to Ray at address: %s.", addr)
	}
	// Ray's token auth (RAY_AUTH_MODE=token): the CLI sends RAY_AUTH_TOKEN.
	token := ""
	if strings.EqualFold(c.getenv("RAY_AUTH_MODE"), "token") {
		token = c.getenv("RAY_AUTH_TOKEN")
	}
	if token == "" && ep.token != "" {
		c.noteOnce("token", "the submitter has no RAY_AUTH_TOKEN (RAY_AUTH_MODE=token) for %s, whose head requires a token: the stand-in sends the cluster's", ep.cluster)
		token = ep.token
	}
	dc, err := dashboard.New(ep.url, dashboard.WithToken(token))
	if err != nil {
		return nil, err
	}
	if _, err := dc.GetVersion(ctx); err != nil {
		return nil, c.sdkError(ctx, err)
	}
	fmt.Fprintf(c.stdout, "Job submission server address: %s\n", addr)
	return dc, nil
}

func (c *rayCall) do(ctx context.Context) error {
	if c.call.Command == "submit" {
		return c.submit(ctx)
	}
	dc, err := c.connect(ctx)
	if err != nil {
		return err
	}
	id := ""
	if len(c.call.Args) > 0 {
		id = c.call.Args[0]
	}
	switch c.call.Command {
	case "status":
		return c.logStatus(ctx, dc, id, nil)
	case "logs":
		if !c.call.Flag("follow") {
			logs, err := dc.GetJobLogs(ctx, id)
			if err != nil {
				return c.sdkError(ctx, err)
			}
			fmt.Fprint(c.stdout, logs)
			return nil
		}
		return c.tail(ctx, dc, id, nil)
	case "stop":
		fmt.Fprintf(c.stdout, "Attempting to stop job '%s'\n", id)
		if _, err := dc.StopJob(ctx, id); err != nil {
			return c.sdkError(ctx, err)
		}
		if c.call.Flag("no_wait") {
			return nil
		}
		fmt.Fprintf(c.stdout, "Waiting for job '%s' to exit (disable with --no-wait):\n", id)
		for {
			info, err := dc.GetJobInfo(ctx, id)
			if err != nil {
				return c.sdkError(ctx, err)
			}
			if info.Status.IsTerminal() {
				return c.logStatus(ctx, dc, id, info)
			}
			fmt.Fprintf(c.stdout, "Job has not exited yet. Status: %s\n", info.Status)
			if err := c.wait(ctx); err != nil {
				return err
			}
		}
	case "delete":
		if err := dc.DeleteJob(ctx, id); err != nil {
			return c.sdkError(ctx, err)
		}
		fmt.Fprintf(c.stdout, "Job '%s' deleted successfully\n", id)
		return nil
	case "list":
		jobs, err := dc.ListJobs(ctx)
		if err != nil {
			return c.sdkError(ctx, err)
		}
		b, _ := json.MarshalIndent(jobs, "", " ")
		fmt.Fprintln(c.stdout, string(b))
		return nil
	}
	return unsupportedf("run `ray job %s`", c.call.Command)
}

func (c *rayCall) wait(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(c.s.opts.PollInterval):
		return nil
	}
}

// submit is cli.py submit(): the checks before connecting, the client,
// the runtime env, the submission (sdk.py submit_job), the success banner,
// and without --no-wait the logs until the job ends (exit 1 if it FAILED).
func (c *rayCall) submit(ctx context.Context) error {
	sub, perr := c.call.Submit()
	if perr != nil {
		fmt.Fprint(c.stderr, perr.Output)
		return interp.NewExitStatus(uint8(perr.Code))
	}
	fmt.Fprint(c.stderr, sub.Output)
	dc, err := c.connect(ctx)
	if err != nil {
		return err
	}
	env, err := sub.RuntimeEnv(func(p string) ([]byte, error) {
		return nil, fmt.Errorf("read --runtime-env %s on the pod's disk: %w", p, raycli.ErrUnsupported)
	})
	var cliErr *raycli.Error
	switch {
	case errors.As(err, &cliErr):
		fmt.Fprint(c.stderr, cliErr.Output)
		return interp.NewExitStatus(uint8(cliErr.Code))
	case err != nil:
		return unsupportedf("%v", err)
	}
	req := dashboard.SubmitJobRequest{Entrypoint: sub.Entrypoint, SubmissionID: sub.SubmissionID, RuntimeEnv: env}
	if wd, ok := env["working_dir"].(string); ok && !strings.Contains(wd, "://") {
		c.noteOnce("working_dir", "runtime_env working_dir %q is a path on the submitter's disk, which Ray would upload: the stand-in sends it as it is", wd)
	}
	// The head checks these as Ray's JobSubmitRequest does
	// (dashboard/modules/job/common.py): metadata of str to str,
	// entrypoint_resources of str to number. The client's request type
	// cannot carry other values, so the stand-in answers with the head's
	// words here.
	if len(sub.Metadata) > 0 {
		req.Metadata = map[string]string{}
		for _, k := range slices.Sorted(maps.Keys(sub.Metadata)) {
			s, ok := sub.Metadata[k].(string)
			if !ok {
				return c.fail(ctx, "RuntimeError: Request failed with status code 400: TypeError: metadata values must be strings, got <class '%s'>.", raycli.PyType(sub.Metadata[k]))
			}
			req.Metadata[k] = s
		}
	}
	if len(sub.EntrypointResources) > 0 {
		req.EntrypointResources = map[string]float64{}
		for _, k := range slices.Sorted(maps.Keys(sub.EntrypointResources)) {
			var f float64
			switch v := sub.EntrypointResources[k].(type) {
			case json.Number:
				f, _ = v.Float64()
			case bool: // a bool is an int to Python
				if v {
					f = 1
				}
			default:
				return c.fail(ctx, "RuntimeError: Request failed with status code 400: TypeError: entrypoint_resources values must be numbers, got <class '%s'>.", raycli.PyType(v))
			}
			req.EntrypointResources[k] = f
		}
	}
	if sub.EntrypointNumCPUs != nil {
		req.EntrypointNumCPUs = *sub.EntrypointNumCPUs
	}
	if sub.EntrypointNumGPUs != nil {
		req.EntrypointNumGPUs = *sub.EntrypointNumGPUs
	}
	if sub.EntrypointMemory != nil {
		req.EntrypointMemory = *sub.EntrypointMemory
	}
	if sub.EntrypointLabelSelector != nil {
		c.noteOnce("labels", "--entrypoint-label-selector %v is not sent: the simulated heads do not place by labels", sub.EntrypointLabelSelector)
	}
	if sub.Headers != "" {
		c.noteOnce("headers", "--headers are not sent to the simulated head")
	}
	id, err := dc.SubmitJob(ctx, req)
	if err != nil {
		return c.sdkError(ctx, err)
	}
	c.logf("submitted Ray job %s to %s: %s", id, c.address, sub.Entrypoint)
	banner(c.stdout, fmt.Sprintf("Job '%s' submitted successfully", id))
	fmt.Fprintf(c.stdout, "Next steps\n  Query the logs of the job:\n    ray job logs %s\n  Query the status of the job:\n    ray job status %s\n  Request the job to be stopped:\n    ray job stop %s\n\n", id, id, id)
	if sub.NoWait {
		return nil
	}
	fmt.Fprintln(c.stdout, "Tailing logs until the job exits (disable with --no-wait):")
	var status dashboard.JobStatus
	if err := c.tail(ctx, dc, id, &status); err != nil {
		return err
	}
	if status == dashboard.JobFailed {
		return interp.NewExitStatus(1)
	}
	return nil
}

// tail prints the job's logs as they grow until it ends, then its status
// (cli.py _tail_logs); the status is stored in *status when asked.
func (c *rayCall) tail(ctx context.Context, dc *dashboard.Client, id string, status *dashboard.JobStatus) error {
	printed := ""
	for {
		info, err := dc.GetJobInfo(ctx, id)
		if err != nil {
			return c.sdkError(ctx, err)
		}
		logs, err := dc.GetJobLogs(ctx, id)
		if err != nil {
			return c.sdkError(ctx, err)
		}
		if strings.HasPrefix(logs, printed) {
			fmt.Fprint(c.stdout, logs[len(printed):])
		} else {
			fmt.Fprint(c.stdout, logs) // the head's buffer dropped its start
		}
		printed = logs
		if info.Status.IsTerminal() {
			if status != nil {
				*status = info.Status
			}
			return c.logStatus(ctx, dc, id, info)
		}
		if err := c.wait(ctx); err != nil {
			return err
		}
	}
}

// logStatus is cli.py _log_job_status.
func (c *rayCall) logStatus(ctx context.Context, dc *dashboard.Client, id string, info *dashboard.JobInfo) error {
	if info == nil {
		var err error
		if info, err = dc.GetJobInfo(ctx, id); err != nil {
			return c.sdkError(ctx, err)
		}
	}
	switch info.Status {
	case dashboard.JobSucceeded:
		banner(c.stdout, fmt.Sprintf("Job '%s' succeeded", id))
	case dashboard.JobStopped:
		fmt.Fprintf(c.stdout, "Job '%s' was stopped\n", id)
	case dashboard.JobFailed:
		banner(c.stdout, fmt.Sprintf("Job '%s' failed", id))
		if info.Message != "" {
			fmt.Fprintf(c.stdout, "Status message: %s\n", info.Message)
		}
	default:
		fmt.Fprintf(c.stdout, "Status for job '%s': %s\n", id, info.Status)
		if info.Message != "" {
			fmt.Fprintf(c.stdout, "Status message: %s\n", info.Message)
		}
	}
	return nil
}

// banner is cli.py _log_big_success_msg / _log_big_error_msg.
func banner(w io.Writer, msg string) {
	line := strings.Repeat("-", len(msg))
	fmt.Fprintf(w, "\n%s\n%s\n%s\n\n", line, msg, line)
}

// get is an HTTP GET's body (urllib's urlopen with its 10 s timeout).
func get(ctx context.Context, url string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("HTTP Error %d", resp.StatusCode)
	}
	return string(b), nil
}
