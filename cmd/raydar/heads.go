package main

import (
	"context"
	"fmt"
	"path/filepath"

	"k8s.io/client-go/dynamic"

	"github.com/raydar/raydar/kube/raydash/addrbook"
	"github.com/raydar/raydar/kube/sandbox"
	"github.com/raydar/raydar/kube/sandbox/execsim"
	"github.com/raydar/raydar/kube/sandbox/headsim"
	"github.com/raydar/raydar/kube/sandbox/podforward"
	"github.com/raydar/raydar/kube/sandbox/rayhead"
)

// simHeads are a sandbox's simulated Ray heads and the PortForwards that lead
// to them. Close stops both; the caller's context does not (`raydar demo`
// quits on :q with its context still alive, and a watch left open would keep
// the sandbox's API server from stopping).
type simHeads struct {
	sim *headsim.Sim
	fwd *podforward.Writer
	exe *execsim.Writer
}

// Close stops the PortForward and Exec writers (they read the heads'
// addresses), then the heads and their jobs. It is safe to call more than
// once.
func (h *simHeads) Close() error {
	h.fwd.Close()
	h.exe.Close()
	return h.sim.Close()
}

// startPodForwards keeps kwok's PortForward objects of head pods pointing at
// their simulated heads (kube/sandbox/podforward) until the Writer is closed.
func startPodForwards(ctx context.Context, sb *sandbox.Sandbox, heads podforward.Heads, logf func(string, ...any)) (*podforward.Writer, error) {
	dyn, err := dynamic.NewForConfig(sb.Config)
	if err != nil {
		return nil, err
	}
	return podforward.Start(ctx, podforward.Options{Clientset: sb.Clientset(), Dynamic: dyn, Heads: heads, Logf: logf})
}

// startHeads simulates the Ray heads of the sandbox's RayClusters, as kwok
// simulates kubelets (kube/sandbox/headsim), and publishes where they listen:
// the address book in the sandbox's state directory, recorded in its
// kubeconfig, so that any raydar pointed at that kubeconfig (an operator or
// a TUI in another process, or this process's own loop) reaches them.
// `raydar sandbox` and `raydar demo` both start their heads here; both close
// them before they stop the sandbox.
func startHeads(ctx context.Context, sb *sandbox.Sandbox, logf func(string, ...any)) (*simHeads, error) {
	book := filepath.Join(sb.StateDir, addrbook.FileName)
	sim, err := headsim.Start(ctx, headsim.Options{
		Config:       sb.Config,
		SetPodPhase:  sb.SetPodPhase,
		EndContainer: sb.EndContainer,
		Logf:         logf,
		AddressBook:  book,
		// Clusters with enableInTreeAutoscaling scale as Ray's autoscaler
		// would scale them (kube/sandbox/autoscaler).
		Autoscaler: &headsim.AutoscalerOptions{},
		// The logs of an executed job say so, as a played-out job's do.
		Head: rayhead.Options{AnnounceExecution: true},
	})
	if err != nil {
		return nil, fmt.Errorf("simulated Ray heads: %w", err)
	}
	if err := addrbook.Advertise(sb.KubeconfigPath, book); err != nil {
		_ = sim.Close()
		return nil, fmt.Errorf("simulated Ray heads: %w", err)
	}
	// Port-forwards to head pods (raydar port-forward, shift-f) reach the
	// simulated heads through kwok.
	fwd, err := startPodForwards(ctx, sb, sim, logf)
	if err != nil {
		_ = sim.Close()
		return nil, fmt.Errorf("simulated Ray heads: %w", err)
	}
	// An exec into a Ray pod (raydar exec, the TUI's shell) runs here, and
	// its `ray status` asks the pod's simulated head (kube/sandbox/execsim).
	dyn, err := dynamic.NewForConfig(sb.Config)
	if err != nil {
		fwd.Close()
		_ = sim.Close()
		return nil, err
	}
	exe, err := execsim.Start(ctx, execsim.Options{Clientset: sb.Clientset(), Dynamic: dyn, Heads: sim, Home: sb.ExecHome(), Logf: logf})
	if err != nil {
		fwd.Close()
		_ = sim.Close()
		return nil, fmt.Errorf("simulated Ray containers' exec: %w", err)
	}
	return &simHeads{sim: sim, fwd: fwd, exe: exe}, nil
}
