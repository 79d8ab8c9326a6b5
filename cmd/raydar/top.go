package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/kube"
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
			"needs watching over time: the TUI's :gpus view keeps it.",
		Example: "  raydar top cluster my-cluster -n team-a\n  raydar top nodes -A\n  raydar top gpus -A -o json",
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
			t, err := g.kube.Resolve()
			if err != nil {
				return err
			}
			name := ""
			if args[0] == "cluster" {
				name = args[1]
				if g.kube.AllNamespaces {
					return errors.New("a NAME needs one namespace: drop -A/--all-namespaces or use -n")
				}
			}
			f, err := topFetcher(g.kube, t)
			if err != nil {
				return err
			}
			rows, err := topScrape(cmd.Context(), t, f, name)
			if err != nil {
				return err
			}
			if args[0] == "gpus" {
				return writeTopGPUs(cmd.OutOrStdout(), output, rows)
			}
			return writeTopNodes(cmd.OutOrStdout(), output, rows)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", outputTable, "output format: table or json")
	return cmd
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
	if len(rows) == 0 {
		where := "namespace " + gt.ns
		if gt.ns == "" {
			where = "any namespace"
		}
		return nil, fmt.Errorf("no Ray pods found in %s", where)
	}
	return rows, nil
}

// topNodeJSON is one pod of `top nodes -o json`; a nil gauge is unknown.
type topNodeJSON struct {
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
			j.Namespace, j.Cluster, j.Pod = r.Namespace, r.Cluster, r.Pod
		}
		out = append(out, j)
	}
	return out
}

func writeTopNodes(w io.Writer, output string, rows []topRow) error {
	if output == outputJSON {
		out := make([]topNodeJSON, 0, len(rows))
		for _, r := range rows {
			j := topNodeJSON{Namespace: r.Namespace, Cluster: r.Cluster, Pod: r.Pod, Group: r.Group, IP: r.IP, Head: r.Head, Reason: r.Why()}
			if n := r.Node; n != nil {
				j.CPUPct, j.CPUs = ptrIf(n.CPUPct, n.HasCPU), ptrIf(n.CPUCount, n.HasCPUCount)
				j.MemUsed, j.MemTotal = ptrIf(n.MemUsed, n.HasMem), ptrIf(n.MemTotal, n.HasMem)
				j.GPUs = gpusOf(r, false)
			}
			out = append(out, j)
		}
		return writeData(w, outputJSON, out)
	}
	t := newTable(w, "NAMESPACE", "CLUSTER", "POD", "CPU", "MEMORY", "GPU", "GPU MEMORY", "UNKNOWN BECAUSE")
	for _, r := range rows {
		why := r.Why()
		if why == "" {
			why = " " // not "-": a known row has no reason
		}
		t.row(r.Namespace, r.Cluster, r.Pod, r.CPUCell(), r.MemCell(), r.GPUCell(), r.GRAMCell(), why)
	}
	return t.flush()
}

func writeTopGPUs(w io.Writer, output string, rows []topRow) error {
	var gpus []topGPU
	var unknown []string
	for _, r := range rows {
		gpus = append(gpus, gpusOf(r, true)...)
		if r.Node == nil {
			unknown = append(unknown, r.Namespace+"/"+r.Pod+": "+r.Why())
		}
	}
	slices.SortStableFunc(gpus, func(a, b topGPU) int { return cmp.Compare(a.UtilPct, b.UtilPct) })
	if output == outputJSON {
		return writeData(w, outputJSON, map[string]any{"gpus": gpus, "unknown": unknown})
	}
	t := newTable(w, "NAMESPACE", "CLUSTER", "POD", "GPU", "NAME", "UTIL", "GPU MEMORY")
	for _, g := range gpus {
		mem := gauges.Unknown
		if g.GRAMUsedMiB != nil {
			mem = gauges.Bytes(*g.GRAMUsedMiB*(1<<20)) + "/" + gauges.Bytes(*g.GRAMTotMiB*(1<<20))
		}
		t.row(g.Namespace, g.Cluster, g.Pod, strconv.Itoa(g.Index), g.Name, gauges.Pct(g.UtilPct), mem)
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
