package rayhead

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/raydar/raydar/rayapi/dashboard"
)

// How a job asks to be played out, and for what outcome and time: a
// runtime_env env var or a job metadata key (RayJob spec.metadata), the
// env var winning when both are set.
const (
	// OutcomeEnv / OutcomeMetadata: SUCCEEDED (the default) or FAILED.
	OutcomeEnv      = "RAYDAR_SANDBOX_OUTCOME"
	OutcomeMetadata = "raydar.io/sandbox-outcome"
	// DurationEnv / DurationMetadata: how long the played job runs, a Go
	// duration ("30s", "2m") or seconds ("30"); default DefaultPlayDuration.
	DurationEnv      = "RAYDAR_SANDBOX_DURATION"
	DurationMetadata = "raydar.io/sandbox-duration"
)

// DefaultPlayDuration is how long a played-out job runs by default.
const DefaultPlayDuration = 5 * time.Second

// LogPrefix starts every line the simulated head writes into a job's logs
// itself (not the entrypoint's output).
const LogPrefix = "raydar sandbox: "

// playPlan says whether a job is played out instead of executed, and how.
type playPlan struct {
	play     bool
	reason   string // why it is not executed, for the first log line
	outcome  dashboard.JobStatus
	duration time.Duration
	// invalid is set when an override has a value the head does not
	// understand; the job then fails at once, saying so.
	invalid string
	// tasks are what the job asks for over time (tasks.go).
	tasks []TaskBatch
}

// reject records why an override is invalid; the first reason stands.
func (p *playPlan) reject(why string) {
	if p.invalid == "" {
		p.invalid = why
	}
}

// host is what planJob may ask of the machine; tests replace it.
type host struct {
	// lookPath finds an executable on the job's PATH.
	lookPath func(file string) (string, error)
	// exists reports whether a file exists.
	exists func(path string) bool
}

// realHost looks at this machine, with the job's PATH.
func realHost(env []string) host {
	path := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	return host{
		lookPath: func(file string) (string, error) { return lookPathIn(file, path) },
		exists: func(p string) bool {
			_, err := os.Stat(p)
			return err == nil
		},
	}
}

