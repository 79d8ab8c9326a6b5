package crds

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
)

// sb is the package's one control plane (etcd and kube-apiserver with the
// ray.io CRDs installed). It is nil under -short; tests that need it call
// sandboxFor, which skips them then.
var sb *sandbox.Sandbox

func TestMain(m *testing.M) {
	// envtest logs through controller-runtime, which warns (with a stack
	// trace) when no logger was set 30 seconds into the process.
	ctrllog.SetLogger(logr.Discard())
	flag.Parse()
	if !testing.Short() {
		sandboxtest.MustExclusive()
		begin := time.Now()
		var err error
		sb, err = sandbox.Start(context.Background(), sandbox.Options{CRDs: [][]byte{YAML()}})
		if err != nil {
			fmt.Fprintln(os.Stderr, "starting the sandbox:", err)
			os.Exit(1)
		}
		fmt.Fprintf(os.Stderr, "sandbox started in %s\n", time.Since(begin).Round(time.Millisecond))
	}
	code := m.Run()
	if sb != nil {
		if err := sb.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping the sandbox:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// sandboxFor returns the package's sandbox, skipping the test under -short.
func sandboxFor(t *testing.T) *sandbox.Sandbox {
	t.Helper()
	if testing.Short() || sb == nil {
		t.Skip("integration test: needs a kube-apiserver (not run with -short)")
	}
	return sb
}
