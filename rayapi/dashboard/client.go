package dashboard

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Default per-call timeouts, as KubeRay uses them.
const (
	// DefaultTimeout bounds each call made straight to the dashboard.
	DefaultTimeout = 2 * time.Second
	// DefaultProxyTimeout bounds each call made through the API server's
	// service proxy (NewServiceProxy).
	DefaultProxyTimeout = 10 * time.Second
)

// DashboardPortName is the name of the head Service's dashboard port, used in
// the service-proxy path.
const DashboardPortName = "dashboard"

// maxResponseBody bounds a successful response body (job logs are the big
// ones).
const maxResponseBody = 64 << 20

// Doer sends one HTTP request. It is the transport seam: *http.Client
// satisfies it, and so does the client rest.HTTPClientFor builds for the API
// server's service proxy.
type Doer interface {
	Do(*http.Request) (*http.Response, error)
}

// Client talks to one Ray head's dashboard. It is safe for concurrent use.
type Client struct {
	base    string // scheme://host[:port][/path], without a trailing slash
	hc      Doer
	timeout time.Duration
	token   string
	redact  func(string) string // WithRedact's, or nil
}

// Option configures a Client.
type Option func(*Client)

// WithHTTPClient sets the transport (default: a private *http.Client with
// Go's default transport settings). Pass the API server's client when using
// the service proxy.
func WithHTTPClient(hc Doer) Option {
	return func(c *Client) {
		if hc != nil {
			c.hc = hc
		}
	}
}

// WithTimeout sets the per-call timeout (default DefaultTimeout, or
// DefaultProxyTimeout for NewServiceProxy). d <= 0 disables it, leaving only
// the caller's context.
func WithTimeout(d time.Duration) Option {
	return func(c *Client) { c.timeout = d }
}

// WithToken sets the Ray auth token, sent as "x-ray-authorization: Bearer
// <token>" on every call. Empty means no header.
func WithToken(token string) Option {
	return func(c *Client) { c.token = token }
}

// WithRedact sets what rewrites every text of the dashboard's (or a
// proxy's) answers that an error carries, before the error is made: an
// [HTTPError]'s Body, Ray's result=false and log-fetch messages, an
// unhealthy answer. A server may echo the request's headers, the token
// among them; kube/raydash passes kube/redact's Text with the token it
// sent. nil (the default) leaves them as answered.
func WithRedact(f func(string) string) Option {
	return func(c *Client) { c.redact = f }
}

// answerText is s, an answer's text bound for an error, through
// WithRedact's function.
func (c *Client) answerText(s string) string {
	if c.redact == nil {
		return s
	}
	return c.redact(s)
}

var defaultHTTPClient = &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}

// New returns a client for the dashboard at baseURL, e.g.
// "http://raycluster-head-svc.default.svc.cluster.local:8265" or
// "http://127.0.0.1:41234". A baseURL without a scheme gets "http://", so the
// dashboardURL KubeRay writes into RayJob status works as is.
func New(baseURL string, opts ...Option) (*Client, error) {
	base, err := normalizeBaseURL(baseURL)
	if err != nil {
		return nil, err
	}
	c := &Client{base: base, hc: defaultHTTPClient, timeout: DefaultTimeout}
	for _, o := range opts {
		o(c)
	}
	return c, nil
}

// NewServiceProxy returns a client that reaches the dashboard of Service
// service in namespace through the Kubernetes API server's service proxy
// (ServiceProxyURL). apiServerHost is rest.Config.Host and hc the client
// rest.HTTPClientFor built from the same config (it carries the API server's
// credentials). The default per-call timeout is DefaultProxyTimeout.
func NewServiceProxy(apiServerHost string, hc Doer, namespace, service string, opts ...Option) (*Client, error) {
	if hc == nil {
		return nil, errors.New("dashboard: NewServiceProxy needs the API server's HTTP client")
	}
	if namespace == "" || service == "" {
		return nil, errors.New("dashboard: NewServiceProxy needs a namespace and a service name")
	}
	all := append([]Option{WithHTTPClient(hc), WithTimeout(DefaultProxyTimeout)}, opts...)
	return New(ServiceProxyURL(apiServerHost, namespace, service), all...)
}

