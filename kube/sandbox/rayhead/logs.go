package rayhead

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/raydar/raydar/rayapi/dashboard"
)

// Ray's log files, simulated (the state API's /api/v0/logs endpoints; see
// rayapi/dashboard/logs_wire.go for Ray's shapes). Every node of the
// simulated cluster has a session log directory of synthetic files:
//
//   - every node: raylet.out, raylet.err, dashboard_agent.log,
//     runtime_env_agent.log;
//   - the head also: gcs_server.out, gcs_server.err, dashboard.log,
//     monitor.log, and per submitted job job-driver-<submission id>.log (the
//     job's real output, the buffer the Jobs API's logs come from) and
//     runtime_env_setup-<submission id>.log (the runtime env "being set
//     up" while the job is PENDING: created, waiting for resources,
//     created, or cancelled); and, once Serve has a config, the directory
//     serve/ with serve/controller_<pid>.log (each deploy, each
//     application's import failure with its traceback, each deletion).
//
// The head's raylet.out records job starts and ends. Files that grow are
// log buffers (bounded like a job's output); a follower (media type
// "stream") is woken by every write, nothing polls.

// controllerPID is the Serve controller's simulated PID (its log's name).
const controllerPID = 4242

// logTime is the timestamp Ray's C++ and Python loggers start lines with.
func logTime() string { return time.Now().Format("2006-01-02 15:04:05,000") }

// logLine appends one timestamped line to b.
func logLine(b *logBuffer, level, component, format string, args ...any) {
	fmt.Fprintf(b, "[%s %s %d] (%s) %s\n", logTime(), level, controllerPID, component, fmt.Sprintf(format, args...))
}

// logNode is a node whose files the head serves. h.mu is held.
type logNode struct {
	id, ip string
	head   bool
}

// logNodes are the alive nodes: the head alone before SetNodes. h.mu must
// be held.
func (h *Head) logNodesLocked() []logNode {
	out := []logNode{{id: h.node, ip: h.opts.NodeIP, head: true}}
	if !h.cap.known {
		return out
	}
	out = out[:0]
	headSeen := false
	for _, n := range h.cap.nodes {
		if !n.alive {
			continue
		}
		headSeen = headSeen || n.id == h.node
		out = append(out, logNode{id: n.id, ip: n.IP, head: n.id == h.node})
	}
	if !headSeen {
		out = append([]logNode{{id: h.node, ip: h.opts.NodeIP, head: true}}, out...)
	}
	return out
}

// findLogNode resolves node_id or node_ip. h.mu must be held.
func (h *Head) findLogNodeLocked(id, ip string) (logNode, bool) {
	for _, n := range h.logNodesLocked() {
		if (id != "" && n.id == id) || (id == "" && ip != "" && n.ip == ip) {
			return n, true
		}
	}
	return logNode{}, false
}

// logFile is one file's content: a growing buffer, or fixed text.
type logFile struct {
	buf  *logBuffer
	text string
}

func (f logFile) snapshot() (string, int64) {
	if f.buf != nil {
		return f.buf.snapshot()
	}
	return f.text, int64(len(f.text))
}

