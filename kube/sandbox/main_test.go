//go:build linux

package sandbox

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// One sandbox serves every test of the package that does not need its own;
// it is started by the first test that asks for it and stopped by TestMain.
var (
	sharedOnce sync.Once
	shared     *Sandbox
	sharedErr  error
)

// sharedOptions: scheduler, controller-manager, kwok, two nodes, test CRDs,
// the audit log.
func sharedOptions() Options {
	return Options{
		Audit:             true,
		Scheduler:         true,
		ControllerManager: true,
		Kwok:              true,
		Nodes:             []NodePool{{Count: 2, NamePrefix: "test-node", CPU: "8", Memory: "32Gi", GPU: 2, Labels: map[string]string{"pool": "test"}}},
		CRDs:              [][]byte{[]byte(testCRDs)},
	}
}

// sandboxFor returns the shared sandbox, skipping the test in -short mode.
func sandboxFor(t testing.TB) *Sandbox {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: starts a control plane")
	}
	sharedOnce.Do(func() {
		begin := time.Now()
		opts := sharedOptions()
		if testing.Verbose() {
			opts.Logf = func(format string, args ...any) {
				fmt.Fprintf(os.Stderr, "sandbox %6.2fs: "+format+"\n", append([]any{time.Since(begin).Seconds()}, args...)...)
			}
		}
		shared, sharedErr = Start(context.Background(), opts)
		if sharedErr == nil {
			fmt.Fprintf(os.Stderr, "shared sandbox started in %s\n", time.Since(begin).Round(time.Millisecond))
		}
	})
	if sharedErr != nil {
		t.Fatalf("starting the shared sandbox: %v", sharedErr)
	}
	return shared
}

// childStateEnv makes the test binary a sandbox-holding child process (see
// TestChildrenDieWithParent) instead of running tests.
const childStateEnv = "RAYDAR_SANDBOX_TEST_CHILD_STATE_DIR"

func TestMain(m *testing.M) {
	// envtest logs through controller-runtime, which warns (with a stack
	// trace) when no logger was set 30 seconds into the process.
	ctrllog.SetLogger(logr.Discard())
	if dir := os.Getenv(childStateEnv); dir != "" {
		runChild(dir)
		return
	}
	flag.Parse()
	if !testing.Short() {
		if err := Exclusive(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	code := m.Run()
	if shared != nil {
		begin := time.Now()
		if err := shared.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping the shared sandbox:", err)
			code = 1
		} else {
			fmt.Fprintf(os.Stderr, "shared sandbox stopped in %s\n", time.Since(begin).Round(time.Millisecond))
		}
	}
	os.Exit(code)
}

// runChild starts a sandbox in dir, says READY on stdout, and waits to be
// killed. It exits by itself after a while so that it can never linger.
func runChild(dir string) {
	sb, err := Start(context.Background(), Options{
		StateDir:          dir,
		StartTimeout:      2 * time.Minute, // the parent waits 3
		Scheduler:         true,
		ControllerManager: true,
		Kwok:              true,
		Nodes:             []NodePool{{Count: 1}},
	})
	if err != nil {
		fmt.Println("ERROR", strings.ReplaceAll(err.Error(), "\n", " | "))
		os.Exit(1)
	}
	fmt.Println("READY", sb.KubeconfigPath)
	time.Sleep(5 * time.Minute)
	_ = sb.Stop()
	os.Exit(3)
}

// waitForLine reads lines from the child's stdout until one starts with one of
// prefixes, or the deadline passes.
func waitForLine(t *testing.T, sc *bufio.Scanner, timeout time.Duration, prefixes ...string) string {
	t.Helper()
	lines := make(chan string)
	go func() {
		defer close(lines)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	deadline := time.After(timeout)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("child closed its output before %q", prefixes)
			}
			for _, p := range prefixes {
				if strings.HasPrefix(l, p) {
					go func() { // drain
						for range lines {
						}
					}()
					return l
				}
			}
		case <-deadline:
			t.Fatalf("no %q from the child within %s", prefixes, timeout)
		}
	}
}

// procsUnder returns the pids whose command line mentions dir.
func procsUnder(t *testing.T, dir string) map[int]string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	found := map[int]string{}
	for _, e := range entries {
		var pid int
		if _, err := fmt.Sscanf(e.Name(), "%d", &pid); err != nil || pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || len(b) == 0 {
			continue // gone, or a zombie
		}
		cmd := strings.ReplaceAll(string(b), "\x00", " ")
		if strings.Contains(cmd, dir) {
			found[pid] = cmd
		}
	}
	return found
}

// childAttrForTest makes the child test process die with this one too.
func childAttrForTest() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

const testCRDs = `
# Two CRDs in one stream, with an empty document and a comment-only one.
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.sandbox-test.raydar.io
spec:
  group: sandbox-test.raydar.io
  names: {kind: Widget, listKind: WidgetList, plural: widgets, singular: widget}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
---
---
# nothing here
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.sandbox-test.raydar.io
spec:
  group: sandbox-test.raydar.io
  names: {kind: Gadget, listKind: GadgetList, plural: gadgets, singular: gadget}
  scope: Cluster
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
`
