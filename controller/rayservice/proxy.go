package rayservice

import (
	"context"
	"fmt"
	"net"
	"strconv"

	"github.com/raydar/raydar/controller/kit"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/raydar/raydar/rayapi/dashboard"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// ServeProxyChecker checks the Ray Serve HTTP proxy of one Ray pod
// (GET :8000/-/healthz). It returns nil when the proxy is healthy. The
// RayService reconciler keeps a pod's ray.io/serve label "true" only while
// its proxy passes this check.
type ServeProxyChecker interface {
	CheckServeProxy(ctx context.Context, cluster *rayv1.RayCluster, pod *corev1.Pod) error
}

// ServeProxyCheckerFunc adapts a function.
type ServeProxyCheckerFunc func(ctx context.Context, cluster *rayv1.RayCluster, pod *corev1.Pod) error

// CheckServeProxy implements ServeProxyChecker.
func (f ServeProxyCheckerFunc) CheckServeProxy(ctx context.Context, rc *rayv1.RayCluster, pod *corev1.Pod) error {
	return f(ctx, rc, pod)
}

// ServeProxyAddressBook maps a RayCluster to the base URL of its Serve
// proxy where pods have no routable address of their own. The sandbox's
// simulated heads (kube/sandbox/headsim) listen on loopback; the sandbox
// can implement this with its heads' ProxyURL.
type ServeProxyAddressBook interface {
	// ServeProxyURL returns the Serve proxy's base URL
	// ("http://127.0.0.1:41235") of the RayCluster namespace/name, and false
	// while it has none.
	ServeProxyURL(namespace, cluster string) (string, bool)
}

// ServeProxyCheckerFromAddressBook checks every pod of a cluster against
// the one proxy address the book gives for the cluster: in the sandbox a
// worker's proxy answers like its head's (Serve's proxy_location
// EveryNode).
func ServeProxyCheckerFromAddressBook(book ServeProxyAddressBook) ServeProxyChecker {
	return ServeProxyCheckerFunc(func(ctx context.Context, rc *rayv1.RayCluster, pod *corev1.Pod) error {
		u, ok := book.ServeProxyURL(rc.Namespace, rc.Name)
		if !ok {
			return fmt.Errorf("no Serve proxy address for RayCluster %s/%s: %w", rc.Namespace, rc.Name, dashboard.ErrUnavailable)
		}
		return dashboard.ProxyHealthy(ctx, u)
	})
}

// PodIPServeProxyChecker checks http://<pod IP>:<serve port>/-/healthz,
// which works where pod IPs are routable (raydar running in the cluster).
func PodIPServeProxyChecker() ServeProxyChecker {
	return ServeProxyCheckerFunc(func(ctx context.Context, rc *rayv1.RayCluster, pod *corev1.Pod) error {
		if pod.Status.PodIP == "" {
			return fmt.Errorf("pod %s has no IP yet: %w", pod.Name, dashboard.ErrUnavailable)
		}
		return dashboard.ProxyHealthy(ctx, "http://"+net.JoinHostPort(pod.Status.PodIP, strconv.Itoa(int(podServePort(pod)))))
	})
}

// APIServerServeProxyChecker reaches the proxy through the API server's pod
// proxy (pods/proxy), for raydar running outside the cluster.
func APIServerServeProxyChecker(cs kubernetes.Interface) ServeProxyChecker {
	return ServeProxyCheckerFunc(func(ctx context.Context, rc *rayv1.RayCluster, pod *corev1.Pod) error {
		ctx, cancel := context.WithTimeout(ctx, dashboard.DefaultProxyTimeout)
		defer cancel()
		_, err := cs.CoreV1().Pods(pod.Namespace).ProxyGet("http", pod.Name, strconv.Itoa(int(podServePort(pod))), dashboard.ProxyHealthPath, nil).DoRaw(ctx)
		return err
	})
}

// podServePort is the pod's Ray container port named "serve", else 8000.
func podServePort(pod *corev1.Pod) int32 {
	if p, ok := kit.ContainerPort(pod.Spec, rayv1.ServingPortName); ok {
		return p
	}
	return rayv1.DefaultServingPort
}
