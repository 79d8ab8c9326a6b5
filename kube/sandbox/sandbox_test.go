//go:build linux

package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// waitTimeout bounds every wait of these tests: generous, the machine is small
// and shared.
const waitTimeout = 60 * time.Second

// eventually polls cond until it returns true or waitTimeout passes.
func eventually(t *testing.T, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	var last error
	for {
		ok, err := cond(ctx)
		if ok {
			return
		}
		if err != nil {
			last = err
		}
		select {
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s (last error: %v)", what, last)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// testNamespace creates a namespace for one test.
func testNamespace(t *testing.T, cs kubernetes.Interface) string {
	t.Helper()
	name := strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-"))
	if len(name) > 50 {
		name = name[:50]
	}
	_, err := cs.CoreV1().Namespaces().Create(context.Background(),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return name
}

func testPod(name string, labels map[string]string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name: "main", Image: "example.invalid/app:1",
				Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8000}},
			}},
		},
	}
}

func waitPodRunning(t *testing.T, cs kubernetes.Interface, ns, name string) *corev1.Pod {
	t.Helper()
	var pod *corev1.Pod
	eventually(t, "pod "+name+" Running with an IP", func(ctx context.Context) (bool, error) {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		pod = p
		return p.Status.Phase == corev1.PodRunning && p.Status.PodIP != "", nil
	})
	return pod
}

func TestPodScheduledAndRunning(t *testing.T) {
	sb := sandboxFor(t)
	cs := sb.Clientset()
	ns := testNamespace(t, cs)
	begin := time.Now()
	if _, err := cs.CoreV1().Pods(ns).Create(context.Background(), testPod("web", nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := waitPodRunning(t, cs, ns, "web")
	t.Logf("pod Running with IP %s on %s after %s", pod.Status.PodIP, pod.Spec.NodeName, time.Since(begin))
	if !slices.Contains(sb.Nodes(), pod.Spec.NodeName) {
		t.Errorf("pod on %q, not one of the sandbox's nodes %v", pod.Spec.NodeName, sb.Nodes())
	}
	if !strings.HasPrefix(pod.Status.PodIP, "10.") || pod.Status.HostIP == "" {
		t.Errorf("podIP %q hostIP %q", pod.Status.PodIP, pod.Status.HostIP)
	}
	ready := false
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			ready = true
		}
	}
	if !ready {
		t.Errorf("pod not Ready: %+v", pod.Status.Conditions)
	}
	if len(pod.Status.ContainerStatuses) != 1 || pod.Status.ContainerStatuses[0].State.Running == nil || !pod.Status.ContainerStatuses[0].Ready {
		t.Errorf("container statuses: %+v", pod.Status.ContainerStatuses)
	}

	// Deleting a pod with the default grace period: kwok removes it.
	if err := cs.CoreV1().Pods(ns).Delete(context.Background(), "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the deleted pod to be gone", func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().Pods(ns).Get(ctx, "web", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
}

func TestGarbageCollection(t *testing.T) {
	sb := sandboxFor(t)
	cs := sb.Clientset()
	ns := testNamespace(t, cs)
	ctx := context.Background()
	owner, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod := testPod("owned", nil)
	pod.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID}}
	if _, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitPodRunning(t, cs, ns, "owned")
	if err := cs.CoreV1().ConfigMaps(ns).Delete(ctx, owner.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	begin := time.Now()
	eventually(t, "the owned pod to be garbage-collected", func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().Pods(ns).Get(ctx, "owned", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	t.Logf("owned pod gone %s after its owner", time.Since(begin))
}

// A container of a Running pod ends on its own (a SidecarMode submitter in a
// restartPolicy Never head pod): that container shows terminated with its
// exit code, the other keeps running, the pod stays Running but not Ready.
func TestEndContainer(t *testing.T) {
	sb := sandboxFor(t)
	cs := sb.Clientset()
	ns := testNamespace(t, cs)
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		code   int
		reason string
	}{
		{"sidecar-fails", 2, "Error"},
		{"sidecar-completes", 0, "Completed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := testPod(tc.name, nil)
			pod.Spec.RestartPolicy = corev1.RestartPolicyNever
			pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: "ray-job-submitter", Image: "example.invalid/ray:2"})
			if _, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			running := waitPodRunning(t, cs, ns, tc.name)
			if err := sb.EndContainer(ctx, ns, tc.name, "ray-job-submitter", tc.code); err != nil {
				t.Fatal(err)
			}
			var p *corev1.Pod
			eventually(t, "container ray-job-submitter terminated", func(ctx context.Context) (bool, error) {
				got, err := cs.CoreV1().Pods(ns).Get(ctx, tc.name, metav1.GetOptions{})
				p = got
				if err != nil {
					return false, err
				}
				for _, c := range got.Status.ContainerStatuses {
					if c.Name == "ray-job-submitter" && c.State.Terminated != nil {
						return true, nil
					}
				}
				return false, nil
			})
			if p.Status.Phase != corev1.PodRunning {
				t.Errorf("phase = %s, want Running (the other container runs)", p.Status.Phase)
			}
			for _, c := range p.Status.ContainerStatuses {
				switch c.Name {
				case "ray-job-submitter":
					if term := c.State.Terminated; term.ExitCode != int32(tc.code) || term.Reason != tc.reason || c.Ready || c.State.Running != nil {
						t.Errorf("submitter status: %+v", c)
					}
				case "main":
					if c.State.Running == nil || !c.Ready || c.State.Terminated != nil {
						t.Errorf("main status: %+v", c)
					}
				}
			}
			for _, cond := range p.Status.Conditions {
				if (cond.Type == corev1.PodReady || cond.Type == corev1.ContainersReady) && cond.Status != corev1.ConditionFalse {
					t.Errorf("%s = %s, want False", cond.Type, cond.Status)
				}
			}
			if p.Status.PodIP != running.Status.PodIP {
				t.Errorf("podIP changed from %q to %q", running.Status.PodIP, p.Status.PodIP)
			}
		})
	}
	if err := sb.EndContainer(ctx, ns, "x", "c", 256); err == nil {
		t.Error("EndContainer accepted exit code 256")
	}
}

