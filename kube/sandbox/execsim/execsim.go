package execsim

import (
	"context"
	"errors"
	"fmt"
	"reflect"
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
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// GVR is kwok's Exec resource (kube/sandbox.ExecGVR).
var GVR = schema.GroupVersionResource{Group: "kwok.x-k8s.io", Version: "v1alpha1", Resource: "execs"}

// Environment of an exec into a simulated Ray container.
const (
	// DashboardEnv is the URL of the cluster's simulated head's dashboard,
	// where Ray answers `ray status`; absent while no head answers.
	DashboardEnv = "RAYDAR_SANDBOX_DASHBOARD"
	// PodEnv is the pod, namespace/name.
	PodEnv = "RAYDAR_SANDBOX_POD"
	// ClusterNameEnv is the RayCluster's name, as KubeRay sets it in every
	// Ray container (ray-operator/controllers/ray/common/pod.go:1235 of v1.7.0).
	ClusterNameEnv = "RAY_CLUSTER_NAME"
	// ClusterNamespaceEnv is its namespace (pod.go:1246).
	ClusterNamespaceEnv = "RAY_CLUSTER_NAMESPACE"
)

// Heads says where each cluster's simulated head answers (headsim.Sim and
// addrbook.Book).
type Heads interface {
	DashboardURL(namespace, cluster string) (string, bool)
}

// Options configure a Writer.
type Options struct {
	Clientset kubernetes.Interface
	Dynamic   dynamic.Interface
	Heads     Heads
	// Home is the working directory and HOME of the execs
	// (kube/sandbox.Sandbox.ExecHome).
	Home string
	// Namespace restricts the Writer to one namespace; "" watches all.
	Namespace string
	// Interval between looks at every pod; default 250ms.
	Interval time.Duration
	// Logf receives one line per Exec written or failing.
	Logf func(format string, args ...any)
}

// Writer keeps the Ray pods' Exec objects; Close it when done.
type Writer struct {
	opts Options
	pods toolscache.SharedIndexInformer
	kick chan struct{}
	run  *simkit.Loop

	mu      sync.Mutex
	written map[string]map[string]any // namespace/pod/uid -> spec last written
}

// Start watches Ray pods and returns once the watch has synced.
func Start(ctx context.Context, opts Options) (*Writer, error) {
	if opts.Clientset == nil || opts.Dynamic == nil || opts.Heads == nil || opts.Home == "" {
		return nil, errors.New("execsim: need a Clientset, a dynamic client, Heads and Home")
	}
	if opts.Interval <= 0 {
		opts.Interval = 250 * time.Millisecond
	}
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	w := &Writer{opts: opts, kick: make(chan struct{}, 1), written: map[string]map[string]any{}}
	w.pods = coreinformers.NewFilteredPodInformer(opts.Clientset, opts.Namespace, 0, toolscache.Indexers{}, func(lo *metav1.ListOptions) {
		lo.LabelSelector = rayv1.RayClusterLabelKey
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
	w.run = simkit.NewLoop(context.Background(), "execsim", opts.Logf)
	if !w.run.Watch(ctx, w.pods) {
		w.Close()
		return nil, errors.New("execsim: the Ray pod watch did not sync")
	}
	w.run.Go(func() { w.loop(w.run.Context()) })
	return w, nil
}

// Close stops the Writer; the objects it wrote stay until their pods go.
func (w *Writer) Close() { w.run.Stop() }

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
			spec, ok := Desired(pod, w.opts.Heads, w.opts.Home)
			if !ok {
				continue
			}
			if err := w.apply(ctx, pod, spec); err != nil && ctx.Err() == nil {
				w.opts.Logf("execsim: %s/%s: %v", pod.Namespace, pod.Name, err)
			}
		}
		w.forget(seen)
	}
}

// Desired is the Exec spec of a Ray pod, false when it should have none
// written now (not running, or being deleted).
func Desired(pod *corev1.Pod, heads Heads, home string) (map[string]any, bool) {
	cluster := pod.Labels[rayv1.RayClusterLabelKey]
	if cluster == "" || pod.DeletionTimestamp != nil || pod.Status.Phase != corev1.PodRunning {
		return nil, false
	}
	env := []any{
		envVar("HOME", home),
		envVar("HOSTNAME", pod.Name),
		envVar(ClusterNameEnv, cluster),
		envVar(ClusterNamespaceEnv, pod.Namespace),
		envVar(PodEnv, pod.Namespace+"/"+pod.Name),
	}
	if url, ok := heads.DashboardURL(pod.Namespace, cluster); ok {
		env = append(env, envVar(DashboardEnv, url))
	}
	return map[string]any{"execs": []any{map[string]any{
		"local": map[string]any{"workDir": home, "envs": env},
	}}}, true
}

func envVar(name, value string) map[string]any {
	return map[string]any{"name": name, "value": value}
}

// apply creates or updates the pod's Exec when spec differs from what was
// last written.
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
		"kind":       "Exec",
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
		return fmt.Errorf("writing Exec: %w", err)
	}
	w.mu.Lock()
	w.written[key] = spec
	w.mu.Unlock()
	w.opts.Logf("execsim: %s/%s: exec runs here, in %s", pod.Namespace, pod.Name, w.opts.Home)
	return nil
}

func writtenKey(pod *corev1.Pod) string {
	return pod.Namespace + "/" + pod.Name + "/" + string(pod.UID)
}

// forget drops what was written for pods no longer seen.
func (w *Writer) forget(seen map[string]bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for k := range w.written {
		if !seen[k] {
			delete(w.written, k)
		}
	}
}
