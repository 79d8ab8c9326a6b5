package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/raydar/raydar/kube"
	"github.com/raydar/raydar/kube/actions"
)

// This file is the shared flow of the mutating sub-commands (scale,
// delete-workers, stop, trigger, suspend, resume): connect, apply the config
// file's guardrails (kube/actions.Policy), preview, confirm, apply through
// kube/actions (the TUI's code path), print the result.

// mutationFlags are the flags every mutating sub-command takes.
type mutationFlags struct {
	output   string
	yes      bool
	readOnly bool
	// confirm is the object's name, which a protected context (raydar's
	// config file) wants given.
	confirm string
}

func (f *mutationFlags) addTo(cmd *cobra.Command) {
	addOutputFlag(cmd, &f.output)
	cmd.Flags().BoolVarP(&f.yes, "yes", "y", false, "do not ask for confirmation")
	cmd.Flags().BoolVar(&f.readOnly, "readonly", false, "refuse to change anything (the command then fails)")
	cmd.Flags().StringVar(&f.confirm, "confirm", "", "the object's name, to confirm a change on a context the config file marks protected")
}

// mutation is one mutating sub-command's use of kube/actions.
type mutation struct {
	// kind and name are the object written (the name --confirm must give
	// on a protected context).
	kind actions.Kind
	name string
	// question asks for confirmation, without "[y/N]".
	question string
	// setup adjusts the Actions options (e.g. a JobStopper); optional.
	setup func(t *kube.Target, o *actions.Options) error
	// preview reads and plans, without writing.
	preview func(ctx context.Context, a *actions.Actions, ns string) (actions.Plan, error)
	// apply is the action.
	apply func(ctx context.Context, a *actions.Actions, ns string) (*actions.Result, error)
}

// errCancelled is returned when the person answers no: exit code 1.
var errCancelled = errors.New("cancelled: nothing was changed")

// stdinIsTerminal reports whether in is an interactive terminal. Tests
// replace it.
var stdinIsTerminal = func(in io.Reader) bool {
	f, ok := in.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// runMutation runs m: without --yes it previews the plan on stderr and asks
// y/N (default No) on a terminal, and refuses without one; then it applies
// and prints the result (the plan and the outcome) on stdout.
func runMutation(cmd *cobra.Command, g *globals, f *mutationFlags, m mutation) error {
	t, err := writeTarget(g, f)
	if err != nil {
		return err
	}
	a, err := cliActions(t, f.readOnly, func(opts *actions.Options) error {
		if m.setup != nil && !opts.ReadOnly {
			return m.setup(t, opts)
		}
		return nil
	})
	if err != nil {
		return err
	}
	ctx := actions.WithConfirmation(cmd.Context(), f.confirm)
	ns := t.Namespace
	stderr := cmd.ErrOrStderr()
	// A protected context refuses a change whose name was not confirmed at
	// the choke point; asking first spares the preview and the question.
	if !a.ReadOnly() {
		if err := a.CheckConfirmation(actions.ObjectRef{Kind: m.kind, Namespace: ns, Name: m.name}, f.confirm); err != nil {
			return err
		}
	}

	// Read-only refuses in apply, before any I/O; nothing to confirm.
	previewed := false
	if !f.yes && !a.ReadOnly() {
		if !stdinIsTerminal(cmd.InOrStdin()) {
			return fmt.Errorf("%s: confirmation needed but stdin is not a terminal; pass --yes to confirm", cmd.Name())
		}
		p, err := m.preview(ctx, a, ns)
		if err != nil {
			return err
		}
		fmt.Fprintln(stderr, "context:", t.ContextName)
		for _, l := range p.Lines() {
			fmt.Fprintln(stderr, l)
		}
		ok, err := confirm(cmd.InOrStdin(), stderr, m.question)
		if err != nil {
			return err
		}
		if !ok {
			return errCancelled
		}
		previewed = true
	}

	r, err := m.apply(ctx, a, ns)
	if r != nil {
		if perr := printResult(cmd.OutOrStdout(), stderr, f.output, r, previewed); perr != nil && err == nil {
			err = perr
		}
	}
	return err
}

// confirm asks question and reads one answer; only y or yes (any case) is yes.
func confirm(in io.Reader, out io.Writer, question string) (bool, error) {
	fmt.Fprintf(out, "%s [y/N] ", question)
	line, err := bufio.NewReader(in).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return false, err
	}
	if errors.Is(err, io.EOF) && line == "" {
		fmt.Fprintln(out)
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return true, nil
	}
	return false, nil
}

// printResult prints what was done: the Result as JSON/YAML, or the plan's
// lines (unless the person saw them before confirming) and the outcome as
// text. Problems after the change (Event, audit) go to stderr.
func printResult(out, stderr io.Writer, format string, r *actions.Result, previewed bool) error {
	if r.EventError != "" {
		fmt.Fprintln(stderr, "warning: the change was made but its Event was not recorded:", r.EventError)
	}
	if r.AuditError != "" {
		fmt.Fprintln(stderr, "warning: the change was made but the audit log was not written:", r.AuditError)
	}
	if format != outputTable {
		return writeData(out, format, r)
	}
	if r.Outcome != actions.OutcomeApplied && r.Outcome != actions.OutcomeUnchanged {
		return nil // the error says it
	}
	if !previewed && r.Context != "" {
		// With --yes nothing was previewed: the context is said here, as
		// the preview says it first.
		fmt.Fprintln(out, "context:", r.Context)
	}
	if r.Plan != nil && !previewed {
		for _, l := range r.Plan.Lines() {
			fmt.Fprintln(out, l)
		}
	}
	switch r.Outcome {
	case actions.OutcomeUnchanged:
		_, err := fmt.Fprintf(out, "%s %s: unchanged, nothing to do\n", r.Action, r.Object)
		return err
	default:
		_, err := fmt.Fprintf(out, "%s %s: applied\n", r.Action, r.Object)
		return err
	}
}

// countFlag parses a replica-count flag with the TUI's rules.
func countFlag(cmd *cobra.Command, name, value string) (*int32, error) {
	if !cmd.Flags().Changed(name) {
		return nil, nil
	}
	n, err := actions.ParseCount("--"+name, value)
	if err != nil {
		return nil, err
	}
	return &n, nil
}

// writeTarget is the context a write command acts in: -o checked, and one
// namespace (-A is get's alone).
func writeTarget(g *globals, f *mutationFlags) (*kube.Target, error) {
	if err := checkOutput(f.output); err != nil {
		return nil, err
	}
	if g.kube.AllNamespaces {
		return nil, errors.New("-A/--all-namespaces only works with get; name the namespace with -n")
	}
	return g.kube.Resolve()
}

// cliActions is the choke point as a CLI command uses it on t: --readonly
// and the config file's guardrails for the context (read-only, or
// protected: the object's name confirmed with --confirm), then set (nil:
// nothing) for what the command adds.
func cliActions(t *kube.Target, readOnly bool, set func(*actions.Options) error) (*actions.Actions, error) {
	pol, err := actions.LoadDefaultPolicy()
	if err != nil {
		return nil, err
	}
	opts := actions.Options{ReadOnly: readOnly, Context: t.ContextName}
	pol.Apply(t.ContextName, &opts)
	if set != nil {
		if err := set(&opts); err != nil {
			return nil, err
		}
	}
	return actions.NewForTarget(t, opts)
}
