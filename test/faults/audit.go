package faults

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/rest"
)

// Request is one request an Audit saw, with the response code.
type Request struct {
	Method, Path, UserAgent string
	Code                    int
	// At is when the response (or the error) came.
	At time.Time
	// Body is the start of a status write's body (Wrap only).
	Body string
}

// Mutating reports whether the request asked for a change.
func (r Request) Mutating() bool {
	switch r.Method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		return true
	}
	return false
}

// OK reports whether the request succeeded (2xx).
func (r Request) OK() bool { return r.Code >= 200 && r.Code < 300 }

// Audit records requests to the API server (seen by an APIProxy or by the
// transport Wrap installs).
type Audit struct {
	mu   sync.Mutex
	reqs []Request
}

// Record adds a request.
func (a *Audit) Record(r Request) {
	if r.At.IsZero() {
		r.At = time.Now()
	}
	a.mu.Lock()
	a.reqs = append(a.reqs, r)
	a.mu.Unlock()
}

// Requests returns a copy of what was recorded.
func (a *Audit) Requests() []Request {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]Request(nil), a.reqs...)
}

// Reset forgets what was recorded.
func (a *Audit) Reset() {
	a.mu.Lock()
	a.reqs = nil
	a.mu.Unlock()
}

// Wrap returns a copy of cfg whose requests are recorded.
func (a *Audit) Wrap(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			var body string
			if strings.HasSuffix(r.URL.Path, "/status") && r.GetBody != nil {
				if b, err := r.GetBody(); err == nil {
					buf, _ := io.ReadAll(io.LimitReader(b, 600))
					body = string(buf)
				}
			}
			resp, err := rt.RoundTrip(r)
			code := 0
			if err == nil {
				code = resp.StatusCode
			} else {
				body = err.Error() + " " + body
			}
			a.Record(Request{Method: r.Method, Path: r.URL.Path, UserAgent: r.UserAgent(), Code: code, Body: body})
			return resp, err
		})
	})
	return cfg
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// StatusWriteTimes returns when each successful status write of the
// object ("<plural>/<name>") in namespace ns was made.
func (a *Audit) StatusWriteTimes(ns, obj string) []time.Time {
	var out []time.Time
	for _, r := range a.Requests() {
		if (r.Method == http.MethodPut || r.Method == http.MethodPatch) && r.OK() &&
			r.Path == "/apis/ray.io/v1/namespaces/"+ns+"/"+obj+"/status" {
			out = append(out, r.At)
		}
	}
	return out
}

// StatusWrites counts the successful status writes (PUT or PATCH of the
// status subresource) of ray.io objects in namespace ns, by
// "<plural>/<name>".
func (a *Audit) StatusWrites(ns string) map[string]int {
	prefix := "/apis/ray.io/v1/namespaces/" + ns + "/"
	out := map[string]int{}
	for _, r := range a.Requests() {
		if (r.Method != http.MethodPut && r.Method != http.MethodPatch) || !r.OK() || !strings.HasPrefix(r.Path, prefix) {
			continue
		}
		rest := strings.TrimPrefix(r.Path, prefix)
		if obj, ok := strings.CutSuffix(rest, "/status"); ok && strings.Count(obj, "/") == 1 {
			out[obj]++
		}
	}
	return out
}

// ReconcileWrites counts the successful mutating requests in namespace ns
// other than the leader election's Leases and Events: the writes only a
// reconciling operator makes.
func (a *Audit) ReconcileWrites(ns string) int {
	n := 0
	for _, r := range a.Requests() {
		if !r.Mutating() || !r.OK() || !strings.Contains(r.Path, "/namespaces/"+ns+"/") {
			continue
		}
		if strings.Contains(r.Path, "/leases/") || strings.HasSuffix(r.Path, "/leases") || strings.Contains(r.Path, "/events") {
			continue
		}
		n++
	}
	return n
}
