package faults

import (
	"encoding/pem"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

// The suite's tools on their own (no sandbox; run with -short too).

func TestAPIProxyAuditsCutsAndRestores(t *testing.T) {
	up := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut {
			w.WriteHeader(http.StatusConflict)
			return
		}
		_, _ = io.WriteString(w, "ok "+r.URL.Path)
	}))
	defer up.Close()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: up.Certificate().Raw})
	p, err := NewAPIProxy(&rest.Config{Host: up.URL, TLSClientConfig: rest.TLSClientConfig{CAData: ca}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	hc, err := rest.HTTPClientFor(p.Config())
	if err != nil {
		t.Fatal(err)
	}
	do := func(method, path string) (int, error) {
		req, _ := http.NewRequest(method, "https://"+p.Addr()+path, nil)
		resp, err := hc.Do(req)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		_, _ = io.ReadAll(resp.Body)
		return resp.StatusCode, nil
	}
	if code, err := do(http.MethodPatch, "/apis/ray.io/v1/namespaces/ns/rayclusters/a/status"); err != nil || code != 200 {
		t.Fatalf("through the proxy: %d %v", code, err)
	}
	if code, _ := do(http.MethodPut, "/apis/ray.io/v1/namespaces/ns/rayclusters/a/status"); code != http.StatusConflict {
		t.Fatalf("PUT: %d", code)
	}
	if got := p.Audit.StatusWrites("ns"); got["rayclusters/a"] != 1 || len(got) != 1 {
		t.Fatalf("status writes %v, want one (the 409 is no write)", got)
	}
	if n := p.Cut(); n == 0 {
		t.Fatal("Cut closed no connection; the client's was open")
	}
	if c, err := net.DialTimeout("tcp", p.Addr(), time.Second); err == nil {
		c.Close()
		t.Fatal("a connection was accepted while cut")
	}
	if _, err := do(http.MethodGet, "/api"); err == nil {
		t.Fatal("a request went through while cut")
	}
	if err := p.Restore(); err != nil {
		t.Fatal(err)
	}
	if code, err := do(http.MethodGet, "/api"); err != nil || code != 200 {
		t.Fatalf("after Restore: %d %v", code, err)
	}
}

func TestFaultyHTTPFailsThenSlowsThenPasses(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "ok") }))
	defer up.Close()
	f, err := StartFaultyHTTP(func() (string, bool) { return up.URL, true })
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.Fail500(2)
	f.Slow(1, 200*time.Millisecond)
	var codes []int
	var slowest time.Duration
	for range 4 {
		begin := time.Now()
		resp, err := http.Get(f.URL() + "/api/version")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		codes = append(codes, resp.StatusCode)
		slowest = max(slowest, time.Since(begin))
	}
	if want := []int{500, 500, 200, 200}; !equalInts(codes, want) {
		t.Fatalf("codes %v, want %v", codes, want)
	}
	if slowest < 200*time.Millisecond {
		t.Fatalf("no answer was delayed (slowest %s)", slowest)
	}
	if f5, sl := f.Injected(); f5 != 2 || sl != 1 {
		t.Fatalf("injected %d 500s, %d slow; want 2, 1", f5, sl)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
