package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/kube"
	"github.com/raydar/raydar/kube/actions"
	"github.com/raydar/raydar/kube/gauges"
	"github.com/raydar/raydar/rayapi/podview"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// newTopCmd: raydar top cluster NAME | nodes | gpus, like kubectl top, from
// Ray's own gauges (kube/gauges).
func newTopCmd(g *globals) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "top cluster NAME | nodes | gpus",
		Short: "Show what Ray nodes use: CPU, memory, each GPU and its memory",
		Long: "Read each Ray pod's own gauges (Ray's metrics export port, the container port named\n" +
			"\"metrics\") through the API server's pod proxy (GET pods/proxy; in a raydar sandbox, the\n" +
			"simulated nodes), once, and print them as kubectl top prints metrics-server's:\n\n" +
			"  cluster NAME  the pods of one RayCluster\n" +
			"  nodes         every Ray pod in the namespace (-A: all namespaces)\n" +
			"  gpus          every GPU held by a Ray pod, least used first\n\n" +
			"A value that is not known is \"?\" with the reason (metrics port absent, proxy forbidden,\n" +
			"not yet reporting, pod not running, unreachable), never 0. How long a GPU has been idle\n" +
			"needs watching over time: the TUI's :gpus view keeps it.\n\n" +
			"--context a,b (or --all-contexts) reads every one of those contexts at once: the table gains a\n" +
			"CONTEXT column, first; a context that cannot be read is named on stderr and the exit status is 1.",
		Example: "  raydar top cluster my-cluster -n team-a\n  raydar top nodes -A\n  raydar top gpus -A -o json\n  raydar top gpus -A --all-contexts",
		Args: func(_ *cobra.Command, args []string) error {
			switch {
			case len(args) == 2 && args[0] == "cluster", len(args) == 1 && (args[0] == "nodes" || args[0] == "gpus"):
				return nil
			case len(args) == 1 && args[0] == "cluster":
				return errors.New("top cluster needs the RayCluster's NAME: raydar top cluster NAME")
			}
			return fmt.Errorf("unknown top %q: use raydar top cluster NAME, raydar top nodes or raydar top gpus", args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if output != outputTable && output != outputJSON {
				return fmt.Errorf("unknown output format %q for top: use table or json", output)
			}
			name := ""
			if args[0] == "cluster" {
				name = args[1]
				if g.kube.AllNamespaces {
					return errors.New("a NAME needs one namespace: drop -A/--all-namespaces or use -n")
				}
			}
			flags := g.kube
			if flags.AllContexts {
				policy, err := actions.LoadDefaultPolicy()
				if err != nil {
					return err
				}
				flags = withConfigContexts(flags, policy)
			}
			var targets []*kube.Target
			if flags.Fleet() {
				ts, err := flags.ResolveAll()
				if err != nil {
					return err
				}
				targets = ts
			} else {
				t, err := flags.Resolve()
				if err != nil {
					return err
				}
				targets = []*kube.Target{t}
			}
			rows, failed := topContexts(cmd.Context(), flags, targets, name)
			if len(targets) == 1 && len(failed) == 1 {
				return failed[0].err
			}
			var err error
			switch {
			case len(rows) == 0 && len(failed) == 0:
				_, err = fmt.Fprintln(cmd.ErrOrStderr(), "No Ray pods found.")
			case args[0] == "gpus":
				err = writeTopGPUs(cmd.OutOrStdout(), output, rows, len(targets) > 1)
			default:
				err = writeTopNodes(cmd.OutOrStdout(), output, rows, len(targets) > 1)
			}
			if err != nil {
				return err
			}
			if len(failed) == 0 {
				return nil
			}
			var names []string
			for _, f := range failed {
				fmt.Fprintf(cmd.ErrOrStderr(), "context %s: %v\n", f.context, f.err)
				names = append(names, f.context)
			}
			return fmt.Errorf("%d of %d contexts could not be read: %s", len(failed), len(targets), strings.Join(names, ", "))
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", outputTable, "output format: table or json")
	g.kube.AddFleetTo(cmd.Flags())
	return cmd
}

// topFailure is a context that could not be read.
type topFailure struct {
	context string
	err     error
}

// topContexts reads every target side by side, each within
// getContextTimeout when there are several; the rows carry their context.
func topContexts(ctx context.Context, flags kube.Flags, targets []*kube.Target, name string) ([]topRow, []topFailure) {
	var mu sync.Mutex
	var rows []topRow
	var failed []topFailure
	var wg sync.WaitGroup
	for _, t := range targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cctx := ctx
			if len(targets) > 1 {
				var cancel context.CancelFunc
				cctx, cancel = context.WithTimeout(ctx, getContextTimeout)
				defer cancel()
			}
			one := flags
			one.Context, one.AllContexts, one.ContextPatterns = t.ContextName, false, nil
			var rs []topRow
			f, err := topFetcher(one, t)
			if err == nil {
				rs, err = topScrape(cctx, t, f, name)
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				failed = append(failed, topFailure{t.ContextName, err})
				return
			}
			for i := range rs {
				rs[i].Context = t.ContextName
			}
			rows = append(rows, rs...)
		}()
	}
	wg.Wait()
	order := map[string]int{}
	for i, t := range targets {
		order[t.ContextName] = i
	}
	slices.SortStableFunc(rows, func(a, b topRow) int { return cmp.Compare(order[a.Context], order[b.Context]) })
	slices.SortFunc(failed, func(a, b topFailure) int { return cmp.Compare(order[a.context], order[b.context]) })
	return rows, failed
}

