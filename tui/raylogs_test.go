package tui

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/raydar/raydar/kube/raydash"
	"github.com/raydar/raydar/kube/watch"
	"github.com/raydar/raydar/rayapi/dashboard"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// fakeRayLogs is a dashboard's log API for the TUI: fixed listings, files
// that are fixed text or a pipe the test writes to, or unreachable.
type fakeRayLogs struct {
	mu      sync.Mutex
	down    bool
	files   dashboard.LogFiles
	text    map[string]string         // by file name or submission ID
	pipes   map[string]*io.PipeReader // followed files the test writes to
	opened  []string                  // "cluster node file follow"
	listed  []string                  // "cluster node"
	openCtx chan context.Context
}

func (f *fakeRayLogs) List(_ context.Context, _, cluster string, node dashboard.LogNode) (dashboard.LogFiles, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.listed = append(f.listed, cluster+" "+node.IP)
	if f.down {
		return nil, fmt.Errorf("raydash: RayCluster %s: GET /api/v0/logs: %w: dial tcp 10.96.0.20:8265: connect: connection refused", cluster, dashboard.ErrUnavailable)
	}
	return f.files, nil
}

func (f *fakeRayLogs) Open(ctx context.Context, _, cluster string, req dashboard.LogRequest, follow bool) (io.ReadCloser, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	name := req.Filename
	if req.SubmissionID != "" {
		name = req.SubmissionID
	}
	f.opened = append(f.opened, fmt.Sprintf("%s %s %s %t", cluster, req.Node.IP, name, follow))
	if f.openCtx != nil {
		f.openCtx <- ctx
	}
	if f.down {
		return nil, fmt.Errorf("GET /api/v0/logs/stream: %w", dashboard.ErrUnavailable)
	}
	if p, ok := f.pipes[name]; ok {
		return p, nil
	}
	if s, ok := f.text[name]; ok {
		return io.NopCloser(strings.NewReader(s)), nil
	}
	return nil, &dashboard.LogError{What: name, Msg: "A file is not found at: " + name}
}

func (f *fakeRayLogs) Resolve(ctx context.Context, ns string, e raydash.Explanation, head dashboard.LogNode) (dashboard.LogRequest, error) {
	if e.Known() {
		return e.Req, nil
	}
	files, err := f.List(ctx, ns, e.Cluster, head)
	if err != nil {
		return dashboard.LogRequest{}, err
	}
	name, ok := e.Pick(files)
	if !ok {
		return dashboard.LogRequest{}, fmt.Errorf("no %s: %w", e.Glob, dashboard.ErrNotFound)
	}
	return dashboard.LogRequest{Node: head, Filename: name}, nil
}

func (f *fakeRayLogs) last(t *testing.T) string {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.opened) == 0 {
		t.Fatal("no file was opened")
	}
	return f.opened[len(f.opened)-1]
}

func headFiles() dashboard.LogFiles {
	return dashboard.CategorizeLogFiles([]string{"raylet.out", "raylet.err", "gcs_server.out", "dashboard.log",
		"job-driver-nightly-eval-8f3k2.log", "runtime_env_setup-nightly-eval-8f3k2.log", "serve/", "serve/controller_42.log"})
}

func rayLogOpts(w *world, src *fakeRayLogs) Options {
	o := w.opts()
	o.Session.RayLogs = src
	return o
}

