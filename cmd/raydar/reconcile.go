package main

import (
	"fmt"

	"k8s.io/client-go/rest"

	"github.com/raydar/raydar/controller"
	"github.com/raydar/raydar/kube/raydash"
	"github.com/raydar/raydar/kube/sandbox/addrbook"
)

// loopConfig says how to build the reconcile loop: the RayCluster operator
// with the RayJob and RayService reconcilers on its manager, so that all
// three share one cache (which the TUI reads too) and one leader election.
type loopConfig struct {
	operator controller.Options
	// book is the sandbox's address book of simulated Ray heads
	// (sandboxBookFor); nil reaches dashboards through service DNS in a pod
	// and the API server's service proxy outside.
	book *addrbook.Book
}

// newReconcileLoop builds the reconcile loop for all three kinds. Start it
// with Operator.Start.
func newReconcileLoop(cfg *rest.Config, lc loopConfig) (*controller.Operator, error) {
	op, err := controller.New(cfg, lc.operator)
	if err != nil {
		return nil, err
	}
	dash, err := newDashboards(cfg, lc.book, raydash.SecretsFromReader(op.Client()))
	if err != nil {
		return nil, err
	}
	if err := controller.SetupRayJobReconciler(op.Manager(), controller.RayJobOptions{Operator: op, Dashboards: dash}); err != nil {
		return nil, fmt.Errorf("RayJob reconciler: %w", err)
	}
	if err := controller.SetupRayServiceReconciler(op.Manager(), controller.RayServiceOptions{Operator: op, Dashboards: dash, ProxyChecker: serveProxies(lc.book)}); err != nil {
		return nil, fmt.Errorf("RayService reconciler: %w", err)
	}
	return op, nil
}
