package main

import (
	"fmt"

	"k8s.io/client-go/rest"

	"github.com/raydar/raydar/controller"
	"github.com/raydar/raydar/kube/raydash"
)

// loopConfig says how to build the reconcile loop: the RayCluster operator
// with the RayJob and RayService reconcilers on its manager, so that all
// three share one cache (which the TUI reads too) and one leader election.
type loopConfig struct {
	operator controller.Options
	// dashboards reaches Ray dashboards; nil picks service DNS in a pod and
	// the API server's service proxy outside.
	dashboards raydash.Resolver
	// proxies checks Serve proxies; nil picks the RayService reconciler's default.
	proxies controller.ServeProxyChecker
}

// newReconcileLoop builds the reconcile loop for all three kinds. Start it
// with Operator.Start.
func newReconcileLoop(cfg *rest.Config, lc loopConfig) (*controller.Operator, error) {
	op, err := controller.New(cfg, lc.operator)
	if err != nil {
		return nil, err
	}
	dash := lc.dashboards
	if dash == nil {
		r, err := raydash.New(raydash.Options{
			Config:          cfg,
			Secrets:         raydash.SecretsFromReader(op.Client()),
			HeadServiceName: controller.HeadServiceName,
		})
		if err != nil {
			return nil, fmt.Errorf("dashboard resolver: %w", err)
		}
		dash = r
	}
	if err := controller.SetupRayJobReconciler(op.Manager(), controller.RayJobOptions{Operator: op, Dashboards: dash}); err != nil {
		return nil, fmt.Errorf("RayJob reconciler: %w", err)
	}
	if err := controller.SetupRayServiceReconciler(op.Manager(), controller.RayServiceOptions{Operator: op, Dashboards: dash, ProxyChecker: lc.proxies}); err != nil {
		return nil, fmt.Errorf("RayService reconciler: %w", err)
	}
	return op, nil
}
