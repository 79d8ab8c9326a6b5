package rayhead

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/raydar/raydar/kube/sandbox/refusable"
	"github.com/raydar/raydar/rayapi/dashboard"
)

// Defaults for Options.
const (
	// DefaultStopGracePeriod is the time between SIGTERM and SIGKILL when a
	// job is stopped (Ray's RAY_JOB_STOP_WAIT_TIME_S is 3 s).
	DefaultStopGracePeriod = 3 * time.Second
	// DefaultServeDeployDelay is how long a Serve application stays
	// DEPLOYING (or DELETING), and how long the proxy takes to start.
	DefaultServeDeployDelay = 100 * time.Millisecond
	// DefaultMaxLogBytes bounds each job's captured output.
	DefaultMaxLogBytes = 1 << 20
)

// Options configure a Head. The zero value is usable.
type Options struct {
	// StopGracePeriod is the time between SIGTERM and SIGKILL of a job's
	// process group, on StopJob and on Close (default DefaultStopGracePeriod).
	StopGracePeriod time.Duration
	// ServeDeployDelay: see DefaultServeDeployDelay. A negative value means
	// no delay (the transition still happens after the PUT returns).
	ServeDeployDelay time.Duration
	// MaxLogBytes bounds each job's log buffer; older output is dropped
	// (default DefaultMaxLogBytes).
	MaxLogBytes int
	// Token, when set, is required on every dashboard API call except the
	// health endpoints, as "x-ray-authorization: Bearer <Token>" (or
	// "Authorization: Bearer <Token>"): 401 without one, 403 with a wrong one.
	Token string
	// Authorize, when set, decides each caller's bearer token instead of
	// Token (Ray's Kubernetes token auth, RAY_ENABLE_K8S_TOKEN_AUTH: the
	// token is reviewed by the API server): 0 lets the call through, any
	// other value is the HTTP status it is refused with. A call without a
	// token gets 401 before Authorize is asked.
	Authorize func(ctx context.Context, token string) int
	// ImportFails reports whether a Serve application's import_path fails
	// to import (its app then ends DEPLOY_FAILED). Default: the path
	// contains "fail".
	ImportFails func(importPath string) bool
	// Env is the base environment of job subprocesses (default
	// os.Environ()); runtime_env.env_vars are added on top.
	Env []string
	// TempDir is where the Head makes its working directory, holding one
	// directory per job (default os.TempDir()).
	TempDir string
	// NodeIP is the head's IP as reported in driver_info, proxies and
	// replicas (default 127.0.0.1).
	NodeIP string
	// ProxyListenAddr is the Serve proxy's listen address (default: the
	// dashboard's host, port 0).
	ProxyListenAddr string
	// AnnounceExecution starts the logs of every job whose entrypoint is
	// executed (not played out) with a line saying so, as played-out jobs'
	// logs start with theirs. Off, an executed job's logs are exactly its
	// output, as on a Ray head.
	AnnounceExecution bool
}

// Head is a simulated Ray head node. Create it with New, then Start it.
type Head struct {
	opts Options
	node string        // Ray node ID (hex)
	done chan struct{} // closed by Close

	http500 atomic.Bool
	latency atomic.Int64 // time.Duration
	delayed atomic.Int64 // requests waiting out the latency now

	mu      sync.Mutex
	started bool
	closed  bool
	dash    *refusable.Server // the dashboard, once started
	proxy   *refusable.Server // the Serve proxy, once started
	workDir string
	jobs    map[string]*job // by submission ID
	jobSeq  int
	serve   serveState
	cap     capacityState
	// Ray's log files (logs.go): the head's raylet.out and the Serve
	// controller's log grow; logsChanged wakes the followers.
	logsChanged notifier
	raylet      *logBuffer
	controller  *logBuffer
	startedAt   string
	jobWG       sync.WaitGroup // one per job goroutine
	timerWG     sync.WaitGroup // serve timer callbacks in flight
	closeOnce   sync.Once
	closeError  error
}

