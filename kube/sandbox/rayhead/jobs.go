package rayhead

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"syscall"
	"time"

	"github.com/raydar/raydar/rayapi/dashboard"
)

// Messages and error types as Ray writes them.
const (
	msgPending = "Job has not started yet. It may be waiting for resources (CPUs, GPUs, memory, custom resources) " +
		"to become available. It may be waiting for the runtime environment to be set up."
	msgRunning   = "Job is currently running."
	msgSucceeded = "Job finished successfully."
	msgStopped   = "Job was intentionally stopped."
	msgShutdown  = "Job was stopped because the head node shut down."

	errTypeEntrypoint = "JOB_ENTRYPOINT_COMMAND_ERROR"
	errTypeStart      = "JOB_ENTRYPOINT_COMMAND_START_ERROR"

	// failedLogChars is how much of the log Ray puts in a FAILED message.
	failedLogChars = 20000
	// maxRequestBody bounds request bodies.
	maxRequestBody = 16 << 20
)

// job is one submitted job. Fields other than logs are guarded by Head.mu.
type job struct {
	info dashboard.JobInfo
	env  []string
	logs *logBuffer // its output: the Jobs API's logs and job-driver-<id>.log
	// envLog is runtime_env_setup-<id>.log (logs.go).
	envLog *logBuffer
	// envWaitLogged: envLog says the job waits for resources.
	envWaitLogged bool
	dir           string // working directory, once made
	// ended is closed when the job reaches a terminal status (finish).
	ended chan struct{}
	// placed is closed when the entrypoint's reservation has been placed
	// on a node (capacity.go); the job stays PENDING until then.
	placed chan struct{}
	// tasks are the simulated tasks the job submitted (tasks.go), and
	// taskTimers the batches not submitted yet.
	tasks      []*task
	taskTimers []*time.Timer

	proc          *os.Process // set when the entrypoint has started
	exited        bool        // the entrypoint's process has exited
	stopRequested bool
	stopMessage   string
	killTimer     *time.Timer
}

func nowMS() int64 { return time.Now().UnixMilli() }

func writeJSON(w http.ResponseWriter, status int, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(data)
}

// writeTraceback answers like Ray's dashboard does when a handler raises:
// the Python traceback as text.
func writeTraceback(w http.ResponseWriter, status int, exception string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	fmt.Fprintf(w, "Traceback (most recent call last):\n  File \"rayhead\", line 1, in <simulated>\n%s\n", exception)
}

func jobNotFound(w http.ResponseWriter, id string) {
	http.Error(w, fmt.Sprintf("Job %s does not exist", id), http.StatusNotFound)
}

// findJob looks a job up by submission ID or Ray job ID. h.mu must be held.
func (h *Head) findJob(id string) *job {
	if j, ok := h.jobs[id]; ok {
		return j
	}
	for _, j := range h.jobs {
		if j.info.JobID == id {
			return j
		}
	}
	return nil
}

func newSubmissionID() string {
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	b := make([]byte, 16)
	rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return "raysubmit_" + string(b)
}

// rayJobID formats the n-th driver's job ID as Ray does: 4 bytes, little
// endian, in hex ("01000000").
func rayJobID(n int) string {
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], uint32(n))
	return hex.EncodeToString(b[:])
}

// envVars extracts runtime_env.env_vars, which Ray requires to be a mapping
// of strings to strings.
func envVars(runtimeEnv map[string]any) ([]string, error) {
	raw, ok := runtimeEnv["env_vars"]
	if !ok || raw == nil {
		return nil, nil
	}
	m, ok := raw.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("runtime_env['env_vars'] must be of type Dict[str, str], got %T", raw)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]string, 0, len(m))
	for _, k := range keys {
		v, ok := m[k].(string)
		if !ok {
			return nil, fmt.Errorf("runtime_env['env_vars'] must be of type Dict[str, str], got a %T value for %q", m[k], k)
		}
		out = append(out, k+"="+v)
	}
	return out, nil
}

