package main

import (
	"k8s.io/client-go/rest"

	"github.com/raydar/raydar/controller"
	"github.com/raydar/raydar/kube/sandbox/addrbook"
)

// loopConfig says how to build the reconcile loop: one operator for all
// three kinds (RayCluster, RayJob, RayService) on one cache (which the TUI
// reads too) and one leader election.
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
	opts := lc.operator
	// One process may run several loops one after another (the TUI's
	// :ctx builds one per context; tests run `raydar operator` in-process
	// more than once), and controller-runtime refuses a controller name it
	// has seen before in the process, even once that controller stopped.
	opts.SkipControllerNameValidation = true
	if lc.book != nil {
		opts.AddressBook = lc.book
	}
	return controller.New(cfg, opts)
}
