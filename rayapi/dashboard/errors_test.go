package dashboard

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// closedAddr returns a loopback address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr
}

func TestTypedErrors(t *testing.T) {
	const k8sNotFound = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"services \"x\" not found","reason":"NotFound","details":{"name":"x","kind":"services"},"code":404}`
	const dupID = "Traceback (most recent call last):\n  File \"job_head.py\", line 1, in submit_job\nValueError: Job with submission_id raysubmit_1 already exists. Please use a different submission_id.\n"
	cases := []struct {
		name   string
		status int
		body   string
		want   error // nil: no sentinel
	}{
		{"job not found", 404, "Job raysubmit_x does not exist", ErrNotFound},
		{"service missing behind the API server proxy", 404, k8sNotFound, ErrUnavailable},
		{"duplicate submission id (500)", 500, dupID, ErrSubmissionIDInUse},
		{"duplicate submission id (400, newer Ray)", 400, dupID, ErrSubmissionIDInUse},
		{"401", 401, "Unauthorized: missing authentication token", ErrUnauthorized},
		{"403", 403, "Forbidden", ErrUnauthorized},
		{"502", 502, "bad gateway", ErrUnavailable},
		{"503", 503, `{"kind":"Status","apiVersion":"v1","message":"no endpoints available for service \"x\"","code":503}`, ErrUnavailable},
		{"504", 504, "", ErrUnavailable},
		{"400", 400, "Traceback (most recent call last):\nTypeError: missing entrypoint", ErrBadRequest},
		{"other 500", 500, "Traceback (most recent call last):\n  boom\nRuntimeError: Attempted to delete job", nil},
		{"418", 418, "teapot", nil},
	}
	sentinels := []error{ErrNotFound, ErrSubmissionIDInUse, ErrUnavailable, ErrUnauthorized, ErrBadRequest}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t)
			f.on("POST", "/api/jobs/", tc.status, tc.body)
			_, err := f.client().SubmitJob(context.Background(), SubmitJobRequest{Entrypoint: "true"})
			if err == nil {
				t.Fatal("no error")
			}
			for _, s := range sentinels {
				if got := errors.Is(err, s); got != (s == tc.want) {
					t.Errorf("errors.Is(%v, %v) = %v", err, s, got)
				}
			}
			var he *HTTPError
			if !errors.As(err, &he) {
				t.Fatalf("errors.As(*HTTPError) failed for %v", err)
			}
			if he.StatusCode != tc.status || he.Body != tc.body || he.Method != "POST" || he.Path != "/api/jobs/" {
				t.Errorf("HTTPError = %+v", he)
			}
			if !strings.Contains(err.Error(), "/api/jobs/") {
				t.Errorf("message lacks the path: %v", err)
			}
		})
	}

	t.Run("traceback summarized to its last line", func(t *testing.T) {
		e := newHTTPError("POST", "/api/jobs/", 500, dupID)
		if !strings.HasSuffix(e.Error(), "Please use a different submission_id.") || strings.Contains(e.Error(), "job_head.py") {
			t.Errorf("Error() = %q", e.Error())
		}
	})

	t.Run("connection refused", func(t *testing.T) {
		c, _ := New(closedAddr(t))
		_, err := c.GetJobInfo(context.Background(), "x")
		var he *HTTPError
		if !errors.Is(err, ErrUnavailable) || errors.Is(err, ErrNotFound) || errors.As(err, &he) {
			t.Errorf("err = %v", err)
		}
	})

	t.Run("undecodable answer", func(t *testing.T) {
		f := newFake(t)
		f.on("GET", "/api/jobs/x", 200, "<html>")
		_, err := f.client().GetJobInfo(context.Background(), "x")
		if err == nil || errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "decoding") {
			t.Errorf("err = %v", err)
		}
	})
}

// blockingServer answers nothing until the request is cancelled; it reports
// each request's arrival on arrived.
func blockingServer(t *testing.T) (url string, arrived <-chan struct{}) {
	t.Helper()
	ch := make(chan struct{}, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ch <- struct{}{}
		<-r.Context().Done()
	}))
	t.Cleanup(srv.Close)
	return srv.URL, ch
}

func TestTimeout(t *testing.T) {
	u, _ := blockingServer(t)
	c, _ := New(u, WithTimeout(100*time.Millisecond))
	start := time.Now()
	_, err := c.GetJobInfo(context.Background(), "x")
	if !errors.Is(err, ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v", err)
	}
	if el := time.Since(start); el > 10*time.Second {
		t.Errorf("timed out after %v", el)
	}
	if !strings.Contains(err.Error(), "100ms") {
		t.Errorf("message lacks the timeout: %v", err)
	}

	// The caller's deadline counts as a timeout too.
	c, _ = New(u, WithTimeout(0))
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := c.ListJobs(ctx); !errors.Is(err, ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v", err)
	}
}

func TestCancellation(t *testing.T) {
	u, arrived := blockingServer(t)
	c, _ := New(u, WithTimeout(time.Minute))
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-arrived
		cancel()
	}()
	_, err := c.GetJobLogs(ctx, "x")
	if !errors.Is(err, context.Canceled) || errors.Is(err, ErrUnavailable) {
		t.Fatalf("err = %v", err)
	}

	// Already cancelled: no request at all.
	if _, err := c.ListJobs(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
}

func TestTokenHeader(t *testing.T) {
	f := newFake(t)
	f.on("GET", "/api/jobs/", 200, "[]")
	f.on("GET", "/api/gcs_healthz", 200, "success")
	ctx := context.Background()

	if _, err := f.client().ListJobs(ctx); err != nil {
		t.Fatal(err)
	}
	if h := f.last().Header.Values("x-ray-authorization"); len(h) != 0 {
		t.Errorf("header sent without a token: %q", h)
	}
	c := f.client(WithToken("s3cret"))
	if _, err := c.ListJobs(ctx); err != nil {
		t.Fatal(err)
	}
	if h := f.last().Header.Get("x-ray-authorization"); h != "Bearer s3cret" {
		t.Errorf("x-ray-authorization = %q", h)
	}
	if err := c.CheckGCSHealth(ctx); err != nil {
		t.Fatal(err)
	}
	if h := f.last().Header.Get("x-ray-authorization"); h != "Bearer s3cret" {
		t.Errorf("x-ray-authorization on health = %q", h)
	}
	if h := f.last().Header.Get("Authorization"); h != "" {
		t.Errorf("Authorization must be left to the transport, got %q", h)
	}
}

// countingDoer wraps a Doer, as a caller's instrumented transport would.
type countingDoer struct {
	mu sync.Mutex
	n  int
	hc *http.Client
}

func (d *countingDoer) Do(r *http.Request) (*http.Response, error) {
	d.mu.Lock()
	d.n++
	d.mu.Unlock()
	r.Header.Set("Authorization", "Bearer apiserver-token")
	return d.hc.Do(r)
}

func TestServiceProxy(t *testing.T) {
	const prefix = "/api/v1/namespaces/ray-system/services/rc-head-svc:dashboard/proxy"
	if got := ServiceProxyURL("https://10.0.0.1:6443/", "ray-system", "rc-head-svc"); got != "https://10.0.0.1:6443"+prefix {
		t.Errorf("ServiceProxyURL = %q", got)
	}

	f := newFake(t)
	f.on("GET", prefix+"/api/jobs/raysubmit_2", 200, rayPendingJobJSON)
	f.on("PUT", prefix+"/api/serve/applications/", 200, "")
	doer := &countingDoer{hc: f.srv.Client()}
	c, err := NewServiceProxy(f.srv.URL, doer, "ray-system", "rc-head-svc", WithToken("t"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Timeout() != DefaultProxyTimeout {
		t.Errorf("proxy timeout = %v", c.Timeout())
	}
	if _, err := c.GetJobInfo(context.Background(), "raysubmit_2"); err != nil {
		t.Fatal(err)
	}
	r := f.last()
	if r.Header.Get("Authorization") != "Bearer apiserver-token" || r.Header.Get("x-ray-authorization") != "Bearer t" {
		t.Errorf("headers = %v", r.Header)
	}
	if err := c.DeployServeConfigV2(context.Background(), serveConfigV2); err != nil {
		t.Fatal(err)
	}
	if doer.n != 2 {
		t.Errorf("doer used %d times", doer.n)
	}
	// A job the dashboard does not know is ErrNotFound; a missing Service is not.
	if _, err := c.GetJobInfo(context.Background(), "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("err = %v", err)
	}

	if c, err := NewServiceProxy(f.srv.URL, doer, "ns", "svc", WithTimeout(time.Second)); err != nil || c.Timeout() != time.Second {
		t.Errorf("WithTimeout must override the proxy default: %v", err)
	}
	if _, err := NewServiceProxy(f.srv.URL, nil, "ns", "svc"); err == nil {
		t.Error("NewServiceProxy accepted a nil client")
	}
	if _, err := NewServiceProxy(f.srv.URL, doer, "", "svc"); err == nil {
		t.Error("NewServiceProxy accepted an empty namespace")
	}
}
