package main

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/raydar/raydar/rayapi/crds"
	"github.com/raydar/raydar/rayapi/kinds"
)

// newCrdsCmd prints the ray.io CRDs, for `raydar crds | kubectl apply -f -`.
func newCrdsCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "crds",
		Short: "Print the ray.io/v1 CustomResourceDefinitions (" + strings.Join(each(kinds.Ray, apiKind), ", ") + ") as YAML",
		Long: "Print the ray.io/v1 CustomResourceDefinitions as one multi-document YAML stream.\n" +
			"Install or update them with: raydar crds | kubectl apply -f -\n" +
			"(--server-side works too; each CRD stays under the 256KiB last-applied annotation limit).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := cmd.OutOrStdout().Write(crds.YAML())
			return err
		},
	}
}
