package controller

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"k8s.io/client-go/rest"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// The operator's requests show in client-go's REST client series on the
// metrics registry: the request counter (controller-runtime's) and two of
// the six histograms raydar enables (those a failed request always
// feeds; DNS and rate-limiter histograms stay empty without DNS or
// throttling), as KubeRay's operator serves them
// (controllers/ray/metrics/client_go_metrics.go).
func TestRESTClientMetricsServed(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "", http.StatusInternalServerError)
	}))
	defer srv.Close()
	_, _ = New(&rest.Config{Host: srv.URL}, Options{DisableLeaderElection: true})
	fams, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, f := range fams {
		got[f.GetName()] = len(f.GetMetric()) > 0
	}
	for _, name := range []string{"rest_client_requests_total", "rest_client_request_duration_seconds", "rest_client_response_size_bytes"} {
		if !got[name] {
			t.Errorf("%s not served (families with samples: %v)", name, got)
		}
	}
}
