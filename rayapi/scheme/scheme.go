// Package scheme owns raydar's one runtime.Scheme: client-go's built-in
// types and ray.io/v1. It sits in the lowest layer (it imports only
// apimachinery, client-go and rayapi/v1), so the reconcilers, the TUI, the
// CLI, the mutation choke point and the sandbox all build their clients from
// the same scheme without importing one another.
package scheme

import (
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// New returns a fresh scheme with client-go's types and ray.io/v1. Each
// caller gets its own (no package-level mutable state).
func New() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := AddToScheme(s); err != nil {
		panic(err) // registering static Go types cannot fail
	}
	return s
}

// AddToScheme adds client-go's types and ray.io/v1 to s.
func AddToScheme(s *runtime.Scheme) error {
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return err
	}
	return rayv1.AddToScheme(s)
}
