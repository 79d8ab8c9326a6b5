package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/raydar/raydar/kube"
	"github.com/raydar/raydar/kube/sandbox"
	"github.com/raydar/raydar/kube/sandbox/seed"
)

// fleetDemoContexts are the contexts of raydar demo --fleet's two
// sandboxes, and the names of their state directories under --state-dir.
var fleetDemoContexts = [2]string{"raydar-demo-east", "raydar-demo-west"}

// runFleetDemo is raydar demo --fleet: two sandboxes, each as the demo's
// (simulated heads and cert-manager, seeded workloads that keep moving),
// one kubeconfig naming both, and the fleet view on them with the
// reconcile loop on each. Quitting stops both.
func runFleetDemo(parent context.Context, progress io.Writer, tf *tuiFlags, stateDir string) error {
	ctx, logger, step, done, err := startDemo(parent, progress, tf)
	if err != nil {
		return err
	}
	defer done()
	var (
		kubeconfigs []string
		planes      []*sandbox.Sandbox
	)
	// Registered first, so it runs last (after the heads, certsim and the
	// drivers): both sandboxes stop at once, a quit as fast as one's.
	defer func() {
		var wg sync.WaitGroup
		for i, sb := range planes {
			wg.Add(1)
			go func() {
				defer wg.Done()
				step("%s: stopping the sandbox…", fleetDemoContexts[i])
				if err := sb.Stop(); err != nil {
					step("%s: stopping the sandbox: %v", fleetDemoContexts[i], err)
				}
			}()
		}
		wg.Wait()
	}()
	for _, name := range fleetDemoContexts {
		step("%s: starting a sandbox control plane (etcd, kube-apiserver, scheduler, controller-manager, kwok)…", name)
		begin := time.Now()
		opts := seed.SandboxOptions()
		opts.ContextName = name
		if stateDir != "" {
			opts.StateDir = filepath.Join(stateDir, strings.TrimPrefix(name, "raydar-demo-"))
		}
		opts.Logf = func(format string, args ...any) { logger.Info(name + ": sandbox: " + fmt.Sprintf(format, args...)) }
		sb, err := sandbox.Start(ctx, opts)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		planes = append(planes, sb)
		step("%s: sandbox ready in %s; kubeconfig %s", name, time.Since(begin).Round(100*time.Millisecond), sb.KubeconfigPath)
		logf := func(format string, args ...any) { logger.Info(name + ": " + fmt.Sprintf(format, args...)) }
		sim, err := startHeads(ctx, sb, logf)
		if err != nil {
			return err
		}
		defer func() { _ = sim.Close() }()
		certs, certLine, err := startCertManager(ctx, sb, logf)
		if err != nil {
			return err
		}
		if certs != nil {
			defer certs.Close()
		}
		step("%s: cert-manager: %s", name, certLine)
		seedClient, err := seed.NewClient(sb.Config)
		if err != nil {
			return err
		}
		step("%s: seeding RayClusters, RayJobs, a RayService and a RayCronJob in namespace %s…", name, seed.DefaultNamespace)
		seedOpts := seed.Options{Heads: sim.sim, Logf: logf}
		if err := seed.Seed(ctx, seedClient, seedOpts); err != nil {
			return fmt.Errorf("%s: seeding: %w", name, err)
		}
		driveCtx, stopDrive := context.WithCancel(ctx)
		defer stopDrive()
		go seed.Drive(driveCtx, seedClient, seedOpts)
		kubeconfigs = append(kubeconfigs, sb.KubeconfigPath)
	}
	dir := stateDir
	if dir == "" {
		d, err := os.MkdirTemp("", "raydar-demo-fleet-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	merged := filepath.Join(dir, "kubeconfig")
	if err := kube.MergeKubeconfigs(merged, kubeconfigs); err != nil {
		return err
	}
	step("both sandboxes ready; KUBECONFIG=%s names %s", merged, strings.Join(fleetDemoContexts[:], " and "))
	flags := kube.Flags{Kubeconfig: merged, Context: strings.Join(fleetDemoContexts[:], ","), Namespace: seed.DefaultNamespace}
	if !tf.readOnly && !tf.noReconcile {
		// The demo reconciles its own sandboxes, as raydar demo does.
		tf.reconcileContexts, tf.reconcileSet = fleetDemoContexts[:], true
	}
	return runFleetTUI(ctx, flags, tf, logger)
}
