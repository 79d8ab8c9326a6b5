package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/raydar/raydar/kube/actions"
	"github.com/raydar/raydar/kube/podexec"
)

// execFlags are raydar exec's flags.
type execFlags struct {
	pod, container string
	stdin, tty     bool
	readOnly       bool
	confirm        string
}

// newExecCmd: raydar exec CLUSTER [--pod POD] [-c CONTAINER] [-i] [-t]
// [-- COMMAND ARGS...].
func newExecCmd(g *globals) *cobra.Command {
	var f execFlags
	cmd := &cobra.Command{
		Use:   "exec CLUSTER [-- COMMAND [ARGS...]]",
		Short: "Run a command, or open a shell, in a RayCluster's Ray container",
		Long: "Run a command in the Ray container of a RayCluster's head pod (or of --pod), through the\n" +
			"API server as `kubectl exec` does (WebSocket, SPDY where the server has no WebSocket).\n" +
			"Without a command it opens a shell (bash, else sh) on this terminal. With a command,\n" +
			"its output and exit code are raydar's; -i sends stdin, -t gives it a terminal.\n" +
			"It is a change like any other: --readonly and read-only contexts refuse it, a protected\n" +
			"context wants --confirm CLUSTER, and it is written to the audit log with its exit code.",
		Example: "  raydar exec my-cluster\n  raydar exec my-cluster -- ray status\n  raydar exec my-cluster --pod my-cluster-cpu-worker-x7k2p -- ray list nodes",
		Args: func(cmd *cobra.Command, args []string) error {
			before := args
			if d := cmd.ArgsLenAtDash(); d >= 0 {
				before = args[:d]
			}
			if len(before) != 1 {
				return fmt.Errorf("exec needs exactly one CLUSTER before -- (got %d): raydar exec CLUSTER [-- COMMAND ARGS...]", len(before))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runExec(cmd, g, &f, args[0], args[1:])
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.pod, "pod", "", "a pod of the cluster (default: its head pod)")
	fl.StringVarP(&f.container, "container", "c", "", "a container of the pod (default: the Ray container, the pod's first)")
	fl.BoolVarP(&f.stdin, "stdin", "i", false, "send stdin to the command (implied without a command)")
	fl.BoolVarP(&f.tty, "tty", "t", false, "give the command a terminal (implied without a command)")
	fl.BoolVar(&f.readOnly, "readonly", false, "refuse to change anything (the command then fails)")
	fl.StringVar(&f.confirm, "confirm", "", "the cluster's name, to confirm on a context the config file marks protected")
	return cmd
}

func runExec(cmd *cobra.Command, g *globals, f *execFlags, cluster string, command []string) error {
	if g.kube.AllNamespaces {
		return errors.New("-A/--all-namespaces only works with get; name the namespace with -n")
	}
	if len(command) == 0 {
		f.stdin, f.tty = true, true
	}
	in, out, stderr := cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr()
	t, err := g.kube.Resolve()
	if err != nil {
		return err
	}
	if f.tty && !stdinIsTerminal(in) {
		if len(command) == 0 {
			return errors.New("exec: a shell needs a terminal on stdin; give a command after -- (raydar exec CLUSTER -- ray status)")
		}
		return errors.New("exec: -t needs a terminal on stdin")
	}
	a, err := cliActions(t, f.readOnly, nil)
	if err != nil {
		return err
	}
	// Raw mode only now: a client's credential plugin may ask something
	// on the terminal.
	streams := podexec.Streams{Out: out, Err: stderr, TTY: f.tty}
	var terminal *podexec.Terminal
	if f.tty {
		tm, ok, err := podexec.MakeTerminal(in, out)
		if err != nil || !ok {
			return fmt.Errorf("exec: the terminal: %v", orNotATerminal(err))
		}
		terminal = tm
		defer terminal.Close()
		streams.In, streams.Sizes = tm.Input(), tm.Sizes()
	} else if f.stdin {
		streams.In = in
	}
	ctx := actions.WithConfirmation(cmd.Context(), f.confirm)
	r, err := a.Exec(ctx, t.Namespace, cluster, actions.ExecRequest{Pod: f.pod, Container: f.container, Command: command}, streams)
	if terminal != nil {
		terminal.Close() // before the warnings: the terminal is back in its mode
	}
	if r != nil {
		warnAfterChange(stderr, r)
	}
	return err
}

func orNotATerminal(err error) error {
	if err == nil {
		return errors.New("stdin is not a terminal")
	}
	return err
}

// warnAfterChange says on stderr what went wrong after a change was made
// (its Event, its audit line).
func warnAfterChange(stderr io.Writer, r *actions.Result) {
	if r.EventError != "" {
		fmt.Fprintln(stderr, "warning: the exec ran but its Event was not recorded:", r.EventError)
	}
	if r.AuditError != "" {
		fmt.Fprintln(stderr, "warning: the exec ran but the audit log was not written:", r.AuditError)
	}
}

// exitCodeOf is the exit code raydar ends with for err: a command's own
// status for an exec (a *podexec.ExitError: its output said the rest), 1
// otherwise.
func exitCodeOf(err error) (code int, quiet bool) {
	var ee interface{ ExitStatus() int } // *podexec.ExitError, *exitStatus
	if errors.As(err, &ee) {
		return ee.ExitStatus(), true
	}
	return 1, false
}
