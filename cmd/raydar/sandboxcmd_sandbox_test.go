//go:build linux

package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/raydar/raydar/kube/sandbox"
	"github.com/raydar/raydar/kube/sandbox/certsim"
	"github.com/raydar/raydar/rayapi/scheme"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// TestSandboxCommand: `raydar sandbox` (the real main, in a child process)
// as a user runs it. Its start-up lines say cert-manager is simulated;
// `raydar operator --feature-gates RayClusterMTLS=true` pointed at it
// makes KubeRay v1.7.0's mTLS sample a ready cluster whose certificates
// certsim issued (subtest). Then, while a client watches it, as a TUI in
// another terminal does, Ctrl-C (SIGINT): it exits 0 saying how long the
// stop took and no error, no process of the sandbox is left, its
// temporary directory is gone, and the client's watch has ended.
func TestSandboxCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: starts a control plane")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.Command(os.Args[0], "-test.run=^$", "--", "sandbox", "--nodes", "1", "--tools-dir", toolsDirWithCertManager(t))
	cmd.Env = append(os.Environ(), mainEnv+"=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer outR.Close()
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = outW, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	outW.Close()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	killed := false
	defer func() {
		if !killed {
			_ = cmd.Process.Kill()
			<-exited
		}
	}()

	// What it prints once ready.
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	var stateDir, kubeconfig, certManager, contextName string
	for ready := false; !ready; {
		select {
		case l, ok := <-lines:
			if !ok {
				_ = cmd.Process.Kill()
				err := <-exited
				killed = true
				t.Fatalf("raydar sandbox ended before it was ready (%v):\n%s", err, stderr.String())
			}
			if v, ok := strings.CutPrefix(strings.TrimSpace(l), "logs:"); ok {
				stateDir = strings.TrimSpace(v)
			}
			if v, ok := strings.CutPrefix(strings.TrimSpace(l), "kubeconfig:"); ok {
				kubeconfig = strings.TrimSpace(v)
			}
			if v, ok := strings.CutPrefix(strings.TrimSpace(l), "context:"); ok {
				contextName = strings.TrimSpace(v)
			}
			if v, ok := strings.CutPrefix(strings.TrimSpace(l), "cert-manager:"); ok {
				certManager = strings.TrimSpace(v)
			}
			ready = strings.HasPrefix(l, "Ctrl-C stops it")
		case <-ctx.Done():
			t.Fatal("raydar sandbox not ready within 10 minutes")
		}
	}
	go func() { // the rest, until it exits
		for range lines {
		}
	}()
	if want := "simulated (certsim), CRDs " + certsim.Version + ":"; !strings.HasPrefix(certManager, want) {
		t.Errorf("raydar sandbox's cert-manager line is %q, want it to start %q", certManager, want)
	}
	if stateDir == "" || kubeconfig == "" {
		t.Fatalf("raydar sandbox printed no logs: or kubeconfig: line")
	}
	// The default state directory's context is the default name, and it
	// is the kubeconfig's.
	if kc, err := clientcmd.LoadFromFile(kubeconfig); err != nil {
		t.Error(err)
	} else if contextName != sandbox.DefaultContextName || kc.CurrentContext != contextName {
		t.Errorf("printed context %q, kubeconfig's current context %q; want %s", contextName, kc.CurrentContext, sandbox.DefaultContextName)
	}
	if procs := procsMentioning(t, stateDir); !strings.Contains(strings.Join(procs, "\n"), "kube-apiserver") {
		t.Fatalf("no kube-apiserver among the sandbox's processes %q", procs)
	}

	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("mTLS sample with the operator's gate on", func(t *testing.T) {
		mtlsOnSandbox(t, ctx, kubeconfig, cfg)
	})
	w, err := cs.CoreV1().Pods("").Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		killed = true
		if err != nil {
			t.Fatalf("raydar sandbox after Ctrl-C: %v\n%s", err, stderr.String())
		}
	case <-ctx.Done():
		t.Fatalf("raydar sandbox still running long after Ctrl-C:\n%s", stderr.String())
	}
	if !strings.Contains(stderr.String(), "\nstopped in ") || strings.Contains(stderr.String(), "stop:") {
		t.Errorf("stderr after Ctrl-C:\n%s", stderr.String())
	}
	if left := procsMentioning(t, stateDir); len(left) != 0 {
		t.Errorf("processes left after raydar sandbox exited: %q", left)
	}
	if _, err := os.Stat(stateDir); !os.IsNotExist(err) {
		t.Errorf("temporary directory %s left behind: %v", stateDir, err)
	}
	ended := false
	for !ended {
		select {
		case _, ok := <-w.ResultChan():
			ended = !ok
		case <-ctx.Done():
			t.Fatal("the client's watch did not end")
		}
	}
}

// procsMentioning returns the command lines of the live processes whose
// command line contains s.
func procsMentioning(t *testing.T, s string) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, e := range entries {
		var pid int
		if _, err := fmt.Sscanf(e.Name(), "%d", &pid); err != nil || pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || len(b) == 0 {
			continue // gone, or a zombie
		}
		if cmd := strings.ReplaceAll(string(b), "\x00", " "); strings.Contains(cmd, s) {
			found = append(found, cmd)
		}
	}
	return found
}