// nodeFilesLocked is a node's log directory by relative name. h.mu must be
// held.
func (h *Head) nodeFilesLocked(n logNode) map[string]logFile {
	files := map[string]logFile{
		"raylet.out": {text: fmt.Sprintf("[%s I 1 1] (raylet) main.cc:1] Raylet of node %s (%s) started; simulated by raydar's sandbox\n",
			h.startedAt, n.id, n.ip)},
		"raylet.err":            {text: ""},
		"dashboard_agent.log":   {text: fmt.Sprintf("%s\tINFO agent.py:1 -- Dashboard agent of node %s started.\n", h.startedAt, n.id)},
		"runtime_env_agent.log": {text: fmt.Sprintf("%s\tINFO main.py:1 -- Runtime env agent of node %s started.\n", h.startedAt, n.id)},
	}
	if !n.head {
		return files
	}
	files["raylet.out"] = logFile{buf: h.raylet}
	files["gcs_server.out"] = logFile{text: fmt.Sprintf("[%s I 1 1] (gcs_server) gcs_server_main.cc:1] GCS server started on %s; simulated by raydar's sandbox\n", h.startedAt, h.opts.NodeIP)}
	files["gcs_server.err"] = logFile{text: ""}
	files["dashboard.log"] = logFile{text: fmt.Sprintf("%s\tINFO head.py:1 -- Dashboard head started (Ray %s, simulated).\n", h.startedAt, RayVersion)}
	files["monitor.log"] = logFile{text: fmt.Sprintf("%s\tINFO monitor.py:1 -- Autoscaler monitor started (KubeRay autoscaling is raydar's).\n", h.startedAt)}
	for id, j := range h.jobs {
		files[dashboard.JobDriverLogFile(id)] = logFile{buf: j.logs}
		files[dashboard.RuntimeEnvSetupPrefix+id+".log"] = logFile{buf: j.envLog}
	}
	if h.serve.started || h.serve.controllerLogged {
		files[controllerLogFile] = logFile{buf: h.controller}
	}
	return files
}

// controllerLogFile is the Serve controller's log.
var controllerLogFile = "serve/controller_" + strconv.Itoa(controllerPID) + ".log"

