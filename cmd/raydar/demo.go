package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"

	"github.com/raydar/raydar/kube"
	"github.com/raydar/raydar/kube/history"
	"github.com/raydar/raydar/kube/sandbox/seed"
)

// newDemoCmd runs the TUI on a local sandbox seeded with live workloads.
func newDemoCmd() *cobra.Command {
	var (
		tf       tuiFlags
		stateDir string
		headless bool
		fleet    bool
	)
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Open the TUI on a local sandbox with live Ray workloads (no cluster needed)",
		Long: `Start a real control plane on loopback (etcd, kube-apiserver, scheduler,
controller-manager, kwok fake nodes), simulated Ray heads and cert-manager
(certsim: see raydar sandbox --help), the embedded reconcile
loop, seed RayClusters, RayJobs, a RayService and a RayCronJob (a small job
every minute) that keep changing, and open the TUI on them. Quitting stops everything; no process is left behind.

--state-dir keeps the sandbox's logs and kubeconfig (<state-dir>/kubeconfig)
in a directory of your choice, so kubectl can look at the same cluster while
the demo runs. --headless runs everything but the TUI until Ctrl-C, recording
history (raydar history) as the TUI does.

--fleet starts two such sandboxes, contexts raydar-demo-east and
raydar-demo-west (with --state-dir, in its east/ and west/), each seeded
alike, and opens the fleet view on both (see raydar --context a,b), the
demo's reconcile loop on each.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !cmd.Flags().Changed("gpu-idle-for") {
				// The demo's idle GPU (seed.ClusterGPUInfer) is to be
				// found within a minute, not after the default 10.
				tf.gpuIdle.after = demoGPUIdleFor
			}
			if fleet {
				if headless {
					return errors.New("--fleet and --headless: the fleet demo is the TUI on two sandboxes; run two `raydar demo --headless --state-dir DIR` instead")
				}
				return runFleetDemo(cmd.Context(), cmd.ErrOrStderr(), &tf, stateDir)
			}
			return runDemo(cmd.Context(), cmd.ErrOrStderr(), &tf, stateDir, headless)
		},
	}
	tf.addTo(cmd)
	cmd.Flags().StringVar(&stateDir, "state-dir", "", "directory for the sandbox's state and logs (default: a temporary directory, removed on exit)")
	cmd.Flags().BoolVar(&headless, "headless", false, "run the sandbox, reconcile loop and workloads without the TUI until Ctrl-C")
	cmd.Flags().BoolVar(&fleet, "fleet", false, "two sandboxes (contexts "+fleetDemoContexts[0]+", "+fleetDemoContexts[1]+") in the fleet view")
	return cmd
}

// demoGPUIdleFor is the demo's --gpu-idle-for unless given.
const demoGPUIdleFor = 30 * time.Second

// demoBatchScheduler refuses --batch-scheduler: the demo's clusters have
// no gang scheduler, so their pods would never be scheduled.
func demoBatchScheduler(tf *tuiFlags) error {
	if tf.batchScheduler == nil {
		return nil
	}
	return fmt.Errorf("raydar demo runs without a batch scheduler: --batch-scheduler %s is for the TUI and the operator "+
		"(on a sandbox: raydar sandbox --batch-scheduler %s)", tf.batchScheduler.Name(), tf.batchScheduler.Name())
}

// startDemo is what both demos do first: refuse what they cannot do
// (--batch-scheduler, a bad start view) before any sandbox starts, open
// the log, stop on Ctrl-C or SIGTERM, and say each step on progress and in
// the log. done closes the log and the signal handler.
func startDemo(parent context.Context, progress io.Writer, tf *tuiFlags) (ctx context.Context, logger logr.Logger, step func(string, ...any), done func(), err error) {
	if err := demoBatchScheduler(tf); err != nil {
		return nil, logr.Discard(), nil, nil, err
	}
	if _, err := tf.startView(); err != nil {
		return nil, logr.Discard(), nil, nil, err
	}
	logger, closeLog, err := openLog(tf.logFile)
	if err != nil {
		return nil, logr.Discard(), nil, nil, err
	}
	ctx, stop := signal.NotifyContext(parent, os.Interrupt, syscall.SIGTERM)
	step = func(format string, args ...any) {
		fmt.Fprintf(progress, "raydar demo: "+format+"\n", args...)
		logger.Info(fmt.Sprintf(format, args...))
	}
	return ctx, logger, step, func() { stop(); closeLog() }, nil
}

func runDemo(parent context.Context, progress io.Writer, tf *tuiFlags, stateDir string, headless bool) error {
	if err := tf.gpuIdle.check(); err != nil {
		return err
	}
	ctx, logger, step, done, err := startDemo(parent, progress, tf)
	if err != nil {
		return err
	}
	defer done()

	opts := seed.SandboxOptions()
	opts.StateDir = stateDir
	plane, err := startDemoPlane(ctx, opts, "", logger, step)
	if err != nil {
		return err
	}
	sb := plane.sb
	defer func() {
		step("stopping the sandbox…")
		if err := sb.Stop(); err != nil {
			step("stopping the sandbox: %v", err)
		}
	}()
	defer plane.close()

	// The demo's own loop reaches the heads as any other raydar pointed at
	// its kubeconfig does: through the address book the kubeconfig names.
	flags := kube.Flags{Kubeconfig: sb.KubeconfigPath, Namespace: seed.DefaultNamespace}
	target, err := flags.Resolve()
	if err != nil {
		return err
	}
	book, err := sandboxBookFor(flags)
	if err != nil {
		return err
	}
	sc := sessionConfig{
		reconcile: true,
		book:      book,
		logger:    logger,
		readOnly:  tf.readOnly,
		gpuIdle:   tf.gpuIdle,
	}
	sc.operator.FeatureGates = tf.featureGates
	// The loop stands for election like any raydar: another raydar pointed
	// at the demo's kubeconfig then only observes. The demo's loop is the
	// first candidate, so it leads at once.

	if headless {
		return runHeadless(ctx, target, sc, history.DefaultPathOrEmpty(), func(where string) {
			step("running headless; %s; export KUBECONFIG=%s ; Ctrl-C stops", where, sb.KubeconfigPath)
		})
	}
	return runTUI(ctx, flags, target, sc, tf, logger)
}

// runHeadless runs the session (the demo's reconcile loop) without the TUI
// until ctx ends, recording history into historyFile as the TUI and raydar
// operator do (kube/history: in memory when the file is held by another
// raydar). ready gets where the history goes once the session runs.
func runHeadless(ctx context.Context, target *kube.Target, sc sessionConfig, historyFile string, ready func(where string)) error {
	store := history.OpenOrMemory(historyFile, sc.logger)
	defer func() {
		if err := store.Close(); err != nil {
			sc.logger.Error(err, "closing the history store")
		}
	}()
	sc.history = store
	s, err := connect(ctx, target, sc)
	if err != nil {
		return err
	}
	defer s.Close()
	where := store.Note()
	if where == "" {
		where = "recording history into " + store.Path()
	}
	ready(where)
	<-ctx.Done()
	return nil
}