// ServiceProxyURL is the API server's proxy URL for the dashboard port of a
// Service: <apiServerHost>/api/v1/namespaces/<ns>/services/<svc>:dashboard/proxy.
func ServiceProxyURL(apiServerHost, namespace, service string) string {
	return strings.TrimRight(apiServerHost, "/") +
		"/api/v1/namespaces/" + url.PathEscape(namespace) +
		"/services/" + url.PathEscape(service) + ":" + DashboardPortName + "/proxy"
}

func normalizeBaseURL(raw string) (string, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return "", errors.New("dashboard: empty base URL")
	}
	if !strings.Contains(raw, "://") {
		raw = "http://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("dashboard: base URL: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("dashboard: base URL %q: scheme must be http or https", raw)
	}
	if u.Host == "" {
		return "", fmt.Errorf("dashboard: base URL %q has no host", raw)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("dashboard: base URL %q must not have a query or fragment", raw)
	}
	return strings.TrimRight(u.String(), "/"), nil
}

// BaseURL is the URL every API path is appended to.
func (c *Client) BaseURL() string { return c.base }

// Timeout is the per-call timeout (0: none).
func (c *Client) Timeout() time.Duration { return c.timeout }

// call sends one request and returns the body of a 2xx answer. in, when not
// nil, is sent as JSON (a []byte or json.RawMessage is sent verbatim).
func (c *Client) call(ctx context.Context, method, path string, query url.Values, in any) ([]byte, error) {
	var body io.Reader
	if in != nil {
		var data []byte
		switch v := in.(type) {
		case []byte:
			data = v
		case json.RawMessage:
			data = v
		default:
			var err error
			if data, err = json.Marshal(in); err != nil {
				return nil, fmt.Errorf("dashboard: %s %s: encoding request: %w", method, path, err)
			}
		}
		body = bytes.NewReader(data)
	}
	callCtx, cancel := ctx, context.CancelFunc(func() {})
	if c.timeout > 0 {
		callCtx, cancel = context.WithTimeout(ctx, c.timeout)
	}
	defer cancel()

	target := c.base + path
	if len(query) > 0 {
		target += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(callCtx, method, target, body)
	if err != nil {
		return nil, fmt.Errorf("dashboard: %s %s: %w", method, path, err)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "raydar")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set(AuthHeader, "Bearer "+c.token)
	}

	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, c.transportError(ctx, callCtx, method, path, err)
	}
	defer resp.Body.Close()

	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		data, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		return nil, newHTTPError(method, path, resp.StatusCode, c.answerText(string(data)))
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBody+1))
	if err != nil {
		return nil, c.transportError(ctx, callCtx, method, path, err)
	}
	if len(data) > maxResponseBody {
		return nil, fmt.Errorf("dashboard: %s %s: response larger than %d bytes", method, path, maxResponseBody)
	}
	return data, nil
}

// callJSON is call plus decoding a JSON answer into out.
func (c *Client) callJSON(ctx context.Context, method, path string, query url.Values, in, out any) error {
	data, err := c.call(ctx, method, path, query, in)
	if err != nil {
		return err
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("dashboard: %s %s: decoding response: %w", method, path, err)
	}
	return nil
}

// transportError classifies a failure to get an answer. A cancelled caller
// context is reported as context.Canceled only: the dashboard may be fine. A
// deadline (the per-call timeout or the caller's) and every network error are
// ErrUnavailable.
func (c *Client) transportError(parent, callCtx context.Context, method, path string, err error) error {
	prefix := "dashboard: " + method + " " + path
	if errors.Is(parent.Err(), context.Canceled) {
		return fmt.Errorf("%s: %w", prefix, context.Canceled)
	}
	if errors.Is(callCtx.Err(), context.DeadlineExceeded) {
		if parent.Err() == nil && c.timeout > 0 {
			return fmt.Errorf("%s: %w: no answer within %s: %w", prefix, ErrUnavailable, c.timeout, context.DeadlineExceeded)
		}
		return fmt.Errorf("%s: %w: %w", prefix, ErrUnavailable, context.DeadlineExceeded)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return fmt.Errorf("%s: %w: %w", prefix, ErrUnavailable, err)
}
