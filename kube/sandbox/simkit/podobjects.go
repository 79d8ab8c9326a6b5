package simkit

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
)

// PodObjectsOptions configure a PodObjects writer.
type PodObjectsOptions struct {
	// Name prefixes its log lines and errors ("podforward", "execsim").
	Name string
	// GVR and Kind are the kwok object written per pod, named after it
	// and owned by it (the garbage collector removes it with the pod).
	GVR  schema.GroupVersionResource
	Kind string
	// Clientset watches the pods LabelSelector selects in Namespace ("":
	// all); Dynamic writes the objects.
	Clientset     kubernetes.Interface
	Dynamic       dynamic.Interface
	Namespace     string
	LabelSelector string
	// Desired is a pod's object spec, false for none written now.
	Desired func(pod *corev1.Pod) (spec map[string]any, ok bool)
	// Written is said (after "NAME: ns/pod: ") when an object is written.
	Written string
	// Interval between looks at every pod; default 250ms.
	Interval time.Duration
	// Logf receives one line per object written or failing.
	Logf func(format string, args ...any)
}

// PodObjects keeps one kwok object per pod (a PortForward, an Exec) at its
// Desired spec, writing it only when that spec changes; Close it when done.
type PodObjects struct {
	opts PodObjectsOptions
	pods toolscache.SharedIndexInformer
	kick chan struct{}
	run  *Loop

	mu      sync.Mutex
	written map[string]map[string]any // namespace/pod/uid -> spec last written
}

// StartPodObjects watches the pods and returns once the watch has synced.
func StartPodObjects(ctx context.Context, opts PodObjectsOptions) (*PodObjects, error) {
	if opts.Clientset == nil || opts.Dynamic == nil || opts.Desired == nil {
		return nil, errors.New(opts.Name + ": need a Clientset, a dynamic client and Desired")
	}
	if opts.Interval <= 0 {
		opts.Interval = 250 * time.Millisecond
	}
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	w := &PodObjects{opts: opts, kick: make(chan struct{}, 1), written: map[string]map[string]any{}}
	w.pods = coreinformers.NewFilteredPodInformer(opts.Clientset, opts.Namespace, 0, toolscache.Indexers{}, func(lo *metav1.ListOptions) {
		lo.LabelSelector = opts.LabelSelector
	})
	kick := func(any) {
		select {
		case w.kick <- struct{}{}:
		default:
		}
	}
	if _, err := w.pods.AddEventHandler(OnEvent(kick)); err != nil {
		return nil, err
	}
	w.run = NewLoop(context.Background(), opts.Name, opts.Logf)
	if !w.run.Watch(ctx, w.pods) {
		w.Close()
		return nil, errors.New(opts.Name + ": the pod watch did not sync")
	}
	w.run.Go(func() { w.loop(w.run.Context()) })
	return w, nil
}

// Close stops the writer; the objects it wrote stay until their pods go.
func (w *PodObjects) Close() { w.run.Stop() }

func (w *PodObjects) loop(ctx context.Context) {
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
			spec, ok := w.opts.Desired(pod)
			if !ok {
				continue
			}
			if err := w.apply(ctx, pod, spec); err != nil && ctx.Err() == nil {
				w.opts.Logf("%s: %s/%s: %v", w.opts.Name, pod.Namespace, pod.Name, err)
			}
		}
		w.forget(seen)
	}
}

// apply creates or updates the pod's object when spec differs from what
// was last written.
func (w *PodObjects) apply(ctx context.Context, pod *corev1.Pod, spec map[string]any) error {
	key := writtenKey(pod)
	w.mu.Lock()
	same := reflect.DeepEqual(w.written[key], spec)
	w.mu.Unlock()
	if same {
		return nil
	}
	res := w.opts.Dynamic.Resource(w.opts.GVR).Namespace(pod.Namespace)
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": w.opts.GVR.GroupVersion().String(),
		"kind":       w.opts.Kind,
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
		return fmt.Errorf("writing %s: %w", w.opts.Kind, err)
	}
	w.mu.Lock()
	w.written[key] = spec
	w.mu.Unlock()
	w.opts.Logf("%s: %s/%s: %s", w.opts.Name, pod.Namespace, pod.Name, w.opts.Written)
	return nil
}

func writtenKey(pod *corev1.Pod) string {
	return pod.Namespace + "/" + pod.Name + "/" + string(pod.UID)
}

// forget drops what was written for pods no longer seen: the garbage
// collector removes their objects.
func (w *PodObjects) forget(seen map[string]bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for k := range w.written {
		if !seen[k] {
			delete(w.written, k)
		}
	}
}
