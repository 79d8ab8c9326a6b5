package main

import (
	"context"
	"fmt"

	"github.com/raydar/raydar/kube/sandbox"
	"github.com/raydar/raydar/kube/sandbox/certsim"
)

// startCertManager plays cert-manager's part in a sandbox, as headsim plays
// the Ray heads': it installs cert-manager's Issuer, ClusterIssuer and
// Certificate CRDs from the sandbox's tools directory (`make tools` writes
// them; no go tool at run time) and starts certsim, which writes the Secret
// each Certificate asks for, so that a RayCluster with tlsOptions starts
// under an operator with the RayClusterMTLS gate on. line is the start-up
// line that says so. Without the CRD file in the tools directory there is
// no cert-manager: sim is nil, line says why, and such a RayCluster is
// refused for lack of cert-manager, as on a real cluster without it. err
// is what failed once the CRDs were there. `raydar sandbox` and `raydar
// demo` both start it; both close it before they stop the sandbox.
func startCertManager(ctx context.Context, sb *sandbox.Sandbox, logf func(string, ...any)) (sim *certsim.Sim, line string, err error) {
	raw, err := certsim.ReadCRDs(sb.ToolsDir)
	if err != nil {
		return nil, fmt.Sprintf("none (%v); RayClusters with tlsOptions are refused for lack of cert-manager", err), nil
	}
	crds, err := certsim.DecodeCRDs(raw)
	if err != nil {
		return nil, "", err
	}
	if err := sb.InstallCRDs(ctx, crds...); err != nil {
		return nil, "", fmt.Errorf("cert-manager's CRDs: %w", err)
	}
	sim, err = certsim.Start(ctx, certsim.Options{Config: sb.Config, Logf: logf})
	if err != nil {
		return nil, "", err
	}
	return sim, certManagerLine, nil
}

// certManagerLine says what the sandbox runs in cert-manager's stead.
const certManagerLine = "simulated (certsim), CRDs " + certsim.Version +
	": Secrets issued at once, selfSigned and CA issuers only, no renewal on a timer"