// New returns a Head that is not listening yet.
func New(opts Options) *Head {
	if opts.StopGracePeriod <= 0 {
		opts.StopGracePeriod = DefaultStopGracePeriod
	}
	if opts.ServeDeployDelay == 0 {
		opts.ServeDeployDelay = DefaultServeDeployDelay
	}
	if opts.ServeDeployDelay < 0 {
		opts.ServeDeployDelay = 0
	}
	if opts.MaxLogBytes <= 0 {
		opts.MaxLogBytes = DefaultMaxLogBytes
	}
	if opts.ImportFails == nil {
		opts.ImportFails = func(p string) bool { return strings.Contains(p, "fail") }
	}
	if opts.Env == nil {
		opts.Env = os.Environ()
	}
	if opts.NodeIP == "" {
		opts.NodeIP = "127.0.0.1"
	}
	node := make([]byte, 28)
	rand.Read(node)
	h := &Head{opts: opts, node: hex.EncodeToString(node), done: make(chan struct{}), jobs: map[string]*job{}}
	h.serve.apps = map[string]*serveApp{}
	h.raylet, h.controller = h.newFileBuffer(), h.newFileBuffer()
	h.startedAt = logTime()
	logLine(h.raylet, "I", "raylet", "main.cc:1] Raylet of the head node %s (%s) started; simulated by raydar's sandbox", h.node, opts.NodeIP)
	return h
}

// Start listens on listenAddr for the dashboard (default "127.0.0.1:0"; port
// 0 picks a free port) and on Options.ProxyListenAddr for the Serve proxy.
func (h *Head) Start(listenAddr string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.started || h.closed {
		return errors.New("rayhead: Start called twice or after Close")
	}
	if listenAddr == "" {
		listenAddr = "127.0.0.1:0"
	}
	dash, err := refusable.Listen(listenAddr, h.faults(h.auth(h.dashboardMux())))
	if err != nil {
		return fmt.Errorf("rayhead: dashboard listener: %w", err)
	}
	proxyListen := h.opts.ProxyListenAddr
	if proxyListen == "" {
		host, _, _ := net.SplitHostPort(dash.Addr())
		proxyListen = net.JoinHostPort(host, "0")
	}
	proxy, err := refusable.Listen(proxyListen, h.faults(h.proxyMux()))
	if err != nil {
		dash.Close()
		return fmt.Errorf("rayhead: serve proxy listener: %w", err)
	}
	dir, err := os.MkdirTemp(h.opts.TempDir, "rayhead-*")
	if err != nil {
		dash.Close()
		proxy.Close()
		return fmt.Errorf("rayhead: working directory: %w", err)
	}
	h.workDir = dir
	h.dash, h.proxy = dash, proxy
	h.started = true
	return nil
}

// DashboardAddr is the dashboard's host:port ("" before Start).
func (h *Head) DashboardAddr() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.dash == nil {
		return ""
	}
	return h.dash.Addr()
}

// DashboardURL is "http://" + DashboardAddr, the base URL for dashboard.New.
func (h *Head) DashboardURL() string { return "http://" + h.DashboardAddr() }

// ProxyAddr is the Serve proxy's host:port ("" before Start).
func (h *Head) ProxyAddr() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.proxy == nil {
		return ""
	}
	return h.proxy.Addr()
}

// ProxyURL is "http://" + ProxyAddr, the base URL for dashboard.ProxyHealthy.
func (h *Head) ProxyURL() string { return "http://" + h.ProxyAddr() }

// SetRefuse closes both listeners (and every open connection) so that
// connections are refused, or, with on=false, listens again on the same
// addresses. Jobs keep running meanwhile.
func (h *Head) SetRefuse(on bool) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.started || h.closed {
		return errors.New("rayhead: SetRefuse needs a started, open Head")
	}
	if err := h.dash.SetRefuse(on); err != nil {
		return fmt.Errorf("rayhead: %w", err)
	}
	if err := h.proxy.SetRefuse(on); err != nil {
		h.dash.SetRefuse(!on) // both or neither
		return fmt.Errorf("rayhead: %w", err)
	}
	return nil
}

// SetHTTP500 makes every request, on the dashboard and on the proxy, answer
// 500 while on.
func (h *Head) SetHTTP500(on bool) { h.http500.Store(on) }

// SetLatency delays every answer by d (0: none).
func (h *Head) SetLatency(d time.Duration) { h.latency.Store(int64(d)) }

