package main

import (
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/raydar/raydar/cmd/internal/operatorcmd"
	"github.com/raydar/raydar/controller"
	"github.com/raydar/raydar/kube/raydash/addrbook"
)

// loopConfig says how to build the reconcile loop: one operator for every
// ray.io kind (rayapi/kinds' Ray) on one cache (which the TUI reads too)
// and one leader election.
type loopConfig struct {
	operator controller.Options
	// book is the sandbox's address book of simulated Ray heads
	// (sandboxBookFor); nil reaches dashboards through service DNS in a pod
	// and the API server's service proxy outside.
	book *addrbook.Book
}

// newReconcileLoop builds the reconcile loop for all kinds (the operator
// command's, operatorcmd.NewLoop). Start it with Operator.Start.
func newReconcileLoop(cfg *rest.Config, lc loopConfig) (*controller.Operator, error) {
	o := lc.operator
	if o.PodTransform == nil {
		// The TUI's views read pods from this cache (containers, images,
		// resources): keep them whole, not only what the reconcilers read.
		o.PodTransform = cache.TransformStripManagedFields()
	}
	return operatorcmd.NewLoop(cfg, o, lc.book)
}
