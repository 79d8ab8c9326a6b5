package deploy

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/raydar/raydar/kube/sandbox"
	"github.com/raydar/raydar/kube/sandbox/sandboxtest"
	"github.com/raydar/raydar/rayapi/crds"
)

// One sandbox (API server, scheduler, controller-manager, kwok, one node,
// the ray.io CRDs) serves every test of the package; with -short none
// starts and the tests that need it skip.
var sb *sandbox.Sandbox

func TestMain(m *testing.M) {
	flag.Parse()
	ctrllog.SetLogger(logr.Discard())
	if testing.Short() {
		code := m.Run()
		removeOperatorBuild()
		os.Exit(code)
	}
	sandboxtest.MustExclusive()
	opts := sandbox.Full()
	opts.Nodes = []sandbox.NodePool{{Count: 1, CPU: "32", Memory: "128Gi"}}
	opts.CRDs = [][]byte{crds.YAML()}
	begin := time.Now()
	s, err := sandbox.Start(context.Background(), opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "test/deploy: starting the sandbox:", err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "sandbox started in %s\n", time.Since(begin).Round(time.Millisecond))
	sb = s
	code := m.Run()
	removeOperatorBuild()
	if err := s.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stopping the sandbox:", err)
		code = 1
	}
	os.Exit(code)
}

func needSandbox(t *testing.T) {
	t.Helper()
	if sb == nil {
		t.Skip("integration test: needs the sandbox control plane (skipped with -short)")
	}
}

// removeOperatorBuild removes the raydar-operator the tests built
// (operatorBinary).
func removeOperatorBuild() {
	if operatorBuildDir != "" {
		_ = os.RemoveAll(operatorBuildDir)
	}
}
