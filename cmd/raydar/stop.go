package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/kube"
	"github.com/raydar/raydar/kube/actions"
	"github.com/raydar/raydar/kube/raydash"
	"github.com/raydar/raydar/rayapi/kinds"
	"github.com/raydar/raydar/rayapi/scheme"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// newStopCmd: raydar stop JOB [--direct].
func newStopCmd(g *globals) *cobra.Command {
	var f mutationFlags
	var direct bool
	cmd := &cobra.Command{
		Use:   "stop JOB",
		Short: "Stop a RayJob's Ray job",
		Long: "Stop a RayJob's Ray job. By default raydar asks its RayJob reconciler to stop it\n" +
			"(annotation " + rayv1.StopRequestedAnnotationKey + "); the reconciler stops the job once and the\n" +
			"RayJob's job status becomes STOPPED. Where another operator (KubeRay) reconciles the\n" +
			"RayJob, --direct stops the job through the Ray dashboard instead (via the API server's\n" +
			"service proxy). A job that already finished is refused.",
		Example: "  raydar stop my-job\n  raydar stop my-job --direct --yes",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return fmt.Errorf("stop needs exactly one JOB (got %d arguments): raydar stop JOB", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			job := args[0]
			m := mutation{
				kind: kinds.RayJob, name: job,
				question: fmt.Sprintf("Stop RayJob %s?", job),
				preview: func(ctx context.Context, a *actions.Actions, ns string) (actions.Plan, error) {
					return a.PreviewStopJob(ctx, ns, job)
				},
				apply: func(ctx context.Context, a *actions.Actions, ns string) (*actions.Result, error) {
					return a.StopJob(ctx, ns, job)
				},
			}
			if direct {
				m.setup = func(t *kube.Target, o *actions.Options) error { return dashboardStopper(g.kube, t, o) }
				m.preview = func(ctx context.Context, a *actions.Actions, ns string) (actions.Plan, error) {
					return a.PreviewStopJobDirect(ctx, ns, job)
				}
				m.apply = func(ctx context.Context, a *actions.Actions, ns string) (*actions.Result, error) {
					return a.StopJobDirect(ctx, ns, job)
				}
			}
			return runMutation(cmd, g, &f, m)
		},
	}
	cmd.Flags().BoolVar(&direct, "direct", false, "stop through the Ray dashboard, for RayJobs another operator reconciles")
	f.addTo(cmd)
	return cmd
}

// dashboardStopper gives the Actions a JobStopper that reaches dashboards
// the way the TUI does (kube/raydash).
func dashboardStopper(f kube.Flags, t *kube.Target, o *actions.Options) error {
	c, err := client.New(t.Config, client.Options{Scheme: scheme.New()})
	if err != nil {
		return err
	}
	book, err := sandboxBookFor(f)
	if err != nil {
		return err
	}
	res, err := newDashboards(t.Config, book, raydash.SecretsFromReader(c))
	if err != nil {
		return err
	}
	o.JobStopper = &actions.DashboardStopper{Reader: c, Resolver: res}
	return nil
}
