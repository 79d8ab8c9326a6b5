package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/raydar/raydar/kube/sandbox/execsim"
)

// rayCLI is sandbox.Options.RayCLI for `raydar sandbox` and `raydar demo`:
// this executable's hidden `sandbox ray`, the `ray` of an exec into a
// simulated Ray container. Tests, whose executable is a test binary,
// replace it.
var rayCLI = func() []string {
	exe, err := os.Executable()
	if err != nil {
		return nil // the sandbox's `ray` then says it simulates none
	}
	return []string{exe, "sandbox", "ray"}
}

// newSandboxRayCmd: raydar sandbox ray ARGS..., hidden: what `ray` runs in
// an exec into a simulated Ray container (kube/sandbox/execsim.Ray).
func newSandboxRayCmd() *cobra.Command {
	return &cobra.Command{
		Use:                "ray [ARGS...]",
		Short:              "The `ray` of the sandbox's simulated Ray containers (run by kwok's exec)",
		Hidden:             true,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if code := execsim.Ray(cmd.Context(), args, os.Getenv, cmd.OutOrStdout(), cmd.ErrOrStderr()); code != 0 {
				return &exitStatus{code: code}
			}
			return nil
		},
	}
}

// exitStatus ends raydar with code, quietly: what went wrong was said.
type exitStatus struct{ code int }

func (e *exitStatus) Error() string   { return "exit status" }
func (e *exitStatus) ExitStatus() int { return e.code }
