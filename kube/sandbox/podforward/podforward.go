package podforward

import (
	"context"
	"errors"
	"net"
	"net/url"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/raydar/raydar/kube/sandbox/simkit"
	"github.com/raydar/raydar/rayapi/podview"
	"github.com/raydar/raydar/rayapi/status"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// GVR is kwok's PortForward resource (kube/sandbox.PortForwardGVR).
var GVR = schema.GroupVersionResource{Group: "kwok.x-k8s.io", Version: "v1alpha1", Resource: "portforwards"}

// Ports forwarded on a head pod.
const (
	DashboardPort = 8265
	ServePort     = 8000
)

// Heads says where each cluster's simulated head answers
// (headsim.Sim and addrbook.Book).
type Heads interface {
	DashboardURL(namespace, cluster string) (string, bool)
	ServeProxyURL(namespace, cluster string) (string, bool)
}

// Options configure a Writer.
type Options struct {
	Clientset kubernetes.Interface
	Dynamic   dynamic.Interface
	Heads     Heads
	// Namespace restricts the Writer to one namespace; "" watches all.
	Namespace string
	// Interval between looks at every head pod; default 250ms.
	Interval time.Duration
	// Logf receives one line per PortForward written or failing.
	Logf func(format string, args ...any)
}

// Writer keeps the pods' PortForward objects (simkit.PodObjects); Close it when
// done.
type Writer struct{ *simkit.PodObjects }

// Start watches the pods and returns once the watch has synced.
func Start(ctx context.Context, opts Options) (*Writer, error) {
	if opts.Clientset == nil || opts.Dynamic == nil || opts.Heads == nil {
		return nil, errors.New("podforward: need a Clientset, a dynamic client and Heads")
	}
	w, err := simkit.StartPodObjects(ctx, simkit.PodObjectsOptions{
		Name: "podforward", GVR: GVR, Kind: "PortForward",
		Clientset: opts.Clientset, Dynamic: opts.Dynamic, Namespace: opts.Namespace, LabelSelector: rayv1.RayNodeTypeLabelKey + "=" + string(rayv1.HeadNode),
		Desired:  func(pod *corev1.Pod) (map[string]any, bool) { return Desired(pod, opts.Heads) },
		Written:  "ports 8265, 8000 forwarded to its simulated head",
		Interval: opts.Interval, Logf: opts.Logf,
	})
	if err != nil {
		return nil, err
	}
	return &Writer{w}, nil
}

// Desired is the PortForward spec of a head pod, false when it should have
// none written now (not a Running, Ready head; its head not listening yet).
func Desired(pod *corev1.Pod, heads Heads) (map[string]any, bool) {
	cluster := pod.Labels[rayv1.RayClusterLabelKey]
	if cluster == "" || pod.Labels[rayv1.RayNodeTypeLabelKey] != string(rayv1.HeadNode) ||
		pod.DeletionTimestamp != nil || pod.Status.Phase != corev1.PodRunning || !status.PodIsReady(podview.Of(pod)) {
		return nil, false
	}
	var forwards []any
	add := func(port int, at func(ns, cluster string) (string, bool)) {
		raw, ok := at(pod.Namespace, cluster)
		host, p, err := hostPort(raw)
		if !ok || err != nil {
			return
		}
		forwards = append(forwards, map[string]any{
			"ports":  []any{int64(port)},
			"target": map[string]any{"address": host, "port": int64(p)},
		})
	}
	add(DashboardPort, heads.DashboardURL)
	add(ServePort, heads.ServeProxyURL)
	if len(forwards) == 0 {
		return nil, false
	}
	return map[string]any{"forwards": forwards}, true
}

// hostPort reads "http://127.0.0.1:41234".
func hostPort(raw string) (string, int, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", 0, err
	}
	h, p, err := net.SplitHostPort(u.Host)
	if err != nil {
		return "", 0, err
	}
	n, err := strconv.Atoi(p)
	return h, n, err
}
