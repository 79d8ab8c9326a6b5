package portforward

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/raydar/raydar/kube/sandbox"
	"github.com/raydar/raydar/kube/sandbox/headsim"
	"github.com/raydar/raydar/kube/sandbox/podforward"
	"github.com/raydar/raydar/kube/sandbox/sandboxtest"
	"github.com/raydar/raydar/rayapi/crds"

	"k8s.io/client-go/dynamic"
)

// One sandbox (kwok serving port-forward), the simulated heads and the
// PortForward writer serve every integration test of this package. With
// -short none starts and those tests skip.
var (
	sb  *sandbox.Sandbox
	sim *headsim.Sim
)

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run())
	}
	sandboxtest.MustExclusive()
	ctrllog.SetLogger(logr.Discard())
	code, err := run(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "portforward tests:", err)
		code = 1
	}
	os.Exit(code)
}

func run(m *testing.M) (int, error) {
	ctx := context.Background()
	var err error
	sb, err = sandbox.Start(ctx, sandbox.Options{
		Scheduler: true, ControllerManager: true, Kwok: true,
		Nodes: []sandbox.NodePool{{Count: 1}},
		CRDs:  [][]byte{crds.YAML()},
	})
	if err != nil {
		return 1, err
	}
	defer func() { _ = sb.Stop() }()
	if sim, err = headsim.Start(ctx, headsim.Options{Config: sb.Config, SetPodPhase: sb.SetPodPhase, EndContainer: sb.EndContainer}); err != nil {
		return 1, err
	}
	defer func() { _ = sim.Close() }()
	dyn, err := dynamic.NewForConfig(sb.Config)
	if err != nil {
		return 1, err
	}
	w, err := podforward.Start(ctx, podforward.Options{Clientset: sb.Clientset(), Dynamic: dyn, Heads: sim})
	if err != nil {
		return 1, err
	}
	defer w.Close()
	return m.Run(), nil
}

func needSandbox(t *testing.T) {
	t.Helper()
	if sb == nil {
		t.Skip("integration test: needs the sandbox (skipped with -short)")
	}
}
