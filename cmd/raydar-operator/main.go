// Command raydar-operator is raydar's reconcile loop alone, the binary the
// operator's container image ships (hack/image): the same command, flags
// and behaviour as `raydar operator` (cmd/internal/operatorcmd), in a
// binary that links the controller and none of the terminal UI, the
// sandbox or envtest, so that a deployed operator maps less.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/raydar/raydar/cmd/internal/operatorcmd"
	"github.com/raydar/raydar/kube"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func newRootCmd() *cobra.Command {
	kf := &kube.Flags{}
	root := operatorcmd.New("raydar-operator", kf)
	root.Version = version
	root.SilenceUsage, root.SilenceErrors = true, true
	kf.AddTo(root.PersistentFlags())
	root.AddCommand(&cobra.Command{
		Use:   "version",
		Short: "Print raydar-operator's version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintln(cmd.OutOrStdout(), version)
			return err
		},
	})
	return root
}

func main() {
	if err := newRootCmd().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}
