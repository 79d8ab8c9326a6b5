package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/raydar/raydar/kube"
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
		planes      []*demoPlane
	)
	// Registered first, so it runs last: both sandboxes stop at once, a
	// quit as fast as one's.
	defer func() {
		var wg sync.WaitGroup
		for i, p := range planes {
			wg.Go(func() {
				step("%s: stopping the sandbox…", fleetDemoContexts[i])
				if err := p.sb.Stop(); err != nil {
					step("%s: stopping the sandbox: %v", fleetDemoContexts[i], err)
				}
			})
		}
		wg.Wait()
	}()
	for _, name := range fleetDemoContexts {
		opts := seed.SandboxOptions()
		opts.ContextName = name
		if stateDir != "" {
			opts.StateDir = filepath.Join(stateDir, strings.TrimPrefix(name, "raydar-demo-"))
		}
		p, err := startDemoPlane(ctx, opts, name, logger, step)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		planes = append(planes, p)
		defer p.close()
		kubeconfigs = append(kubeconfigs, p.sb.KubeconfigPath)
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