// listNames is what ListLogs answers for glob: names directly under the
// glob's directory, directories with a trailing "/".
func listNames(files map[string]logFile, glob string) ([]string, error) {
	if glob == "" {
		glob = "*"
	}
	if strings.HasPrefix(glob, "/") || strings.Contains(glob, "..") {
		return nil, fmt.Errorf("Invalid glob filter: %s. It must be a relative path and cannot contain '..'.", glob)
	}
	seen := map[string]bool{}
	var out []string
	add := func(n string) {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	for name := range files {
		if ok, _ := path.Match(glob, name); ok {
			add(name)
			continue
		}
		// Directories on the way to name.
		for dir := path.Dir(name); dir != "."; dir = path.Dir(dir) {
			if ok, _ := path.Match(glob, dir); ok {
				add(dir + "/")
			}
		}
	}
	sort.Strings(out)
	return out, nil
}

func (h *Head) handleListLogs(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	id, ip := q.Get("node_id"), q.Get("node_ip")
	if id == "" && ip == "" {
		stateReply(w, false, "Both node id and node ip are not provided. Please provide at least one of them.", nil)
		return
	}
	h.mu.Lock()
	n, ok := h.findLogNodeLocked(id, ip)
	var files map[string]logFile
	if ok {
		files = h.nodeFilesLocked(n)
	}
	h.mu.Unlock()
	if !ok {
		if id != "" {
			stateReply(w, false, fmt.Sprintf("Failed to get the log list of node %s: the node is not alive or does not exist.", id), nil)
			return
		}
		stateReply(w, false, dashboard.NodeIPNotFoundText+" "+ip, nil)
		return
	}
	names, err := listNames(files, q.Get("glob"))
	if err != nil {
		stateReply(w, false, err.Error(), nil)
		return
	}
	stateReply(w, true, "", dashboard.CategorizeLogFiles(names))
}

// stateReply answers like state_api_utils.py do_reply.
func stateReply(w http.ResponseWriter, ok bool, msg string, result any) {
	writeJSON(w, http.StatusOK, map[string]any{"result": ok, "msg": msg, "data": map[string]any{"result": result}})
}

// resolveLog finds the file of a log request, or Ray's reason why not.
func (h *Head) resolveLogLocked(q map[string][]string) (logFile, string, error) {
	get := func(k string) string {
		if v := q[k]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	if sub := get("submission_id"); sub != "" {
		j := h.jobs[sub]
		if j == nil {
			return logFile{}, "", fmt.Errorf("Could not find a log file. Please make sure the given option exists in the cluster.\n\tsubmission_id: %s", sub)
		}
		if j.info.DriverNodeID == "" {
			return logFile{}, "", fmt.Errorf("Job %s has no driver node id info. This is likely a bug. Please file an issue.", sub)
		}
		return logFile{buf: j.logs}, dashboard.JobDriverLogFile(sub), nil
	}
	if get("actor_id") != "" || get("task_id") != "" || get("pid") != "" {
		return logFile{}, "", fmt.Errorf("Could not find a log file. Please make sure the given option exists in the cluster (the sandbox's head runs no actors or tasks).")
	}
	name := get("filename")
	n, ok := h.findLogNodeLocked(get("node_id"), get("node_ip"))
	if !ok || name == "" {
		return logFile{}, "", fmt.Errorf("Could not find a log file. Please make sure the given option exists in the cluster.\n\tnode_id: %s\n\tfilename: %s", get("node_id"), name)
	}
	f, ok := h.nodeFilesLocked(n)[strings.TrimPrefix(path.Clean(name), "/")]
	if !ok {
		return logFile{}, "", fmt.Errorf("A file is not found at: /tmp/ray/session_latest/logs/%s", name)
	}
	return f, name, nil
}

// tailStart is the offset in data of its last n lines (n < 0: all; 0:
// Ray's default).
func tailStart(data string, n int) int {
	if n < 0 {
		return 0
	}
	if n == 0 {
		n = dashboard.DefaultLogLines
	}
	end := len(data)
	if strings.HasSuffix(data, "\n") {
		end--
	}
	for i := end - 1; i >= 0; i-- {
		if data[i] == '\n' {
			n--
			if n == 0 {
				return i + 1
			}
		}
	}
	return 0
}

// handleGetLog answers /api/v0/logs/{media_type} in format text (and
// leading_1, Ray's default, for a whole answer written at once).
func (h *Head) handleGetLog(w http.ResponseWriter, r *http.Request) {
	media := r.PathValue("media")
	if media != "file" && media != "stream" {
		http.NotFound(w, r)
		return
	}
	q := r.URL.Query()
	format := q.Get("format")
	if format == "" {
		format = "leading_1"
	}
	if format != "text" && format != "leading_1" {
		writeTraceback(w, http.StatusInternalServerError, fmt.Sprintf("ValueError: Unsupported format: %s, use 'text' or 'leading_1'", format))
		return
	}
	lines := dashboard.DefaultLogLines
	if s := q.Get("lines"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			writeTraceback(w, http.StatusInternalServerError, "ValueError: invalid literal for int() with base 10: "+strconv.Quote(s))
			return
		}
		lines = n
	}
	h.mu.Lock()
	f, _, err := h.resolveLogLocked(q)
	h.mu.Unlock()
	w.Header().Set("Content-Type", "text/plain")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	write := func(data string) {
		if format == "leading_1" {
			data = "1" + data
		}
		_, _ = w.Write([]byte(data))
		if flusher != nil {
			flusher.Flush()
		}
	}
	if err != nil {
		if format == "leading_1" {
			_, _ = w.Write([]byte("0Closing HTTP stream due to internal server error.\n" + err.Error()))
		} else {
			_, _ = w.Write([]byte(dashboard.LogFetchErrorPrefix + err.Error()))
		}
		return
	}
	changed := h.logsChanged.wait() // before the snapshot: no write is missed
	data, end := f.snapshot()
	if s := data[tailStart(data, lines):]; s != "" || media == "stream" {
		write(s)
	}
	if media != "stream" {
		return
	}
	sent := end
	for {
		select {
		case <-changed:
		case <-r.Context().Done():
			return
		case <-h.done:
			return
		}
		changed = h.logsChanged.wait()
		data, end = f.snapshot()
		if end <= sent {
			continue
		}
		start := max(sent, end-int64(len(data)))
		write(data[start-(end-int64(len(data))):])
		sent = end
	}
}

// runtimeEnvText is a job's runtime_env as its setup log shows it.
func runtimeEnvText(env map[string]any) string {
	if len(env) == 0 {
		return "{}"
	}
	b, err := json.Marshal(env)
	if err != nil {
		return fmt.Sprint(env)
	}
	return string(b)
}
