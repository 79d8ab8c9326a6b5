package main

import (
	"github.com/spf13/cobra"

	"github.com/raydar/raydar/rayapi/crds"
)

// newCrdsCmd prints the ray.io CRDs, for `raydar crds | kubectl apply --server-side -f -`.
func newCrdsCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "crds",
		Short: "Print the ray.io/v1 CustomResourceDefinitions (RayCluster, RayJob, RayService) as YAML",
		Long: "Print the ray.io/v1 CustomResourceDefinitions as one multi-document YAML stream.\n" +
			"Install them with: raydar crds | kubectl apply --server-side -f -",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := cmd.OutOrStdout().Write(crds.YAML())
			return err
		},
	}
}
