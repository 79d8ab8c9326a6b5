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
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/raydar/raydar/kube"
	"github.com/raydar/raydar/kube/actions"
	"github.com/raydar/raydar/kube/redact"
	"github.com/raydar/raydar/rayapi/kinds"
	"github.com/raydar/raydar/rayapi/podview"
	"github.com/raydar/raydar/rayapi/scheme"
	"github.com/raydar/raydar/rayapi/status"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// The resources of raydar get, in the words it prints ("No clusters found"):
// each kind's Word in rayapi/kinds, which says every name a user may type
// for it. Pods are the workers of the clusters. These are the kinds whose
// table has columns of its own (writeTable).
var (
	getClusters = kinds.RayCluster.Word
	getJobs     = kinds.RayJob.Word
	getServices = kinds.RayService.Word
	getCronJobs = kinds.RayCronJob.Word
	getWorkers  = kinds.Pod.Word
)

// getResource resolves a name the user typed (any of a kind's names:
// cluster, rc, rayjobs, cronjob, po, workers, …) to its kind and get's word
// for it.
func getResource(name string) (*kinds.Kind, string, bool) {
	k, ok := kinds.Lookup(name)
	if !ok || k.Word == "" {
		return nil, "", false
	}
	return k, k.Word, true
}

// getWords are get's words, in kinds.All's order: "clusters", …, "workers".
func getWords() []string {
	var ws []string
	for _, k := range kinds.All {
		if k.Word != "" {
			ws = append(ws, k.Word)
		}
	}
	return ws
}

// getUsage is "clusters|jobs|…|workers".
var getUsage = strings.Join(getWords(), "|")

// newGetCmd: raydar get clusters|jobs|services|cronjobs|workers [NAME] (the
// words of rayapi/kinds).
func newGetCmd(g *globals) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "get " + getUsage + " [NAME]",
		Short: "List " + strings.Join(each(kinds.Ray, plural), ", ") + ", or the Ray pods of a cluster",
		Long: "List " + orList(each(kinds.Ray, plural)) + " (one of them with NAME), or the\n" +
			"Ray pods of cluster NAME (" + getWorkers + ": group, type, phase, ready, IP, node; every Ray pod\n" +
			"without NAME). " + getCronJobs + " (" + kinds.RayCronJob.Short + ") shows each schedule with its meaning in words, when it\n" +
			"last ran and when it runs next.\n" +
			"STATUS words, ready counts and ages read as in the TUI.\n" +
			"-o json|yaml prints the objects themselves, as kubectl does, but with literal passwords\n" +
			"and tokens (Ray's auth token, --redis-password, …) redacted, as on the TUI's describe page.\n\n" +
			"--context a,b (or --all-contexts) lists every one of those contexts at once, each with its\n" +
			"own timeout: the table gains a CONTEXT column, first, and -o json|yaml is a list of\n" +
			"{context, object} items. A context that cannot be listed does not hide the others' rows:\n" +
			"its error is printed as \"context NAME: …\" on stderr and the exit status is 1.",
		Example: "  raydar get clusters -A\n  raydar get workers my-cluster -n team-a\n  raydar get jobs my-job -o yaml\n  raydar get cronjobs\n" +
			"  raydar get clusters --context dev,prod-eu\n  raydar get jobs -A --all-contexts",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) < 1 || len(args) > 2 {
				return fmt.Errorf("get needs a resource and at most one NAME (got %d arguments): raydar get %s [NAME]", len(args), getUsage)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			_, res, ok := getResource(args[0])
			if !ok {
				ws := getWords()
				return fmt.Errorf("unknown resource %q: use %s or %s", args[0], strings.Join(ws[:len(ws)-1], ", "), ws[len(ws)-1])
			}
			if err := checkOutput(output); err != nil {
				return err
			}
			name := ""
			if len(args) == 2 {
				name = args[1]
			}
			if g.kube.AllNamespaces && name != "" {
				return errors.New("a NAME needs one namespace: drop -A/--all-namespaces or use -n")
			}
			if !g.kube.Fleet() {
				t, err := g.kube.Resolve()
				if err != nil {
					return err
				}
				return runGet(cmd, t, res, name, output)
			}
			flags := g.kube
			if flags.AllContexts {
				policy, err := actions.LoadDefaultPolicy()
				if err != nil {
					return err
				}
				flags = withConfigContexts(flags, policy)
			}
			targets, err := flags.ResolveAll()
			if err != nil {
				return err
			}
			if len(targets) == 1 { // --all-contexts of a kubeconfig with one: no CONTEXT column
				return runGet(cmd, targets[0], res, name, output)
			}
			return runFleetGet(cmd, targets, res, name, output)
		},
	}
	addOutputFlag(cmd, &output)
	g.kube.AddFleetTo(cmd.Flags())
	return cmd
}

