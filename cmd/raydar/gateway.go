package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/raydar/raydar/kube/sandbox"
	"github.com/raydar/raydar/kube/sandbox/gatewaysim"
)

// startGateway plays a Gateway API implementation's part in a sandbox, for
// RayServices upgraded with NewClusterWithIncrementalUpgrade: it installs
// the Gateway API's standard CRDs from the sandbox's tools directory
// (`make tools` writes them) and starts gatewaysim, a simulated Gateway
// controller of the GatewayClass gatewaysim.ClassName. line is the
// start-up line that says so. Without the CRD file there is no Gateway
// API: sim is nil, line says why, and such RayServices are refused by name,
// as on a real cluster without it.
func startGateway(ctx context.Context, sb *sandbox.Sandbox, logf func(string, ...any)) (sim *gatewaysim.Sim, line string, err error) {
	crds, err := gatewaysim.CRDs(sb.ToolsDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Sprintf("none (%v); RayServices with NewClusterWithIncrementalUpgrade are refused for lack of the Gateway API", err), nil
	}
	if err != nil {
		return nil, "", err
	}
	if err := sb.InstallCRDs(ctx, crds...); err != nil {
		return nil, "", fmt.Errorf("the Gateway API's CRDs: %w", err)
	}
	sim, err = gatewaysim.Start(ctx, gatewaysim.Options{Config: sb.Config, Logf: logf})
	if err != nil {
		return nil, "", err
	}
	return sim, gatewayLine, nil
}

// gatewayLine says what the sandbox runs in a Gateway controller's stead.
const gatewayLine = "simulated (gatewaysim), not a proxy: GatewayClass " + gatewaysim.ClassName +
	"; Gateways get Accepted/Programmed and an address, HTTPRoutes Accepted/ResolvedRefs; no traffic flows through them"
