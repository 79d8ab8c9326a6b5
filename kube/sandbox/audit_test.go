package sandbox

import (
	"strings"
	"testing"
)

// auditSample: a get, a forbidden list, a watch (ResponseStarted then
// ResponseComplete, one request) and a half-written last line.
const auditSample = `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"a1","stage":"ResponseComplete","requestURI":"/api/v1/namespaces/ns/pods/p","verb":"get","user":{"username":"system:serviceaccount:ns:op","groups":["system:serviceaccounts"]},"objectRef":{"resource":"pods","namespace":"ns","name":"p","apiVersion":"v1"},"responseStatus":{"metadata":{},"code":200}}
{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"a2","stage":"ResponseComplete","requestURI":"/apis/ray.io/v1/rayclusters","verb":"list","user":{"username":"viewer"},"objectRef":{"resource":"rayclusters","apiGroup":"ray.io","apiVersion":"v1"},"responseStatus":{"metadata":{},"status":"Failure","reason":"Forbidden","code":403}}

{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"a3","stage":"ResponseStarted","requestURI":"/api/v1/pods?watch=true","verb":"watch","user":{"username":"viewer"},"objectRef":{"resource":"pods","apiVersion":"v1"},"responseStatus":{"metadata":{},"code":200}}
{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"a4","stage":"ResponseComplete","requestURI":"/apis/ray.io/v1/namespaces/ns/rayclusters/c/status","verb":"patch","user":{"username":"system:serviceaccount:ns:op"},"objectRef":{"resource":"rayclusters","subresource":"status","namespace":"ns","name":"c","apiGroup":"ray.io"},"responseStatus":{"metadata":{},"code":200}}
{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"a3","stage":"ResponseComplete","requestURI":"/api/v1/pods?watch=true","verb":"watch","user":{"username":"viewer"},"objectRef":{"resource":"pods","apiVersion":"v1"},"responseStatus":{"metadata":{},"code":200}}
{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"a5","stage":"Respo`

func TestReadAudit(t *testing.T) {
	evs, err := ReadAudit(strings.NewReader(auditSample))
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, e := range evs {
		lines = append(lines, e.String())
	}
	want := []string{
		"system:serviceaccount:ns:op get pods ns/p -> 200",
		"viewer list ray.io/rayclusters -> 403",
		"viewer watch pods -> 200",
		"system:serviceaccount:ns:op patch ray.io/rayclusters/status ns/c -> 200",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Fatalf("events:\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	if evs[2].Stage != "ResponseComplete" {
		t.Errorf("the watch's event is its %s, want its ResponseComplete", evs[2].Stage)
	}
	if !evs[3].Mutating() || evs[0].Mutating() || evs[2].Mutating() {
		t.Error("Mutating: want only the patch")
	}
	s := Summarize(evs)
	if got := s.String(); got != "4 requests; by code: 200=3, 403=1; by verb: get=1, list=1, patch=1, watch=1" {
		t.Errorf("summary %q", got)
	}
	if s.ByUser["viewer"] != 2 {
		t.Errorf("by user %v", s.ByUser)
	}
}

func TestReadAuditRefusesGarbageInTheMiddle(t *testing.T) {
	_, err := ReadAudit(strings.NewReader("{not json\n" + auditSample))
	if err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Fatalf("err = %v, want one naming line 1", err)
	}
}

// TestExecIsMutating: an exec into a pod is a write whichever way it
// travels: a SPDY POST (create) or a WebSocket GET (get).
func TestExecIsMutating(t *testing.T) {
	for _, verb := range []string{"create", "get"} {
		line := `{"auditID":"x","stage":"ResponseComplete","verb":"` + verb + `","objectRef":{"resource":"pods","subresource":"exec","namespace":"ns","name":"p"}}`
		evs, err := ReadAudit(strings.NewReader(line + "\n"))
		if err != nil || len(evs) != 1 {
			t.Fatalf("%v, %d events", err, len(evs))
		}
		if !evs[0].Mutating() {
			t.Errorf("%s pods/exec is not mutating", verb)
		}
	}
}