func (h *Head) handleSubmit(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxRequestBody))
	if err != nil {
		return
	}
	var req dashboard.SubmitJobRequest
	if err := json.Unmarshal(body, &req); err != nil {
		writeTraceback(w, http.StatusBadRequest, "TypeError: failed to parse the job submission request: "+err.Error())
		return
	}
	if req.Entrypoint == "" {
		writeTraceback(w, http.StatusBadRequest, "TypeError: JobSubmitRequest.__init__() missing 1 required positional argument: 'entrypoint'")
		return
	}
	extraEnv, err := envVars(req.RuntimeEnv)
	if err != nil {
		writeTraceback(w, http.StatusBadRequest, "TypeError: "+err.Error())
		return
	}
	id := req.SubmissionID
	if id == "" {
		id = newSubmissionID()
	}

	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		http.Error(w, "head is shutting down", http.StatusServiceUnavailable)
		return
	}
	if _, exists := h.jobs[id]; exists {
		h.mu.Unlock()
		writeTraceback(w, http.StatusInternalServerError, fmt.Sprintf(
			"ValueError: Job with submission_id %s already exists. Please use a different submission_id.", id))
		return
	}
	j := &job{
		info: dashboard.JobInfo{
			Type:                  dashboard.JobTypeSubmission,
			SubmissionID:          id,
			Status:                dashboard.JobPending,
			Message:               msgPending,
			Entrypoint:            req.Entrypoint,
			StartTime:             nowMS(),
			Metadata:              req.Metadata,
			RuntimeEnv:            req.RuntimeEnv,
			EntrypointReservation: req.EntrypointReservation,
		},
		env:    append(append([]string(nil), h.opts.Env...), extraEnv...),
		logs:   h.newFileBuffer(),
		envLog: h.newFileBuffer(),
		ended:  make(chan struct{}),
		placed: make(chan struct{}),
	}
	if j.info.Metadata == nil {
		j.info.Metadata = map[string]string{}
	}
	if j.info.RuntimeEnv == nil {
		j.info.RuntimeEnv = map[string]any{}
	}
	h.jobs[id] = j
	logLine(j.envLog, "INFO", "runtime_env", "Creating runtime env for job %s: %s", id, runtimeEnvText(j.info.RuntimeEnv))
	logLine(h.raylet, "I", "raylet", "job_manager.cc:1] Job %s submitted; its driver waits for its runtime env", id)
	h.placeLocked()
	h.jobWG.Add(1)
	h.mu.Unlock()

	go h.runJob(j)
	writeJSON(w, http.StatusOK, dashboard.SubmitJobResponse{JobID: id, SubmissionID: id})
}

// runJob runs one job's entrypoint to the end. Every transition happens on
// an event: the start, the exit of the process, a stop request.
func (h *Head) runJob(j *job) {
	defer h.jobWG.Done()
	select { // PENDING until the entrypoint's resources are placed
	case <-j.placed:
	case <-j.ended:
		return
	}
	if p := planJob(j.info.Entrypoint, j.env, j.info.Metadata, realHost(j.env)); p.play {
		h.playJob(j, p)
		return
	}
	if h.opts.AnnounceExecution {
		fmt.Fprintf(j.logs, "%sexecuting the entrypoint on this host (/bin/sh -c, in a fresh working directory)\n", LogPrefix)
	}

	dir, dirErr := os.MkdirTemp(h.workDir, "job-*")
	cmd := exec.Command("/bin/sh", "-c", j.info.Entrypoint)
	cmd.Dir = dir
	cmd.Env = j.env
	cmd.Stdout = j.logs
	cmd.Stderr = j.logs
	cmd.SysProcAttr = jobSysProcAttr()
	// A process that left the group could hold the output pipe open
	// forever; don't wait for it longer than this after the exit.
	cmd.WaitDelay = 2 * time.Second

	h.mu.Lock()
	if dirErr == nil {
		j.dir = dir
	}
	switch {
	case j.info.Status.IsTerminal(): // stopped while pending
		h.mu.Unlock()
		return
	case h.closed:
		h.finish(j, dashboard.JobStopped, msgShutdown, "", nil)
		h.mu.Unlock()
		return
	case dirErr != nil:
		h.finish(j, dashboard.JobFailed, "Job entrypoint command failed to start: "+dirErr.Error(), errTypeStart, nil)
		h.mu.Unlock()
		return
	}
	// Start under the lock: Close (which also takes it) then either sees
	// the process and stops it, or came first and we never start.
	if err := cmd.Start(); err != nil {
		h.finish(j, dashboard.JobFailed, "Job entrypoint command failed to start: "+err.Error(), errTypeStart, nil)
		h.mu.Unlock()
		return
	}
	j.proc = cmd.Process
	h.jobSeq++
	j.info.JobID = rayJobID(h.jobSeq)
	j.info.Status = dashboard.JobRunning
	j.info.Message = msgRunning
	j.info.DriverInfo = &dashboard.DriverInfo{ID: j.info.JobID, NodeIPAddress: h.opts.NodeIP, PID: strconv.Itoa(cmd.Process.Pid)}
	j.info.DriverNodeID = h.nodeID()
	h.mu.Unlock()

	pid := cmd.Process.Pid
	zombie := waitExited(pid)
	h.mu.Lock()
	j.exited = true
	if j.killTimer != nil {
		j.killTimer.Stop()
	}
	if zombie {
		// Kill whatever the entrypoint left behind in its group. The
		// unreaped leader keeps the group ID from being reused.
		signalGroup(pid, syscall.SIGKILL)
	}
	h.mu.Unlock()

	waitErr := cmd.Wait()
	code := exitCode(cmd.ProcessState)

	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case j.stopRequested:
		h.finish(j, dashboard.JobStopped, j.stopMessage, "", &code)
	case code == 0 && (waitErr == nil || errors.Is(waitErr, exec.ErrWaitDelay)):
		h.finish(j, dashboard.JobSucceeded, msgSucceeded, "", &code)
	default:
		h.finish(j, dashboard.JobFailed, fmt.Sprintf(
			"Job entrypoint command failed with exit code %d, last available logs (truncated to 20,000 chars):\n%s",
			code, j.logs.tail(failedLogChars)), errTypeEntrypoint, &code)
	}
}

