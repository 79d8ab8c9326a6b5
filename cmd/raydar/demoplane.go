package main

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"

	"github.com/raydar/raydar/kube/sandbox"
	"github.com/raydar/raydar/kube/sandbox/certsim"
	"github.com/raydar/raydar/kube/sandbox/gatewaysim"
	"github.com/raydar/raydar/kube/sandbox/seed"
)

// demoPlane is one sandbox of a demo (raydar demo has one, demo --fleet
// two): the control plane, its simulated heads, cert-manager and Gateway
// controller, the demo's workloads seeded and kept moving.
type demoPlane struct {
	sb    *sandbox.Sandbox
	heads *simHeads
	certs *certsim.Sim // nil without cert-manager's CRDs
	// gateways is the simulated Gateway controller; nil without the
	// Gateway API's CRDs, and then the RayService upgrades with NewCluster.
	gateways *gatewaysim.Sim
	// stopDrive stops the workloads' drivers.
	stopDrive context.CancelFunc
}

// startDemoPlane starts a demo sandbox with opts and seeds it, saying each
// step with step (prefixed "LABEL: " when label is not empty) and logging
// the components' lines to logger. On error what was started is stopped.
func startDemoPlane(ctx context.Context, opts sandbox.Options, label string, logger logr.Logger, step func(string, ...any)) (_ *demoPlane, err error) {
	prefix := ""
	if label != "" {
		prefix = label + ": "
	}
	logf := func(component string) func(string, ...any) {
		return func(format string, args ...any) { logger.Info(prefix + component + fmt.Sprintf(format, args...)) }
	}
	step(prefix + "starting the sandbox control plane (etcd, kube-apiserver, scheduler, controller-manager, kwok)…")
	begin := time.Now()
	opts.Logf = logf("sandbox: ")
	if opts.Kwok && opts.RayCLI == nil {
		opts.RayCLI = rayCLI() // sandboxray.go: `ray status` in an exec
	}
	p := &demoPlane{stopDrive: func() {}}
	if p.sb, err = sandbox.Start(ctx, opts); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			p.close()
			_ = p.sb.Stop()
		}
	}()
	step("%ssandbox ready in %s; kubeconfig %s", prefix, time.Since(begin).Round(100*time.Millisecond), p.sb.KubeconfigPath)
	if p.heads, err = startHeads(ctx, p.sb, logf("headsim: ")); err != nil {
		return nil, err
	}
	certs, certLine, err := startCertManager(ctx, p.sb, logf(""))
	if err != nil {
		return nil, err
	}
	p.certs = certs
	step("%scert-manager: %s", prefix, certLine)
	gateways, gatewayLine, err := startGateway(ctx, p.sb, logf(""))
	if err != nil {
		return nil, err
	}
	p.gateways = gateways
	step("%sgateways: %s", prefix, gatewayLine)
	seedClient, err := seed.NewClient(p.sb.Config)
	if err != nil {
		return nil, err
	}
	step("%sseeding RayClusters, RayJobs, a RayService and a RayCronJob in namespace %s…", prefix, seed.DefaultNamespace)
	seedOpts := seed.Options{Heads: p.heads.sim, Logf: logf("seed: ")}
	if gateways != nil {
		// The RayService upgrades incrementally, through the simulated
		// Gateway (NewClusterWithIncrementalUpgrade).
		seedOpts.GatewayClass = gatewaysim.ClassName
	}
	if err := seed.Seed(ctx, seedClient, seedOpts); err != nil {
		return nil, fmt.Errorf("%sseeding: %w", prefix, err)
	}
	driveCtx, stopDrive := context.WithCancel(ctx)
	p.stopDrive = stopDrive
	go seed.Drive(driveCtx, seedClient, seedOpts)
	return p, nil
}

// close stops the drivers, cert-manager, the Gateway controller and the heads: everything but the
// sandbox, which the demo stops (both of demo --fleet's at once).
func (p *demoPlane) close() {
	p.stopDrive()
	if p.certs != nil {
		p.certs.Close()
	}
	if p.gateways != nil {
		p.gateways.Close()
	}
	if p.heads != nil {
		_ = p.heads.Close()
	}
}
