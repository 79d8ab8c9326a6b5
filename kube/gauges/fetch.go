package gauges

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/raydar/raydar/rayapi/podview"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// Fetcher opens the body of one Ray pod's metrics endpoint. It only reads
// (GET). Errors from the API server are its typed errors (apierrors), so a
// 403 is recognised as forbidden.
type Fetcher interface {
	Fetch(ctx context.Context, pod *podview.Pod, port int32) (io.ReadCloser, error)
}

// MetricsPort is the pod's Ray container port named "metrics"; false when
// the pod declares none (an operator that is not KubeRay's or raydar's, or a
// template that removed it): raydar does not guess a port.
func MetricsPort(pod *podview.Pod) (int32, bool) {
	for _, c := range pod.Spec.Containers {
		for _, p := range c.Ports {
			if p.Name == rayv1.MetricsPortName && p.ContainerPort > 0 {
				return p.ContainerPort, true
			}
		}
	}
	return 0, false
}

// PodProxy reads through the API server's pod proxy:
// GET /api/v1/namespaces/NS/pods/NAME:PORT/proxy/metrics. It needs the verb
// get on pods/proxy.
type PodProxy struct {
	Client kubernetes.Interface
}

// Fetch implements Fetcher.
func (p PodProxy) Fetch(ctx context.Context, pod *podview.Pod, port int32) (io.ReadCloser, error) {
	return p.Client.CoreV1().RESTClient().Get().
		Namespace(pod.Namespace).Resource("pods").
		Name(pod.Name + ":" + strconv.Itoa(int(port))).
		SubResource("proxy").Suffix("metrics").
		Stream(ctx)
}

// MetricsBook says where a cluster's simulated nodes serve their metrics
// (kube/raydash/addrbook.Book in a sandbox): a base URL under which
// BASE/<pod IP>/metrics is that node's exposition.
type MetricsBook interface {
	MetricsURL(namespace, cluster string) (string, bool)
}

// BookFetcher reads the sandbox's simulated Ray nodes: kwok's pod IPs route
// nowhere and the API server refuses to proxy to loopback, so the pod proxy
// cannot reach them (kube/raydash/addrbook's doc).
type BookFetcher struct {
	Book MetricsBook
	HTTP *http.Client // default: a client with a 5 s timeout
}

// errNoHead: the book has no simulated head for the cluster (yet).
var errNoHead = errors.New("no simulated head for the cluster")

// Fetch implements Fetcher.
func (b BookFetcher) Fetch(ctx context.Context, pod *podview.Pod, _ int32) (io.ReadCloser, error) {
	base, ok := b.Book.MetricsURL(pod.Namespace, pod.Labels[rayv1.RayClusterLabelKey])
	if !ok {
		return nil, errNoHead
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/"+pod.Status.PodIP+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	hc := b.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: 5 * time.Second}
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, &httpStatusError{code: resp.StatusCode}
	}
	return resp.Body, nil
}

type httpStatusError struct{ code int }

func (e *httpStatusError) Error() string {
	return fmt.Sprintf("HTTP %d %s", e.code, http.StatusText(e.code))
}
