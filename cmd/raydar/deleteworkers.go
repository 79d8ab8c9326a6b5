package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/raydar/raydar/kube/actions"
	"github.com/raydar/raydar/rayapi/kinds"
)

// newDeleteWorkersCmd: raydar delete-workers CLUSTER POD...
func newDeleteWorkersCmd(g *globals) *cobra.Command {
	var f mutationFlags
	var lowerMin bool
	cmd := &cobra.Command{
		Use:   "delete-workers CLUSTER POD...",
		Short: "Delete exactly the named worker pods of a RayCluster",
		Long: "Delete exactly the named worker pods of a RayCluster and no others: one write appends\n" +
			"them to their groups' scaleStrategy.workersToDelete and lowers those groups' replicas,\n" +
			"so the reconciler deletes them and starts no replacements. The head pod is refused.\n" +
			"A group is not taken below minReplicas unless --lower-min lowers minReplicas with it.\n" +
			"In a multi-host group name every pod of each replica: replicas go whole.",
		Example: "  raydar delete-workers my-cluster my-cluster-gpu-worker-x7k2p my-cluster-gpu-worker-9qzvd",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) < 2 {
				return fmt.Errorf("delete-workers needs CLUSTER and at least one POD (got %d arguments): raydar delete-workers CLUSTER POD...", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			clusterName := args[0]
			req := actions.DeleteWorkersRequest{Pods: args[1:], LowerMin: lowerMin}
			return runMutation(cmd, g, &f, mutation{
				kind: kinds.RayCluster, name: clusterName,
				question: fmt.Sprintf("Delete %s of RayCluster %s?", strings.Join(req.Pods, ", "), clusterName),
				preview: func(ctx context.Context, a *actions.Actions, ns string) (actions.Plan, error) {
					return a.PreviewDeleteWorkers(ctx, ns, clusterName, req)
				},
				apply: func(ctx context.Context, a *actions.Actions, ns string) (*actions.Result, error) {
					return a.DeleteWorkers(ctx, ns, clusterName, req)
				},
			})
		},
	}
	cmd.Flags().BoolVar(&lowerMin, "lower-min", false, "lower minReplicas when the deletion would take a group below it")
	f.addTo(cmd)
	return cmd
}
