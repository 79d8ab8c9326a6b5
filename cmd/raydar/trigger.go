package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/raydar/raydar/kube/actions"
	"github.com/raydar/raydar/rayapi/kinds"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// newTriggerCmd: raydar trigger CRONJOB.
func newTriggerCmd(g *globals) *cobra.Command {
	var f mutationFlags
	cmd := &cobra.Command{
		Use:   "trigger CRONJOB",
		Short: "Run a RayCronJob now, outside its schedule",
		Long: "Run a RayCronJob now, outside its schedule, the way `kubectl create job --from=cronjob/NAME`\n" +
			"does: raydar creates the RayJob from the RayCronJob's jobTemplate itself, so it works\n" +
			"whichever operator reconciles RayJobs. The RayJob is named CRONJOB-manual-<minutes since\n" +
			"the epoch>, labelled " + rayv1.RayCronJobNameLabelKey + " and owned by the RayCronJob (deleting the\n" +
			"RayCronJob deletes it); its schedule and status.lastScheduleTime stay as they are. A\n" +
			"suspended RayCronJob runs too. Triggering again within the same minute creates nothing\n" +
			"more (outcome unchanged).",
		Example: "  raydar trigger nightly-report\n  raydar trigger nightly-report -n team-a --yes -o json",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return fmt.Errorf("trigger needs exactly one CRONJOB (got %d arguments): raydar trigger CRONJOB", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			return runMutation(cmd, g, &f, mutation{
				kind: kinds.RayCronJob, name: name,
				question: fmt.Sprintf("Run RayCronJob %s now?", name),
				preview: func(ctx context.Context, a *actions.Actions, ns string) (actions.Plan, error) {
					return a.PreviewTrigger(ctx, ns, name)
				},
				apply: func(ctx context.Context, a *actions.Actions, ns string) (*actions.Result, error) {
					return a.Trigger(ctx, ns, name)
				},
			})
		},
	}
	f.addTo(cmd)
	return cmd
}
