package dashboard

import (
	"context"
	"fmt"
	"net/http"
	"strings"
)

// CheckGCSHealth asks the dashboard whether the head's GCS is healthy (GET
// /api/gcs_healthz, 200 with "success"). It returns nil when healthy.
func (c *Client) CheckGCSHealth(ctx context.Context) error {
	body, err := c.call(ctx, http.MethodGet, GCSHealthPath, nil, nil)
	if err != nil {
		return err
	}
	if !strings.Contains(string(body), HealthyBody) {
		return fmt.Errorf("dashboard: GET /api/gcs_healthz: %w: answer %q has no \"success\"", ErrUnavailable, summarizeBody(c.answerText(string(body))))
	}
	return nil
}

// proxyHTTPClient is separate from any Client's transport on purpose: a
// Client may carry API-server credentials, which must never be sent to a pod
// IP.
var proxyHTTPClient = &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}

// ProxyHealthy checks a Ray Serve HTTP proxy: GET <proxyURL>/-/healthz must
// answer 200. proxyURL is the proxy's base URL ("http://10.0.0.7:8000", or
// "10.0.0.7:8000") or the full health URL. It returns nil when healthy,
// otherwise an error classified like the Client's (ErrUnavailable, an
// *HTTPError, …). Without a deadline in ctx the check is bounded by
// DefaultTimeout. No token is sent: the proxy does not check one.
func ProxyHealthy(ctx context.Context, proxyURL string) error {
	base, err := normalizeBaseURL(proxyURL)
	if err != nil {
		return err
	}
	path := ProxyHealthPath
	if strings.HasSuffix(base, ProxyHealthPath) {
		base, path = strings.TrimSuffix(base, ProxyHealthPath), ProxyHealthPath
	}
	c := &Client{base: base, hc: proxyHTTPClient}
	if _, ok := ctx.Deadline(); !ok {
		c.timeout = DefaultTimeout
	}
	_, err = c.call(ctx, http.MethodGet, path, nil, nil)
	return err
}
