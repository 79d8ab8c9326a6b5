package main

import (
	"bytes"
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/controller"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// syncBuffer is a bytes.Buffer safe for the operator's logger and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startCommand runs raydar with args in-process until the test ends (or
// the returned stop is called) and returns its stderr and its result.
func startCommand(t *testing.T, args ...string) (stderr *syncBuffer, result <-chan error, stop func()) {
	t.Helper()
	return startCommandAt(t, sb.KubeconfigPath, args...)
}

// startCommandAt is startCommand against another cluster's kubeconfig (a
// `raydar sandbox` the test started).
func startCommandAt(t *testing.T, kubeconfig string, args ...string) (stderr *syncBuffer, result <-chan error, stop func()) {
	t.Helper()
	cmd := newRootCmd()
	cmd.SetArgs(append([]string{"--kubeconfig", kubeconfig}, args...))
	stderr = &syncBuffer{}
	cmd.SetOut(stderr)
	cmd.SetErr(stderr)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- cmd.ExecuteContext(ctx) }()
	var once sync.Once
	var err error
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err = <-done:
			case <-time.After(time.Minute):
				err = errors.New("did not stop within a minute of its context's cancellation")
			}
		})
		if err != nil {
			t.Errorf("raydar %s: %v\n%s", strings.Join(args, " "), err, stderr)
		}
	}
	t.Cleanup(stop)
	return stderr, done, stop
}

// TestOperatorOutOfClusterWithoutRaydarSystem is issue 12's first run:
// `raydar operator` on a cluster that has no raydar-system namespace (the
// sandbox: only config/default creates it) elects itself on a Lease in
// default, as the TUI would, says so, and reconciles.
func TestOperatorOutOfClusterWithoutRaydarSystem(t *testing.T) {
	ctx := needSandbox(t)
	if err := cl.Get(ctx, client.ObjectKey{Name: controller.DefaultLeaderElectionNamespace}, &corev1.Namespace{}); !apierrors.IsNotFound(err) {
		t.Fatalf("this test needs a cluster without %s (Get: %v)", controller.DefaultLeaderElectionNamespace, err)
	}
	ns := newNamespace(t, ctx)
	lease := "raydar-op-" + strings.ToLower(utilrand.String(5))
	identity := "operator-test-" + strings.ToLower(utilrand.String(5))
	stderr, result, stop := startCommand(t, "operator", "--metrics-bind-address=0", "--health-probe-bind-address=0",
		"--watch-namespaces", ns, "--leader-election-id", lease, "--identity", identity)

	eventually := func(what string, cond func() (bool, string)) {
		t.Helper()
		last := ""
		for ctx.Err() == nil {
			ok, state := cond()
			if ok {
				return
			}
			last = state
			select {
			case err := <-result:
				t.Fatalf("the operator exited while waiting for %s: %v\n%s", what, err, stderr)
			case <-time.After(100 * time.Millisecond): // poll interval
			}
		}
		t.Fatalf("timed out waiting for %s (last: %s)\nthe operator's log:\n%s", what, last, stderr)
	}
	eventually("the operator to lead on a Lease in default", func() (bool, string) {
		l := &coordinationv1.Lease{}
		if err := cl.Get(ctx, client.ObjectKey{Namespace: "default", Name: lease}, l); err != nil {
			return false, err.Error()
		}
		h := ""
		if l.Spec.HolderIdentity != nil {
			h = *l.Spec.HolderIdentity
		}
		return h == identity, "holder " + h
	})
	if want := "leader election Lease in namespace default (namespace raydar-system does not exist"; !strings.Contains(stderr.String(), want) {
		t.Errorf("the log does not say where the Lease is (want %q):\n%s", want, stderr)
	}

	create(t, ctx, testCluster(ns, "first-run"))
	eventually("the RayCluster's head pod", func() (bool, string) {
		pods := &corev1.PodList{}
		if err := cl.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels{
			rayv1.RayClusterLabelKey: "first-run", rayv1.RayNodeTypeLabelKey: string(rayv1.HeadNode)}); err != nil {
			return false, err.Error()
		}
		return len(pods.Items) == 1, "head pods: " + strconv.Itoa(len(pods.Items))
	})
	stop()
}

// TestOperatorRefusesAMissingLeaseNamespace: a namespace named on the
// command line that does not exist is an error at once, saying what to do,
// not an election retried forever.
func TestOperatorRefusesAMissingLeaseNamespace(t *testing.T) {
	needSandbox(t)
	begin := time.Now()
	r := raydar(t, "", "operator", "--metrics-bind-address=0", "--health-probe-bind-address=0",
		"--leader-election-namespace", "no-such-namespace")
	if r.err == nil || !strings.Contains(r.err.Error(), `the leader election namespace "no-such-namespace" does not exist`) ||
		!strings.Contains(r.err.Error(), "kubectl create namespace no-such-namespace") {
		t.Fatalf("err = %v; want a refusal that says what to do\n%s", r.err, r.stderr)
	}
	if d := time.Since(begin); d > 20*time.Second {
		t.Errorf("refused after %s; want at once", d)
	}
}

// TestOperatorPortTakenSaysWhichFlags: a second operator on one machine
// finds its probe port taken; the error names the flags that move it.
func TestOperatorPortTakenSaysWhichFlags(t *testing.T) {
	needSandbox(t)
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	r := raydar(t, "", "operator", "--metrics-bind-address=0", "--health-probe-bind-address", taken.Addr().String())
	if r.err == nil || !strings.Contains(r.err.Error(), "address already in use") || !strings.Contains(r.err.Error(), "--health-probe-bind-address") {
		t.Fatalf("err = %v; want the taken port and the flag that moves it\n%s", r.err, r.stderr)
	}
}

// TestOperatorFeatureGates: `raydar operator --feature-gates
// RayClusterNetworkPolicy=true` logs the gates it runs with and makes a
// cluster's spec.networkPolicy into NetworkPolicies.
func TestOperatorFeatureGates(t *testing.T) {
	ctx := needSandbox(t)
	ns := newNamespace(t, ctx)
	stderr, result, stop := startCommand(t, "operator", "--metrics-bind-address=0", "--health-probe-bind-address=0",
		"--watch-namespaces", ns, "--no-leader-election", "--feature-gates", "RayClusterNetworkPolicy=true")
	rc := testCluster(ns, "isolated")
	rc.Spec.NetworkPolicy = &rayv1.NetworkPolicyConfig{}
	create(t, ctx, rc)
	for {
		np := &networkingv1.NetworkPolicy{}
		err := cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: "isolated-head"}, np)
		if err == nil {
			break
		}
		select {
		case err := <-result:
			t.Fatalf("the operator exited: %v\n%s", err, stderr)
		case <-ctx.Done():
			t.Fatalf("no NetworkPolicy isolated-head (last: %v)\nthe operator's log:\n%s", err, stderr)
		case <-time.After(100 * time.Millisecond): // poll interval
		}
	}
	if want := `"featureGates"="RayClusterStatusConditions=true,`; !strings.Contains(stderr.String(), want) || !strings.Contains(stderr.String(), ",RayClusterNetworkPolicy=true,") {
		t.Errorf("the log does not name the gates (want %s… RayClusterNetworkPolicy=true):\n%s", want, stderr)
	}
	stop()
}