// topFetcher reads the sandbox's simulated nodes when the context is a
// raydar sandbox, else the API server's pod proxy.
func topFetcher(f kube.Flags, t *kube.Target) (gauges.Fetcher, error) {
	book, err := sandboxBookFor(f)
	if err != nil {
		return nil, err
	}
	if book != nil {
		return gauges.BookFetcher{Book: book}, nil
	}
	cs, err := kubernetes.NewForConfig(t.Config)
	if err != nil {
		return nil, err
	}
	return gauges.PodProxy{Client: cs}, nil
}

// topRow is one Ray pod's gauges with its cluster.
type topRow struct {
	Context            string
	Namespace, Cluster string
	gauges.PodGauges
}

// topScrape lists the Ray pods (of cluster name, or all in the target's
// scope) and reads each cluster's gauges, the clusters side by side, at
// most gauges.DefaultConcurrency requests at once.
func topScrape(ctx context.Context, t *kube.Target, f gauges.Fetcher, name string) ([]topRow, error) {
	gt, err := newGetter(t, name, time.Now())
	if err != nil {
		return nil, err
	}
	sel := rayv1.RayPodSelector()
	if name != "" {
		if err := gt.wrap(gt.c.Get(ctx, client.ObjectKey{Namespace: gt.ns, Name: name}, &rayv1.RayCluster{}), "get", rayv1.ResourceRayClusters, name); err != nil {
			return nil, err
		}
		r, _ := labels.NewRequirement(rayv1.RayClusterLabelKey, selection.Equals, []string{name})
		sel = sel.Add(*r)
	}
	var l corev1.PodList
	if err := gt.wrap(gt.c.List(ctx, &l, client.InNamespace(gt.ns), client.MatchingLabelsSelector{Selector: sel}), "list", "pods", ""); err != nil {
		return nil, err
	}
	type key struct{ ns, cluster string }
	byCluster := map[key][]*podview.Pod{}
	for i := range l.Items {
		p := podview.Of(&l.Items[i])
		k := key{p.Namespace, p.Labels[rayv1.RayClusterLabelKey]}
		byCluster[k] = append(byCluster[k], p)
	}
	slots := make(chan struct{}, gauges.DefaultConcurrency)
	var mu sync.Mutex
	var rows []topRow
	var wg sync.WaitGroup
	for k, pods := range byCluster {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, _ := gauges.ScrapeCluster(ctx, gauges.ScrapeOptions{Fetcher: f, Slots: slots}, pods)
			mu.Lock()
			defer mu.Unlock()
			for _, pg := range out {
				rows = append(rows, topRow{Namespace: k.ns, Cluster: k.cluster, PodGauges: pg})
			}
		}()
	}
	wg.Wait()
	slices.SortFunc(rows, func(a, b topRow) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Cluster, b.Cluster), cmp.Compare(a.Pod, b.Pod))
	})
	return rows, nil
}

// topNodeJSON is one pod of `top nodes -o json`; a nil gauge is unknown.
type topNodeJSON struct {
	Context   string   `json:"context,omitempty"`
	Namespace string   `json:"namespace"`
	Cluster   string   `json:"cluster"`
	Pod       string   `json:"pod"`
	Group     string   `json:"group,omitempty"`
	IP        string   `json:"ip,omitempty"`
	Head      bool     `json:"head"`
	Reason    string   `json:"reason,omitempty"`
	CPUPct    *float64 `json:"cpuPercent,omitempty"`
	CPUs      *float64 `json:"cpus,omitempty"`
	MemUsed   *float64 `json:"memoryUsedBytes,omitempty"`
	MemTotal  *float64 `json:"memoryTotalBytes,omitempty"`
	GPUs      []topGPU `json:"gpus,omitempty"`
}

