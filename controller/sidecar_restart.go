package controller

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
)

// minSidecarRestartServer is the oldest API server the
// SidecarSubmitterRestart gate runs against: per-container restart rules
// (the submitter's restartPolicy OnFailure) are beta and on by default
// from Kubernetes 1.35, and KubeRay v1.7.0 refuses to start below it
// (main.go:200-222). As there, only the API server is checked; kubelets
// older than 1.35 ignore the rule, and a failed submitter then stays down
// until the submitter-finished grace fails the RayJob.
var minSidecarRestartServer = version.MustParseGeneric("1.35.0")

// checkSidecarRestartServer reports an error when the API server behind cfg
// is older than 1.35 or its version cannot be read.
func checkSidecarRestartServer(cfg *rest.Config) error {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return fmt.Errorf("SidecarSubmitterRestart feature gate enabled but unable to detect the Kubernetes version (it requires 1.35+): %w", err)
	}
	info, err := dc.ServerVersion()
	if err != nil {
		return fmt.Errorf("SidecarSubmitterRestart feature gate enabled but unable to detect the Kubernetes version (it requires 1.35+): %w", err)
	}
	v, err := version.ParseGeneric(info.GitVersion)
	if err != nil {
		return fmt.Errorf("SidecarSubmitterRestart feature gate: the API server's version %q: %w", info.GitVersion, err)
	}
	if !v.AtLeast(minSidecarRestartServer) {
		return fmt.Errorf("SidecarSubmitterRestart feature gate requires Kubernetes 1.35+: the API server is %s", info.GitVersion)
	}
	return nil
}