func TestRayLogBrowser(t *testing.T) {
	w := newWorld(t, worldOpts{})
	pr, pw := io.Pipe()
	src := &fakeRayLogs{files: headFiles(), pipes: map[string]*io.PipeReader{"job-driver-nightly-eval-8f3k2.log": pr},
		openCtx: make(chan context.Context, 4)}
	tm, _ := start(t, rayLogOpts(w, src), 120, 30)
	typeKeys(tm, trainA(0, "L")...) // the cluster detail's first row: the head group
	screen := waitScreen(t, tm, "Ray log files of node 10.0.0.10 (pod train-a-head-x7k2p, head): 7")
	mustContain(t, screen, "job drivers", "job-driver-nightly-eval-8f3k2.log", "runtime env", "serve/controller_42.log", "raylet.out", "gcs_server")
	if strings.Index(screen, "job drivers") > strings.Index(screen, "raylet.out") {
		t.Fatalf("the job drivers are not first:\n%s", screen)
	}
	typeKeys(tm, "<enter>") // the first file: the driver log
	ctx := recv(t, src.openCtx)
	if got := src.last(t); got != "train-a 10.0.0.10 job-driver-nightly-eval-8f3k2.log true" {
		t.Fatalf("opened %q", got)
	}
	write := func(s string) {
		if _, err := io.WriteString(pw, s); err != nil {
			t.Fatal(err)
		}
	}
	write(logLines(1, 30))
	waitScreen(t, tm, "step 30 ")
	write(logLines(31, 5)) // the file grows: the page follows
	screen = waitScreen(t, tm, "step 35 ")
	mustContain(t, screen, "Ray log ml/train-a: job-driver-nightly-eval-8f3k2.log on node 10.0.0.10", "following")

	// Search: the last match, then older and newer ones.
	typeKeys(tm, "/", "step 2[0-9] loss", "<enter>")
	screen = waitScreen(t, tm, "/step 2[0-9] loss: match 10 of 10")
	mustContain(t, screen, "paused", "step 29 ")
	typeKeys(tm, "N", "N")
	waitScreen(t, tm, "match 8 of 10")
	typeKeys(tm, "n")
	waitScreen(t, tm, "match 9 of 10")
	typeKeys(tm, "<esc>") // ends the search, not the page
	waitGone(t, tm, "match ")
	typeKeys(tm, "/", "no such line", "<enter>")
	waitScreen(t, tm, "/no such line: no match")
	typeKeys(tm, "<esc>")

	// Esc closes the page and the stream.
	typeKeys(tm, "<esc>")
	<-ctx.Done()
	pw.Close()
	finalScreen(t, tm)
}

func TestRayLogBrowserOfAWorkerPod(t *testing.T) {
	w := newWorld(t, worldOpts{})
	src := &fakeRayLogs{files: dashboard.CategorizeLogFiles([]string{"raylet.out"}), text: map[string]string{"raylet.out": "raylet of a worker\n"}}
	tm, _ := start(t, rayLogOpts(w, src), 120, 30)
	typeKeys(tm, trainA(3, "L")...) // a worker pod of the cluster detail
	waitScreen(t, tm, "Ray log files of node 10.0.0.11 (pod train-a-cpu-worker-4hq9d): 1")
	typeKeys(tm, "<enter>")
	waitScreen(t, tm, "raylet of a worker")
	finalScreen(t, tm)
}

// TestRayLogBrowserFromThePodsList: L on a row of :pods opens the Ray log
// files of that pod's node, as it does on the pod's row of its cluster.
func TestRayLogBrowserFromThePodsList(t *testing.T) {
	w := newWorld(t, worldOpts{})
	src := &fakeRayLogs{files: dashboard.CategorizeLogFiles([]string{"raylet.out"}), text: map[string]string{"raylet.out": "raylet of a worker\n"}}
	tm, _ := start(t, rayLogOpts(w, src), 120, 30)
	typeKeys(tm, ":pods", "<enter>", "/", "train-a-cpu-worker-4hq9d", "<enter>")
	waitScreen(t, tm, "<L> ray logs")
	typeKeys(tm, "L")
	waitScreen(t, tm, "Ray log files of node 10.0.0.11 (pod train-a-cpu-worker-4hq9d): 1")
	typeKeys(tm, "<enter>")
	waitScreen(t, tm, "raylet of a worker")
	src.mu.Lock()
	listed := strings.Join(src.listed, ",")
	src.mu.Unlock()
	if listed != "train-a 10.0.0.11" {
		t.Fatalf("listed %q, want train-a's node 10.0.0.11", listed)
	}
	finalScreen(t, tm)
}

