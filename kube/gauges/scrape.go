package gauges

import (
	"context"
	"errors"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/raydar/raydar/rayapi/podview"
	"github.com/raydar/raydar/rayapi/raymetrics"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// Reason says why a pod's gauges are unknown.
type Reason string

// Reasons.
const (
	// NoPort: the pod declares no container port named "metrics".
	NoPort Reason = "metrics port absent"
	// Forbidden: the API server refused the pod proxy (403: no get on
	// pods/proxy); not asked again for the Poller's ForbiddenBackoff.
	Forbidden Reason = "proxy forbidden"
	// NotReporting: the port does not answer yet, or answers without node
	// gauges for the pod's IP (Ray's agent writes its first record a few
	// seconds after it starts).
	NotReporting Reason = "not yet reporting"
	// NotRunning: the pod has no IP or is not Running.
	NotRunning Reason = "pod not running"
	// Unreachable: anything else (a timeout, a proxy error, a body that is
	// no exposition or above the cap); Detail says what.
	Unreachable Reason = "unreachable"
)

// DefaultTimeout bounds one pod's request.
const DefaultTimeout = 5 * time.Second

// PodGauges is what one scrape of one Ray pod said.
type PodGauges struct {
	Pod   string
	IP    string
	Group string // ray.io/group
	Head  bool
	// Node is the pod's node gauges; nil when Reason says why not.
	Node   *raymetrics.Node
	Reason Reason
	Detail string // the error behind Reason, "" for none
	// ObjectStoreBytes (in memory), Serve and the logical resources are the
	// response's (the pod's raylet, workers and Serve proxy).
	ObjectStoreBytes float64
	HasObjectStore   bool
	Serve            raymetrics.Serve
	Resources        map[string]raymetrics.ResourceUse
	At               time.Time
}

// Known reports whether the pod's node gauges were read.
func (g PodGauges) Known() bool { return g.Node != nil }

// ScrapeOptions configure ScrapeCluster.
type ScrapeOptions struct {
	Fetcher  Fetcher
	MaxBytes int64         // per response; default raymetrics.DefaultMaxBytes
	Timeout  time.Duration // per request; default DefaultTimeout
	// Slots bounds the requests in flight (shared by every cluster of a
	// Poller); nil: at most 4 for this call.
	Slots chan struct{}
	Now   func() time.Time
}

// ScrapeCluster reads the gauges of a cluster's pods (one exposition per
// pod), sorted by pod name. The head is read first and alone: when the API
// server forbids the proxy there, no other pod is asked and every pod says
// Forbidden (forbidden is true).
func ScrapeCluster(ctx context.Context, o ScrapeOptions, pods []*podview.Pod) (out []PodGauges, forbidden bool) {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Slots == nil {
		o.Slots = make(chan struct{}, 4)
	}
	pods = append([]*podview.Pod(nil), pods...)
	sort.SliceStable(pods, func(a, b int) bool { // head first, then by name
		ha, hb := isHead(pods[a]), isHead(pods[b])
		if ha != hb {
			return ha
		}
		return pods[a].Name < pods[b].Name
	})
	out = make([]PodGauges, len(pods))
	first := -1
	for i, p := range pods {
		if _, ok := MetricsPort(p); ok && running(p) {
			first = i
			break
		}
	}
	if first >= 0 {
		out[first] = scrapeOne(ctx, o, pods[first])
		if out[first].Reason == Forbidden {
			detail := out[first].Detail
			for i, p := range pods {
				out[i] = base(p, o.Now())
				out[i].Reason, out[i].Detail = Forbidden, detail
			}
			sort.Slice(out, func(a, b int) bool { return out[a].Pod < out[b].Pod })
			return out, true
		}
	}
	var wg sync.WaitGroup
	for i, p := range pods {
		if i == first {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = scrapeOne(ctx, o, p)
		}()
	}
	wg.Wait()
	sort.Slice(out, func(a, b int) bool { return out[a].Pod < out[b].Pod })
	return out, false
}

func isHead(p *podview.Pod) bool {
	return p.Labels[rayv1.RayNodeTypeLabelKey] == string(rayv1.HeadNode)
}

func running(p *podview.Pod) bool { return p.Status.Phase == corev1.PodRunning && p.Status.PodIP != "" }

func base(p *podview.Pod, now time.Time) PodGauges {
	return PodGauges{Pod: p.Name, IP: p.Status.PodIP, Group: p.Labels[rayv1.RayNodeGroupLabelKey], Head: isHead(p), At: now}
}

// scrapeOne reads one pod, waiting for a slot.
func scrapeOne(ctx context.Context, o ScrapeOptions, p *podview.Pod) PodGauges {
	g := base(p, o.Now())
	port, ok := MetricsPort(p)
	if !ok {
		g.Reason = NoPort
		return g
	}
	if !running(p) {
		g.Reason = NotRunning
		return g
	}
	select {
	case o.Slots <- struct{}{}:
	case <-ctx.Done():
		g.Reason, g.Detail = Unreachable, ctx.Err().Error()
		return g
	}
	defer func() { <-o.Slots }()
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	body, err := o.Fetcher.Fetch(rctx, p, port)
	if err != nil {
		g.Reason, g.Detail = classify(err), shortErr(err)
		return g
	}
	defer body.Close()
	e, err := raymetrics.Parse(body, o.MaxBytes)
	g.At = o.Now()
	if err != nil {
		g.Reason, g.Detail = Unreachable, shortErr(err)
		return g
	}
	g.ObjectStoreBytes, g.HasObjectStore = e.ObjectStoreBytes, e.HasObjectStore
	g.Serve, g.Resources = e.Serve, e.Resources
	n, ok := e.Node(p.Status.PodIP)
	if !ok {
		g.Reason = NotReporting
		if len(e.Nodes) > 0 {
			ips := make([]string, 0, len(e.Nodes))
			for ip := range e.Nodes {
				ips = append(ips, ip)
			}
			sort.Strings(ips)
			g.Detail = "node gauges for " + strings.Join(ips, ", ") + ", none for the pod's IP " + p.Status.PodIP
		}
		return g
	}
	g.Node = n
	return g
}

// classify maps a fetch error to its Reason.
func classify(err error) Reason {
	var hs *httpStatusError
	switch {
	case apierrors.IsForbidden(err), errors.As(err, &hs) && hs.code == 403:
		return Forbidden
	case errors.Is(err, errNoHead), errors.Is(err, syscall.ECONNREFUSED),
		apierrors.IsServiceUnavailable(err), errors.As(err, &hs) && hs.code == 503:
		// The API server answers 503 when nothing listens on the pod's port
		// yet; a simulated head that is not up refuses the connection.
		return NotReporting
	}
	return Unreachable
}

func shortErr(err error) string {
	var st apierrors.APIStatus
	if errors.As(err, &st) {
		if m := st.Status().Message; m != "" {
			return m
		}
	}
	return err.Error()
}
