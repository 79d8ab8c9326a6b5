package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/spf13/cobra"

	"github.com/raydar/raydar/kube/actions"
	"github.com/raydar/raydar/kube/raydash"
	"github.com/raydar/raydar/rayapi/dashboard"
	"github.com/raydar/raydar/rayapi/podview"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// rayLogsOpts are raydar ray-logs' flags.
type rayLogsOpts struct {
	pod, nodeIP, job, output string
	follow                   bool
	tail                     int
}

// newRayLogsCmd: raydar ray-logs CLUSTER [FILE] | raydar ray-logs --job NAME.
func newRayLogsCmd(g *globals) *cobra.Command {
	var o rayLogsOpts
	cmd := &cobra.Command{
		Use:   "ray-logs CLUSTER [FILE] | ray-logs --job NAME",
		Short: "List, print or follow Ray's own log files (raylet, GCS, dashboard, job drivers, runtime env, Serve) on a cluster's node",
		Long: "Ray writes its real logs to files under the session directory of each node, not to the\n" +
			"container's output; raydar reads them through the cluster's Ray dashboard (its log API),\n" +
			"reached as raydar reaches every dashboard (the API server's service proxy from a laptop or\n" +
			"bastion, the head Service in a pod).\n" +
			"With CLUSTER only, list the files of the head node (--pod POD or --node-ip IP: another\n" +
			"node), grouped: job drivers, runtime env, serve, then Ray's categories; -o json prints\n" +
			"{namespace, cluster, pod, node, categories, groups} for scripts.\n" +
			"With FILE (a name the listing shows, e.g. raylet.out or serve/controller_123.log), print\n" +
			"its last --tail lines (default 1000, -1: all); -f follows it until interrupted.\n" +
			"--job NAME prints the driver log of the RayJob's Ray job (job-driver-<id>.log on its\n" +
			"cluster), with --tail and -f as for a file.\n" +
			"When the dashboard cannot be reached the error says so; `kubectl logs POD` still shows\n" +
			"the container's output.",
		Example: "  raydar ray-logs my-cluster\n  raydar ray-logs my-cluster raylet.out --pod my-cluster-worker-abcde --tail 200\n" +
			"  raydar ray-logs my-cluster serve/controller_42.log -f\n  raydar ray-logs --job nightly -f",
		Args: func(_ *cobra.Command, args []string) error {
			switch {
			case o.job != "" && len(args) > 0:
				return errors.New("ray-logs --job NAME takes no CLUSTER or FILE: the job names its cluster and its file")
			case o.job == "" && (len(args) < 1 || len(args) > 2):
				return fmt.Errorf("ray-logs needs a CLUSTER and optionally a FILE (got %d arguments), or --job NAME", len(args))
			case o.pod != "" && o.nodeIP != "":
				return errors.New("--pod and --node-ip both name the node: give one")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(o.output); err != nil {
				return err
			}
			ctx := cmd.Context()
			if o.follow {
				var stop context.CancelFunc
				ctx, stop = signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
				defer stop()
			}
			return runRayLogs(ctx, g, cmd, o, args)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.pod, "pod", "", "the node of this pod of the cluster (default: the head's)")
	f.StringVar(&o.nodeIP, "node-ip", "", "the node with this IP (default: the head's)")
	f.StringVar(&o.job, "job", "", "print the driver log of this RayJob")
	f.BoolVarP(&o.follow, "follow", "f", false, "follow the file: print what Ray appends until interrupted")
	f.IntVar(&o.tail, "tail", dashboard.DefaultLogLines, "lines from the end of the file to start with (-1: all)")
	addOutputFlag(cmd, &o.output)
	return cmd
}

func runRayLogs(ctx context.Context, g *globals, cmd *cobra.Command, o rayLogsOpts, args []string) error {
	t, c, err := oneNamespace(g, "ray-logs")
	if err != nil {
		return err
	}
	book, err := sandboxBookFor(g.kube)
	if err != nil {
		return err
	}
	dash, err := newDashboards(t.Config, book, raydash.SecretsFromReader(c))
	if err != nil {
		return err
	}
	ns := t.Namespace
	apiErr := func(resource, name string, err error) error {
		return &actions.APIError{Verb: "get", Resource: resource, Namespace: ns, Name: name, User: cmp.Or(t.User, actions.UnknownActor), Err: err}
	}
	logs := &raydash.RayLogs{Resolver: dash, Cluster: clusterFrom(ctx, c)}
	out := cmd.OutOrStdout()

	if o.job != "" {
		j := &rayv1.RayJob{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: o.job}, j); err != nil {
			return apiErr("rayjobs", o.job, err)
		}
		if j.ClusterName() == "" || j.Status.JobId == "" {
			return fmt.Errorf("RayJob %s/%s has no Ray job yet (cluster %q, job ID %q): no driver log to show", ns, o.job, j.ClusterName(), j.Status.JobId)
		}
		req := dashboard.LogRequest{SubmissionID: j.Status.JobId, Lines: o.tail}
		return copyRayLog(ctx, logs, out, ns, j.ClusterName(), req, o.follow, nil)
	}

	cluster := args[0]
	rc := &rayv1.RayCluster{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: cluster}, rc); err != nil {
		return apiErr("rayclusters", cluster, err)
	}
	pod, node, err := rayLogsNode(ctx, c, ns, cluster, o)
	if err != nil {
		return err
	}
	if len(args) == 2 {
		req := dashboard.LogRequest{Node: node, Filename: args[1], Lines: o.tail}
		return copyRayLog(ctx, logs, out, ns, cluster, req, o.follow, pod)
	}
	lctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	files, err := logs.List(lctx, ns, cluster, node)
	if err != nil {
		return rayLogsError(ns, cluster, pod, err)
	}
	if o.output != outputTable {
		v := rayLogsJSON{Namespace: ns, Cluster: cluster, Node: node, Categories: files, Groups: files.Groups()}
		if pod != nil {
			v.Pod = pod.Name
		}
		return writeData(out, o.output, v)
	}
	tb := newTable(out, "GROUP", "FILE")
	for _, gr := range files.Groups() {
		if gr.Name == dashboard.LogGroupDirs {
			continue
		}
		for _, f := range gr.Files {
			tb.row(gr.Name, f)
		}
	}
	return tb.flush()
}