// TestRayLogDashboardDown: the page says the dashboard is out of reach and
// offers the pod's container logs, which l opens.
func TestRayLogDashboardDown(t *testing.T) {
	w := newWorld(t, worldOpts{})
	src := &fakeRayLogs{down: true}
	o := rayLogOpts(w, src)
	w.deps.PodLogs = fixedLogs("container output of the head\n", nil)
	o.Actions = DefaultActions(w.deps)
	tm, _ := start(t, o, 120, 30)
	typeKeys(tm, trainA(0, "L")...)
	screen := waitScreen(t, tm, "The Ray dashboard of ml/train-a cannot be reached:")
	mustContain(t, screen, "dial tcp 10.96.0.20:8265", "Press l for the container logs of pod train-a-head-x7k2p")
	typeKeys(tm, "l")
	screen = waitScreen(t, tm, "container output of the head")
	mustContain(t, screen, "Logs ml/train-a-head-x7k2p")
	finalScreen(t, tm)
}

// TestExplainKey: E on a failed job opens its driver log; on a RayService,
// the Serve controller log of its cluster's head.
func TestExplainKey(t *testing.T) {
	w := newWorld(t, worldOpts{})
	src := &fakeRayLogs{files: headFiles(), text: map[string]string{
		"backfill-1":              "Traceback (most recent call last):\nValueError: bad input shard 7\n",
		"serve/controller_42.log": "ERROR -- Failed to deploy application 'fruit_app'\n",
	}}
	tm, _ := start(t, rayLogOpts(w, src), 120, 30)
	typeKeys(tm, ":rj", "<enter>", "/", "backfill", "<enter>", "<enter>")
	screen := waitScreen(t, tm, "RayJob ml/backfill")
	mustContain(t, screen, "<E> explaining log")
	typeKeys(tm, "E")
	screen = waitScreen(t, tm, "ValueError: bad input shard 7")
	mustContain(t, screen, "driver log of job backfill-1 (FAILED)")
	if got := src.last(t); got != "backfill-raycluster-q8w7e  backfill-1 true" {
		t.Fatalf("opened %q", got)
	}

	typeKeys(tm, ":rs", "<enter>", "/", "fruit", "<enter>", "<enter>", "E")
	screen = waitScreen(t, tm, "Failed to deploy application 'fruit_app'")
	mustContain(t, screen, "Serve controller log: serve/controller_42.log")
	if got := src.last(t); got != "fruit-raycluster-abcde 10.0.2.10 serve/controller_42.log true" {
		t.Fatalf("opened %q", got)
	}
	finalScreen(t, tm)
}

// waitGone waits until the screen no longer contains s.
func waitGone(t *testing.T, tm *teatest.TestModel, s string) {
	t.Helper()
	deadline := time.Now().Add(teatestTimeout)
	for strings.Contains(screenNow(tm), s) {
		if time.Now().After(deadline) {
			t.Fatalf("screen still shows %q:\n%s", s, screenNow(tm))
		}
		time.Sleep(5 * time.Millisecond) // poll interval, not synchronisation
	}
}

// TestExplainKeyPendingJob: E on a job whose Ray job is PENDING opens the
// runtime env setup log on its cluster's head, picked from the listing.
func TestExplainKeyPendingJob(t *testing.T) {
	w := newWorld(t, worldOpts{mod: func(st *watch.Store) {
		o, _ := st.Find(watch.RayJob, "ml", "nightly-eval")
		j := o.(*rayv1.RayJob).DeepCopy()
		j.Status.JobStatus = rayv1.JobStatusPending
		st.Add(j)
	}})
	src := &fakeRayLogs{files: headFiles(), text: map[string]string{
		"runtime_env_setup-nightly-eval-8f3k2.log": "INFO -- Creating runtime env: pip install torch==9.9 (no such version)\n",
	}}
	tm, _ := start(t, rayLogOpts(w, src), 120, 30)
	typeKeys(tm, ":rj", "<enter>", "/", "nightly", "<enter>", "<enter>", "E")
	screen := waitScreen(t, tm, "pip install torch==9.9")
	mustContain(t, screen, "runtime env setup of job nightly-eval-8f3k2 (PENDING): runtime_env_setup-nightly-eval-8f3k2.log")
	if got := src.last(t); got != "train-a 10.0.0.10 runtime_env_setup-nightly-eval-8f3k2.log true" {
		t.Fatalf("opened %q", got)
	}
	finalScreen(t, tm)
}
