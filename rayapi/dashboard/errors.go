package dashboard

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// Sentinel errors. Test with errors.Is; the concrete error is an [*HTTPError]
// for HTTP answers, or a wrapped transport or context error.
var (
	// ErrNotFound: the dashboard answered 404, e.g. no job with that ID.
	ErrNotFound = errors.New("not found")
	// ErrSubmissionIDInUse: SubmitJob was refused because a job with that
	// submission_id already exists (Ray answers with "Please use a different
	// submission_id" in the body).
	ErrSubmissionIDInUse = errors.New("submission_id already in use")
	// ErrUnavailable: the dashboard could not be reached or did not answer in
	// time (connection refused or reset, DNS failure, timeout), or a gateway
	// answered 502, 503 or 504 (the API server's service proxy does that when
	// the Service has no ready endpoint).
	ErrUnavailable = errors.New("dashboard unavailable")
	// ErrUnauthorized: the answer was 401 or 403 (missing or wrong Ray auth
	// token, or the API server refused the service proxy).
	ErrUnauthorized = errors.New("unauthorized")
	// ErrBadRequest: the answer was 400, e.g. a submit request without an
	// entrypoint or a Serve config that fails Ray's schema validation.
	ErrBadRequest = errors.New("bad request")
)

// submissionIDInUseText is what Ray puts in the body when a submission_id is
// reused ("Job with submission_id X already exists. Please use a different
// submission_id.").
const submissionIDInUseText = "Please use a different submission_id"

// maxErrorBody bounds the body kept in an HTTPError.
const maxErrorBody = 64 << 10

// HTTPError is a non-2xx answer from the dashboard (or from a proxy in front
// of it). errors.Is matches it against the sentinel its status implies.
type HTTPError struct {
	Method     string // request method
	Path       string // API path, e.g. /api/jobs/raysubmit_x
	StatusCode int    // HTTP status code
	Body       string // response body, truncated to 64 KiB

	kind error // the sentinel the status maps to, or nil
}

// Error is the request, its status, the sentinel it maps to and a summary
// of the body.
func (e *HTTPError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "dashboard: %s %s: %d %s", e.Method, e.Path, e.StatusCode, http.StatusText(e.StatusCode))
	if e.kind != nil {
		fmt.Fprintf(&b, " (%v)", e.kind)
	}
	if body := summarizeBody(e.Body); body != "" {
		b.WriteString(": ")
		b.WriteString(body)
	}
	return b.String()
}

// Unwrap returns the sentinel the status maps to (nil when none does).
func (e *HTTPError) Unwrap() error { return e.kind }

// newHTTPError classifies a non-2xx answer.
func newHTTPError(method, path string, status int, body string) *HTTPError {
	e := &HTTPError{Method: method, Path: path, StatusCode: status, Body: body}
	switch {
	case status >= 400 && strings.Contains(body, submissionIDInUseText):
		e.kind = ErrSubmissionIDInUse
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		e.kind = ErrUnauthorized
	case status == http.StatusNotFound && isKubernetesStatus(body):
		// The API server's service proxy could not find the Service (or
		// its port): the dashboard was never reached, so this says
		// nothing about the job.
		e.kind = ErrUnavailable
	case status == http.StatusNotFound:
		e.kind = ErrNotFound
	case status == http.StatusBadGateway || status == http.StatusServiceUnavailable || status == http.StatusGatewayTimeout:
		e.kind = ErrUnavailable
	case status == http.StatusBadRequest:
		e.kind = ErrBadRequest
	}
	return e
}

// isKubernetesStatus reports whether body looks like a metav1.Status object,
// which is what the API server (not Ray) answers with.
func isKubernetesStatus(body string) bool {
	return strings.Contains(body, `"kind":"Status"`) && strings.Contains(body, `"apiVersion":"v1"`)
}

// summarizeBody shortens a body for an error message: Ray's 500 answers are
// Python tracebacks, whose last line is the useful one.
func summarizeBody(body string) string {
	body = strings.TrimSpace(body)
	if body == "" {
		return ""
	}
	if strings.HasPrefix(body, "Traceback (most recent call last)") {
		lines := strings.Split(body, "\n")
		for i := len(lines) - 1; i >= 0; i-- {
			if l := strings.TrimSpace(lines[i]); l != "" {
				body = l
				break
			}
		}
	}
	const max = 300
	if len(body) > max {
		body = body[:max] + "…"
	}
	return body
}