type topGPU struct {
	Context     string   `json:"context,omitempty"`
	Namespace   string   `json:"namespace,omitempty"`
	Cluster     string   `json:"cluster,omitempty"`
	Pod         string   `json:"pod,omitempty"`
	Index       int      `json:"index"`
	Name        string   `json:"name,omitempty"`
	UtilPct     float64  `json:"utilizationPercent"`
	GRAMUsedMiB *float64 `json:"memoryUsedMiB,omitempty"`
	GRAMTotMiB  *float64 `json:"memoryTotalMiB,omitempty"`
}

func ptrIf(v float64, ok bool) *float64 {
	if !ok {
		return nil
	}
	return &v
}

func gpusOf(r topRow, withPod bool) []topGPU {
	if r.Node == nil {
		return nil
	}
	var out []topGPU
	for _, g := range r.Node.GPUs {
		j := topGPU{Index: g.Index, Name: g.Name, UtilPct: g.UtilPct,
			GRAMUsedMiB: ptrIf(g.GRAMUsedMiB, g.HasGRAM), GRAMTotMiB: ptrIf(g.GRAMUsedMiB+g.GRAMAvailableMiB, g.HasGRAM)}
		if withPod {
			j.Context, j.Namespace, j.Cluster, j.Pod = r.Context, r.Namespace, r.Cluster, r.Pod
		}
		out = append(out, j)
	}
	return out
}

// writeTopNodes prints one row per pod; fleet adds the CONTEXT column.
func writeTopNodes(w io.Writer, output string, rows []topRow, fleet bool) error {
	if output == outputJSON {
		out := make([]topNodeJSON, 0, len(rows))
		for _, r := range rows {
			j := topNodeJSON{Context: r.Context, Namespace: r.Namespace, Cluster: r.Cluster, Pod: r.Pod, Group: r.Group, IP: r.IP, Head: r.Head, Reason: r.Why()}
			if n := r.Node; n != nil {
				j.CPUPct, j.CPUs = ptrIf(n.CPUPct, n.HasCPU), ptrIf(n.CPUCount, n.HasCPUCount)
				j.MemUsed, j.MemTotal = ptrIf(n.MemUsed, n.HasMem), ptrIf(n.MemTotal, n.HasMem)
				j.GPUs = gpusOf(r, false)
			}
			out = append(out, j)
		}
		return writeData(w, outputJSON, out)
	}
	header := []string{"NAMESPACE", "CLUSTER", "POD", "CPU", "MEMORY", "GPU", "GPU MEMORY", "UNKNOWN BECAUSE"}
	if fleet {
		header = append([]string{"CONTEXT"}, header...)
	}
	t := newTable(w, header...)
	for _, r := range rows {
		why := r.Why()
		if why == "" {
			why = " " // not "-": a known row has no reason
		}
		cells := []string{r.Namespace, r.Cluster, r.Pod, r.CPUCell(), r.MemCell(), r.GPUCell(), r.GRAMCell(), why}
		if fleet {
			cells = append([]string{r.Context}, cells...)
		}
		t.row(cells...)
	}
	return t.flush()
}

// writeTopGPUs prints one row per GPU, least used first; fleet adds the
// CONTEXT column.
func writeTopGPUs(w io.Writer, output string, rows []topRow, fleet bool) error {
	var gpus []topGPU
	var unknown []string
	for _, r := range rows {
		gpus = append(gpus, gpusOf(r, true)...)
		if r.Node == nil {
			where := r.Namespace + "/" + r.Pod
			if fleet {
				where = r.Context + " " + where
			}
			unknown = append(unknown, where+": "+r.Why())
		}
	}
	slices.SortStableFunc(gpus, func(a, b topGPU) int { return cmp.Compare(a.UtilPct, b.UtilPct) })
	if output == outputJSON {
		return writeData(w, outputJSON, map[string]any{"gpus": gpus, "unknown": unknown})
	}
	header := []string{"NAMESPACE", "CLUSTER", "POD", "GPU", "NAME", "UTIL", "GPU MEMORY"}
	if fleet {
		header = append([]string{"CONTEXT"}, header...)
	}
	t := newTable(w, header...)
	for _, g := range gpus {
		mem := gauges.Unknown
		if g.GRAMUsedMiB != nil {
			mem = gauges.Bytes(*g.GRAMUsedMiB*(1<<20)) + "/" + gauges.Bytes(*g.GRAMTotMiB*(1<<20))
		}
		cells := []string{g.Namespace, g.Cluster, g.Pod, strconv.Itoa(g.Index), g.Name, gauges.Pct(g.UtilPct), mem}
		if fleet {
			cells = append([]string{g.Context}, cells...)
		}
		t.row(cells...)
	}
	if err := t.flush(); err != nil {
		return err
	}
	for _, u := range unknown {
		if _, err := fmt.Fprintf(w, "not known: %s\n", u); err != nil {
			return err
		}
	}
	return nil
}