func TestPodPhaseAnnotation(t *testing.T) {
	sb := sandboxFor(t)
	cs := sb.Clientset()
	ns := testNamespace(t, cs)
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		phase corev1.PodPhase
		exit  int32
	}{
		{"fails", corev1.PodFailed, 1},
		{"completes", corev1.PodSucceeded, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := cs.CoreV1().Pods(ns).Create(ctx, testPod(tc.name, nil), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			running := waitPodRunning(t, cs, ns, tc.name)
			if err := sb.SetPodPhase(ctx, ns, tc.name, tc.phase); err != nil {
				t.Fatal(err)
			}
			var pod *corev1.Pod
			eventually(t, "pod "+string(tc.phase), func(ctx context.Context) (bool, error) {
				p, err := cs.CoreV1().Pods(ns).Get(ctx, tc.name, metav1.GetOptions{})
				pod = p
				return err == nil && p.Status.Phase == tc.phase, err
			})
			st := pod.Status.ContainerStatuses
			if len(st) != 1 || st[0].State.Terminated == nil || st[0].State.Terminated.ExitCode != tc.exit {
				t.Errorf("container statuses: %+v", st)
			}
			if pod.Status.PodIP != running.Status.PodIP {
				t.Errorf("podIP changed from %q to %q", running.Status.PodIP, pod.Status.PodIP)
			}
		})
	}
	// A pod created with the annotation ends in that phase without running.
	p := testPod("born-failed", nil)
	p.Annotations = map[string]string{PhaseAnnotation: "Failed"}
	if _, err := cs.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "pod born-failed Failed", func(ctx context.Context) (bool, error) {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, "born-failed", metav1.GetOptions{})
		return err == nil && p.Status.Phase == corev1.PodFailed, err
	})
	if err := sb.SetPodPhase(ctx, ns, "x", corev1.PodRunning); err == nil {
		t.Error("SetPodPhase accepted Running")
	}
}

func TestNodes(t *testing.T) {
	sb := sandboxFor(t)
	cs := sb.Clientset()
	nodes, err := cs.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(nodes.Items), 2; got != want {
		t.Fatalf("%d nodes, want %d", got, want)
	}
	for _, n := range nodes.Items {
		if len(n.Spec.Taints) != 0 {
			t.Errorf("%s has taints %v", n.Name, n.Spec.Taints)
		}
		if n.Labels["pool"] != "test" || n.Labels[NodePoolLabel] != "test-node" {
			t.Errorf("%s labels %v", n.Name, n.Labels)
		}
		for name, want := range map[corev1.ResourceName]string{
			corev1.ResourceCPU: "8", corev1.ResourceMemory: "32Gi", corev1.ResourcePods: "110", "nvidia.com/gpu": "2",
		} {
			for what, rl := range map[string]corev1.ResourceList{"capacity": n.Status.Capacity, "allocatable": n.Status.Allocatable} {
				got := rl[name]
				if got.Cmp(resource.MustParse(want)) != 0 {
					t.Errorf("%s %s %s = %s, want %s", n.Name, what, name, got.String(), want)
				}
			}
		}
	}
}