// runGet is raydar get in one context.
func runGet(cmd *cobra.Command, t *kube.Target, res, name, output string) error {
	gt, err := newGetter(t, name, time.Now())
	if err != nil {
		return err
	}
	objs, err := gt.fetch(cmd.Context(), res)
	if err != nil {
		return err
	}
	if output != outputTable {
		return gt.writeObjects(cmd.OutOrStdout(), output, res, objs)
	}
	if len(objs) == 0 {
		_, err := fmt.Fprintf(cmd.ErrOrStderr(), "No %s found in %s.\n", res, gt.where())
		return err
	}
	return gt.writeTable(cmd.OutOrStdout(), res, objs)
}

// newGetter is get's reader of one context: its namespace ("" with -A),
// NAME and the time ages are read at.
func newGetter(t *kube.Target, name string, now time.Time) (*getter, error) {
	ns := t.Namespace
	if t.AllNamespaces {
		ns = ""
	}
	c, err := client.New(t.Config, client.Options{Scheme: scheme.New()})
	if err != nil {
		return nil, err
	}
	return &getter{c: c, ns: ns, name: name, user: t.User, now: now}, nil
}

// where is the getter's namespace in words, for "No … found in …".
func (g *getter) where() string {
	if g.ns == "" {
		return "any namespace"
	}
	return "namespace " + g.ns
}

// getter reads and prints one resource.
type getter struct {
	c    client.Client
	ns   string // "" for all namespaces
	name string
	user string
	now  time.Time
}

func (g *getter) wrap(err error, verb, resource, name string) error {
	if err == nil {
		return nil
	}
	return &actions.APIError{Verb: verb, Resource: resource, Namespace: cmp.Or(g.ns, "(all)"), Name: name, User: cmp.Or(g.user, actions.UnknownActor), Err: err}
}

// fetch returns the objects to print, sorted by namespace and name.
func (g *getter) fetch(ctx context.Context, res string) ([]client.Object, error) {
	var out []client.Object
	one := func(obj client.Object, resource string) error {
		return g.wrap(g.c.Get(ctx, client.ObjectKey{Namespace: g.ns, Name: g.name}, obj), "get", resource, g.name)
	}
	if k, _, _ := getResource(res); k != nil && k.IsRay() {
		if g.name != "" {
			obj := k.New()
			if err := one(obj, k.Resource.Resource); err != nil {
				return nil, err
			}
			return []client.Object{obj}, nil
		}
		l := k.NewList()
		if err := g.wrap(g.c.List(ctx, l, client.InNamespace(g.ns)), "list", k.Resource.Resource, ""); err != nil {
			return nil, err
		}
		items, err := apimeta.ExtractList(l)
		if err != nil {
			return nil, err
		}
		for _, it := range items {
			out = append(out, it.(client.Object))
		}
	}
	if res == getWorkers {
		sel := rayv1.RayPodSelector()
		if g.name != "" {
			// The cluster must exist: an empty list would hide a typo.
			if err := one(&rayv1.RayCluster{}, rayv1.ResourceRayClusters); err != nil {
				return nil, err
			}
			r, _ := labels.NewRequirement(rayv1.RayClusterLabelKey, selection.Equals, []string{g.name})
			sel = sel.Add(*r)
		}
		var l corev1.PodList
		if err := g.wrap(g.c.List(ctx, &l, client.InNamespace(g.ns), client.MatchingLabelsSelector{Selector: sel}), "list", "pods", ""); err != nil {
			return nil, err
		}
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
		slices.SortStableFunc(out, func(a, b client.Object) int {
			return cmp.Or(
				cmp.Compare(a.GetNamespace(), b.GetNamespace()),
				cmp.Compare(a.GetLabels()[rayv1.RayClusterLabelKey], b.GetLabels()[rayv1.RayClusterLabelKey]),
				cmp.Compare(nodeTypeRank(a), nodeTypeRank(b)),
				cmp.Compare(a.GetLabels()[rayv1.RayNodeGroupLabelKey], b.GetLabels()[rayv1.RayNodeGroupLabelKey]),
				cmp.Compare(a.GetName(), b.GetName()))
		})
		return out, nil
	}
	slices.SortStableFunc(out, func(a, b client.Object) int {
		return cmp.Or(cmp.Compare(a.GetNamespace(), b.GetNamespace()), cmp.Compare(a.GetName(), b.GetName()))
	})
	return out, nil
}

// nodeTypeRank puts the head before the workers.
func nodeTypeRank(o client.Object) int {
	if o.GetLabels()[rayv1.RayNodeTypeLabelKey] == string(rayv1.HeadNode) {
		return 0
	}
	return 1
}

// writeObjects prints the objects with apiVersion and kind, one object when
// a NAME was given (except workers), else a v1 List.
func (g *getter) writeObjects(w io.Writer, format, res string, objs []client.Object) error {
	items, err := g.typed(objs)
	if err != nil {
		return err
	}
	if g.name != "" && res != getWorkers {
		return writeData(w, format, items[0])
	}
	return writeData(w, format, struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Items      []any  `json:"items"`
	}{"v1", "List", items})
}

