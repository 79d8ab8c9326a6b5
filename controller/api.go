package controller

import (
	"github.com/raydar/raydar/controller/kit"
	"github.com/raydar/raydar/controller/rayservice"
	"github.com/raydar/raydar/kube/raydash"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// OtherOperator says whether a KubeRay operator was found in the cluster,
// and what raydar does about it.
type OtherOperator = kit.OtherOperator

// ServeProxyChecker checks the Ray Serve HTTP proxy of one Ray pod
// (Options.ServeProxyChecker).
type ServeProxyChecker = rayservice.ServeProxyChecker

// ServeProxyAddressBook resolves a pod to the address of its Serve proxy.
type ServeProxyAddressBook = rayservice.ServeProxyAddressBook

// AddressBook maps a RayCluster to its dashboard's and its Serve proxy's
// addresses (the sandbox's book of simulated heads).
type AddressBook interface {
	raydash.AddressBook
	ServeProxyAddressBook
}

// ServeProxyCheckerFromAddressBook checks proxies through an address book
// (the sandbox's simulated heads).
func ServeProxyCheckerFromAddressBook(book ServeProxyAddressBook) ServeProxyChecker {
	return rayservice.ServeProxyCheckerFromAddressBook(book)
}

// HeadServiceName is the name of a RayCluster's head Service.
func HeadServiceName(rc *rayv1.RayCluster) string { return kit.HeadServiceName(rc) }
