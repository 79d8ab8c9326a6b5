package main

import (
	"fmt"

	"k8s.io/client-go/rest"

	"github.com/raydar/raydar/cmd/internal/operatorcmd"

	"github.com/raydar/raydar/controller"
	"github.com/raydar/raydar/kube"
	"github.com/raydar/raydar/kube/raydash"
	"github.com/raydar/raydar/kube/raydash/addrbook"
)

// sandboxBookFor returns the address book of the simulated Ray heads when
// the flags' context is a raydar sandbox, nil for any other cluster
// (operatorcmd.SandboxBook: one mechanism for the operator, the TUI and
// `raydar stop --direct`).
func sandboxBookFor(f kube.Flags) (*addrbook.Book, error) { return operatorcmd.SandboxBook(f) }

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
