package raydash

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/raydar/raydar/rayapi/dashboard"
)

// echoHeaders answers every dashboard call with a failure that echoes the
// request's headers, as a proxy's or a debug server's error page does: a
// 500 for the Jobs API, a 200 refusal ("[get_logs] Fetch log error: …")
// for a log file, result=false for the log listing, an unhealthy answer
// for the GCS health.
func echoHeaders(w http.ResponseWriter, r *http.Request) {
	var b strings.Builder
	for k, vs := range r.Header {
		fmt.Fprintf(&b, "%s: %s\n", k, strings.Join(vs, ","))
	}
	fmt.Fprintf(&b, "%v", r.Header)
	echo := b.String()
	switch r.URL.Path {
	case dashboard.LogFilePath:
		fmt.Fprint(w, dashboard.LogFetchErrorPrefix+echo)
	case dashboard.LogsPath:
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"result": false, "msg": %q, "data": {}}`, echo)
	case dashboard.GCSHealthPath:
		fmt.Fprint(w, "unhealthy\n"+echo)
	default:
		http.Error(w, "Traceback (most recent call last)\nKeyError: "+strings.ReplaceAll(echo, "\n", " "), http.StatusInternalServerError)
	}
}

// TestEchoedTokenIsRedacted: a dashboard answer that echoes the
// x-ray-authorization header never carries the Ray auth token into the
// error a caller puts in a status condition, an Event, a log line or on
// the screen (kube/redact.Text, through dashboard.WithRedact).
func TestEchoedTokenIsRedacted(t *testing.T) {
	const token = "canary-5e1f0c2b9d8a7e6f"
	srv := httptest.NewServer(http.HandlerFunc(echoHeaders))
	defer srv.Close()
	cs := fake.NewClientset(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "rc"},
		Data: map[string][]byte{AuthTokenKey: []byte(token)}})
	r, err := New(Options{AddressBook: book{"ns/rc": srv.URL}, Secrets: SecretsFromClientset(cs)})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	c, err := r.ClientFor(ctx, tokenCluster("ns", "rc", nil))
	if err != nil {
		t.Fatal(err)
	}
	node := dashboard.LogNode{IP: "10.0.0.1"}
	calls := map[string]error{}
	_, calls["ListJobs"] = c.ListJobs(ctx)
	_, calls["ReadLog"] = c.ReadLog(ctx, dashboard.LogRequest{Node: node, Filename: "raylet.out"})
	_, calls["ListLogs"] = c.ListLogs(ctx, node, "")
	calls["CheckGCSHealth"] = c.CheckGCSHealth(ctx)
	for name, err := range calls {
		if err == nil {
			t.Fatalf("%s: no error from the echoing server", name)
		}
		text := err.Error()
		var he *dashboard.HTTPError
		if errors.As(err, &he) {
			text += "\n" + he.Body
		}
		if strings.Contains(text, token) {
			t.Errorf("%s: the token is in the error:\n%s", name, text)
		}
		if !strings.Contains(text, "<redacted") {
			t.Errorf("%s: the echoed header is not in the error (the test shows nothing):\n%s", name, text)
		}
	}
}
