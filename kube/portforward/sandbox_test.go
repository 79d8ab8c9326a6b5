package portforward

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/client-go/rest"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// viewer is a ServiceAccount of ns bound to the view ClusterRole.
func viewer(t *testing.T, ns string) *rest.Config {
	t.Helper()
	ctx := context.Background()
	cs := sb.Clientset()
	if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "viewer"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rb := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "viewer"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "view"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: "viewer", Namespace: ns}},
	}
	if _, err := cs.RbacV1().RoleBindings(ns).Create(ctx, rb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tok, err := sb.ServiceAccountToken(ctx, ns, "viewer", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return sb.TokenConfig(tok)
}

// headPod creates a Ray head pod of cluster in ns, as the reconciler would.
func headPod(t *testing.T, ns, cluster, name string) {
	t.Helper()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{
			rayv1.RayClusterLabelKey: cluster, rayv1.RayNodeTypeLabelKey: string(rayv1.HeadNode),
		}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "ray-head", Image: "rayproject/ray:2.9.0",
			Ports: []corev1.ContainerPort{{ContainerPort: DashboardPort}}}}},
	}
	if _, err := sb.Clientset().CoreV1().Pods(ns).Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func namespace(t *testing.T) string {
	t.Helper()
	ns := fmt.Sprintf("pf-%d", time.Now().UnixNano()%1_000_000)
	if _, err := sb.Clientset().CoreV1().Namespaces().Create(context.Background(),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return ns
}

// waitFor polls cond (with the forward's changes and a tick) until it holds.
func waitFor(t *testing.T, f *Forward, timeout time.Duration, what string, cond func(State) bool) State {
	t.Helper()
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		s := f.State()
		if cond(s) {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s; state %+v", what, timeout, s)
		}
		select {
		case <-f.Changed():
		case <-tick.C:
		}
	}
}

// dashboardAnswers polls GET url/api/version through the forward until the
// simulated head answers 200.
func dashboardAnswers(t *testing.T, url string, timeout time.Duration) {
	t.Helper()
	client := &http.Client{Timeout: 10 * time.Second}
	deadline := time.Now().Add(timeout)
	var last string
	for time.Now().Before(deadline) {
		resp, err := client.Get(url + "/api/version")
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && strings.Contains(string(body), "ray_version") {
				client.CloseIdleConnections()
				return
			}
			last = fmt.Sprintf("%d %s", resp.StatusCode, body)
		} else {
			last = err.Error()
		}
		time.Sleep(200 * time.Millisecond) // a poll interval, not a synchronisation
	}
	t.Fatalf("dashboard through %s did not answer within %s: %s", url, timeout, last)
}

func TestForwardHealsAcrossHeadReplacementAndStreamReset(t *testing.T) {
	needSandbox(t)
	ns := namespace(t)
	headPod(t, ns, "c1", "c1-head-a")

	m, err := NewManager(Options{Config: sb.Config, CheckInterval: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	f, err := m.Start(Spec{Namespace: ns, Cluster: "c1", Ports: []Port{{Remote: DashboardPort, Name: "dashboard"}}})
	if err != nil {
		t.Fatal(err)
	}
	url := f.State().LocalURL(f.State().Ports[0])

	s := waitFor(t, f, 2*time.Minute, "forward Up on c1-head-a", func(s State) bool { return s.Phase == Up && s.Pod == "c1-head-a" })
	dashboardAnswers(t, url, time.Minute)

	// The head pod is replaced: the forward follows to the new one.
	zero := int64(0)
	if err := sb.Clientset().CoreV1().Pods(ns).Delete(context.Background(), "c1-head-a", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, f, time.Minute, "forward notices the deleted head", func(s State) bool { return s.Phase == Reconnecting || s.Pod != "c1-head-a" })
	headPod(t, ns, "c1", "c1-head-b")
	s = waitFor(t, f, 2*time.Minute, "forward Up on c1-head-b", func(s State) bool { return s.Phase == Up && s.Pod == "c1-head-b" })
	if s.LastError == "" {
		t.Errorf("the break is not recorded: %+v", s)
	}
	dashboardAnswers(t, url, time.Minute)

	// A stream reset: the API server restarts under the open stream.
	before := s.Reconnects
	if err := sb.RestartAPIServer(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, f, 2*time.Minute, "forward back Up after the API server restart", func(s State) bool { return s.Phase == Up && s.Reconnects > before })
	dashboardAnswers(t, url, time.Minute)

	m.Close()
	if s := f.State(); s.Phase != Stopped {
		t.Errorf("after Close: %s", s.Phase)
	}
	// The sandbox's other clients (headsim, the PortForward writer) re-made
	// their watches after the restart, so goleak's whole-process view is
	// not the forwards'; look for goroutines running this package's code or
	// a stream connection instead.
	noForwardGoroutines(t, 30*time.Second)
}

// noForwardGoroutines fails unless, within timeout, no goroutine but the
// caller runs kube/portforward code or holds a SPDY stream connection.
func noForwardGoroutines(t *testing.T, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		buf := make([]byte, 1<<22)
		buf = buf[:runtime.Stack(buf, true)]
		var left []string
		for _, g := range strings.Split(string(buf), "\n\n") {
			if strings.Contains(g, "portforward.noForwardGoroutines") || strings.Contains(g, "testing.tRunner") && strings.Contains(g, "portforward.Test") {
				continue
			}
			if strings.Contains(g, "raydar/kube/portforward.") || strings.Contains(g, "spdystream") {
				left = append(left, g)
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutine(s) of the forwards left after Close:\n%s", len(left), strings.Join(left, "\n\n"))
		}
		time.Sleep(100 * time.Millisecond) // a poll interval
	}
}

func TestForbiddenSaysWhatRBACIsMissing(t *testing.T) {
	needSandbox(t)
	ns := namespace(t)
	headPod(t, ns, "c2", "c2-head")
	cfg := viewer(t, ns)
	m, err := NewManager(Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	f, err := m.Start(Spec{Namespace: ns, Cluster: "c2", Ports: []Port{{Remote: DashboardPort}}})
	if err != nil {
		t.Fatal(err)
	}
	s := waitFor(t, f, 2*time.Minute, "forward refused", func(s State) bool { return s.Phase == Failed })
	if !strings.Contains(s.LastError, "pods/portforward") || !strings.Contains(s.LastError, "view does not") {
		t.Errorf("refusal does not say what is missing: %q", s.LastError)
	}
}
