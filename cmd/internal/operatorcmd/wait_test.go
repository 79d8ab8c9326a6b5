package operatorcmd

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"

	"github.com/raydar/raydar/controller"
)

// An API server that answers 500 at first (restarting, its etcd down)
// is waited for; one that refuses the credentials is not.
func TestNewLoopWaitsForARestartingAPIServer(t *testing.T) {
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		http.Error(w, "", http.StatusInternalServerError)
	}))
	defer srv.Close()
	cfg := &rest.Config{Host: srv.URL}
	ctx, cancel := context.WithCancel(context.Background())
	var retries atomic.Int64
	logger := logr.New(funcSink(func(msg string) {
		if strings.Contains(msg, "not answering") {
			if retries.Add(1) == 2 {
				cancel() // it would go on for apiStartWait
			}
		}
	}))
	_, err := newLoopWaiting(ctx, cfg, controller.Options{DisableLeaderElection: true, MetricsBindAddress: "0", HealthProbeBindAddress: "0"}, nil, logger)
	if err != context.Canceled || retries.Load() < 2 {
		t.Fatalf("err %v after %d retries (%d requests); want it to wait", err, retries.Load(), calls.Load())
	}

	forbidden := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403}`))
	}))
	defer forbidden.Close()
	retries.Store(0)
	_, err = newLoopWaiting(context.Background(), &rest.Config{Host: forbidden.URL}, controller.Options{DisableLeaderElection: true, MetricsBindAddress: "0", HealthProbeBindAddress: "0"}, nil, logger)
	if err == nil || retries.Load() != 0 {
		t.Fatalf("forbidden: err %v after %d retries; want it at once", err, retries.Load())
	}
}

// funcSink calls f with each message.
type funcSink func(msg string)

func (funcSink) Init(logr.RuntimeInfo)                 {}
func (funcSink) Enabled(int) bool                      { return true }
func (f funcSink) Info(_ int, msg string, _ ...any)    { f(msg) }
func (f funcSink) Error(_ error, msg string, _ ...any) { f(msg) }
func (f funcSink) WithValues(...any) logr.LogSink      { return f }
func (f funcSink) WithName(string) logr.LogSink        { return f }
