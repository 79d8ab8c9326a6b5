package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/raydar/raydar/kube/sandbox"
	"github.com/raydar/raydar/kube/sandbox/certsim"
)

// TestStartCertManagerWithoutCRDs: a tools directory without cert-manager's
// CRD file (one built before `make tools` wrote it) gives no cert-manager
// and no error: the sandbox goes on, and its cert-manager line names the
// missing file, `make tools` and what becomes of a RayCluster with
// tlsOptions.
func TestStartCertManagerWithoutCRDs(t *testing.T) {
	dir := t.TempDir()
	sim, line, err := startCertManager(context.Background(), &sandbox.Sandbox{ToolsDir: dir}, t.Logf)
	if err != nil || sim != nil {
		t.Fatalf("startCertManager without the CRD file: sim %v, err %v; want neither", sim, err)
	}
	for _, want := range []string{"none", filepath.Join(dir, certsim.CRDFile), "make tools", "tlsOptions are refused for lack of cert-manager"} {
		if !strings.Contains(line, want) {
			t.Errorf("cert-manager line %q does not say %q", line, want)
		}
	}
}
