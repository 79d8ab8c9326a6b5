package main

import (
	"fmt"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/raydar/raydar/controller"
	"github.com/raydar/raydar/kube"
	"github.com/raydar/raydar/kube/raydash"
	"github.com/raydar/raydar/kube/sandbox/addrbook"
)

// sandboxBookFor returns the address book of the simulated Ray heads when
// the flags' context is a raydar sandbox (`raydar sandbox`, `raydar demo`:
// their kubeconfig records the book, kube/sandbox/addrbook), nil for any
// other cluster. Every raydar that reaches dashboards (the operator, the
// TUI and its embedded loop, `raydar stop --direct`) asks this, so one
// mechanism serves the sandbox's heads to all of them.
func sandboxBookFor(f kube.Flags) (*addrbook.Book, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if f.Kubeconfig != "" {
		rules.ExplicitPath = f.Kubeconfig
	}
	kc, err := rules.Load()
	if err != nil {
		return nil, fmt.Errorf("loading kubeconfig: %w", err)
	}
	path, ok, err := addrbook.FromKubeconfig(kc, f.Context)
	if err != nil || !ok {
		return nil, err
	}
	return addrbook.Open(path), nil
}

// newDashboards reaches Ray dashboards through the sandbox's address book
// when there is one, else the usual way (service DNS in a pod, the API
// server's service proxy outside).
func newDashboards(cfg *rest.Config, book *addrbook.Book, secrets raydash.SecretReader) (raydash.Resolver, error) {
	opts := raydash.Options{Config: cfg, Secrets: secrets, HeadServiceName: controller.HeadServiceName}
	if book != nil {
		opts.AddressBook = book
	}
	r, err := raydash.New(opts)
	if err != nil {
		return nil, fmt.Errorf("dashboard resolver: %w", err)
	}
	return r, nil
}
