package operatorcmd

import (
	"context"
	"runtime/debug"
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

// The operator collects at GCPercent unless the user set GOGC or
// GOMEMLIMIT.
func TestTuneGC(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	TuneGC(func(string) string { return "" })
	if got := debug.SetGCPercent(100); got != GCPercent {
		t.Fatalf("GOGC %d, want %d", got, GCPercent)
	}
	for _, env := range []string{"GOGC", "GOMEMLIMIT"} {
		TuneGC(func(k string) string {
			if k == env {
				return "200"
			}
			return ""
		})
		if got := debug.SetGCPercent(100); got != 100 {
			t.Fatalf("GOGC %d with %s set in the environment, want it left alone", got, env)
		}
	}
}