// typed is each object as printed: with its apiVersion and kind (a typed
// client leaves them empty), and with its secrets redacted as the TUI's
// describe page redacts them (kube/redact: literal tokens and passwords in
// env, flags and kubectl's last-applied copy).
func (g *getter) typed(objs []client.Object) ([]any, error) {
	items := make([]any, 0, len(objs))
	for _, o := range objs {
		gvk, err := apiutil.GVKForObject(o, g.c.Scheme())
		if err != nil {
			return nil, err
		}
		o.GetObjectKind().SetGroupVersionKind(gvk)
		m, err := redact.Object(o)
		if err != nil {
			return nil, err
		}
		items = append(items, m)
	}
	return items, nil
}

func (g *getter) writeTable(w io.Writer, res string, objs []client.Object) error {
	header, rows := g.tableOf(res, objs)
	t := newTable(w, header...)
	for _, r := range rows {
		t.row(r...)
	}
	return t.flush()
}

// tableOf is the header and the rows of get's table of objs.
func (g *getter) tableOf(res string, objs []client.Object) (header []string, rows [][]string) {
	all := g.ns == ""
	cols := func(c ...string) []string {
		if all {
			return append([]string{"NAMESPACE"}, c...)
		}
		return c
	}
	row := func(o client.Object, c ...string) []string {
		if all {
			return append([]string{o.GetNamespace()}, c...)
		}
		return c
	}
	t := &tableRows{}
	switch k, _, _ := getResource(res); res {
	case getClusters:
		t.head(cols("NAME", "STATUS", "WORKERS", "GROUPS", "AGE")...)
		for _, o := range objs {
			rc := o.(*rayv1.RayCluster)
			t.row(row(rc, rc.Name, status.Cluster(rc), status.Workers(rc), clusterGroups(rc), status.Age(g.now, rc.CreationTimestamp.Time))...)
		}
	case getJobs:
		t.head(cols("NAME", "JOB STATUS", "DEPLOYMENT", "CLUSTER", "SUBMISSION", "DURATION", "AGE")...)
		for _, o := range objs {
			j := o.(*rayv1.RayJob)
			cl := cmp.Or(j.Status.RayClusterName, j.Spec.SelectedClusterName())
			t.row(row(j, j.Name, status.JobWord(j, g.now), status.JobDeployment(j), cl, j.Status.JobId,
				status.JobDuration(g.now, j), status.Age(g.now, j.CreationTimestamp.Time))...)
		}
	case getServices:
		t.head(cols("NAME", "STATUS", "ACTIVE CLUSTER", "PENDING CLUSTER", "TRAFFIC", "APPS", "ENDPOINTS", "AGE")...)
		for _, o := range objs {
			s := o.(*rayv1.RayService)
			t.row(row(s, s.Name, status.Service(s),
				s.Status.ActiveServiceStatus.RayClusterName, s.Status.PendingServiceStatus.RayClusterName, status.Traffic(s), status.Apps(s),
				strconv.Itoa(int(s.Status.NumServeEndpoints)), status.Age(g.now, s.CreationTimestamp.Time))...)
		}
	case getCronJobs:
		t.head(cols("NAME", "SCHEDULE", "SUSPEND", "LAST SCHEDULE", "NEXT RUN", "STATUS", "AGE")...)
		for _, o := range objs {
			cj := o.(*rayv1.RayCronJob)
			t.row(row(cj, cronJobCells(g.now, cj)...)...)
		}
	case getWorkers:
		head := cols("NAME")
		if g.name == "" {
			head = append(head, "CLUSTER")
		}
		t.head(append(head, "GROUP", "TYPE", "PHASE", "READY", "IP", "NODE", "AGE")...)
		for _, o := range objs {
			p := podview.Of(o.(*corev1.Pod))
			r := row(p, p.Name)
			if g.name == "" {
				r = append(r, p.Labels[rayv1.RayClusterLabelKey])
			}
			ready, _ := status.PodReady(p)
			t.row(append(r, p.Labels[rayv1.RayNodeGroupLabelKey], p.Labels[rayv1.RayNodeTypeLabelKey], status.Pod(p),
				ready, p.Status.PodIP, p.Spec.NodeName, status.Age(g.now, p.CreationTimestamp.Time))...)
		}
	default: // a kind without columns of its own: its name, STATUS word and age
		t.head(cols("NAME", "STATUS", "AGE")...)
		for _, o := range objs {
			t.row(row(o, o.GetName(), k.Status(o), status.Age(g.now, o.GetCreationTimestamp().Time))...)
		}
	}
	return t.header, t.rows
}

// tableRows collects a table's header and rows.
type tableRows struct {
	header []string
	rows   [][]string
}

func (t *tableRows) head(cells ...string) { t.header = cells }
func (t *tableRows) row(cells ...string)  { t.rows = append(t.rows, cells) }

// clusterGroups is "group=replicas,…" (desired replicas).
func clusterGroups(rc *rayv1.RayCluster) string {
	parts := make([]string, 0, len(rc.Spec.WorkerGroupSpecs))
	for i := range rc.Spec.WorkerGroupSpecs {
		g := &rc.Spec.WorkerGroupSpecs[i]
		parts = append(parts, fmt.Sprintf("%s=%d", g.GroupName, g.DesiredReplicas()))
	}
	return strings.Join(parts, ",")
}
