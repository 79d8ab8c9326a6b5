package main

import (
	"context"
	"fmt"
	"slices"

	"github.com/raydar/raydar/kube/sandbox"
	"github.com/raydar/raydar/kube/sandbox/gangsim"
)

// sandboxBatchSchedulers are the gang schedulers `raydar sandbox
// --batch-scheduler` simulates: all four of KubeRay's.
var sandboxBatchSchedulers = gangsim.Schedulers

// checkSandboxBatchScheduler refuses a --batch-scheduler the sandbox does
// not simulate ("" is none).
func checkSandboxBatchScheduler(name string) error {
	if name == "" || slices.Contains(sandboxBatchSchedulers, name) {
		return nil
	}
	return fmt.Errorf("--batch-scheduler %s: the sandbox simulates only %v", name, sandboxBatchSchedulers)
}

// startGangScheduler installs the scheduler's CRDs (Volcano's,
// scheduler-plugins' PodGroup; none for yunikorn and kai-scheduler) into
// the sandbox and starts the simulated gang scheduler
// (kube/sandbox/gangsim) for `raydar sandbox --batch-scheduler NAME`; line
// says what runs, for the start-up lines.
func startGangScheduler(ctx context.Context, sb *sandbox.Sandbox, name string, logf func(string, ...any)) (sim *gangsim.Sim, line string, err error) {
	if err := checkSandboxBatchScheduler(name); err != nil {
		return nil, "", err
	}
	crds, err := gangsim.CRDsFor(sb.ToolsDir, name)
	if err != nil {
		return nil, "", err
	}
	if len(crds) > 0 {
		if err := sb.InstallCRDs(ctx, crds...); err != nil {
			return nil, "", fmt.Errorf("%s's CRDs: %w", name, err)
		}
	}
	sim, err = gangsim.Start(ctx, gangsim.Options{Config: sb.Config, Scheduler: name, Logf: logf})
	if err != nil {
		return nil, "", err
	}
	return sim, gangSchedulerLines[name], nil
}

// gangSchedulerLines say what the sandbox runs in each scheduler's stead.
var gangSchedulerLines = map[string]string{
	"volcano": "volcano, simulated (gangsim), not Volcano: Volcano's PodGroup and Queue CRDs; a PodGroup's pods " +
		"are bound only when minMember of them exist and all fit at once, and its phase set Running or Pending; " +
		"no queues, priorities, preemption; run raydar with --batch-scheduler volcano",
	"yunikorn": "yunikorn, simulated (gangsim), not YuniKorn: pods of schedulerName yunikorn with task groups " +
		"(annotation yunikorn.apache.org/task-groups) are bound once all task groups' minMember fit at once, then as they come; " +
		"others one by one; no queues, placeholders kept, preemption; run raydar with --batch-scheduler yunikorn",
	"kai-scheduler": "kai-scheduler, simulated (gangsim), not KAI: pods of schedulerName kai-scheduler with a kai.scheduler/queue " +
		"label are bound per Ray cluster, all together or none (without the label they stay Pending, as under KAI); " +
		"gpu-fraction pods go to GPU nodes, fractions not counted; no Queue CRD, quotas, preemption; run raydar with --batch-scheduler kai-scheduler",
	"scheduler-plugins": "scheduler-plugins, simulated (gangsim), not its scheduler: scheduler-plugins' PodGroup CRD; pods of schedulerName " +
		"scheduler-plugins-scheduler in a PodGroup (label scheduling.x-k8s.io/pod-group) are bound only when minMember of them exist " +
		"and all fit at once, others one by one; no timeouts, preemption; run raydar with --batch-scheduler scheduler-plugins",
}
