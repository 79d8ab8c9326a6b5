package faults

import (
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync"
	"time"
)

// FaultyHTTP is a loopback HTTP proxy in front of a Ray dashboard whose
// address may change (a replaced head): it answers the next requests with
// 500 (without forwarding them) or forwards them late, as a test asks.
type FaultyHTTP struct {
	// Target returns the dashboard's current base URL, false while it has
	// none (the proxy then answers 502).
	Target func() (string, bool)

	mu                   sync.Mutex
	fail500, slow        int
	delay                time.Duration
	injected500, delayed int

	ln  net.Listener
	srv *http.Server
}

// StartFaultyHTTP listens on a free loopback port.
func StartFaultyHTTP(target func() (string, bool)) (*FaultyHTTP, error) {
	f := &FaultyHTTP{Target: target}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	f.ln = ln
	f.srv = &http.Server{Handler: f, ReadHeaderTimeout: 10 * time.Second, ErrorLog: log.New(io.Discard, "", 0)}
	go func() { _ = f.srv.Serve(ln) }()
	return f, nil
}

// URL is the proxy's base URL.
func (f *FaultyHTTP) URL() string { return "http://" + f.ln.Addr().String() }

// Fail500 makes the next n requests fail with 500.
func (f *FaultyHTTP) Fail500(n int) {
	f.mu.Lock()
	f.fail500 = n
	f.mu.Unlock()
}

// Slow delays the next n forwarded requests by d each.
func (f *FaultyHTTP) Slow(n int, d time.Duration) {
	f.mu.Lock()
	f.slow, f.delay = n, d
	f.mu.Unlock()
}

// Injected returns how many 500s and delays were served so far.
func (f *FaultyHTTP) Injected() (fail500, delayed int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.injected500, f.delayed
}

// Close stops the proxy.
func (f *FaultyHTTP) Close() error { return f.srv.Close() }

// ServeHTTP serves a pending injected 500 or delay, then forwards the
// request to the dashboard at Target's URL (502 while there is none).
func (f *FaultyHTTP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	var fail bool
	var delay time.Duration
	switch {
	case f.fail500 > 0:
		f.fail500--
		f.injected500++
		fail = true
	case f.slow > 0:
		f.slow--
		f.delayed++
		delay = f.delay
	}
	f.mu.Unlock()
	if fail {
		http.Error(w, "injected fault: internal server error", http.StatusInternalServerError)
		return
	}
	if delay > 0 {
		select { // the injected slowness
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
	}
	base, ok := f.Target()
	if !ok {
		http.Error(w, "no dashboard", http.StatusBadGateway)
		return
	}
	u, err := url.Parse(base)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	rp := &httputil.ReverseProxy{
		Rewrite:  func(pr *httputil.ProxyRequest) { pr.SetURL(u) },
		ErrorLog: log.New(io.Discard, "", 0),
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			code := http.StatusBadGateway
			if errors.Is(err, io.EOF) {
				code = http.StatusServiceUnavailable
			}
			http.Error(w, err.Error(), code)
		},
	}
	rp.ServeHTTP(w, r)
}