// rayLogsJSON is `raydar ray-logs CLUSTER -o json`.
type rayLogsJSON struct {
	Namespace  string               `json:"namespace"`
	Cluster    string               `json:"cluster"`
	Pod        string               `json:"pod,omitempty"`
	Node       dashboard.LogNode    `json:"node"`
	Categories dashboard.LogFiles   `json:"categories"`
	Groups     []dashboard.LogGroup `json:"groups"`
}

// rayLogsNode is the node the flags name: --node-ip, --pod's IP, or the
// head pod's.
func rayLogsNode(ctx context.Context, c client.Client, ns, cluster string, o rayLogsOpts) (*podview.Pod, dashboard.LogNode, error) {
	if o.nodeIP != "" {
		return nil, dashboard.LogNode{IP: o.nodeIP}, nil
	}
	var pod *podview.Pod
	if o.pod != "" {
		got := &corev1.Pod{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: o.pod}, got); err != nil {
			return nil, dashboard.LogNode{}, fmt.Errorf("pod %s/%s: %w", ns, o.pod, err)
		}
		pod = podview.Of(got)
		if pod.Labels[rayv1.RayClusterLabelKey] != cluster {
			return nil, dashboard.LogNode{}, fmt.Errorf("pod %s/%s is not a pod of RayCluster %s", ns, o.pod, cluster)
		}
	} else {
		var l corev1.PodList
		if err := c.List(ctx, &l, client.InNamespace(ns), client.MatchingLabels{rayv1.RayClusterLabelKey: cluster}); err != nil {
			return nil, dashboard.LogNode{}, fmt.Errorf("listing the pods of RayCluster %s/%s: %w", ns, cluster, err)
		}
		pods := make([]*podview.Pod, len(l.Items))
		for i := range l.Items {
			pods[i] = podview.Of(&l.Items[i])
		}
		if pod = raydash.HeadPod(pods); pod == nil {
			return nil, dashboard.LogNode{}, fmt.Errorf("RayCluster %s/%s has no head pod: no Ray node to read logs from", ns, cluster)
		}
	}
	n := raydash.NodeForPod(pod, nil)
	if n.IP == "" {
		return nil, dashboard.LogNode{}, fmt.Errorf("pod %s/%s has no IP yet: its Ray node cannot be asked for", ns, pod.Name)
	}
	return pod, n, nil
}

// copyRayLog prints a file's tail, or follows it until ctx ends.
func copyRayLog(ctx context.Context, logs *raydash.RayLogs, w io.Writer, ns, cluster string, req dashboard.LogRequest, follow bool, pod *podview.Pod) error {
	octx := ctx
	if !follow {
		var cancel context.CancelFunc
		octx, cancel = context.WithTimeout(ctx, time.Minute)
		defer cancel()
	}
	rc, err := logs.Open(octx, ns, cluster, req, follow)
	if err != nil {
		return rayLogsError(ns, cluster, pod, err)
	}
	defer rc.Close()
	stop := context.AfterFunc(octx, func() { _ = rc.Close() })
	defer stop()
	if _, err := io.Copy(w, rc); err != nil && octx.Err() == nil {
		return rayLogsError(ns, cluster, pod, err)
	}
	return nil // with -f, an interrupt ends following: not a failure
}

// rayLogsError says what failed and, when the dashboard is out of reach,
// what still works.
func rayLogsError(ns, cluster string, pod *podview.Pod, err error) error {
	if !errors.Is(err, dashboard.ErrUnavailable) {
		return err
	}
	hint := "kubectl logs -n " + ns + " -l " + rayv1.RayClusterLabelKey + "=" + cluster
	if pod != nil {
		hint = "kubectl logs -n " + ns + " " + pod.Name
	}
	return fmt.Errorf("the Ray dashboard of RayCluster %s/%s cannot be reached, and Ray's log files are read through it: %w\n"+
		"the containers' own output is still there: %s", ns, cluster, err, strings.TrimSpace(hint))
}

// clusterFrom looks RayClusters up with reader (nil, nil when missing).
func clusterFrom(ctx context.Context, reader client.Reader) func(ns, name string) (*rayv1.RayCluster, error) {
	return func(ns, name string) (*rayv1.RayCluster, error) {
		rc := &rayv1.RayCluster{}
		if err := reader.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, rc); err != nil {
			if apierrors.IsNotFound(err) {
				return nil, nil
			}
			return nil, err
		}
		return rc, nil
	}
}
