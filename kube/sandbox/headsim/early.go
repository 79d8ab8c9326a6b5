package headsim

// A head pod held Running but not Ready (sandbox.NotReadyAnnotation, a
// readiness probe that has not passed) gets an early dashboard: its
// address is served and published like a head's, and it answers every
// request 503 and counts those made while the pod, read live, is still
// not Ready, so that a test sees a call made before the head is Ready
// (RequestsBeforeReady) instead of a refused connection nobody counts. It closes when the pod turns Ready (the head takes over)
// or goes.

import (
	"context"
	"net/http"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/raydar/raydar/kube/sandbox/refusable"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// beforeReady prefixes the count key of a request an early dashboard
// answered.
const beforeReady = "before-ready "

// earlyFront is the early dashboard of one head pod.
type earlyFront struct {
	cluster types.NamespacedName
	front   *refusable.Server
}

// syncEarly opens the head pod key's early dashboard when want, and closes
// it otherwise.
func (s *Sim) syncEarly(key string, pod *corev1.Pod, want bool) {
	s.mu.Lock()
	e, open := s.early[key]
	if open == want || s.closed {
		s.mu.Unlock()
		return
	}
	if !want {
		delete(s.early, key)
		s.mu.Unlock()
		e.front.Close()
		s.publishOrLog()
		return
	}
	s.mu.Unlock()
	cluster := types.NamespacedName{Namespace: pod.Namespace, Name: pod.Labels[rayv1.RayClusterLabelKey]}
	c := s.counts(cluster)
	f, err := refusable.Listen("127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The caller may have seen the pod turn Ready before this
		// simulator did (the head takes over once it has): only a pod
		// still not Ready, read live, makes a request one before Ready.
		if !s.readyNow(r.Context(), pod.Namespace, pod.Name) {
			c.add(beforeReady + r.Method + " " + r.URL.Path)
		}
		http.Error(w, "Ray head pod not Ready", http.StatusServiceUnavailable)
	}))
	if err != nil {
		s.opts.Logf("headsim: %s: early dashboard: %v", cluster, err)
		return
	}
	s.mu.Lock()
	if _, raced := s.early[key]; raced || s.closed {
		s.mu.Unlock()
		f.Close()
		return
	}
	s.early[key] = &earlyFront{cluster: cluster, front: f}
	s.mu.Unlock()
	s.opts.Logf("headsim: %s: head pod %s Running, not Ready; its dashboard at %s answers 503", cluster, pod.Name, f.URL())
	s.publishOrLog()
}

// readyNow reads the pod live: Running and Ready. The read is not the
// request's (a caller that gives up, its client timing out on a loaded
// machine, must not turn a call made after Ready into one before it): it
// is tried for up to 10 s; false when it still cannot tell.
func (s *Sim) readyNow(ctx context.Context, namespace, name string) bool {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	for {
		p, err := s.cs.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
		if err == nil {
			return runningAndReady(p)
		}
		select {
		case <-ctx.Done():
			s.opts.Logf("headsim: %s/%s: cannot read the pod to tell whether a request came before Ready (counted as before): %v", namespace, name, err)
			return false
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (s *Sim) publishOrLog() {
	if err := s.publish(); err != nil {
		s.opts.Logf("headsim: %v", err)
	}
}

// RequestsBeforeReady counts the requests the dashboard of the RayCluster
// namespace/name answered while its head pod was held not Ready
// (sandbox.NotReadyAnnotation), every method and path.
func (s *Sim) RequestsBeforeReady(namespace, name string) int {
	n := 0
	for k, v := range s.counts(types.NamespacedName{Namespace: namespace, Name: name}).snapshot() {
		if strings.HasPrefix(k, beforeReady) {
			n += v
		}
	}
	return n
}