// toolsDirWithCertManager is the tools directory for a `raydar sandbox`
// child: $RAYDAR_TOOLS_DIR (or the repository's bin/k8s) when it holds
// cert-manager's CRD file, as `make tools` writes it; else, for a tools
// directory built before `make tools` wrote it, a temporary one linking
// its binaries beside that file written from cert-manager's module.
func toolsDirWithCertManager(t *testing.T) string {
	t.Helper()
	dir, err := sandbox.FindToolsDir()
	if err != nil {
		t.Fatal(err)
	}
	_, err = certsim.ReadCRDs(dir)
	if err == nil {
		return dir
	}
	if !errors.Is(err, certsim.ErrNoCRDFile) {
		t.Fatal(err)
	}
	b, merr := certsim.ModuleCRDs()
	if merr != nil {
		t.Fatalf("%v, and cert-manager's module: %v", err, merr)
	}
	t.Logf("%v: the sandbox gets a tools directory with the module's CRDs instead", err)
	tmp := t.TempDir()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if err := os.Symlink(filepath.Join(dir, e.Name()), filepath.Join(tmp, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(tmp, filepath.Dir(certsim.CRDFile)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tmp, certsim.CRDFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return tmp
}

// mtlsOnSandbox is a user's mTLS path on a `raydar sandbox`: `raydar
// operator --feature-gates RayClusterMTLS=true` against its kubeconfig,
// KubeRay v1.7.0's ray-cluster.mtls.yaml applied unchanged to default; the
// head and worker Secrets appear with certificates that chain to the
// cluster's CA, the pods run and the cluster is ready.
func mtlsOnSandbox(t *testing.T, ctx context.Context, kubeconfig string, cfg *rest.Config) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme.New()})
	if err != nil {
		t.Fatal(err)
	}
	opLog, _, stop := startCommandAt(t, kubeconfig, "operator", "--metrics-bind-address=0", "--health-probe-bind-address=0",
		"--feature-gates", "RayClusterMTLS=true")
	defer stop()
	b, err := os.ReadFile("../../controller/testdata/kuberay-v1.7.0/ray-cluster.mtls.yaml")
	if err != nil {
		t.Fatal(err)
	}
	rc := &rayv1.RayCluster{}
	if err := yaml.UnmarshalStrict(b, rc); err != nil {
		t.Fatal(err)
	}
	rc.Namespace = metav1.NamespaceDefault
	if err := c.Create(ctx, rc); err != nil {
		t.Fatal(err)
	}

	deadline := time.Now().Add(4 * time.Minute)
	var why string
	for {
		why = mtlsNotYet(ctx, c, cs, rc.Name)
		if why == "" {
			break
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			events, _ := cs.CoreV1().Events(metav1.NamespaceDefault).List(ctx, metav1.ListOptions{})
			var ev []string
			for _, e := range events.Items {
				ev = append(ev, e.InvolvedObject.Kind+"/"+e.InvolvedObject.Name+" "+e.Type+" "+e.Reason+": "+e.Message)
			}
			t.Fatalf("the mTLS sample on raydar sandbox: %s\nevents:\n%s\noperator log:\n%s", why, strings.Join(ev, "\n"), opLog)
		}
		pollPause(ctx)
	}
}

// mtlsNotYet says what the mTLS sample's cluster still lacks; "" when its
// Secrets hold certificates chaining to its CA, its head and worker run
// and it is ready.
func mtlsNotYet(ctx context.Context, c client.Client, cs kubernetes.Interface, name string) string {
	rc := &rayv1.RayCluster{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: metav1.NamespaceDefault, Name: name}, rc); err != nil {
		return err.Error()
	}
	for _, secret := range []string{"ray-head-secret-" + name, "ray-worker-secret-" + name} {
		s, err := cs.CoreV1().Secrets(metav1.NamespaceDefault).Get(ctx, secret, metav1.GetOptions{})
		if err != nil {
			return "Secret " + secret + ": " + err.Error()
		}
		block, _ := pem.Decode(s.Data[corev1.TLSCertKey])
		if block == nil || len(s.Data[corev1.TLSPrivateKeyKey]) == 0 {
			return "Secret " + secret + " has no PEM tls.crt or no tls.key"
		}
		leaf, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return "Secret " + secret + ": " + err.Error()
		}
		roots := x509.NewCertPool()
		if !roots.AppendCertsFromPEM(s.Data["ca.crt"]) {
			return "Secret " + secret + " has no ca.crt"
		}
		if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}); err != nil {
			return "Secret " + secret + "'s certificate does not chain to its ca.crt: " + err.Error()
		}
	}
	pods, err := cs.CoreV1().Pods(metav1.NamespaceDefault).List(ctx, metav1.ListOptions{LabelSelector: "ray.io/cluster=" + name})
	if err != nil {
		return err.Error()
	}
	running := map[string]int{}
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodRunning {
			running[p.Labels["ray.io/node-type"]]++
		}
	}
	if running["head"] != 1 || running["worker"] != 1 {
		return fmt.Sprintf("running pods by node type %v of %d, want a head and a worker", running, len(pods.Items))
	}
	if rc.Status.State != rayv1.Ready {
		return fmt.Sprintf("RayCluster state %q, conditions %v", rc.Status.State, rc.Status.Conditions)
	}
	return ""
}
