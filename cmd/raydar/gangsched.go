package main

import (
	"context"
	"fmt"
	"slices"

	"github.com/raydar/raydar/kube/sandbox"
	"github.com/raydar/raydar/kube/sandbox/gangsim"
)

// sandboxBatchSchedulers are the gang schedulers `raydar sandbox
// --batch-scheduler` simulates.
var sandboxBatchSchedulers = []string{gangsim.SchedulerName}

// checkSandboxBatchScheduler refuses a --batch-scheduler the sandbox does
// not simulate ("" is none).
func checkSandboxBatchScheduler(name string) error {
	if name == "" || slices.Contains(sandboxBatchSchedulers, name) {
		return nil
	}
	return fmt.Errorf("--batch-scheduler %s: the sandbox simulates only %v", name, sandboxBatchSchedulers)
}

// startGangScheduler installs Volcano's CRDs into the sandbox and starts
// the simulated gang scheduler (kube/sandbox/gangsim) for `raydar sandbox
// --batch-scheduler volcano`; line says what runs, for the start-up lines.
func startGangScheduler(ctx context.Context, sb *sandbox.Sandbox, name string, logf func(string, ...any)) (sim *gangsim.Sim, line string, err error) {
	if err := checkSandboxBatchScheduler(name); err != nil {
		return nil, "", err
	}
	crds, err := gangsim.CRDs(sb.ToolsDir)
	if err != nil {
		return nil, "", err
	}
	if err := sb.InstallCRDs(ctx, crds...); err != nil {
		return nil, "", fmt.Errorf("Volcano's CRDs: %w", err)
	}
	sim, err = gangsim.Start(ctx, gangsim.Options{Config: sb.Config, Logf: logf})
	if err != nil {
		return nil, "", err
	}
	return sim, gangSchedulerLine, nil
}

// gangSchedulerLine says what the sandbox runs in Volcano's stead.
const gangSchedulerLine = "volcano, simulated (gangsim), not Volcano: Volcano's PodGroup and Queue CRDs; a PodGroup's pods " +
	"are bound only when minMember of them exist and all fit at once, and its phase set Running or Pending; " +
	"no queues, priorities, preemption; run raydar with --batch-scheduler volcano"
