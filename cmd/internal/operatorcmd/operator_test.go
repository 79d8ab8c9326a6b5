package operatorcmd

import (
	"context"
	"strings"
	"testing"
)

// In a pod the Lease stays in the pod's own namespace (config/default's
// RBAC grants Leases there), whatever namespaces exist.
func TestLeaseNamespaceInAPod(t *testing.T) {
	ns, why, err := leaseNamespaceFor(context.Background(), nil, "", "ray-ops")
	if err != nil || ns != "ray-ops" || !strings.Contains(why, "pod's namespace ray-ops") {
		t.Fatalf("got %q, %q, %v; want ray-ops", ns, why, err)
	}
}
