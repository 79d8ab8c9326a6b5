package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/raydar/raydar/kube/actions"
	"github.com/raydar/raydar/rayapi/kinds"
)

// newScaleCmd: raydar scale CLUSTER GROUP --replicas N [--min N] [--max N].
func newScaleCmd(g *globals) *cobra.Command {
	var f mutationFlags
	var replicas, minR, maxR string
	cmd := &cobra.Command{
		Use:   "scale CLUSTER GROUP --replicas N [--min N] [--max N]",
		Short: "Set the replicas of a RayCluster's worker group",
		Long: "Set the replicas of a RayCluster's worker group, in one write that fails if the cluster\n" +
			"changed meanwhile (and is retried from a fresh read). N must lie within the group's\n" +
			"minReplicas and maxReplicas unless --min/--max change them too. Without --yes the\n" +
			"effect (pods created or deleted) is shown and confirmed first.",
		Example: "  raydar scale my-cluster gpu-group --replicas 4\n" +
			"  raydar scale my-cluster cpu --replicas 12 --max 12 --yes -o json",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 2 {
				return fmt.Errorf("scale needs CLUSTER and GROUP (got %d arguments): raydar scale CLUSTER GROUP --replicas N", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("replicas") {
				return errors.New("--replicas is required: raydar scale CLUSTER GROUP --replicas N")
			}
			n, err := countFlag(cmd, "replicas", replicas)
			if err != nil {
				return err
			}
			req := actions.ScaleRequest{Replicas: *n}
			if req.Min, err = countFlag(cmd, "min", minR); err != nil {
				return err
			}
			if req.Max, err = countFlag(cmd, "max", maxR); err != nil {
				return err
			}
			clusterName, group := args[0], args[1]
			return runMutation(cmd, g, &f, mutation{
				kind: kinds.RayCluster, name: clusterName,
				question: fmt.Sprintf("Scale worker group %s of RayCluster %s to %d replicas?", group, clusterName, req.Replicas),
				preview: func(ctx context.Context, a *actions.Actions, ns string) (actions.Plan, error) {
					return a.PreviewScale(ctx, ns, clusterName, group, req)
				},
				apply: func(ctx context.Context, a *actions.Actions, ns string) (*actions.Result, error) {
					return a.ScaleGroup(ctx, ns, clusterName, group, req)
				},
			})
		},
	}
	cmd.Flags().StringVar(&replicas, "replicas", "", "the new number of replicas (required)")
	cmd.Flags().StringVar(&minR, "min", "", "also set minReplicas")
	cmd.Flags().StringVar(&maxR, "max", "", "also set maxReplicas")
	f.addTo(cmd)
	return cmd
}
