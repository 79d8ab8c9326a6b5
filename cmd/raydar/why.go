package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/spf13/cobra"

	"github.com/raydar/raydar/controller"
	"github.com/raydar/raydar/kube/actions"
	"github.com/raydar/raydar/kube/gauges"
	"github.com/raydar/raydar/kube/inspect"
	"github.com/raydar/raydar/kube/raydash"
	"github.com/raydar/raydar/rayapi/dashboard"
	"github.com/raydar/raydar/rayapi/kinds"
	"github.com/raydar/raydar/rayapi/podview"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/rayapi/why"
)

// whyKind is the kind why diagnoses that name means (any of its names in
// rayapi/kinds: cluster, rc, rayjob, services, …); a name of a kind why
// does not diagnose (a RayCronJob, the pods) is refused the same way as an
// unknown one.
func whyKind(name string) (*kinds.Kind, error) {
	if k, ok := kinds.Lookup(name); ok && k.Why {
		return k, nil
	}
	return nil, fmt.Errorf("why cannot diagnose %q: use %s (or their spellings in raydar get)", name, orList(each(diagnosed(), singular)))
}

// newWhyCmd: raydar why cluster|job|service NAME (the diagnosed kinds).
func newWhyCmd(g *globals) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "why " + wordUsage(diagnosed()) + " NAME",
		Short: "Say why a " + kindList(diagnosed()) + " is not progressing: its causes, evidence and fixes",
		Long: "Diagnose one " + kindList(diagnosed()) + " from what the API server holds (the object,\n" +
			"its pods and their Events, the nodes, who holds raydar's leader Lease; for a RayJob its\n" +
			"cluster and submitter pods, for a RayService its active and pending clusters), and print\n" +
			"one line per cause, most decisive first (CODE, subject, summary), with the evidence and\n" +
			"what to do indented below. A healthy object prints that nothing is wrong.\n" +
			"KIND takes the spellings of raydar get (cluster, rc, rayjob, rs, …).\n" +
			"-o json prints {kind, namespace, name, causes} for scripts; the exit code is 0 whether\n" +
			"causes were found or not, non-zero only when the diagnosis could not be made.",
		Example: "  raydar why cluster my-cluster -n team-a\n  raydar why rayjob nightly -o json",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 2 {
				return fmt.Errorf("why needs a KIND and a NAME (got %d arguments): raydar why %s NAME", len(args), wordUsage(diagnosed()))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			k, err := whyKind(args[0])
			if err != nil {
				return err
			}
			kind := k.Kind
			if err := checkOutput(output); err != nil {
				return err
			}
			t, c, err := oneNamespace(g, "why")
			if err != nil {
				return err
			}
			cs, err := kubernetes.NewForConfig(t.Config)
			if err != nil {
				return err
			}
			name := args[1]
			// The object itself first, so that a missing one reads as
			// raydar get says it.
			if err := c.Get(cmd.Context(), client.ObjectKey{Namespace: t.Namespace, Name: name}, k.New()); err != nil {
				return &actions.APIError{Verb: "get", Resource: k.Resource.Resource, Namespace: t.Namespace, Name: name,
					User: cmp.Or(t.User, actions.UnknownActor), Err: err}
			}
			book, err := sandboxBookFor(g.kube)
			if err != nil {
				return err
			}
			dash, err := newDashboards(t.Config, book, raydash.SecretsFromReader(c))
			if err != nil {
				return err
			}
			fetch, err := topFetcher(g.kube, t)
			if err != nil {
				return err
			}
			gt := &inspect.Gatherer{Client: c, Logs: podLogs(cs), Leases: whyLeases(), Capacity: rayCapacity(dash), GPUs: rayGPUs(fetch),
				Review: func(ctx context.Context, sar *authorizationv1.SubjectAccessReview) (*authorizationv1.SubjectAccessReview, error) {
					return cs.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
				}}
			ctx, cancel := context.WithTimeout(cmd.Context(), time.Minute)
			defer cancel()
			rep, err := gt.Gather(ctx, kind, t.Namespace, name)
			if err != nil {
				return err
			}
			for _, n := range rep.Notes {
				fmt.Fprintln(cmd.ErrOrStderr(), "note:", n)
			}
			causes := sortedCauses(rep.Causes())
			sec := rep.Security()
			if output != outputTable {
				return writeData(cmd.OutOrStdout(), output, whyJSON{Kind: kind, Namespace: t.Namespace, Name: name, Causes: causes,
					Security: securityJSON{Verdict: sec.Verdict(), Security: sec}})
			}
			return writeWhy(cmd.OutOrStdout(), kind, t.Namespace, name, causes, &sec)
		},
	}
	addOutputFlag(cmd, &output)
	return cmd
}

// whyLeases are the Leases raydar processes elect their leader on, in the
// order they pick them (leaseNamespace, operatorLeaseNamespace).
func whyLeases() []types.NamespacedName {
	return []types.NamespacedName{
		{Namespace: controller.DefaultLeaderElectionNamespace, Name: controller.DefaultLeaderElectionID},
		{Namespace: "default", Name: controller.DefaultLeaderElectionID},
	}
}

