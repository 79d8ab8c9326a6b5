package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/raydar/raydar/kube/sandbox"
	"github.com/raydar/raydar/kube/sandbox/sandboxtest"
	"github.com/raydar/raydar/rayapi/crds"
	"github.com/raydar/raydar/rayapi/scheme"
)

// This package's tests run the cobra commands in-process. One sandbox (etcd,
// kube-apiserver with the ray.io CRDs, scheduler, controller-manager, kwok
// with two CPU nodes) serves every test that needs an API server; TestMain
// starts it unless -short, and those tests skip then.
// Add other sub-commands' set-up here: a package has one TestMain.

var (
	sb *sandbox.Sandbox
	cl client.Client
)

// mainEnv makes the test binary run main() with the arguments after "--"
// (TestExitCode).
const mainEnv = "RAYDAR_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(mainEnv) == "1" {
		for i, a := range os.Args {
			if a == "--" {
				os.Args = append([]string{"raydar"}, os.Args[i+1:]...)
				break
			}
		}
		main()
		os.Exit(0)
	}
	flag.Parse()
	// Mutations append to the audit log: never the real one. Tests that
	// read it set their own (auditLog).
	state, err := os.MkdirTemp("", "raydar-cli-test-state-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("XDG_STATE_HOME", state)
	code := run(m)
	os.RemoveAll(state)
	os.Exit(code)
}

// run starts the sandbox (unless -short), runs the tests and stops it.
func run(m *testing.M) int {
	if testing.Short() {
		return m.Run()
	}
	sandboxtest.MustExclusive()
	// controller-runtime's clients log through it; set before the first
	// one, or it prints a stack trace when the lock was waited for 30 s.
	ctrllog.SetLogger(logr.Discard())
	opts := sandbox.Options{CRDs: [][]byte{crds.YAML()}, StartTimeout: 5 * time.Minute,
		// raydar why's tests (why_sandbox_test.go) need pods that are
		// scheduled and played by kwok, on CPU nodes only: a GPU group
		// must stay unschedulable.
		Scheduler: true, ControllerManager: true, Kwok: true,
		Nodes: []sandbox.NodePool{{Count: 2, NamePrefix: "cpu-node", CPU: "16", Memory: "64Gi"}},
		// `ray` in an exec (exec_sandbox_test.go): this binary as raydar.
		RayCLI: testRayCLI()}
	if os.Getenv("RAYDAR_TEST_LOG") != "" {
		opts.Logf = func(f string, a ...any) { fmt.Fprintf(os.Stderr, "sandbox: "+f+"\n", a...) }
	}
	s, err := sandbox.Start(context.Background(), opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "cmd/raydar tests: starting the sandbox:", err)
		return 1
	}
	defer func() {
		if err := s.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping the sandbox:", err)
		}
	}()
	sb = s
	if cl, err = client.New(s.Config, client.Options{Scheme: scheme.New()}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// auditLog points this test's audit log at a new file and returns its path.
func auditLog(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("XDG_STATE_HOME", dir)
	return filepath.Join(dir, "raydar", "audit.log")
}

// needSandbox skips without the sandbox and returns a generous context.
func needSandbox(t *testing.T) context.Context {
	t.Helper()
	if sb == nil {
		t.Skip("integration test: needs the sandbox control plane (skipped with -short)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func newNamespace(t *testing.T, ctx context.Context) string {
	t.Helper()
	name := "t-" + strings.ToLower(utilrand.String(6))
	if err := cl.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cl.Delete(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	})
	return name
}

// cliResult is what one in-process run of raydar printed.
type cliResult struct {
	stdout, stderr string
	err            error
}

// raydar runs the root command in-process with args, stdin as its input,
// against the sandbox's kubeconfig (when there is a sandbox), with the audit
// log in a per-test XDG_STATE_HOME.
func raydar(t *testing.T, stdin string, args ...string) cliResult {
	t.Helper()
	return raydarIn(t, strings.NewReader(stdin), args...)
}

func raydarIn(t *testing.T, stdin io.Reader, args ...string) cliResult {
	t.Helper()
	cmd := newRootCmd()
	if sb != nil {
		args = append([]string{"--kubeconfig", sb.KubeconfigPath}, args...)
	} else {
		args = append([]string{"--kubeconfig", os.DevNull}, args...)
	}
	cmd.SetArgs(args)
	var out, errb bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errb)
	cmd.SetIn(stdin)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := cmd.ExecuteContext(ctx)
	return cliResult{out.String(), errb.String(), err}
}

// TestExitCode runs the real main: bad input gives "error: …" on stderr and
// exit code 1.
func TestExitCode(t *testing.T) {
	for _, args := range [][]string{
		{"scale", "my-cluster"},
		{"scale", "my-cluster", "cpu", "--replicas", "lots"},
		{"suspend", "deployment", "x"},
		{"get", "nodes"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			cmd := exec.Command(os.Args[0], append([]string{"-test.run=^$", "--"}, args...)...)
			cmd.Env = append(os.Environ(), mainEnv+"=1")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			ee, ok := err.(*exec.ExitError)
			if !ok || ee.ExitCode() != 1 {
				t.Fatalf("exit: %v; want code 1 (stderr %q)", err, stderr.String())
			}
			if !strings.HasPrefix(stderr.String(), "error: ") || stdout.Len() != 0 {
				t.Fatalf("stdout %q stderr %q", stdout.String(), stderr.String())
			}
		})
	}
}