// lookPathIn is exec.LookPath with the given PATH instead of this process's.
func lookPathIn(file, path string) (string, error) {
	if strings.Contains(file, "/") {
		if isExecutable(file) {
			return file, nil
		}
		return "", fmt.Errorf("%s is not an executable file", file)
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		if p := filepath.Join(dir, file); isExecutable(p) {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s is not on PATH", file)
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

// shellBuiltins are the first words /bin/sh runs itself: no executable
// for them on PATH, yet the host runs them.
var shellBuiltins = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`! { } ( case do done elif else esac fi for if in then until while
		. : [ alias bg break cd command continue echo eval exec exit export false fc fg getopts hash jobs
		kill local printf pwd read readonly return set shift test times trap true type ulimit umask
		unalias unset wait`) {
		shellBuiltins[w] = true
	}
}

// importsRay matches Python code that imports ray (import ray, import
// ray.data, from ray import …, from ray.util import …).
var importsRay = regexp.MustCompile(`(?m)(^|[;\s])(import\s+ray\b|from\s+ray(\.\w+)*\s+import\b)`)

// planJob decides whether the simulated head executes a job's entrypoint
// on the host or plays it out, from the entrypoint, the job's environment
// (with runtime_env.env_vars) and its metadata. It is pure given h.
//
// Played out: an entrypoint whose first command the host cannot run (not a
// shell builtin and not on PATH: python, ray, …), a Python entrypoint that
// needs Ray or a script this host does not have (python FILE where FILE
// does not exist, python -c CODE where CODE imports ray, python -m ray…),
// and any job that asks for an outcome or a duration. Everything else runs.
func planJob(entrypoint string, env []string, metadata map[string]string, h host) playPlan {
	p := playPlan{outcome: dashboard.JobSucceeded, duration: DefaultPlayDuration}
	outcome, outcomeFrom := override(env, metadata, OutcomeEnv, OutcomeMetadata)
	duration, durationFrom := override(env, metadata, DurationEnv, DurationMetadata)
	if outcomeFrom != "" {
		switch strings.ToUpper(strings.TrimSpace(outcome)) {
		case string(dashboard.JobSucceeded):
		case string(dashboard.JobFailed):
			p.outcome = dashboard.JobFailed
		default:
			p.reject(fmt.Sprintf("%s=%q: want SUCCEEDED or FAILED", outcomeFrom, outcome))
		}
	}
	if durationFrom != "" {
		if d, err := parseDuration(duration); err != nil {
			p.reject(fmt.Sprintf("%s=%q: want a duration such as 30s or 2m, or seconds", durationFrom, duration))
		} else {
			p.duration = d
		}
	}
	tasks, tasksFrom := override(env, metadata, TasksEnv, TasksMetadata)
	if tasksFrom != "" {
		if bs, err := parseTasks(tasks); err != nil {
			p.reject(fmt.Sprintf("%s: %v", tasksFrom, err))
		} else {
			p.tasks = bs
		}
	}
	if p.invalid != "" {
		p.play, p.reason, p.outcome, p.duration, p.tasks = true, "invalid "+p.invalid, dashboard.JobFailed, 0, nil
		return p
	}
	switch {
	case tasksFrom != "":
		p.play, p.reason = true, "asked for by "+tasksFrom
		return p
	case outcomeFrom != "":
		p.play, p.reason = true, "asked for by "+outcomeFrom+"="+outcome
		return p
	case durationFrom != "":
		p.play, p.reason = true, "asked for by "+durationFrom+"="+duration
		return p
	}
	words := firstCommand(entrypoint)
	for len(words) > 0 && isAssignment(words[0]) {
		words = words[1:]
	}
	if len(words) == 0 || shellBuiltins[words[0]] {
		return p
	}
	cmd := words[0]
	if _, err := h.lookPath(cmd); err != nil {
		p.play, p.reason = true, filepath.Base(cmd)+" is not on this host"
		return p
	}
	if isPython(cmd) {
		if why := pythonNeeds(words[1:], h); why != "" {
			p.play, p.reason = true, why
		}
	}
	return p
}

// WouldPlay reports whether a Head with environment env (Options.Env plus
// the job's runtime_env.env_vars) on this host plays the entrypoint out
// rather than executing it, and why.
func WouldPlay(entrypoint string, env []string, metadata map[string]string) (bool, string) {
	p := planJob(entrypoint, env, metadata, realHost(env))
	return p.play, p.reason
}

// override reads an env var, else a metadata key; from names the one set.
func override(env []string, metadata map[string]string, envName, metaKey string) (value, from string) {
	for i := len(env) - 1; i >= 0; i-- { // the last assignment wins, as in a shell
		if v, ok := strings.CutPrefix(env[i], envName+"="); ok {
			return v, envName
		}
	}
	if v, ok := metadata[metaKey]; ok {
		return v, metaKey
	}
	return "", ""
}

func parseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if secs, err := strconv.ParseFloat(s, 64); err == nil {
		if secs < 0 {
			return 0, fmt.Errorf("negative")
		}
		return time.Duration(secs * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(s)
	if err == nil && d < 0 {
		return 0, fmt.Errorf("negative")
	}
	return d, err
}

var pythonName = regexp.MustCompile(`^python(\d+(\.\d+)?)?$`)

func isPython(cmd string) bool { return pythonName.MatchString(filepath.Base(cmd)) }

// pythonNeeds says what a python command line needs that the host lacks,
// "" when it can run here.
func pythonNeeds(args []string, h host) string {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-c" && i+1 < len(args):
			if importsRay.MatchString(args[i+1]) {
				return "it imports ray, and the sandbox's heads run no Ray"
			}
			return ""
		case a == "-m" && i+1 < len(args):
			if m := args[i+1]; m == "ray" || strings.HasPrefix(m, "ray.") {
				return "it runs the module " + m + ", and the sandbox's heads run no Ray"
			}
			return ""
		case a == "--" || !strings.HasPrefix(a, "-") || a == "-":
			if a == "--" {
				if i+1 >= len(args) {
					return ""
				}
				a = args[i+1]
			}
			if a == "-" {
				return ""
			}
			// A relative path would be looked up in the job's fresh
			// working directory, where nothing is.
			if !filepath.IsAbs(a) || !h.exists(a) {
				return a + " does not exist on this host"
			}
			return ""
		case a == "-W" || a == "-X" || a == "--check-hash-based-pycs":
			i++ // the option's value
		}
	}
	return ""
}

