package dashboard

import (
	"path"
	"sort"
	"strings"
)

// Ray's log API, the state API's log endpoints on the dashboard head.
// Checked against ray-project/ray at these blobs' commits:
// python/ray/dashboard/modules/state/state_head.py@08bb903 (list_logs,
// get_logs), python/ray/dashboard/modules/log/log_manager.py@077ac3a
// (list_logs, stream_logs, resolve_filename, _resolve_job_filename,
// _categorize_log_files), python/ray/dashboard/modules/log/log_agent.py@2056f5e
// (ListLogs, StreamLog), python/ray/dashboard/modules/job/common.py
// (JOB_LOGS_PATH_TEMPLATE). In detail:
//
//   - GET /api/v0/logs?node_id=|node_ip=&glob=&timeout= lists the files
//     under the node's session log directory matching glob (default "*",
//     relative, no ".."; not recursive: a directory is listed with a
//     trailing "/", list "serve/*" to see inside). One of node_id and
//     node_ip is required; an unknown IP answers result=false "Cannot find
//     matching node_id for a given node ip". The answer goes through
//     do_reply (snake_case, no camelCasing): {"result": true, "msg": "",
//     "data": {"result": {category: [file, …]}}}, categorised by
//     _categorize_log_files (worker_out, worker_err, core_worker, driver,
//     raylet, gcs_server, internal, autoscaler, agent, dashboard).
//   - GET /api/v0/logs/{media_type} with media_type "file" (the last
//     `lines` lines, then the end) or "stream" (the last `lines` lines, then
//     whatever is appended, polled every `interval` seconds, default 1, until
//     the client hangs up). The file is named by node_id|node_ip+filename,
//     by submission_id (the job's driver log, job-driver-<id>.log on its
//     driver node), by actor_id, by task_id(+attempt_number), or by
//     node+pid; suffix=out|err picks stdout or stderr of a worker. lines
//     defaults to DEFAULT_LOG_LIMIT (1000); -1 is the whole file. The answer
//     is always 200 text/plain; format=text (what raydar asks for) sends the
//     file's bytes as they are and, when the file cannot be resolved or read,
//     "[get_logs] Fetch log error: <reason>" in the body instead. The default
//     format leading_1 prefixes every written chunk with "1" (or "0" and the
//     error), which needs the HTTP chunk boundaries a Go client cannot see.

// The log API's paths.
const (
	// LogsPath lists a node's log files (RestResponse[StateData[LogFiles]]).
	LogsPath = "/api/v0/logs"
	// LogFilePath answers the tail of one log file as text.
	LogFilePath = "/api/v0/logs/file"
	// LogStreamPath answers the tail of one log file, then follows it.
	LogStreamPath = "/api/v0/logs/stream"
	// LogFetchErrorPrefix starts a log answer (format=text) that carries
	// Ray's error instead of the file.
	LogFetchErrorPrefix = "[get_logs] Fetch log error: "
	// DefaultLogLines is how many lines Ray sends when lines is not given
	// (ray.util.state.common.DEFAULT_LOG_LIMIT).
	DefaultLogLines = 1000
	// NodeIPNotFoundText is Ray's message when no alive node has the IP.
	NodeIPNotFoundText = "Cannot find matching node_id for a given node ip"
)

// Ray's log categories (log_manager.py _categorize_log_files).
const (
	LogCategoryWorkerOut  = "worker_out"
	LogCategoryWorkerErr  = "worker_err"
	LogCategoryCoreWorker = "core_worker"
	LogCategoryDriver     = "driver"
	LogCategoryRaylet     = "raylet"
	LogCategoryGCS        = "gcs_server"
	LogCategoryInternal   = "internal"
	LogCategoryAutoscaler = "autoscaler"
	LogCategoryAgent      = "agent"
	LogCategoryDashboard  = "dashboard"
)

// LogFiles is a node's log files by Ray's category.
type LogFiles map[string][]string

// CategorizeLogFile is the category Ray files name under
// (log_manager.py _categorize_log_files, the same tests in the same order).
func CategorizeLogFile(name string) string {
	switch {
	case strings.Contains(name, "worker") && strings.HasSuffix(name, ".out"):
		return LogCategoryWorkerOut
	case strings.Contains(name, "worker") && strings.HasSuffix(name, ".err"):
		return LogCategoryWorkerErr
	case strings.Contains(name, "core-worker") && strings.HasSuffix(name, ".log"):
		return LogCategoryCoreWorker
	case strings.Contains(name, "core-driver") && strings.HasSuffix(name, ".log"):
		return LogCategoryDriver
	case strings.Contains(name, "raylet."):
		return LogCategoryRaylet
	case strings.Contains(name, "gcs_server."):
		return LogCategoryGCS
	case strings.Contains(name, "log_monitor"):
		return LogCategoryInternal
	case strings.Contains(name, "monitor"):
		return LogCategoryAutoscaler
	case strings.Contains(name, "agent."):
		return LogCategoryAgent
	case strings.Contains(name, "dashboard."):
		return LogCategoryDashboard
	}
	return LogCategoryInternal
}

