package main

import (
	"errors"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/raydar/raydar/kube/history"
	"github.com/raydar/raydar/rayapi/kinds"
)

// historyKind is the kind of the Ray object a name means (any of its names
// in rayapi/kinds: cluster, rc, rayjob, cronjobs, …): kube/history records
// every ray.io kind (the pods under their RayCluster).
func historyKind(name string) (string, error) {
	if k, ok := kinds.Lookup(name); ok && k.IsRay() {
		return k.Kind, nil
	}
	return "", fmt.Errorf("history has no record of %q: use %s (or their spellings in raydar get)", name, orList(each(kinds.Ray, singular)))
}

// historyNote heads every table: whose record this is.
const historyNote = "this machine's record, since raydar first ran here (TUI or operator), not the cluster's"

// newHistoryCmd: raydar history KIND NAME [-n NS] [-o json] [--since DUR].
func newHistoryCmd(g *globals) *cobra.Command {
	var (
		output string
		since  time.Duration
		file   string
	)
	cmd := &cobra.Command{
		Use:   "history " + wordUsage(kinds.Ray) + " NAME",
		Short: "Show what this machine's raydar saw happen to a Ray object: replica changes and who made them, pods, states",
		Long: "Print the timeline raydar recorded for one " + kindList(kinds.Ray) + ":\n" +
			"replica changes per worker group and who made them (the Ray autoscaler, a person through\n" +
			"raydar, raydar's reconciler, kubectl, another client: read from managedFields), pods created,\n" +
			"deleted, evicted, OOM-killed or restarted (under their RayCluster), condition, state and job\n" +
			"status changes. Kubernetes keeps Events for an hour; this record stays (bounded, oldest dropped).\n\n" +
			"It is THIS MACHINE's record, kept while raydar ran here (the TUI or `raydar operator`) since it\n" +
			"first ran, in --history-file; not the cluster's: changes made while no raydar ran here are not in it.\n" +
			"The object is the one on the current context's API server (the record keeps each server apart).\n" +
			"KIND takes the spellings of raydar get (cluster, rc, rayjob, rs, rcj, …).",
		Example: "  raydar history cluster my-cluster -n team-a\n  raydar history rayjob nightly --since 2h -o json",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 2 {
				return fmt.Errorf("history needs a KIND and a NAME (got %d arguments): raydar history %s NAME", len(args), wordUsage(kinds.Ray))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			kind, err := historyKind(args[0])
			if err != nil {
				return err
			}
			if output != outputTable && output != outputJSON {
				return fmt.Errorf("unknown output format %q: use table or json", output)
			}
			if since < 0 {
				return fmt.Errorf("--since %s is negative", since)
			}
			if g.kube.Fleet() {
				// The record is this machine's, read without a request, but
				// a list of contexts still names no one namespace default:
				// Resolve's refusal, in its words.
				_, err := g.kube.Resolve()
				return err
			}
			// The record holds every cluster raydar watched from here: the
			// object is the one on the current context's API server.
			t, err := g.kube.Resolve()
			if err != nil {
				return err
			}
			ns := g.kube.Namespace
			if ns == "" {
				ns = t.Namespace
			}
			if ns == "" {
				ns = "default"
			}
			ref := history.Ref{Server: t.Server, Kind: kind, Namespace: ns, Name: args[1]}
			var from time.Time
			if since > 0 {
				from = time.Now().Add(-since)
			}
			var entries []history.Entry
			s, err := history.OpenReader(file)
			if err == nil {
				entries, err = s.Query(ref, from)
			}
			if err != nil && !errors.Is(err, history.ErrNoHistory) {
				return err
			}
			if output == outputJSON {
				if entries == nil {
					entries = []history.Entry{}
				}
				return writeData(cmd.OutOrStdout(), outputJSON, struct {
					Server    string          `json:"server"`
					Kind      string          `json:"kind"`
					Namespace string          `json:"namespace"`
					Name      string          `json:"name"`
					Source    string          `json:"source"`
					File      string          `json:"file"`
					Entries   []history.Entry `json:"entries"`
				}{t.Server, kind, ns, args[1], historyNote, file, entries})
			}
			return writeHistory(cmd.OutOrStdout(), ref, file, entries, err)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&output, "output", "o", outputTable, "output format: table or json")
	f.DurationVar(&since, "since", 0, "only entries of this last while (e.g. 30m, 2h); all when 0")
	f.StringVar(&file, "history-file", history.DefaultPathOrEmpty(), "the history file raydar records into on this machine")
	return cmd
}

// writeHistory prints the timeline as a table, oldest first, headed by
// whose record it is.
func writeHistory(w io.Writer, ref history.Ref, file string, entries []history.Entry, readErr error) error {
	fmt.Fprintf(w, "%s %s/%s on %s: %s (%s)\n", ref.Kind, ref.Namespace, ref.Name, ref.Server, historyNote, file)
	switch {
	case readErr != nil:
		fmt.Fprintf(w, "%v\n", readErr)
		return nil
	case len(entries) == 0:
		fmt.Fprintln(w, "nothing recorded for it")
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tCHANGE\tBY\tDETAIL")
	uids := map[string]bool{}
	for i := range entries {
		e := &entries[i]
		if e.UID != "" {
			uids[string(e.UID)] = true
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", e.Time.Local().Format("2006-01-02 15:04:05"), e.Change(), orDash(e.By()), e.Detail())
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(uids) > 1 {
		fmt.Fprintf(w, "note: %d objects of this name (UIDs) over time: deleted and created again\n", len(uids))
	}
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
