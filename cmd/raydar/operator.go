package main

import (
	"github.com/spf13/cobra"

	"github.com/raydar/raydar/cmd/internal/operatorcmd"
)

// newOperatorCmd runs raydar's reconcile loop headless, as KubeRay's
// operator would run: leader-elected, with metrics and health probes. The
// command is cmd/internal/operatorcmd's, which the controller-only binary
// cmd/raydar-operator (the one the image ships) runs too; config/ holds the
// Deployment and RBAC to run it in a cluster.
func newOperatorCmd(g *globals) *cobra.Command { return operatorcmd.New("operator", &g.kube) }
