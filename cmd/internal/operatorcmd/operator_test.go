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

// The operator collects at GCPercent unless the user set GOGC; the
// Deployment's GOMEMLIMIT (a ceiling) leaves it on.
func TestTuneGC(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	for _, env := range []map[string]string{{}, {"GOMEMLIMIT": "512MiB"}} {
		TuneGC(func(k string) string { return env[k] })
		if got := debug.SetGCPercent(100); got != GCPercent {
			t.Fatalf("GOGC %d with %v in the environment, want %d", got, env, GCPercent)
		}
	}
	TuneGC(func(k string) string {
		if k == "GOGC" {
			return "200"
		}
		return ""
	})
	if got := debug.SetGCPercent(100); got != 100 {
		t.Fatalf("GOGC %d with GOGC set in the environment, want it left alone", got)
	}
}
