package main

import (
	"context"
	"fmt"
	"path/filepath"

	"k8s.io/client-go/dynamic"

	"github.com/raydar/raydar/kube/raydash/addrbook"
	"github.com/raydar/raydar/kube/sandbox"
	"github.com/raydar/raydar/kube/sandbox/headsim"
	"github.com/raydar/raydar/kube/sandbox/podforward"
	"github.com/raydar/raydar/kube/sandbox/rayhead"
)

// startPodForwards keeps kwok's PortForward objects of head pods pointing at
// their simulated heads (kube/sandbox/podforward) until ctx ends.
func startPodForwards(ctx context.Context, sb *sandbox.Sandbox, heads podforward.Heads, logf func(string, ...any)) error {
	dyn, err := dynamic.NewForConfig(sb.Config)
	if err != nil {
		return err
	}
	w, err := podforward.Start(ctx, podforward.Options{Clientset: sb.Clientset(), Dynamic: dyn, Heads: heads, Logf: logf})
	if err != nil {
		return err
	}
	go func() { <-ctx.Done(); w.Close() }()
	return nil
}

// startHeads simulates the Ray heads of the sandbox's RayClusters, as kwok
// simulates kubelets (kube/sandbox/headsim), and publishes where they listen:
// the address book in the sandbox's state directory, recorded in its
// kubeconfig, so that any raydar pointed at that kubeconfig (an operator or
// a TUI in another process, or this process's own loop) reaches them.
// `raydar sandbox` and `raydar demo` both start their heads here.
func startHeads(ctx context.Context, sb *sandbox.Sandbox, logf func(string, ...any)) (*headsim.Sim, error) {
	book := filepath.Join(sb.StateDir, addrbook.FileName)
	sim, err := headsim.Start(ctx, headsim.Options{
		Config:       sb.Config,
		SetPodPhase:  sb.SetPodPhase,
		EndContainer: sb.EndContainer,
		Logf:         logf,
		AddressBook:  book,
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
	// simulated heads through kwok; the writer lives as long as ctx.
	if err := startPodForwards(ctx, sb, sim, logf); err != nil {
		_ = sim.Close()
		return nil, fmt.Errorf("simulated Ray heads: %w", err)
	}
	return sim, nil
}