// rayGPUs reads Ray's gauges of a cluster's GPUs once (kube/gauges), for
// the GPUsIdle cause: one reading, so "below 5 % now"; nil when no pod
// reports a GPU. Pods whose gauges are unknown are left out.
func rayGPUs(f gauges.Fetcher) func(ctx context.Context, rc *rayv1.RayCluster, pods []*podview.Pod) (*why.GPUGauges, error) {
	return func(ctx context.Context, rc *rayv1.RayCluster, pods []*podview.Pod) (*why.GPUGauges, error) {
		if !gauges.AsksGPUs(rc) {
			return nil, nil // no GPU to be idle: no pod is asked
		}
		out, forbidden := gauges.ScrapeCluster(ctx, gauges.ScrapeOptions{Fetcher: f}, pods)
		if forbidden {
			return nil, errors.New("proxy forbidden: no get on pods/proxy")
		}
		g := &why.GPUGauges{BelowPct: gauges.DefaultIdleBelowPct}
		for _, pg := range out {
			if pg.Node == nil {
				continue
			}
			for _, u := range pg.Node.GPUs {
				g.GPUs = append(g.GPUs, why.GPUReading{Pod: pg.Pod, Index: u.Index, UtilPct: u.UtilPct})
			}
		}
		if len(g.GPUs) == 0 {
			return nil, nil
		}
		return g, nil
	}
}

// rayCapacity reads Ray's view of a cluster's capacity from its dashboard,
// reached as every raydar reaches it (newDashboards).
func rayCapacity(dash raydash.Resolver) func(ctx context.Context, rc *rayv1.RayCluster) (*dashboard.Capacity, error) {
	return func(ctx context.Context, rc *rayv1.RayCluster) (*dashboard.Capacity, error) {
		dc, err := dash.ClientFor(ctx, rc)
		if err != nil {
			return nil, err
		}
		return dc.Capacity(ctx)
	}
}

// podLogs reads the last lines of a pod container's log.
func podLogs(cs kubernetes.Interface) func(ctx context.Context, ns, pod, container string, lines int64) (string, error) {
	return func(ctx context.Context, ns, pod, container string, lines int64) (string, error) {
		b, err := cs.CoreV1().Pods(ns).GetLogs(pod, &corev1.PodLogOptions{Container: container, TailLines: &lines}).DoRaw(ctx)
		return string(b), err
	}
}

// whyJSON is `raydar why -o json`.
type whyJSON struct {
	Kind      string      `json:"kind"`
	Namespace string      `json:"namespace"`
	Name      string      `json:"name"`
	Causes    []why.Cause `json:"causes"`
	// Security is the cluster's security line (rayapi/why security.go).
	Security securityJSON `json:"security"`
}

// securityJSON is why.Security with its verdict ("closed", "open (…)").
type securityJSON struct {
	Verdict string `json:"verdict"`
	why.Security
}

// sortedCauses orders causes most decisive first (Rank, stable), never nil.
func sortedCauses(cs []why.Cause) []why.Cause {
	out := append([]why.Cause{}, cs...)
	slices.SortStableFunc(out, func(a, b why.Cause) int { return cmp.Compare(a.Rank, b.Rank) })
	return out
}

// writeWhy prints causes for people: a header line, then one line per
// cause (CODE, subject, summary) with its evidence and fix indented below,
// then, with sec, the security line (verdict, the four words, and what
// leaves the cluster open) whether or not anything is wrong.
func writeWhy(w io.Writer, kind, ns, name string, causes []why.Cause, sec *why.Security) error {
	var b strings.Builder
	writeCauses(&b, kind, ns, name, causes)
	writeSecurity(&b, sec)
	_, err := io.WriteString(w, b.String())
	return err
}

// writeCauses is writeWhy's header line and causes.
func writeCauses(b *strings.Builder, kind, ns, name string, causes []why.Cause) {
	if len(causes) == 0 {
		fmt.Fprintf(b, "%s %s/%s: nothing is wrong that raydar can see\n", kind, ns, name)
		return
	}
	n := "1 cause"
	if len(causes) > 1 {
		n = fmt.Sprintf("%d causes, most decisive first", len(causes))
	}
	fmt.Fprintf(b, "%s %s/%s: %s\n", kind, ns, name, n)
	width := 0
	for _, c := range causes {
		width = max(width, len(c.Code))
	}
	for _, c := range causes {
		line := fmt.Sprintf("%-*s  ", width, c.Code)
		if c.Subject != "" {
			line += c.Subject + ": "
		}
		fmt.Fprintln(b, line+c.Summary)
		indent := strings.Repeat(" ", width+2)
		for _, e := range c.Evidence {
			// Evidence may span lines (a Serve app's traceback): each
			// keeps the indentation.
			for _, l := range strings.Split(strings.TrimRight(e, "\n"), "\n") {
				fmt.Fprintln(b, indent+l)
			}
		}
		if c.Fix != "" {
			fmt.Fprintln(b, indent+"fix: "+c.Fix)
		}
	}
}

// writeSecurity is the security line of writeWhy.
func writeSecurity(b *strings.Builder, sec *why.Security) {
	if sec == nil {
		return
	}
	const indent = "          " // under the verdict, past "security: "
	fmt.Fprintln(b, "security: "+sec.Verdict())
	fmt.Fprintln(b, indent+sec.Items())
	for _, o := range sec.Open {
		fmt.Fprintln(b, indent+o)
	}
}
