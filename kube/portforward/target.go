package portforward

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/transport/spdy"

	"github.com/raydar/raydar/rayapi/podview"
	"github.com/raydar/raydar/rayapi/status"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// Spec says what to forward.
type Spec struct {
	Namespace string
	// Cluster: forward to this RayCluster's current head pod, re-found at
	// every connect. Either Cluster or Pod.
	Cluster string
	// Pod: forward to this pod (any Ray pod); a replacement with the same
	// name is followed.
	Pod string
	// Address is the local address to listen on; default 127.0.0.1.
	Address string
	Ports   []Port
}

// describe is the Target of a State.
func (s Spec) describe() string {
	if s.Cluster != "" {
		return fmt.Sprintf("cluster %s/%s (head)", s.Namespace, s.Cluster)
	}
	return fmt.Sprintf("pod %s/%s", s.Namespace, s.Pod)
}

func (s Spec) check() error {
	switch {
	case s.Namespace == "":
		return fmt.Errorf("portforward: no namespace")
	case (s.Cluster == "") == (s.Pod == ""):
		return fmt.Errorf("portforward: give a cluster or a pod, not both or neither")
	}
	return CheckPorts(s.Ports)
}

// HeadSelector selects the head pods of a RayCluster (rayapi/v1 labels).
func HeadSelector(cluster string) string {
	return labels.Set{rayv1.RayClusterLabelKey: cluster, rayv1.RayNodeTypeLabelKey: string(rayv1.HeadNode)}.String()
}

// pickHead chooses, among a cluster's head pods, the one to forward to: the
// newest that is Running, Ready and not terminating. The error says why
// there is none, in words.
func pickHead(cluster string, pods []corev1.Pod) (*corev1.Pod, error) {
	var ok []*corev1.Pod
	var seen []string
	for i := range pods {
		p := &pods[i]
		switch {
		case p.DeletionTimestamp != nil:
			seen = append(seen, p.Name+" terminating")
		case p.Status.Phase != corev1.PodRunning:
			seen = append(seen, fmt.Sprintf("%s %s", p.Name, p.Status.Phase))
		case !status.PodIsReady(podview.Of(p)):
			seen = append(seen, p.Name+" not ready")
		default:
			ok = append(ok, p)
		}
	}
	if len(ok) == 0 {
		if len(seen) == 0 {
			return nil, fmt.Errorf("cluster %s has no head pod", cluster)
		}
		return nil, fmt.Errorf("cluster %s has no ready head pod (%s)", cluster, strings.Join(seen, ", "))
	}
	sort.SliceStable(ok, func(a, b int) bool {
		return ok[b].CreationTimestamp.Before(&ok[a].CreationTimestamp)
	})
	return ok[0], nil
}

// stillGood says why pod, the one a stream goes to, is no longer the one to
// forward to ("" while it is): gone, replaced (another UID), terminating,
// not running, or for a head, not ready.
func stillGood(want *corev1.Pod, got *corev1.Pod, head bool) string {
	switch {
	case got == nil:
		return fmt.Sprintf("pod %s deleted", want.Name)
	case got.UID != want.UID:
		return fmt.Sprintf("pod %s replaced", want.Name)
	case got.DeletionTimestamp != nil:
		return fmt.Sprintf("pod %s terminating", want.Name)
	case got.Status.Phase != corev1.PodRunning:
		return fmt.Sprintf("pod %s %s", want.Name, got.Status.Phase)
	case head && !status.PodIsReady(podview.Of(got)):
		return fmt.Sprintf("head pod %s not ready", want.Name)
	}
	return ""
}

// resolve finds the pod to forward to now.
func resolve(ctx context.Context, cs kubernetes.Interface, spec Spec) (*corev1.Pod, error) {
	if spec.Cluster != "" {
		list, err := cs.CoreV1().Pods(spec.Namespace).List(ctx, metav1.ListOptions{LabelSelector: HeadSelector(spec.Cluster)})
		if err != nil {
			return nil, explain(err, spec.Namespace)
		}
		return pickHead(spec.Namespace+"/"+spec.Cluster, list.Items)
	}
	p, err := cs.CoreV1().Pods(spec.Namespace).Get(ctx, spec.Pod, metav1.GetOptions{})
	if err != nil {
		return nil, explain(err, spec.Namespace)
	}
	if why := stillGood(p, p, false); why != "" {
		return nil, fmt.Errorf("%s", why)
	}
	return p, nil
}

// getPod reads a pod, nil when it is gone.
func getPod(ctx context.Context, cs kubernetes.Interface, ns, name string) (*corev1.Pod, error) {
	p, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return p, err
}

// dialer makes streams to a pod's portforward subresource: SPDY tunnelled
// through a websocket (what kubectl uses), falling back to plain SPDY where
// the API server or a proxy refuses the websocket upgrade.
func dialer(cfg *rest.Config, u *url.URL) (httpstream.Dialer, error) {
	transport, upgrader, err := spdy.RoundTripperFor(cfg)
	if err != nil {
		return nil, err
	}
	spdyDialer := spdy.NewDialer(upgrader, &http.Client{Transport: transport}, http.MethodPost, u)
	ws, err := portforward.NewSPDYOverWebsocketDialer(u, cfg)
	if err != nil {
		return nil, err
	}
	return portforward.NewFallbackDialer(ws, spdyDialer, func(err error) bool {
		return httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err)
	}), nil
}

// ForbiddenError is a forward the API server's RBAC refused.
type ForbiddenError struct {
	Namespace string
	Err       error
}

// Error names the RBAC verbs a port-forward needs and which ClusterRoles
// grant them.
func (e *ForbiddenError) Error() string {
	return fmt.Sprintf("not allowed to port-forward in namespace %s: it needs the verb create on pods/portforward "+
		"(and get, list on pods); the edit and admin ClusterRoles grant it, view does not: %v", e.Namespace, e.Err)
}

// Unwrap returns the API server's refusal.
func (e *ForbiddenError) Unwrap() error { return e.Err }

// explain turns a refusal by RBAC into a ForbiddenError. An upgrade refused
// with 403 is not an apierrors status, so its text is looked at too.
func explain(err error, ns string) error {
	if err == nil {
		return nil
	}
	if apierrors.IsForbidden(err) || strings.Contains(strings.ToLower(err.Error()), "forbidden") {
		return &ForbiddenError{Namespace: ns, Err: err}
	}
	return err
}
