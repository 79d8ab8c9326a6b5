package gauges

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/raydar/raydar/rayapi/podview"
)

// The pod proxy is one GET of /api/v1/namespaces/NS/pods/NAME:PORT/proxy/metrics
// on the API server; its 403 reads as Forbidden and stops the round, its
// 503 (nothing listens on the port yet) as not yet reporting.
func TestPodProxyAsksTheAPIServer(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	status := map[string]int{"/api/v1/namespaces/ns/pods/h:8080/proxy/metrics": http.StatusOK}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Method+" "+r.URL.Path)
		code := status[r.URL.Path]
		mu.Unlock()
		switch code {
		case http.StatusOK:
			io.WriteString(w, node("10.0.0.1", 33))
		case 0:
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"error trying to reach service: dial tcp 10.0.0.2:8080: connect: connection refused","reason":"ServiceUnavailable","code":503}`)
		default:
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(code)
			io.WriteString(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"pods \"h\" is forbidden: User \"bob\" cannot get resource \"pods/proxy\" in API group \"\" in the namespace \"ns\"","reason":"Forbidden","code":403}`)
		}
	}))
	defer srv.Close()
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	f := PodProxy{Client: cs}
	pods := []*podview.Pod{pod("h", "10.0.0.1", true, true), pod("w1", "10.0.0.2", false, true)}
	out, forbidden := ScrapeCluster(context.Background(), ScrapeOptions{Fetcher: f}, pods)
	if forbidden || !out[0].Known() || out[0].Node.CPUPct != 33 || out[1].Reason != NotReporting {
		t.Errorf("forbidden %v; %+v; %+v", forbidden, out[0], out[1])
	}
	want := map[string]bool{"GET /api/v1/namespaces/ns/pods/h:8080/proxy/metrics": true, "GET /api/v1/namespaces/ns/pods/w1:8080/proxy/metrics": true}
	for _, s := range seen {
		if !want[s] {
			t.Errorf("request %s", s)
		}
	}
	mu.Lock()
	status["/api/v1/namespaces/ns/pods/h:8080/proxy/metrics"] = http.StatusForbidden
	seen = nil
	mu.Unlock()
	out, forbidden = ScrapeCluster(context.Background(), ScrapeOptions{Fetcher: f}, pods)
	if !forbidden || out[0].Reason != Forbidden || out[1].Reason != Forbidden || len(seen) != 1 {
		t.Errorf("after a 403: forbidden %v, reasons %s/%s, requests %v (want the head's only)", forbidden, out[0].Reason, out[1].Reason, seen)
	}
	if out[0].Detail == "" {
		t.Error("the API server's message is not kept")
	}
}
