package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/controller/features"
	"github.com/raydar/raydar/controller/raycluster"
	"github.com/raydar/raydar/controller/rayjob"
	"github.com/raydar/raydar/controller/rayservice"
	"github.com/raydar/raydar/kube/actions"
	"github.com/raydar/raydar/kube/edit"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// newEditCmd: raydar edit KIND NAME, the TUI's e (kube/edit) as a command.
func newEditCmd(g *globals) *cobra.Command {
	var f mutationFlags
	ks := suspendable()
	short := "Edit a " + kindList(ks) + " in $KUBE_EDITOR or $EDITOR, as kubectl edit"
	cmd := &cobra.Command{
		Use:   "edit KIND NAME",
		Short: short,
		Long: short + ".\nKIND is " + kindNames(ks) + ",\nor their plurals: the names raydar get takes.\n" +
			"The object's YAML (without managedFields and status) opens in $KUBE_EDITOR, else $EDITOR,\n" +
			"else vi. An unchanged or empty file cancels. Errors (YAML, unknown fields, invalid values,\n" +
			"the API server's refusal) reopen the file with them on top; so does a conflict (the object\n" +
			"changed meanwhile), with your changes laid over the new version. Before applying, the plan\n" +
			"says what changes and what will not take effect on running pods; it is applied in one write\n" +
			"through the same guardrails and audit log as every change raydar makes.",
		Example: "  raydar edit rc my-cluster\n  KUBE_EDITOR='code --wait' raydar edit rayjob my-job\n  raydar edit cronjob nightly --yes",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 2 {
				return fmt.Errorf("edit needs KIND and NAME (got %d arguments): raydar edit %s NAME", len(args), kindUsage(ks))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			kind, err := actions.ParseKind(args[0])
			if err != nil {
				return err
			}
			return runEdit(cmd, g, &f, kind, args[1])
		},
	}
	f.addTo(cmd)
	return cmd
}

// unsupportedUnder is what raydar's operator refuses of an object under
// the feature gates (controller's Unsupported*), for the warnings of an
// edit. A RayCronJob's jobTemplate is refused, if at all, by the RayJobs
// it creates.
func unsupportedUnder(gates features.Gates) actions.Unsupported {
	cfg := raycluster.BuildConfig{Features: gates}
	return func(obj client.Object) field.ErrorList {
		switch o := obj.(type) {
		case *rayv1.RayCluster:
			return raycluster.UnsupportedRayClusterWith(o, cfg)
		case *rayv1.RayJob:
			return rayjob.UnsupportedWith(o, cfg)
		case *rayv1.RayService:
			return rayservice.UnsupportedWith(o, cfg)
		}
		return nil
	}
}

// runEdit is the edit loop: the editor, the review, the plan and its
// question (y/N on stderr unless --yes), the write; errors and conflicts
// run the editor again.
func runEdit(cmd *cobra.Command, g *globals, f *mutationFlags, kind actions.Kind, name string) error {
	t, err := writeTarget(g, f)
	if err != nil {
		return err
	}
	a, err := cliActions(t, f.readOnly, func(opts *actions.Options) error {
		// The operator's gates are not known here: raydar's defaults.
		opts.Unsupported = unsupportedUnder(features.Gates{})
		return nil
	})
	if err != nil {
		return err
	}
	ns, stderr := t.Namespace, cmd.ErrOrStderr()
	if !a.ReadOnly() {
		if err := a.CheckConfirmation(actions.ObjectRef{Kind: kind, Namespace: ns, Name: name}, f.confirm); err != nil {
			return err
		}
	}
	ctx := actions.WithConfirmation(cmd.Context(), f.confirm)
	s, err := edit.Start(ctx, a, kind, ns, name, "")
	if err != nil {
		return err
	}
	for {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("edit: %w; your edit is in %s", err, s.Path)
		}
		ed := s.Command(os.Getenv)
		ed.Stdin, ed.Stdout, ed.Stderr = cmd.InOrStdin(), cmd.OutOrStdout(), stderr
		if err := ed.Run(); err != nil {
			return fmt.Errorf("the editor (%s) failed: %w; nothing was changed, your edit is in %s", ed.Args[0], err, s.Path)
		}
		st := s.Review()
		if st.Kind == edit.Confirm {
			fmt.Fprintln(stderr, "context:", t.ContextName)
			for _, l := range st.Plan.Lines() {
				fmt.Fprintln(stderr, l)
			}
			if !f.yes {
				if !stdinIsTerminal(cmd.InOrStdin()) {
					return fmt.Errorf("edit: confirmation needed but stdin is not a terminal; pass --yes to confirm (your edit is in %s)", s.Path)
				}
				ok, err := confirm(cmd.InOrStdin(), stderr, fmt.Sprintf("Apply the edit of %s %s?", kind, name))
				if err != nil {
					return err
				}
				if !ok {
					fmt.Fprintln(stderr, s.Abandon().Message)
					return errCancelled
				}
			}
			st = s.Apply(ctx)
		}
		switch st.Kind {
		case edit.Cancelled:
			if st.Kept != "" { // after errors: kubectl's exit code too
				return errors.New(st.Message)
			}
			fmt.Fprintln(stderr, st.Message)
			return nil
		case edit.Reopen:
			fmt.Fprintln(stderr, "error:", st.Message)
			continue
		case edit.Applied:
			return printResult(cmd.OutOrStdout(), stderr, f.output, st.Result, true)
		}
		if st.Result != nil && f.output != outputTable {
			_ = printResult(cmd.OutOrStdout(), stderr, f.output, st.Result, true)
		}
		if st.Message != "" {
			return fmt.Errorf("%w; %s", st.Err, st.Message)
		}
		return st.Err
	}
}