// CategorizeLogFiles groups names as Ray's list_logs answers them.
func CategorizeLogFiles(names []string) LogFiles {
	out := LogFiles{}
	for _, n := range names {
		c := CategorizeLogFile(n)
		out[c] = append(out[c], n)
	}
	return out
}

// JobDriverLogFile is the driver log of a submitted job
// (JOB_LOGS_PATH_TEMPLATE), on the job's driver node (the head).
func JobDriverLogFile(submissionID string) string {
	return "job-driver-" + submissionID + ".log"
}

// Display groups of log files: Ray's categories, with what Ray files under
// "internal" that operators look for split out by name.
const (
	LogGroupJobDriver  = "job drivers"
	LogGroupRuntimeEnv = "runtime env"
	LogGroupServe      = "serve"
	LogGroupDirs       = "directories"
)

// RuntimeEnvSetupPrefix starts the per-job runtime env setup logs the
// runtime env agent writes (runtime_env_setup-<job id>.log).
const RuntimeEnvSetupPrefix = "runtime_env_setup-"

// LogGroup is one group of a listing, files sorted.
type LogGroup struct {
	Name  string   `json:"name"`
	Files []string `json:"files"`
}

// displayGroup is the group a file is shown under.
func displayGroup(category, name string) string {
	base := path.Base(name)
	switch {
	case strings.HasSuffix(name, "/"):
		return LogGroupDirs
	case strings.HasPrefix(name, "serve/"):
		return LogGroupServe
	case strings.HasPrefix(base, "job-driver-"):
		return LogGroupJobDriver
	case strings.HasPrefix(base, RuntimeEnvSetupPrefix), strings.HasPrefix(base, "runtime_env"):
		return LogGroupRuntimeEnv
	}
	return category
}

// groupOrder is the order groups are shown in; others follow by name.
var groupOrder = []string{
	LogGroupJobDriver, LogGroupRuntimeEnv, LogGroupServe, LogCategoryRaylet, LogCategoryGCS,
	LogCategoryDashboard, LogCategoryAgent, LogCategoryAutoscaler, LogCategoryDriver,
	LogCategoryWorkerOut, LogCategoryWorkerErr, LogCategoryCoreWorker, LogCategoryInternal, LogGroupDirs,
}

// Groups is the listing as shown: display groups in a fixed order (job
// drivers, runtime env, serve, then Ray's categories), files sorted, no
// empty group, no file twice.
func (f LogFiles) Groups() []LogGroup {
	by := map[string][]string{}
	seen := map[string]bool{}
	for cat, names := range f {
		for _, n := range names {
			if seen[n] {
				continue
			}
			seen[n] = true
			g := displayGroup(cat, n)
			by[g] = append(by[g], n)
		}
	}
	rank := map[string]int{}
	for i, g := range groupOrder {
		rank[g] = i + 1
	}
	names := make([]string, 0, len(by))
	for g := range by {
		names = append(names, g)
	}
	sort.Slice(names, func(i, j int) bool {
		ri, rj := rank[names[i]], rank[names[j]]
		if ri == 0 {
			ri = len(groupOrder) + 1
		}
		if rj == 0 {
			rj = len(groupOrder) + 1
		}
		if ri != rj {
			return ri < rj
		}
		return names[i] < names[j]
	})
	out := make([]LogGroup, 0, len(names))
	for _, g := range names {
		files := by[g]
		sort.Strings(files)
		out = append(out, LogGroup{Name: g, Files: files})
	}
	return out
}

// Dirs are the directory entries of the listing ("serve/", …).
func (f LogFiles) Dirs() []string {
	var out []string
	for _, names := range f {
		for _, n := range names {
			if strings.HasSuffix(n, "/") {
				out = append(out, n)
			}
		}
	}
	sort.Strings(out)
	return out
}

// Merge adds other's files to f.
func (f LogFiles) Merge(other LogFiles) {
	for c, names := range other {
		f[c] = append(f[c], names...)
	}
}

// Count is the number of files listed (directories included).
func (f LogFiles) Count() int {
	n := 0
	for _, names := range f {
		n += len(names)
	}
	return n
}
