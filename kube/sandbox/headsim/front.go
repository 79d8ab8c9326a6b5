package headsim

import (
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync"
	"time"

	"github.com/raydar/raydar/kube/sandbox/refusable"
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

// newFront starts the cluster's dashboard address: a loopback server that
// counts each request and passes it to the head at target. SetRefuse on it
// makes the cluster's dashboard unreachable while the head keeps running.
func newFront(target string, c *counts) (*refusable.Server, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, err
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.Transport = &http.Transport{DisableKeepAlives: true, ResponseHeaderTimeout: time.Minute}
	rp.ErrorHandler = func(w http.ResponseWriter, r *http.Request, err error) {
		http.Error(w, "head unreachable: "+err.Error(), http.StatusBadGateway)
	}
	return refusable.Listen("127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.add(r.Method + " " + r.URL.Path)
		rp.ServeHTTP(w, r)
	}))
}
