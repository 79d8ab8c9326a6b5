package seed

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/raydar/raydar/controller"
	"github.com/raydar/raydar/kube/sandbox"
	"github.com/raydar/raydar/kube/sandbox/gatewaysim"
	"github.com/raydar/raydar/kube/sandbox/headsim"
	"github.com/raydar/raydar/kube/sandbox/sandboxtest"
)

// One sandbox shaped by SandboxOptions, the simulated heads and the reconcile
// loop serve every integration test of this package, as they serve
// `raydar demo`. With -short none starts and those tests skip.
var (
	sb  *sandbox.Sandbox
	sim *headsim.Sim
	op  *controller.Operator
	cl  client.Client
)

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run())
	}
	sandboxtest.MustExclusive()
	ctrllog.SetLogger(testLogger())
	code, err := runWithSandbox(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "seed tests:", err)
		code = 1
	}
	os.Exit(code)
}

func runWithSandbox(m *testing.M) (code int, err error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	opts := SandboxOptions()
	if os.Getenv("RAYDAR_TEST_LOG") != "" {
		opts.Logf = func(f string, a ...any) { fmt.Fprintf(os.Stderr, "sandbox: "+f+"\n", a...) }
	}
	if sb, err = sandbox.Start(ctx, opts); err != nil {
		return 1, fmt.Errorf("starting the sandbox: %w", err)
	}
	defer func() {
		if err := sb.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping the sandbox:", err)
		}
	}()
	if cl, err = NewClient(sb.Config); err != nil {
		return 1, err
	}
	if sim, err = headsim.Start(ctx, headsim.Options{
		Config: sb.Config, SetPodPhase: sb.SetPodPhase, EndContainer: sb.EndContainer, Logf: testLogf("headsim"),
		Autoscaler: &headsim.AutoscalerOptions{Interval: time.Second}, // ClusterElastic's, as in the demo
	}); err != nil {
		return 1, fmt.Errorf("starting headsim: %w", err)
	}
	defer func() { _ = sim.Close() }()
	// The Gateway API and its simulated controller, before the loop
	// starts, as raydar demo has them: the seeded RayService upgrades
	// incrementally through them (Options.GatewayClass).
	crds, err := gatewaysim.CRDs(sb.ToolsDir)
	if err != nil {
		return 1, err
	}
	if err := sb.InstallCRDs(ctx, crds...); err != nil {
		return 1, fmt.Errorf("installing the Gateway API's CRDs: %w", err)
	}
	gateways, err := gatewaysim.Start(ctx, gatewaysim.Options{Config: sb.Config, Logf: testLogf("gatewaysim")})
	if err != nil {
		return 1, err
	}
	defer gateways.Close()
	if op, err = controller.New(sb.Config, controller.Options{
		DisableLeaderElection: true,
		IgnoreOtherOperators:  true,
		StatusCoalesceWindow:  200 * time.Millisecond,
		Logger:                testLogger(),
		// Dashboards and Serve proxies through the simulated heads, as the
		// demo does.
		AddressBook: sim,
	}); err != nil {
		return 1, err
	}
	done := make(chan error, 1)
	go func() { done <- op.Start(ctx) }()
	defer func() {
		cancel()
		<-done
	}()
	return m.Run(), nil
}

func testLogger() logr.Logger {
	if os.Getenv("RAYDAR_TEST_LOG") == "" {
		return logr.Discard()
	}
	return funcr.New(func(prefix, args string) { fmt.Fprintln(os.Stderr, time.Now().Format("15:04:05.000"), prefix, args) },
		funcr.Options{Verbosity: 1})
}

func testLogf(who string) func(string, ...any) {
	if os.Getenv("RAYDAR_TEST_LOG") == "" {
		return nil
	}
	return func(f string, a ...any) {
		fmt.Fprintln(os.Stderr, time.Now().Format("15:04:05.000"), who+": "+fmt.Sprintf(f, a...))
	}
}

func needSandbox(t *testing.T) {
	t.Helper()
	if sb == nil {
		t.Skip("integration test: needs the sandbox control plane (skipped with -short)")
	}
}

// eventually checks cond every 200 ms until it holds, or fails the test
// after timeout with cond's last message.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, msg := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s; last: %s", timeout, what, msg)
		}
		<-tick.C
	}
}
