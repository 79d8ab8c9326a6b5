// Command raydar is a terminal dashboard and reconcile loop for Ray on
// Kubernetes (ray.io/v1 RayCluster, RayJob, RayService, RayCronJob).
//
// Each sub-command lives in its own file of this package and is added to the
// root command in newRootCmd; there is no registry.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/raydar/raydar/kube"
	"github.com/raydar/raydar/rayapi/kinds"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

// globals are the flags shared by every sub-command.
type globals struct {
	kube kube.Flags
}

func newRootCmd() *cobra.Command {
	g := &globals{}
	tf := &tuiFlags{}
	root := &cobra.Command{
		Use:   "raydar",
		Short: "A terminal dashboard and reconcile loop for Ray on Kubernetes",
		Long: "raydar with no sub-command opens the terminal UI on the current kube context,\n" +
			"with the embedded reconcile loop for " + andList(each(kinds.Ray, apiKind)) + " (it\n" +
			"leaves them alone while a KubeRay operator runs in the cluster).",
		Args:          cobra.NoArgs,
		Version:       version,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	g.kube.AddTo(root.PersistentFlags())
	tf.addTo(root)
	tf.addFleetTo(root, &g.kube)
	root.RunE = newTUIRunE(g, tf)
	root.AddCommand(
		newVersionCmd(),
		newCrdsCmd(),
		newOperatorCmd(g),
		newGetCmd(g),
		newTopCmd(g),
		newWhyCmd(g),
		newHistoryCmd(g),
		newRayLogsCmd(g),
		newScaleCmd(g),
		newDeleteWorkersCmd(g),
		newStopCmd(g),
		newTriggerCmd(g),
		newSuspendCmd(g),
		newResumeCmd(g),
		newEditCmd(g),
		newPortForwardCmd(g),
		newExecCmd(g),
		newSandboxCmd(),
		newDemoCmd(),
	)
	return root
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print raydar's version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintln(cmd.OutOrStdout(), version)
			return err
		},
	}
}

func main() {
	if err := newRootCmd().Execute(); err != nil {
		code, quiet := exitCodeOf(err)
		if !quiet {
			fmt.Fprintln(os.Stderr, "error:", err)
		}
		os.Exit(code)
	}
}
