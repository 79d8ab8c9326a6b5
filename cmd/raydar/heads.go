package main

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/raydar/raydar/kube/sandbox"
	"github.com/raydar/raydar/kube/sandbox/addrbook"
	"github.com/raydar/raydar/kube/sandbox/headsim"
	"github.com/raydar/raydar/kube/sandbox/rayhead"
)

// startHeads simulates the Ray heads of the sandbox's RayClusters, as kwok
// simulates kubelets (kube/sandbox/headsim), and publishes where they listen:
// the address book in the sandbox's state directory, recorded in its
// kubeconfig, so that any raydar pointed at that kubeconfig (an operator or
// a TUI in another process, or this process's own loop) reaches them.
// `raydar sandbox` and `raydar demo` both start their heads here.
func startHeads(ctx context.Context, sb *sandbox.Sandbox, logf func(string, ...any)) (*headsim.Sim, error) {
	book := filepath.Join(sb.StateDir, addrbook.FileName)
	sim, err := headsim.Start(ctx, headsim.Options{
		Config:      sb.Config,
		SetPodPhase: sb.SetPodPhase,
		Logf:        logf,
		AddressBook: book,
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
	return sim, nil
}