func isAssignment(w string) bool {
	eq := strings.IndexByte(w, '=')
	if eq <= 0 {
		return false
	}
	for i, r := range w[:eq] {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// firstCommand splits the first simple command of a shell command line into
// words, with quotes and backslashes removed as /bin/sh would; it stops at
// an unquoted ; & | or newline. Enough to find the program and its
// arguments; no expansion is done.
func firstCommand(s string) []string {
	var (
		words  []string
		cur    strings.Builder
		inWord bool
	)
	flush := func() {
		if inWord {
			words = append(words, cur.String())
			cur.Reset()
			inWord = false
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'':
			inWord = true
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				cur.WriteString(s[i+1:])
				i = len(s)
				break
			}
			cur.WriteString(s[i+1 : i+1+end])
			i += end + 1
		case c == '"':
			inWord = true
			for i++; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`\n", s[i+1]) >= 0 {
					i++
				}
				cur.WriteByte(s[i])
			}
		case c == '\\' && i+1 < len(s):
			i++
			if s[i] != '\n' {
				inWord = true
				cur.WriteByte(s[i])
			}
		case c == ';' || c == '&' || c == '|' || c == '\n':
			if inWord || len(words) > 0 {
				flush()
				return words
			}
		case c == ' ' || c == '\t':
			flush()
		default:
			inWord = true
			cur.WriteByte(c)
		}
	}
	flush()
	return words
}

// playJob plays a job out: PENDING briefly, RUNNING with a log line a
// second, then the planned outcome. A stop or the head's Close ends it at
// once (STOPPED), as for a job whose process obeys SIGTERM.
func (h *Head) playJob(j *job, p playPlan) {
	fmt.Fprintf(j.logs, "%sthis entrypoint was not executed (%s); playing it out: %s after %s\n",
		LogPrefix, p.reason, p.outcome, p.duration)
	if p.invalid == "" && !strings.HasPrefix(p.reason, "asked for by") {
		fmt.Fprintf(j.logs, "%sthe RayJob's spec.metadata %s: FAILED asks for a failure, %s: 30s for another time\n",
			LogPrefix, OutcomeMetadata, DurationMetadata)
	}
	if !h.wait(j, min(time.Second, p.duration/5)) { // PENDING: the runtime env "being set up"
		return
	}
	h.mu.Lock()
	if j.info.Status.IsTerminal() {
		h.mu.Unlock()
		return
	}
	h.jobSeq++
	j.info.JobID = rayJobID(h.jobSeq)
	j.info.Status = dashboard.JobRunning
	j.info.Message = msgRunning
	j.info.DriverInfo = &dashboard.DriverInfo{ID: j.info.JobID, NodeIPAddress: h.opts.NodeIP, PID: "0"}
	j.info.DriverNodeID = h.nodeID()
	h.startTasksLocked(j, p.tasks)
	h.mu.Unlock()

	steps := max(1, int(p.duration/time.Second))
	for i := 1; i <= steps; i++ {
		fmt.Fprintf(j.logs, "%ssimulated driver output: step %d/%d\n", LogPrefix, i, steps)
		if !h.wait(j, p.duration/time.Duration(steps)) {
			return
		}
	}

	h.mu.Lock()
	defer h.mu.Unlock()
	if p.outcome == dashboard.JobSucceeded {
		fmt.Fprintf(j.logs, "%splayed out: SUCCEEDED\n", LogPrefix)
		code := 0
		h.finish(j, dashboard.JobSucceeded, msgSucceeded, "", &code)
		return
	}
	why := "played out: FAILED"
	if p.invalid != "" {
		why += " (" + p.invalid + ")"
	}
	fmt.Fprintf(j.logs, "%s%s\n", LogPrefix, why)
	code := 1
	h.finish(j, dashboard.JobFailed, fmt.Sprintf(
		"Job entrypoint command failed with exit code %d, last available logs (truncated to 20,000 chars):\n%s",
		code, j.logs.tail(failedLogChars)), errTypeEntrypoint, &code)
}

// wait waits d, and reports false when the job ended meanwhile (stopped,
// or the head closed).
func (h *Head) wait(j *job, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-j.ended:
		return false
	case <-h.done:
		return false
	}
}
