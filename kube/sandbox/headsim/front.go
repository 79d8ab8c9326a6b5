package headsim

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync"
	"time"
)

// counts is the request counter of one cluster.
type counts struct {
	mu sync.Mutex
	m  map[string]int
}

func (c *counts) add(k string) {
	c.mu.Lock()
	c.m[k]++
	c.mu.Unlock()
}

func (c *counts) get(k string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[k]
}

func (c *counts) snapshot() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.m))
	for k, v := range c.m {
		out[k] = v
	}
	return out
}

// front is the cluster's dashboard address: a loopback listener that counts
// each request and passes it to the head.
type front struct {
	addr    string
	handler http.Handler

	mu       sync.Mutex
	srv      *http.Server
	closed   bool
	refusing bool
	wg       sync.WaitGroup
}

func newFront(target string, c *counts) (*front, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, err
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.Transport = &http.Transport{DisableKeepAlives: true, ResponseHeaderTimeout: time.Minute}
	rp.ErrorHandler = func(w http.ResponseWriter, r *http.Request, err error) {
		http.Error(w, "head unreachable: "+err.Error(), http.StatusBadGateway)
	}
	f := &front{handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.add(r.Method + " " + r.URL.Path)
		rp.ServeHTTP(w, r)
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	f.addr = ln.Addr().String()
	f.serve(ln)
	return f, nil
}

func (f *front) serve(ln net.Listener) {
	srv := &http.Server{Handler: f.handler, ReadHeaderTimeout: 10 * time.Second}
	f.srv = srv
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		_ = srv.Serve(ln)
	}()
}

func (f *front) url() string { return "http://" + f.addr }

func (f *front) setRefuse(on bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed || on == f.refusing {
		return nil
	}
	if on {
		f.srv.Close()
		f.refusing = true
		return nil
	}
	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		return fmt.Errorf("headsim: listening again on %s: %w", f.addr, err)
	}
	f.serve(ln)
	f.refusing = false
	return nil
}

func (f *front) close() {
	f.mu.Lock()
	if !f.closed {
		f.closed = true
		f.srv.Close()
	}
	f.mu.Unlock()
	f.wg.Wait()
}
