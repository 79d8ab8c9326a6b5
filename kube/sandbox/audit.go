package sandbox

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// The audit log (Options.Audit): every request the API server serves is
// logged at the Metadata level, one JSON event a line, in
// <StateDir>/audit.log: who (user, user agent), what (verb, resource,
// namespace, name) and the response code; never a request or response
// body, so Secrets (and every other object's content) never reach it.
// RequestReceived is omitted: each request is one ResponseComplete event
// (two for a watch or other long-running request: ResponseStarted, then
// ResponseComplete when it ends; ReadAudit keeps one per request).

const (
	auditLogName    = "audit.log"
	auditPolicyName = "audit-policy.yaml"
)

// auditPolicy logs everything at Metadata and nothing at Request or
// RequestResponse.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
`

// AuditLogPath is the API server's audit log (written with Options.Audit).
func (s *Sandbox) AuditLogPath() string { return filepath.Join(s.StateDir, auditLogName) }

// AuditEvent is one request in the audit log (the fields of
// audit.k8s.io/v1 Event that the Metadata level fills in and raydar reads).
type AuditEvent struct {
	AuditID    string `json:"auditID"`
	Stage      string `json:"stage"`
	Verb       string `json:"verb"`
	RequestURI string `json:"requestURI"`
	User       struct {
		Username string   `json:"username"`
		Groups   []string `json:"groups"`
	} `json:"user"`
	UserAgent string `json:"userAgent"`
	ObjectRef *struct {
		Resource    string `json:"resource"`
		Subresource string `json:"subresource"`
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
		APIGroup    string `json:"apiGroup"`
	} `json:"objectRef"`
	ResponseStatus *struct {
		Code    int    `json:"code"`
		Reason  string `json:"reason"`
		Message string `json:"message"`
	} `json:"responseStatus"`
	RequestReceivedTimestamp time.Time `json:"requestReceivedTimestamp"`
}

// Code is the response code (0 if the request has not been answered).
func (e AuditEvent) Code() int {
	if e.ResponseStatus == nil {
		return 0
	}
	return e.ResponseStatus.Code
}

// Mutating reports whether the request changes something: create, update,
// patch, delete or deletecollection (a TokenRequest is a create too), and
// any exec or attach into a pod, which can change anything in it: over a
// WebSocket it is a GET (verb get), authorized as create pods/exec.
func (e AuditEvent) Mutating() bool {
	switch e.Verb {
	case "create", "update", "patch", "delete", "deletecollection":
		return true
	}
	if r := e.ObjectRef; r != nil && r.Resource == "pods" && (r.Subresource == "exec" || r.Subresource == "attach") {
		return true
	}
	return false
}

// Resource is "group/resource/subresource" ("" group for core), or the
// request URI for non-resource requests (/healthz, /api, …).
func (e AuditEvent) Resource() string {
	if e.ObjectRef == nil || e.ObjectRef.Resource == "" {
		return e.RequestURI
	}
	r := e.ObjectRef.Resource
	if e.ObjectRef.APIGroup != "" {
		r = e.ObjectRef.APIGroup + "/" + r
	}
	if e.ObjectRef.Subresource != "" {
		r += "/" + e.ObjectRef.Subresource
	}
	return r
}

// Namespace of the object (or "" for cluster-scoped and non-resource
// requests).
func (e AuditEvent) Namespace() string {
	if e.ObjectRef == nil {
		return ""
	}
	return e.ObjectRef.Namespace
}

// String is one line for a test's failure message.
func (e AuditEvent) String() string {
	obj := e.Resource()
	if e.ObjectRef != nil && e.ObjectRef.Name != "" {
		obj += " " + e.ObjectRef.Namespace + "/" + e.ObjectRef.Name
	} else if e.Namespace() != "" {
		obj += " in " + e.Namespace()
	}
	return fmt.Sprintf("%s %s %s -> %d", e.User.Username, e.Verb, obj, e.Code())
}

// ReadAudit parses an audit log (JSON lines), one event per request: of
// the ResponseStarted and ResponseComplete events of a long-running
// request, the later one.
func ReadAudit(r io.Reader) ([]AuditEvent, error) {
	var out []AuditEvent
	at := map[string]int{} // auditID -> index in out
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	var bad error // a line that does not parse: fatal unless it is the last
	for n := 1; sc.Scan(); n++ {
		line := sc.Bytes()
		if len(strings.TrimSpace(string(line))) == 0 {
			continue
		}
		if bad != nil {
			return nil, bad
		}
		var e AuditEvent
		if err := json.Unmarshal(line, &e); err != nil {
			// The API server may be writing the last line right now.
			bad = fmt.Errorf("sandbox: audit log line %d: %w", n, err)
			continue
		}
		if i, ok := at[e.AuditID]; ok && e.AuditID != "" {
			if e.Stage == "ResponseComplete" || e.Stage == "Panic" {
				out[i] = e
			}
			continue
		}
		at[e.AuditID] = len(out)
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("sandbox: audit log: %w", err)
	}
	return out, nil
}

// AuditEvents reads the sandbox's audit log (and any rotated parts),
// one event per request, oldest first. It fails if the sandbox was started
// without Options.Audit.
func (s *Sandbox) AuditEvents() ([]AuditEvent, error) {
	if !s.opts.Audit {
		return nil, fmt.Errorf("sandbox: no audit log: started without Options.Audit")
	}
	rotated, err := filepath.Glob(filepath.Join(s.StateDir, "audit-*.log"))
	if err != nil {
		return nil, err
	}
	sort.Strings(rotated) // lumberjack names them by time
	var all []AuditEvent
	for _, p := range append(rotated, s.AuditLogPath()) {
		f, err := os.Open(p)
		if err != nil {
			return nil, fmt.Errorf("sandbox: audit log: %w", err)
		}
		evs, err := ReadAudit(f)
		f.Close()
		if err != nil {
			return nil, err
		}
		all = append(all, evs...)
	}
	return all, nil
}

// AuditSummary counts requests.
type AuditSummary struct {
	Requests int
	ByVerb   map[string]int
	ByUser   map[string]int
	ByCode   map[int]int
}

// Summarize counts the events by verb, user and response code.
func Summarize(evs []AuditEvent) AuditSummary {
	s := AuditSummary{ByVerb: map[string]int{}, ByUser: map[string]int{}, ByCode: map[int]int{}}
	for _, e := range evs {
		s.Requests++
		s.ByVerb[e.Verb]++
		s.ByUser[e.User.Username]++
		s.ByCode[e.Code()]++
	}
	return s
}

// String is "N requests; by code: 200=…, 403=…; by verb: …".
func (s AuditSummary) String() string {
	codes := make([]string, 0, len(s.ByCode))
	for c, n := range s.ByCode {
		codes = append(codes, fmt.Sprintf("%d=%d", c, n))
	}
	sort.Strings(codes)
	verbs := make([]string, 0, len(s.ByVerb))
	for v, n := range s.ByVerb {
		verbs = append(verbs, fmt.Sprintf("%s=%d", v, n))
	}
	sort.Strings(verbs)
	return fmt.Sprintf("%d requests; by code: %s; by verb: %s", s.Requests, strings.Join(codes, ", "), strings.Join(verbs, ", "))
}
