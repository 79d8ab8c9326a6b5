package faults

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/raydar/raydar/kube/sandbox"
	"github.com/raydar/raydar/kube/sandbox/sandboxtest"
	"github.com/raydar/raydar/rayapi/crds"
	"github.com/raydar/raydar/rayapi/scheme"
)

// One sandbox serves every scenario; the scenarios run one after the other
// (never in parallel): a fault such as an API server restart hits
// everything that runs.
var (
	sb *sandbox.Sandbox
	kc kubernetes.Interface
	cl client.WithWatch
	// raydarBin is `raydar` built from this tree for operator processes.
	raydarBin string
	// tally counts faults, invariants, violations and harness self-checks
	// for the summary line (tally_test.go).
	tally suiteTally
)

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run())
	}
	sandboxtest.MustExclusive()
	os.Exit(run(m))
}

func run(m *testing.M) int {
	begin := time.Now()
	ctrllog.SetLogger(testLogger())
	tmp, err := os.MkdirTemp("", "raydar-faults-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tmp)
	// Build the binary while the sandbox starts.
	buildErr := make(chan error, 1)
	raydarBin = filepath.Join(tmp, "raydar")
	go func() {
		out, err := exec.Command("go", "build", "-o", raydarBin, "github.com/raydar/raydar/cmd/raydar").CombinedOutput()
		if err != nil {
			err = fmt.Errorf("go build: %w\n%s", err, out)
		}
		buildErr <- err
	}()

	opts := sandbox.Full()
	opts.Nodes = nil // added below, without taints
	opts.CRDs = [][]byte{crds.YAML()}
	if os.Getenv("RAYDAR_TEST_LOG") != "" {
		opts.Logf = func(f string, a ...any) { fmt.Fprintf(os.Stderr, "sandbox: "+f+"\n", a...) }
	}
	s, err := sandbox.Start(context.Background(), opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "faults: starting the sandbox:", err)
		<-buildErr
		return 1
	}
	sb, kc = s, s.Clientset()
	defer func() {
		if err := s.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "faults: stopping the sandbox:", err)
		}
	}()
	if err := addNodes(context.Background(), 8); err != nil {
		fmt.Fprintln(os.Stderr, "faults: adding nodes:", err)
		<-buildErr
		return 1
	}
	if cl, err = client.NewWithWatch(s.Config, client.Options{Scheme: scheme.New()}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		<-buildErr
		return 1
	}
	if err := <-buildErr; err != nil {
		fmt.Fprintln(os.Stderr, "faults: building raydar:", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "faults: sandbox and raydar binary ready in %s\n", time.Since(begin).Round(time.Millisecond))
	code := m.Run()
	tally.mu.Lock()
	for _, f := range tally.figures {
		fmt.Println("faults: figure:", f)
	}
	tally.mu.Unlock()
	fmt.Printf("%s (%s)\n", tally.summary(), time.Since(begin).Round(time.Second))
	if tally.failed() && code == 0 {
		code = 1
	}
	return code
}

// addNodes adds n large fake nodes without the taints new nodes get (the
// sandbox runs no node-lifecycle controller to lift them).
func addNodes(ctx context.Context, n int) error {
	names, err := sb.AddNodes(ctx, sandbox.NodePool{Count: n, NamePrefix: "kwok-node", CPU: "64", Memory: "256Gi"})
	if err != nil {
		return err
	}
	for _, name := range names {
		patch := []byte(`{"spec":{"taints":null}}`)
		if _, err := kc.CoreV1().Nodes().Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			return err
		}
	}
	return nil
}

// testLogger logs to stderr when RAYDAR_TEST_LOG is set, else nowhere.
func testLogger() logr.Logger {
	if os.Getenv("RAYDAR_TEST_LOG") == "" {
		return logr.Discard()
	}
	return funcr.New(func(prefix, args string) { fmt.Fprintln(os.Stderr, time.Now().Format("15:04:05.000"), prefix, args) },
		funcr.Options{Verbosity: 1})
}

func needSandbox(t testing.TB) {
	t.Helper()
	if sb == nil {
		t.Skip("fault suite: needs the sandbox control plane (skipped with -short)")
	}
}

// newNamespace creates a namespace for one scenario and waits for its
// default ServiceAccount.
func newNamespace(t testing.TB) string {
	t.Helper()
	ctx := context.Background()
	name := "f-" + strings.ToLower(utilrand.String(6))
	if _, err := kc.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kc.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	eventually(t, time.Minute, "the default ServiceAccount", func() (bool, string) {
		_, err := kc.CoreV1().ServiceAccounts(name).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, fmt.Sprint(err)
	})
	return name
}

// eventually polls cond every 100 ms until it holds or the timeout passes.
func eventually(t testing.TB, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	if msg, ok := poll(timeout, cond); !ok {
		t.Fatalf("timed out after %s waiting for %s; last: %s", timeout, what, msg)
	}
}

// poll calls cond every 100 ms until it holds (ok) or timeout passes; msg
// is cond's last message.
func poll(timeout time.Duration, cond func() (bool, string)) (msg string, ok bool) {
	deadline := time.Now().Add(timeout)
	for {
		ok, msg := cond()
		if ok {
			return msg, true
		}
		if time.Now().After(deadline) {
			return msg, false
		}
		time.Sleep(100 * time.Millisecond)
	}
}
