package podforward

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"reflect"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	toolscache "k8s.io/client-go/tools/cache"

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

// Writer keeps the head pods' PortForward objects; Close it when done.
type Writer struct {
	opts Options
	pods toolscache.SharedIndexInformer
	kick chan struct{}
	run  *simkit.Loop

	mu      sync.Mutex
	written map[string]map[string]any // namespace/pod -> spec last written
}

// Start watches head pods and returns once the watch has synced.
func Start(ctx context.Context, opts Options) (*Writer, error) {
	if opts.Clientset == nil || opts.Dynamic == nil || opts.Heads == nil {
		return nil, errors.New("podforward: need a Clientset, a dynamic client and Heads")
	}
	if opts.Interval <= 0 {
		opts.Interval = 250 * time.Millisecond
	}
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	w := &Writer{opts: opts, kick: make(chan struct{}, 1), written: map[string]map[string]any{}}
	w.pods = coreinformers.NewFilteredPodInformer(opts.Clientset, opts.Namespace, 0, toolscache.Indexers{}, func(lo *metav1.ListOptions) {
		lo.LabelSelector = rayv1.RayNodeTypeLabelKey + "=" + string(rayv1.HeadNode)
	})
	kick := func(any) {
		select {
		case w.kick <- struct{}{}:
		default:
		}
	}
	if _, err := w.pods.AddEventHandler(simkit.OnEvent(kick)); err != nil {
		return nil, err
	}
	w.run = simkit.NewLoop(context.Background(), "podforward", opts.Logf)
	if !w.run.Watch(ctx, w.pods) {
		w.Close()
		return nil, errors.New("podforward: the head pod watch did not sync")
	}
	w.run.Go(func() { w.loop(w.run.Context()) })
	return w, nil
}

// Close stops the Writer; the objects it wrote stay until their pods go.
func (w *Writer) Close() {
	w.run.Stop()
}

func (w *Writer) loop(ctx context.Context) {
	t := time.NewTicker(w.opts.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.kick:
		case <-t.C:
		}
		seen := map[string]bool{}
		for _, obj := range w.pods.GetStore().List() {
			pod := obj.(*corev1.Pod)
			seen[writtenKey(pod)] = true
			spec, ok := Desired(pod, w.opts.Heads)
			if !ok {
				continue
			}
			if err := w.apply(ctx, pod, spec); err != nil && ctx.Err() == nil {
				w.opts.Logf("podforward: %s/%s: %v", pod.Namespace, pod.Name, err)
			}
		}
		w.forget(seen)
	}
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

// apply creates or updates the pod's PortForward when spec differs from what
// was last written.
func (w *Writer) apply(ctx context.Context, pod *corev1.Pod, spec map[string]any) error {
	key := writtenKey(pod)
	w.mu.Lock()
	same := reflect.DeepEqual(w.written[key], spec)
	w.mu.Unlock()
	if same {
		return nil
	}
	res := w.opts.Dynamic.Resource(GVR).Namespace(pod.Namespace)
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": GVR.GroupVersion().String(),
		"kind":       "PortForward",
		"metadata": map[string]any{
			"name":      pod.Name,
			"namespace": pod.Namespace,
			"ownerReferences": []any{map[string]any{
				"apiVersion": "v1", "kind": "Pod", "name": pod.Name, "uid": string(pod.UID),
			}},
		},
		"spec": spec,
	}}
	cur, err := res.Get(ctx, pod.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		_, err = res.Create(ctx, obj, metav1.CreateOptions{})
	case err == nil:
		obj.SetResourceVersion(cur.GetResourceVersion())
		_, err = res.Update(ctx, obj, metav1.UpdateOptions{})
	}
	if err != nil {
		return fmt.Errorf("writing PortForward: %w", err)
	}
	w.mu.Lock()
	w.written[key] = spec
	w.mu.Unlock()
	w.opts.Logf("podforward: %s/%s: ports 8265, 8000 forwarded to its simulated head", pod.Namespace, pod.Name)
	return nil
}

func writtenKey(pod *corev1.Pod) string {
	return pod.Namespace + "/" + pod.Name + "/" + string(pod.UID)
}

// forget drops what was written for pods no longer seen: the garbage
// collector removes their objects.
func (w *Writer) forget(seen map[string]bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for k := range w.written {
		if !seen[k] {
			delete(w.written, k)
		}
	}
}
