// Package scheme owns raydar's one runtime.Scheme: client-go's built-in
// types, ray.io/v1 and the Gateway API's gateway.networking.k8s.io/v1
// (the Gateway and HTTPRoute of a RayService's incremental upgrade). It sits in the lowest layer (it imports only
// apimachinery, client-go, gateway-api's types and rayapi/v1), so the reconcilers, the TUI, the
// CLI, the mutation choke point and the sandbox all build their clients from
// the same scheme without importing one another.
package scheme

import (
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// New returns a fresh scheme with client-go's types, the Gateway API's v1
// and ray.io/v1. Each
// caller gets its own (no package-level mutable state).
func New() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := AddToScheme(s); err != nil {
		panic(err) // registering static Go types cannot fail
	}
	return s
}

// AddToScheme adds client-go's types, gateway.networking.k8s.io/v1 and
// ray.io/v1 to s.
func AddToScheme(s *runtime.Scheme) error {
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return err
	}
	if err := gwv1.Install(s); err != nil {
		return err
	}
	return rayv1.AddToScheme(s)
}