// exitCode is the process's exit code, or -N when signal N killed it (as
// Python's Popen.returncode, which Ray reports).
func exitCode(ps *os.ProcessState) int {
	if ps == nil {
		return -1
	}
	if ws, ok := ps.Sys().(interface {
		Signaled() bool
		Signal() syscall.Signal
	}); ok && ws.Signaled() {
		return -int(ws.Signal())
	}
	return ps.ExitCode()
}

// finish moves a job to a terminal status. h.mu must be held.
func (h *Head) finish(j *job, status dashboard.JobStatus, message, errorType string, code *int) {
	if j.info.Status.IsTerminal() {
		return
	}
	j.info.Status = status
	j.info.Message = message
	j.info.ErrorType = errorType
	j.info.EndTime = nowMS()
	j.info.DriverExitCode = code
	if !j.isPlaced() {
		logLine(j.envLog, "INFO", "runtime_env", "Runtime env setup for job %s cancelled: the job ended %s before its driver started", j.info.SubmissionID, status)
	}
	logLine(h.raylet, "I", "raylet", "job_manager.cc:1] Job %s ended: %s", j.info.SubmissionID, status)
	close(j.ended)
	h.dropTasksLocked(j)
	h.placeLocked() // its reservation is free again
}

// isPlaced reports whether the job's reservation has been placed. h.mu
// must be held.
func (j *job) isPlaced() bool {
	select {
	case <-j.placed:
		return true
	default:
		return false
	}
}

// stopLocked asks a job to stop: a pending job stops at once; a running one
// gets SIGTERM on its process group now and SIGKILL after the grace period,
// and turns STOPPED when it has exited. h.mu must be held. It reports
// whether the job was still going.
func (h *Head) stopLocked(j *job, message string) bool {
	if j.info.Status.IsTerminal() || j.exited {
		return false
	}
	j.stopRequested = true
	j.stopMessage = message
	if j.proc == nil {
		h.finish(j, dashboard.JobStopped, message, "", nil)
		return true
	}
	pgid := j.proc.Pid
	signalGroup(pgid, syscall.SIGTERM)
	if j.killTimer == nil {
		j.killTimer = time.AfterFunc(h.opts.StopGracePeriod, func() {
			h.mu.Lock()
			defer h.mu.Unlock()
			if !j.exited { // the leader is not reaped yet, so pgid is still ours
				signalGroup(pgid, syscall.SIGKILL)
			}
		})
	}
	return true
}

func (h *Head) handleInfo(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	h.mu.Lock()
	j := h.findJob(id)
	var info dashboard.JobInfo
	if j != nil {
		info = j.info
	}
	h.mu.Unlock()
	if j == nil {
		jobNotFound(w, id)
		return
	}
	writeJSON(w, http.StatusOK, info)
}

func (h *Head) handleList(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	list := make([]dashboard.JobInfo, 0, len(h.jobs))
	for _, j := range h.jobs {
		list = append(list, j.info)
	}
	h.mu.Unlock()
	sort.Slice(list, func(a, b int) bool {
		if list[a].StartTime != list[b].StartTime {
			return list[a].StartTime < list[b].StartTime
		}
		return list[a].SubmissionID < list[b].SubmissionID
	})
	writeJSON(w, http.StatusOK, list)
}

func (h *Head) handleStop(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	h.mu.Lock()
	j := h.findJob(id)
	stopped := false
	if j != nil {
		stopped = h.stopLocked(j, msgStopped)
	}
	h.mu.Unlock()
	if j == nil {
		jobNotFound(w, id)
		return
	}
	writeJSON(w, http.StatusOK, dashboard.StopJobResponse{Stopped: stopped})
}

func (h *Head) handleDelete(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	h.mu.Lock()
	j := h.findJob(id)
	if j == nil {
		h.mu.Unlock()
		jobNotFound(w, id)
		return
	}
	if !j.info.Status.IsTerminal() {
		status := j.info.Status
		h.mu.Unlock()
		writeTraceback(w, http.StatusInternalServerError, fmt.Sprintf(
			"RuntimeError: Attempted to delete job '%s', but it is in a non-terminal state %s.", j.info.SubmissionID, status))
		return
	}
	delete(h.jobs, j.info.SubmissionID)
	dir := j.dir
	h.mu.Unlock()
	if dir != "" {
		os.RemoveAll(dir)
	}
	writeJSON(w, http.StatusOK, dashboard.DeleteJobResponse{Deleted: true})
}

func (h *Head) handleLogs(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	h.mu.Lock()
	j := h.findJob(id)
	h.mu.Unlock()
	if j == nil {
		jobNotFound(w, id)
		return
	}
	writeJSON(w, http.StatusOK, dashboard.JobLogsResponse{Logs: j.logs.String()})
}
