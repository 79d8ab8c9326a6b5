package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/spf13/cobra"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/raydar/raydar/controller"
)

// newOperatorCmd runs raydar's reconcile loop headless, as KubeRay's
// operator would run: leader-elected, with metrics and health probes.
// config/ holds the Deployment and RBAC to run it in a cluster.
func newOperatorCmd(g *globals) *cobra.Command {
	var (
		o         controller.Options
		noElect   bool
		verbosity int
	)
	cmd := &cobra.Command{
		Use:   "operator",
		Short: "Run the reconcile loop for RayClusters, RayJobs and RayServices headless (leader-elected)",
		Long: `Run raydar's reconcile loop for RayClusters, RayJobs and RayServices without
the terminal UI.

Several raydar processes (operators and TUIs) may run against one cluster: they
elect one leader on a Lease and only the leader reconciles. While a KubeRay
operator runs in the cluster raydar leaves its RayClusters alone unless
--ignore-other-operator is given; clusters with spec.managedBy: raydar.io/raydar
are always reconciled.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			target, err := g.kube.Resolve()
			if err != nil {
				return err
			}
			logger := newLogger(verbosity)
			ctrllog.SetLogger(logger)
			o.Logger = logger
			o.DisableLeaderElection = noElect
			op, err := newReconcileLoop(target.Config, loopConfig{operator: o})
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			l := op.Leader()
			logger.Info("starting raydar operator", "server", target.Server, "identity", l.Identity,
				"lease", l.Lease, "leaderElection", l.Enabled)
			if err := op.Start(ctx); err != nil && ctx.Err() == nil {
				return fmt.Errorf("operator stopped: %w", err)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.BoolVar(&noElect, "no-leader-election", false, "reconcile without electing a leader (only when no other raydar runs)")
	f.StringVar(&o.LeaderElectionNamespace, "leader-election-namespace", "", "namespace of the leader election Lease (default: the pod's namespace in a cluster, else "+controller.DefaultLeaderElectionNamespace+")")
	f.StringVar(&o.LeaderElectionID, "leader-election-id", controller.DefaultLeaderElectionID, "name of the leader election Lease")
	f.StringVar(&o.Identity, "identity", "", "identity in the leader election (default <hostname>_<random>)")
	f.StringVar(&o.MetricsBindAddress, "metrics-bind-address", ":8080", `address of the Prometheus metrics endpoint ("0" turns it off)`)
	f.StringVar(&o.HealthProbeBindAddress, "health-probe-bind-address", ":8081", `address of /healthz and /readyz ("0" turns them off)`)
	f.IntVar(&o.Concurrency, "concurrency", controller.DefaultConcurrency, "RayClusters reconciled at once")
	f.StringSliceVar(&o.Namespaces, "watch-namespaces", nil, "reconcile only these namespaces (default all)")
	f.BoolVar(&o.IgnoreOtherOperators, "ignore-other-operator", false, "reconcile even while a KubeRay operator runs in the cluster")
	f.DurationVar(&o.StatusCoalesceWindow, "status-coalesce", controller.DefaultStatusCoalesceWindow, "hold non-urgent status changes this long to write them once (negative: write at once)")
	f.Float32Var(&o.QPS, "kube-api-qps", controller.DefaultQPS, "requests per second to the API server")
	f.IntVar(&o.Burst, "kube-api-burst", controller.DefaultBurst, "burst of requests to the API server")
	f.IntVarP(&verbosity, "v", "v", 0, "log verbosity")
	return cmd
}

// newLogger logs one line per entry to stderr.
func newLogger(v int) logr.Logger {
	return funcr.New(func(prefix, args string) {
		ts := time.Now().Format("2006-01-02T15:04:05.000Z07:00")
		if prefix != "" {
			fmt.Fprintln(os.Stderr, ts, prefix, args)
			return
		}
		fmt.Fprintln(os.Stderr, ts, args)
	}, funcr.Options{Verbosity: v})
}