// faults applies the runtime fault switches before handler.
func (h *Head) faults(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if d := time.Duration(h.latency.Load()); d > 0 {
			h.delayed.Add(1)
			defer h.delayed.Add(-1)
			t := time.NewTimer(d)
			select {
			case <-t.C:
			case <-r.Context().Done():
				t.Stop()
				return
			case <-h.done:
				t.Stop()
				http.Error(w, "head is shutting down", http.StatusServiceUnavailable)
				return
			}
		}
		if h.http500.Load() {
			http.Error(w, "Internal Server Error (simulated fault)", http.StatusInternalServerError)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// auth checks each request's token when the head has one (Options.Token)
// or asks about each (Options.Authorize); the GCS health and version paths
// stay open, as Ray's do, and so do the nodes' metrics (metrics.go): Ray's
// metrics export port asks for no token.
func (h *Head) auth(next http.Handler) http.Handler {
	if h.opts.Authorize == nil && h.opts.Token == "" {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case dashboard.GCSHealthPath, dashboard.VersionPath:
			next.ServeHTTP(w, r)
			return
		}
		if strings.HasPrefix(r.URL.Path, MetricsPath+"/") {
			next.ServeHTTP(w, r)
			return
		}
		got := r.Header.Get(dashboard.AuthHeader)
		if got == "" {
			got = r.Header.Get("Authorization")
		}
		if code, msg := h.checkToken(r.Context(), got); code != 0 {
			http.Error(w, msg, code)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// checkToken answers one request's Authorization value: 0 to let it
// through, else the HTTP status and message to refuse it with.
func (h *Head) checkToken(ctx context.Context, got string) (int, string) {
	if h.opts.Authorize == nil {
		switch {
		case got == "":
			return http.StatusUnauthorized, "Unauthorized: missing authentication token"
		case subtle.ConstantTimeCompare([]byte(got), []byte("Bearer "+h.opts.Token)) != 1:
			return http.StatusForbidden, "Forbidden: invalid authentication token"
		}
		return 0, ""
	}
	tok, ok := strings.CutPrefix(got, "Bearer ")
	if !ok || tok == "" {
		return http.StatusUnauthorized, "Unauthorized: missing authentication token"
	}
	switch code := h.opts.Authorize(ctx, tok); code {
	case 0:
		return 0, ""
	case http.StatusUnauthorized:
		return code, "Unauthorized: invalid authentication token"
	default:
		return code, "Forbidden: not allowed to use this Ray cluster"
	}
}

func (h *Head) dashboardMux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+dashboard.GCSHealthPath, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, dashboard.HealthyBody)
	})
	mux.HandleFunc("GET "+dashboard.VersionPath, func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, dashboard.VersionInfo{Version: "4", RayVersion: RayVersion, RayCommit: "rayhead"})
	})
	jobs, serve := dashboard.JobsPath, dashboard.ServeApplicationsPath
	mux.HandleFunc("POST "+jobs+"{$}", h.handleSubmit)
	mux.HandleFunc("GET "+jobs+"{$}", h.handleList)
	mux.HandleFunc("GET "+jobs+"{id}", h.handleInfo)
	mux.HandleFunc("DELETE "+jobs+"{id}", h.handleDelete)
	mux.HandleFunc("POST "+jobs+"{id}/stop", h.handleStop)
	mux.HandleFunc("GET "+jobs+"{id}/logs", h.handleLogs)
	mux.HandleFunc("PUT "+serve+"{$}", h.handleServePut)
	mux.HandleFunc("GET "+serve+"{$}", h.handleServeGet)
	mux.HandleFunc("DELETE "+serve+"{$}", h.handleServeDelete)
	mux.HandleFunc("GET "+dashboard.ClusterStatusPath, h.handleClusterStatus)
	mux.HandleFunc("GET "+dashboard.StateNodesPath, h.handleStateNodes)
	mux.HandleFunc("GET "+dashboard.ActorsSummaryPath, h.handleActorsSummary)
	mux.HandleFunc("GET "+dashboard.LogsPath, h.handleListLogs)
	mux.HandleFunc("GET "+dashboard.LogsPath+"/{media}", h.handleGetLog)
	mux.HandleFunc("GET "+MetricsPath+"/{ip}/metrics", h.handleNodeMetrics)
	return mux
}

// RayVersion is the Ray version the simulated head reports.
const RayVersion = "2.52.0"

// Close stops serving, stops every job (SIGTERM to its process group, SIGKILL
// after the grace period), waits for them to be reaped, and removes the
// working directory. It is safe to call more than once.
func (h *Head) Close() error {
	h.closeOnce.Do(func() { h.closeError = h.close() })
	return h.closeError
}

func (h *Head) close() error {
	h.mu.Lock()
	h.closed = true
	close(h.done)
	if h.dash != nil {
		h.dash.Close()
		h.proxy.Close()
	}
	// Pending jobs stop at once; running ones get SIGTERM now and SIGKILL
	// after the grace period.
	for _, j := range h.jobs {
		h.stopLocked(j, msgShutdown)
	}
	h.shutdownServeLocked()
	h.mu.Unlock()

	h.jobWG.Wait()
	h.timerWG.Wait()

	if h.workDir != "" {
		if err := os.RemoveAll(h.workDir); err != nil {
			return fmt.Errorf("rayhead: removing %s: %w", h.workDir, err)
		}
	}
	return nil
}

// nodeID is the head's Ray node ID.
func (h *Head) nodeID() string { return h.node }