func TestGPUPodFitsOnlyOnGPUNodes(t *testing.T) {
	sb := sandboxFor(t)
	cs := sb.Clientset()
	ns := testNamespace(t, cs)
	ctx := context.Background()
	p := testPod("gpu", nil)
	p.Spec.Containers[0].Resources.Limits = corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("2")}
	if _, err := cs.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitPodRunning(t, cs, ns, "gpu")
	p = testPod("too-many-gpus", nil)
	p.Spec.Containers[0].Resources.Limits = corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("3")}
	if _, err := cs.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "too-many-gpus Unschedulable", func(ctx context.Context) (bool, error) {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, "too-many-gpus", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
				return true, nil
			}
		}
		return false, nil
	})
}

func TestEndpointSlices(t *testing.T) {
	sb := sandboxFor(t)
	cs := sb.Clientset()
	ns := testNamespace(t, cs)
	ctx := context.Background()
	labels := map[string]string{"app": "serve"}
	if _, err := cs.CoreV1().Pods(ns).Create(ctx, testPod("serve-0", labels), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := waitPodRunning(t, cs, ns, "serve-0")
	_, err := cs.CoreV1().Services(ns).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "serve"},
		Spec: corev1.ServiceSpec{
			Selector: labels,
			Ports:    []corev1.ServicePort{{Name: "http", Port: 8000, TargetPort: intstr.FromString("http")}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "an EndpointSlice with the pod's IP, ready", func(ctx context.Context) (bool, error) {
		slices, err := cs.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=serve"})
		if err != nil {
			return false, err
		}
		for _, s := range slices.Items {
			for _, ep := range s.Endpoints {
				if len(ep.Addresses) > 0 && ep.Addresses[0] == pod.Status.PodIP && ep.Conditions.Ready != nil && *ep.Conditions.Ready {
					return true, nil
				}
			}
		}
		return false, nil
	})
}

func TestJobCompletes(t *testing.T) {
	sb := sandboxFor(t)
	cs := sb.Clientset()
	ns := testNamespace(t, cs)
	ctx := context.Background()
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "submitter"},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers:    []corev1.Container{{Name: "submit", Image: "example.invalid/ray:2"}},
		}}},
	}
	if _, err := cs.BatchV1().Jobs(ns).Create(ctx, job, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var podName string
	eventually(t, "the Job's pod Running", func(ctx context.Context) (bool, error) {
		pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "job-name=submitter"})
		if err != nil || len(pods.Items) == 0 {
			return false, err
		}
		podName = pods.Items[0].Name
		return pods.Items[0].Status.Phase == corev1.PodRunning, nil
	})
	if err := sb.SetPodPhase(ctx, ns, podName, corev1.PodSucceeded); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the Job Complete", func(ctx context.Context) (bool, error) {
		j, err := cs.BatchV1().Jobs(ns).Get(ctx, "submitter", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, c := range j.Status.Conditions {
			if c.Type == batchv1.JobComplete && c.Status == corev1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
}

func TestNamespaceDeletion(t *testing.T) {
	sb := sandboxFor(t)
	cs := sb.Clientset()
	ns := testNamespace(t, cs)
	ctx := context.Background()
	if _, err := cs.CoreV1().Pods(ns).Create(ctx, testPod("p", nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitPodRunning(t, cs, ns, "p")
	if err := cs.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the namespace to be gone", func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
}

func TestCRDsAndKubeconfig(t *testing.T) {
	sb := sandboxFor(t)
	// The kubeconfig file is what kubectl would use.
	cfg, err := clientcmd.BuildConfigFromFlags("", sb.KubeconfigPath)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	widgets := schema.GroupVersionResource{Group: "sandbox-test.raydar.io", Version: "v1", Resource: "widgets"}
	w := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "sandbox-test.raydar.io/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w"}, "spec": map[string]any{"size": int64(3)},
	}}
	if _, err := dyn.Resource(widgets).Namespace("default").Create(ctx, w, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	gadgets := schema.GroupVersionResource{Group: "sandbox-test.raydar.io", Version: "v1", Resource: "gadgets"}
	if _, err := dyn.Resource(gadgets).List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	if sb.Config.QPS < 100 {
		t.Errorf("Config.QPS = %v", sb.Config.QPS)
	}
	for _, c := range []string{Etcd, APIServer, Scheduler, ControllerManager, Kwok} {
		if fi, err := os.Stat(sb.LogPath(c)); err != nil || fi.Size() == 0 {
			t.Errorf("log of %s: %v", c, err)
		}
	}
}

// TestTwoSandboxes runs a second sandbox next to the shared one: no port or
// file may collide.
func TestTwoSandboxes(t *testing.T) {
	first := sandboxFor(t)
	begin := time.Now()
	second, err := Start(context.Background(), Options{
		Scheduler: true, ControllerManager: true, Kwok: true,
		Nodes: []NodePool{{Count: 1}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("second sandbox started in %s", time.Since(begin))
	if first.Config.Host == second.Config.Host || first.StateDir == second.StateDir {
		t.Fatalf("sandboxes share %s / %s", first.Config.Host, first.StateDir)
	}
	for _, sb := range []*Sandbox{first, second} {
		cs := sb.Clientset()
		ns := testNamespace(t, cs)
		if _, err := cs.CoreV1().Pods(ns).Create(context.Background(), testPod("p", nil), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		waitPodRunning(t, cs, ns, "p")
	}
	begin = time.Now()
	if err := second.Stop(); err != nil {
		t.Fatal(err)
	}
	t.Logf("second sandbox stopped in %s", time.Since(begin))
	if err := second.Stop(); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
	if _, err := os.Stat(second.StateDir); !os.IsNotExist(err) {
		t.Errorf("temporary state dir left behind: %v", err)
	}
	if got := procsUnder(t, second.StateDir); len(got) != 0 {
		t.Errorf("processes left after Stop: %v", got)
	}
	// The first one is unaffected.
	if _, err := first.Clientset().CoreV1().Namespaces().Get(context.Background(), "default", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestStateDir: a given state directory keeps the logs, cannot be shared by
// two running sandboxes, and can be reused after Stop.
func TestStateDir(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: starts a control plane")
	}
	dir := filepath.Join(t.TempDir(), "state")
	ctx := context.Background()
	sb, err := Start(ctx, Options{StateDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Start(ctx, Options{StateDir: dir}); err == nil || !strings.Contains(err.Error(), "in use") {
		t.Errorf("second Start on a busy state dir: %v", err)
	}
	if err := sb.Stop(); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"etcd.log", "kube-apiserver.log", "kubeconfig"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("after Stop: %v", err)
		}
	}
	sb, err = Start(ctx, Options{StateDir: dir})
	if err != nil {
		t.Fatalf("restart on a used state dir: %v", err)
	}
	if err := sb.Stop(); err != nil {
		t.Fatal(err)
	}

	foreign := t.TempDir()
	if err := os.WriteFile(filepath.Join(foreign, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Start(ctx, Options{StateDir: foreign}); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("Start on a foreign non-empty dir: %v", err)
	}
	if _, err := os.Stat(filepath.Join(foreign, "notes.txt")); err != nil {
		t.Errorf("foreign file touched: %v", err)
	}
}

// TestChildrenDieWithParent starts a sandbox in a child process, kills that
// process with SIGKILL, and checks that etcd, the apiserver and the rest die
// too.
func TestChildrenDieWithParent(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: starts a control plane")
	}
	dir := filepath.Join(t.TempDir(), "child-state")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childStateEnv+"="+dir)
	cmd.SysProcAttr = childAttrForTest()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill() }()
	line := waitForLine(t, bufio.NewScanner(out), 3*time.Minute, "READY", "ERROR")
	if !strings.HasPrefix(line, "READY") {
		t.Fatalf("child: %s\n%s", line, stderr.String())
	}
	before := procsUnder(t, dir)
	var names []string
	for _, c := range before {
		names = append(names, filepath.Base(strings.Fields(c)[0]))
	}
	slices.Sort(names)
	t.Logf("child's processes: %v", names)
	for _, want := range []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok"} {
		if !slices.Contains(names, want) {
			t.Errorf("no %s among the child's processes", want)
		}
	}

	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	begin := time.Now()
	var left map[int]string
	eventually(t, "the sandbox's processes to die with their parent", func(context.Context) (bool, error) {
		left = procsUnder(t, dir)
		if len(left) == 0 {
			return true, nil
		}
		return false, fmt.Errorf("still alive: %v", left)
	})
	t.Logf("all gone %s after SIGKILL", time.Since(begin))
}

func BenchmarkSandboxStart(b *testing.B) {
	for _, bc := range []struct {
		name string
		opts Options
	}{
		{"apiserver", Options{}},
		{"full-1node", Options{Scheduler: true, ControllerManager: true, Kwok: true, Nodes: []NodePool{{Count: 1}}}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var start, stop time.Duration
			for b.Loop() {
				t0 := time.Now()
				sb, err := Start(context.Background(), bc.opts)
				if err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				if err := sb.Stop(); err != nil {
					b.Fatal(err)
				}
				start += t1.Sub(t0)
				stop += time.Since(t1)
			}
			b.ReportMetric(start.Seconds()/float64(b.N), "start-s/op")
			b.ReportMetric(stop.Seconds()/float64(b.N), "stop-s/op")
		})
	}
}
