package conformance

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// HeadBook says where the simulated head of a RayCluster answers
// (kube/sandbox/headsim.Sim).
type HeadBook interface {
	DashboardURL(namespace, name string) (string, bool)
	ServeProxyURL(namespace, name string) (string, bool)
}

// HeadProxy is an HTTP forward proxy for KubeRay's operator. KubeRay calls
// the dashboard at http://<head Service>.<namespace>.svc.<domain>:8265 and
// Serve's proxy at http://<pod IP>:8000; neither exists on the host. KubeRay
// is started with HTTP_PROXY pointing here, and each request goes to the
// simulated head of the cluster the Service selects or the pod belongs to:
// the same head raydar's loop talks to through headsim's address book.
type HeadProxy struct {
	Clientset kubernetes.Interface
	Heads     HeadBook

	srv *http.Server
	ln  net.Listener
}

// Start listens on a free loopback port.
func (p *HeadProxy) Start() error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	p.ln = ln
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = p.srv.Serve(ln) }()
	return nil
}

// URL is the value for HTTP_PROXY.
func (p *HeadProxy) URL() string { return "http://" + p.ln.Addr().String() }

// Close stops the proxy.
func (p *HeadProxy) Close() error { return p.srv.Close() }

func (p *HeadProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodConnect || !r.URL.IsAbs() {
		http.Error(w, "conformance head proxy: only plain http:// requests are forwarded", http.StatusBadRequest)
		return
	}
	target, err := p.resolve(r.Context(), r.URL.Hostname())
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	u, err := url.Parse(target)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	rp := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		pr.SetURL(u)
		pr.Out.URL.Path = r.URL.Path
		pr.Out.URL.RawPath = r.URL.RawPath
	}}
	rp.ServeHTTP(w, r)
}

// resolve maps an in-cluster host to a simulated head's URL.
func (p *HeadProxy) resolve(ctx context.Context, host string) (string, error) {
	ns, cluster, err := p.clusterOf(ctx, host)
	if err != nil {
		return "", err
	}
	// KubeRay calls pods only for Serve's proxy health (on whatever serve
	// port the head declares) and Services only for the dashboard.
	var u string
	var ok bool
	if net.ParseIP(host) != nil {
		u, ok = p.Heads.ServeProxyURL(ns, cluster)
	} else {
		u, ok = p.Heads.DashboardURL(ns, cluster)
	}
	if !ok {
		return "", fmt.Errorf("RayCluster %s/%s has no simulated head (yet)", ns, cluster)
	}
	return u, nil
}

// clusterOf finds the RayCluster behind a Service DNS name or a pod IP.
func (p *HeadProxy) clusterOf(ctx context.Context, host string) (namespace, cluster string, err error) {
	if net.ParseIP(host) != nil {
		pods, err := p.Clientset.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("status.podIP", host).String()})
		if err != nil {
			return "", "", err
		}
		for _, pod := range pods.Items {
			if c := pod.Labels[rayv1.RayClusterLabelKey]; c != "" {
				return pod.Namespace, c, nil
			}
		}
		return "", "", fmt.Errorf("no Ray pod has IP %s", host)
	}
	parts := strings.Split(host, ".")
	if len(parts) < 3 || parts[2] != "svc" {
		return "", "", fmt.Errorf("%s is not a Service DNS name", host)
	}
	svc, err := p.Clientset.CoreV1().Services(parts[1]).Get(ctx, parts[0], metav1.GetOptions{})
	if err != nil {
		return "", "", err
	}
	c := svc.Spec.Selector[rayv1.RayClusterLabelKey]
	if c == "" {
		return "", "", fmt.Errorf("Service %s/%s selects no RayCluster", parts[1], parts[0])
	}
	return parts[1], c, nil
}
