package headsim

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/raydar/raydar/kube/raydash"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// Where a stand-in submitter's addresses lead: what a pod's network would
// do with them, on the simulated heads.

// place is where a stand-in submitter runs.
type place struct {
	namespace string
	// sidecarOf is, in SidecarMode, the cluster whose head pod the
	// submitter runs in (it shares the pod's network: 127.0.0.1 is the
	// head); zero in K8sJobMode (127.0.0.1 is the submitter pod itself).
	sidecarOf types.NamespacedName
	dashPort  int // SidecarMode: the head container's dashboard port
}

// endpoint is an address resolved to a simulated head.
type endpoint struct {
	url     string // the head's counting front
	token   string // the token the head requires, "" for none
	cluster types.NamespacedName
}

// errUnreachable: nothing answers at the address (a name that does not
// resolve, a port nothing listens on, a Service without a Ready head).
var errUnreachable = errors.New("connection refused")

// splitURL reads an http URL's host and port (80 by default, as urllib
// and requests use).
func splitURL(raw string) (host string, port int, path string, err error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", 0, "", err
	}
	if u.Scheme != "http" {
		return "", 0, "", fmt.Errorf("scheme %q: the simulated heads serve plain http", u.Scheme)
	}
	port = 80
	if p := u.Port(); p != "" {
		if port, err = strconv.Atoi(p); err != nil {
			return "", 0, "", err
		}
	}
	return u.Hostname(), port, u.Path, nil
}

// resolve finds the simulated head answering at host:port for a submitter
// in p: loopback is the submitter's own pod (the head, for a sidecar);
// an IP is a head pod's IP or a Service's cluster IP; a name is a Service
// (<svc>, <svc>.<ns>, <svc>.<ns>.svc[.<domain>]). A Service leads to the
// head of the cluster its selector (or label) ray.io/cluster names, on the
// Service port whose target is the head's dashboard port.
func (s *Sim) resolve(ctx context.Context, p place, host string, port int) (endpoint, error) {
	if ip := net.ParseIP(host); host == "localhost" || ip != nil && ip.IsLoopback() {
		if p.sidecarOf.Name != "" && port == p.dashPort {
			return s.endpointOf(p.sidecarOf)
		}
		return endpoint{}, errUnreachable
	}
	if net.ParseIP(host) != nil {
		for _, obj := range s.pods.GetStore().List() {
			pod := obj.(*corev1.Pod)
			if pod.Status.PodIP == host && pod.Labels[rayv1.RayClusterLabelKey] != "" {
				cluster := types.NamespacedName{Namespace: pod.Namespace, Name: pod.Labels[rayv1.RayClusterLabelKey]}
				if dp, err := s.dashboardPort(ctx, cluster); err != nil || dp != port {
					return endpoint{}, errUnreachable
				}
				return s.endpointOf(cluster)
			}
		}
		svcs, err := s.cs.CoreV1().Services(s.opts.Namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return endpoint{}, err
		}
		for i := range svcs.Items {
			if svcs.Items[i].Spec.ClusterIP == host {
				return s.viaService(ctx, &svcs.Items[i], port)
			}
		}
		return endpoint{}, errUnreachable
	}
	parts := strings.Split(host, ".")
	ns := p.namespace
	if len(parts) >= 2 {
		ns = parts[1]
	}
	if len(parts) >= 3 && parts[2] != "svc" {
		return endpoint{}, errUnreachable // not a Service's name
	}
	svc, err := s.cs.CoreV1().Services(ns).Get(ctx, parts[0], metav1.GetOptions{})
	if err != nil {
		return endpoint{}, errUnreachable
	}
	return s.viaService(ctx, svc, port)
}

func (s *Sim) viaService(ctx context.Context, svc *corev1.Service, port int) (endpoint, error) {
	name := svc.Spec.Selector[rayv1.RayClusterLabelKey]
	if name == "" {
		name = svc.Labels[rayv1.RayClusterLabelKey]
	}
	if name == "" {
		return endpoint{}, errUnreachable
	}
	cluster := types.NamespacedName{Namespace: svc.Namespace, Name: name}
	dp, err := s.dashboardPort(ctx, cluster)
	if err != nil {
		return endpoint{}, errUnreachable
	}
	for _, sp := range svc.Spec.Ports {
		if int(sp.Port) != port {
			continue
		}
		switch t := sp.TargetPort; {
		case t.Type == intstr.String && t.StrVal == rayv1.DashboardPortName:
		case t.Type == intstr.Int && t.IntVal == 0 && port == dp:
		case t.Type == intstr.Int && int(t.IntVal) == dp:
		default:
			return endpoint{}, errUnreachable
		}
		return s.endpointOf(cluster)
	}
	return endpoint{}, errUnreachable
}

// dashboardPort is the cluster's dashboard port.
func (s *Sim) dashboardPort(ctx context.Context, cluster types.NamespacedName) (int, error) {
	rc := &rayv1.RayCluster{}
	if err := s.cl.Get(ctx, cluster, rc); err != nil {
		return 0, err
	}
	return dashboardPortOf(rc), nil
}

// dashboardPortOf is the Ray head container's port named "dashboard", else
// what the cluster's status reports, else 8265.
func dashboardPortOf(rc *rayv1.RayCluster) int {
	if cs := rc.Spec.HeadGroupSpec.Template.Spec.Containers; len(cs) > rayv1.RayContainerIndex {
		for _, p := range cs[rayv1.RayContainerIndex].Ports {
			if p.Name == rayv1.DashboardPortName && p.ContainerPort > 0 {
				return int(p.ContainerPort)
			}
		}
	}
	return int(raydash.DashboardPort(rc))
}

// endpointOf is the cluster's current head, unreachable while it has none.
func (s *Sim) endpointOf(cluster types.NamespacedName) (endpoint, error) {
	s.mu.Lock()
	h, ok := s.byClust[cluster]
	s.mu.Unlock()
	if !ok {
		return endpoint{}, errUnreachable
	}
	return endpoint{url: h.front.URL(), token: h.token, cluster: cluster}, nil
}
