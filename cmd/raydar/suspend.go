package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/raydar/raydar/kube/actions"
)

// newSuspendCmd: raydar suspend KIND NAME.
func newSuspendCmd(g *globals) *cobra.Command { return newSuspendResumeCmd(g, true) }

// newResumeCmd: raydar resume KIND NAME.
func newResumeCmd(g *globals) *cobra.Command { return newSuspendResumeCmd(g, false) }

func newSuspendResumeCmd(g *globals, suspend bool) *cobra.Command {
	var f mutationFlags
	ks := suspendable()
	verb, short := "resume", "Resume a suspended "+kindList(ks)+" (spec.suspend: false)"
	if suspend {
		verb, short = "suspend", "Suspend a "+kindList(ks)+" (spec.suspend: true)"
	}
	cmd := &cobra.Command{
		Use:   verb + " KIND NAME",
		Short: short,
		Long: short + ".\nKIND is " + kindNames(ks) + ",\nor their plurals: the names raydar get takes.\n" +
			"A RayJob can be suspended only with shutdownAfterJobFinishes: true. A suspended\n" +
			"RayCronJob creates no RayJobs on its schedule; the ones it created keep running.",
		Example: fmt.Sprintf("  raydar %s rc my-cluster\n  raydar %s rayjob my-job --yes\n  raydar %s cronjob nightly-report", verb, verb, verb),
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 2 {
				return fmt.Errorf("%s needs KIND and NAME (got %d arguments): raydar %s %s NAME", verb, len(args), verb, kindUsage(ks))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			kind, err := actions.ParseKind(args[0])
			if err != nil {
				return err
			}
			name := args[1]
			return runMutation(cmd, g, &f, mutation{
				kind: kind, name: name,
				question: fmt.Sprintf("%s %s %s?", strings.ToUpper(verb[:1])+verb[1:], kind, name),
				preview: func(ctx context.Context, a *actions.Actions, ns string) (actions.Plan, error) {
					return a.PreviewSuspend(ctx, kind, ns, name, suspend)
				},
				apply: func(ctx context.Context, a *actions.Actions, ns string) (*actions.Result, error) {
					if suspend {
						return a.Suspend(ctx, kind, ns, name)
					}
					return a.Resume(ctx, kind, ns, name)
				},
			})
		},
	}
	f.addTo(cmd)
	return cmd
}
