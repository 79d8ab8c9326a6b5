package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	listersv1 "k8s.io/client-go/listers/core/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// configChecker does the kubelet's check of the ConfigMaps and Secrets a
// Pending pod references (kubeletConfigCheck) for kwok, which runs no
// kubelet: it writes its verdict on the pod (ConfigCheckAnnotation,
// ConfigErrorAnnotation) for the stages to play, and re-checks a
// namespace's Pending pods when a ConfigMap or Secret there changes. A
// missing volume also gets the kubelet's FailedMount Warning Event.
type configChecker struct {
	cs      kubernetes.Interface
	pods    listersv1.PodLister
	cms     listersv1.ConfigMapLister
	secrets listersv1.SecretLister
	queue   workqueue.TypedRateLimitingInterface[types.NamespacedName]
	logf    func(string, ...any)
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

// startConfigChecker starts the checker and returns once its caches are
// synced.
func startConfigChecker(ctx context.Context, cs kubernetes.Interface, logf func(string, ...any)) (*configChecker, error) {
	f := informers.NewSharedInformerFactory(cs, 0)
	podInf := f.Core().V1().Pods()
	cmInf := f.Core().V1().ConfigMaps()
	secInf := f.Core().V1().Secrets()
	c := &configChecker{
		cs: cs, pods: podInf.Lister(), cms: cmInf.Lister(), secrets: secInf.Lister(), logf: logf,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[types.NamespacedName](),
			workqueue.TypedRateLimitingQueueConfig[types.NamespacedName]{Name: "sandbox-config-check"}),
	}
	onPod := func(obj any) {
		if p, ok := obj.(*corev1.Pod); ok && p.Status.Phase == corev1.PodPending {
			c.queue.Add(types.NamespacedName{Namespace: p.Namespace, Name: p.Name})
		}
	}
	if _, err := podInf.Informer().AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    onPod,
		UpdateFunc: func(_, obj any) { onPod(obj) },
	}); err != nil {
		return nil, err
	}
	onConfig := func(obj any) {
		if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		m, ok := obj.(metav1.Object)
		if !ok {
			return
		}
		pods, err := c.pods.Pods(m.GetNamespace()).List(labels.Everything())
		if err != nil {
			return
		}
		for _, p := range pods {
			onPod(p)
		}
	}
	for _, inf := range []toolscache.SharedIndexInformer{cmInf.Informer(), secInf.Informer()} {
		if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc:    onConfig,
			UpdateFunc: func(_, obj any) { onConfig(obj) },
			DeleteFunc: onConfig,
		}); err != nil {
			return nil, err
		}
	}
	ctx, c.cancel = context.WithCancel(context.WithoutCancel(ctx))
	f.Start(ctx.Done())
	for typ, ok := range f.WaitForCacheSync(ctx.Done()) {
		if !ok {
			c.stop()
			return nil, fmt.Errorf("sandbox: config checker: the %v cache did not sync", typ)
		}
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		for c.next(ctx) {
		}
	}()
	go func() {
		<-ctx.Done()
		c.queue.ShutDown()
	}()
	// The factory's goroutines end with ctx; stop waits for them.
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		<-ctx.Done()
		f.Shutdown()
	}()
	return c, nil
}

// stop ends the checker and waits for its goroutines.
func (c *configChecker) stop() {
	c.cancel()
	c.queue.ShutDown()
	c.wg.Wait()
}

func (c *configChecker) next(ctx context.Context) bool {
	key, quit := c.queue.Get()
	if quit {
		return false
	}
	defer c.queue.Done(key)
	if err := c.check(ctx, key); err != nil {
		if ctx.Err() == nil {
			c.logf("config checker: pod %s: %v (retrying)", key, err)
		}
		c.queue.AddRateLimited(key)
		return true
	}
	c.queue.Forget(key)
	return true
}

// check writes the verdict on one Pending pod when it changed.
func (c *configChecker) check(ctx context.Context, key types.NamespacedName) error {
	pod, err := c.pods.Pods(key.Namespace).Get(key.Name)
	if err != nil || pod.Status.Phase != corev1.PodPending || pod.DeletionTimestamp != nil {
		return nil // gone or past the kubelet's check
	}
	cmLookup := func(name string) (map[string]bool, bool) {
		cm, err := c.cms.ConfigMaps(key.Namespace).Get(name)
		if err != nil {
			return nil, false
		}
		keys := make(map[string]bool, len(cm.Data)+len(cm.BinaryData))
		for k := range cm.Data {
			keys[k] = true
		}
		for k := range cm.BinaryData {
			keys[k] = true
		}
		return keys, true
	}
	secLookup := func(name string) (map[string]bool, bool) {
		s, err := c.secrets.Secrets(key.Namespace).Get(name)
		if err != nil {
			return nil, false
		}
		keys := make(map[string]bool, len(s.Data))
		for k := range s.Data {
			keys[k] = true
		}
		return keys, true
	}
	reason, message, refs := kubeletConfigCheck(pod, cmLookup, secLookup)
	if !refs {
		return nil
	}
	a := pod.Annotations
	if a[ConfigCheckAnnotation] == reason && a[ConfigErrorAnnotation] == message {
		return nil
	}
	var msg any = message
	if message == "" {
		msg = nil // removes the annotation
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{
		ConfigCheckAnnotation: reason, ConfigErrorAnnotation: msg}}})
	if err != nil {
		return err
	}
	if _, err := c.cs.CoreV1().Pods(key.Namespace).Patch(ctx, key.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return ignoreNotFound(err)
	}
	if reason == MountErrorReason {
		now := metav1.NewTime(time.Now())
		ev := &corev1.Event{
			ObjectMeta: metav1.ObjectMeta{GenerateName: pod.Name + ".", Namespace: pod.Namespace},
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: pod.Namespace, Name: pod.Name,
				UID: pod.UID, ResourceVersion: pod.ResourceVersion},
			Reason: "FailedMount", Message: message, Type: corev1.EventTypeWarning,
			Source:         corev1.EventSource{Component: "kubelet", Host: pod.Spec.NodeName},
			FirstTimestamp: now, LastTimestamp: now, Count: 1,
		}
		if _, err := c.cs.CoreV1().Events(pod.Namespace).Create(ctx, ev, metav1.CreateOptions{}); err != nil {
			c.logf("config checker: FailedMount Event for pod %s: %v", key, err)
		}
	}
	return nil
}
