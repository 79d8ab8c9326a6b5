package actions

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/rayapi/kinds"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// DeleteWorkersRequest names the worker pods to delete.
type DeleteWorkersRequest struct {
	// Pods are pod names of the cluster's workers; duplicates are ignored.
	Pods []string `json:"pods"`
	// LowerMin allows the deletion to lower a group's minReplicas when its
	// replicas would otherwise drop below it. Without it such a request is
	// refused: the reconciler never runs a group below minReplicas, so it
	// would create replacements and the workers would not really go.
	LowerMin bool `json:"lowerMin,omitempty"`
}

// GroupDeletion is what DeleteWorkers does to one worker group.
type GroupDeletion struct {
	Group      string `json:"group"`
	NumOfHosts int32  `json:"numOfHosts"`
	// Pods are the group's pods that go, sorted.
	Pods []string `json:"pods"`
	// ReplicasRemoved is len(Pods) / NumOfHosts.
	ReplicasRemoved int32     `json:"replicasRemoved"`
	Current         GroupSize `json:"current"`
	New             GroupSize `json:"new"`
	// WorkersToDelete is scaleStrategy.workersToDelete after the change.
	WorkersToDelete []string `json:"workersToDelete"`
}

// DeleteWorkersPlan is the preview of DeleteWorkers.
type DeleteWorkersPlan struct {
	Namespace string `json:"namespace"`
	Cluster   string `json:"cluster"`
	// Pods are exactly the pods that go, sorted.
	Pods        []string        `json:"pods"`
	Groups      []GroupDeletion `json:"groups"`
	Autoscaling bool            `json:"autoscaling"`
	Warnings    []string        `json:"warnings,omitempty"`
}

// Lines implements Plan.
func (p *DeleteWorkersPlan) Lines() []string {
	l := []string{fmt.Sprintf("RayCluster %s/%s: delete exactly these %d worker pods and no others:", p.Namespace, p.Cluster, len(p.Pods))}
	if len(p.Pods) == 1 {
		l[0] = fmt.Sprintf("RayCluster %s/%s: delete exactly this worker pod and no other:", p.Namespace, p.Cluster)
	}
	for _, g := range p.Groups {
		l = append(l, fmt.Sprintf("group %s: %s", g.Group, strings.Join(g.Pods, ", ")))
		s := fmt.Sprintf("  replicas %d → %d", g.Current.Replicas, g.New.Replicas)
		if g.Current.Min != g.New.Min {
			s += fmt.Sprintf(", minReplicas %d → %d", g.Current.Min, g.New.Min)
		}
		l = append(l, s)
	}
	return appendWarnings(l, p.Warnings)
}

// PlanDeleteWorkers validates a deletion of named worker pods of rc and
// previews it. pods are the pods the caller knows of: at least the cluster's
// Ray pods; named pods that are not among them are reported missing. Pure.
//
// Each named pod must exist, carry ray.io/cluster=<rc>, be a worker (the
// head is refused) of a group in the spec, not be terminating and not be
// listed in workersToDelete already. In a multi-host group (numOfHosts > 1)
// the reconciler deletes whole replicas, so every host of each named
// replica must be named. Each group's replicas drop by the replicas named;
// below minReplicas that is refused unless req.LowerMin (then minReplicas
// drops too). The changed cluster must pass rayv1.ValidateRayCluster.
func PlanDeleteWorkers(rc *rayv1.RayCluster, pods []corev1.Pod, req DeleteWorkersRequest) (*DeleteWorkersPlan, error) {
	p, _, err := planDeleteWorkers(rc, pods, req)
	return p, err
}

func planDeleteWorkers(rc *rayv1.RayCluster, pods []corev1.Pod, req DeleteWorkersRequest) (*DeleteWorkersPlan, *rayv1.RayCluster, error) {
	names := slices.Clone(req.Pods)
	slices.Sort(names)
	names = slices.Compact(names)
	if len(names) == 0 || (len(names) == 1 && names[0] == "") {
		return nil, nil, invalidf("name at least one worker pod of RayCluster %s/%s", rc.Namespace, rc.Name)
	}
	byName := map[string]*corev1.Pod{}
	for i := range pods {
		byName[pods[i].Name] = &pods[i]
	}
	var problems []string
	byGroup := map[string][]string{}
	for _, n := range names {
		pod, ok := byName[n]
		if !ok || pod.Namespace != rc.Namespace {
			problems = append(problems, fmt.Sprintf("pod %s not found in namespace %s", n, rc.Namespace))
			continue
		}
		lbl := pod.Labels
		group := lbl[rayv1.RayNodeGroupLabelKey]
		switch {
		case lbl[rayv1.RayClusterLabelKey] == "":
			problems = append(problems, fmt.Sprintf("pod %s is not a Ray pod (no %s label)", n, rayv1.RayClusterLabelKey))
		case lbl[rayv1.RayClusterLabelKey] != rc.Name:
			problems = append(problems, fmt.Sprintf("pod %s belongs to RayCluster %s, not %s", n, lbl[rayv1.RayClusterLabelKey], rc.Name))
		case lbl[rayv1.RayNodeTypeLabelKey] == string(rayv1.HeadNode):
			problems = append(problems, fmt.Sprintf("pod %s is the head of RayCluster %s: the head cannot be deleted as a worker (suspend or delete the cluster instead)", n, rc.Name))
		case lbl[rayv1.RayNodeTypeLabelKey] != string(rayv1.WorkerNode):
			problems = append(problems, fmt.Sprintf("pod %s is not a worker (%s=%q)", n, rayv1.RayNodeTypeLabelKey, lbl[rayv1.RayNodeTypeLabelKey]))
		case pod.DeletionTimestamp != nil:
			problems = append(problems, fmt.Sprintf("pod %s is already terminating", n))
		default:
			g, ok := rc.Spec.WorkerGroup(group)
			switch {
			case !ok:
				problems = append(problems, fmt.Sprintf("pod %s is in worker group %q, which is not in the spec of RayCluster %s", n, group, rc.Name))
			case slices.Contains(g.ScaleStrategy.WorkersToDelete, n):
				problems = append(problems, fmt.Sprintf("pod %s is already listed in scaleStrategy.workersToDelete of group %s", n, group))
			default:
				byGroup[group] = append(byGroup[group], n)
			}
		}
	}
	if len(problems) > 0 {
		return nil, nil, &InvalidError{Reason: strings.Join(problems, "; ")}
	}

	out := rc.DeepCopy()
	plan := &DeleteWorkersPlan{Namespace: rc.Namespace, Cluster: rc.Name, Pods: names, Autoscaling: rc.Spec.IsAutoscalingEnabled()}
	groups := make([]string, 0, len(byGroup))
	for g := range byGroup {
		groups = append(groups, g)
	}
	slices.Sort(groups)
	for _, gname := range groups {
		g, _ := out.Spec.WorkerGroup(gname)
		named := byGroup[gname]
		removed := int32(len(named))
		if g.Hosts() > 1 {
			n, err := wholeReplicas(g, named, pods, rc)
			if err != nil {
				return nil, nil, err
			}
			removed = n
		}
		cur := sizeOf(g)
		// The effective size is what runs: replicas clamped to the bounds.
		effective := g.DesiredReplicas()
		if g.IsSuspended() {
			effective = min(max(cur.Replicas, cur.Min), cur.Max)
		}
		next := cur
		next.Replicas = effective - removed
		if next.Replicas < 0 {
			return nil, nil, invalidf("group %s wants %d replicas; deleting %d would make it negative", gname, effective, removed)
		}
		if next.Replicas < cur.Min {
			if !req.LowerMin {
				return nil, nil, invalidf("deleting %s of group %s would lower its replicas to %d, below minReplicas %d; "+
					"allow lowering minReplicas too (--lower-min), or the reconciler would start replacements",
					plural(len(named), "pod"), gname, next.Replicas, cur.Min)
			}
			next.Min = next.Replicas
			g.MinReplicas = ptr.To(next.Min)
		}
		g.Replicas = ptr.To(next.Replicas)
		g.ScaleStrategy.WorkersToDelete = append(slices.Clone(g.ScaleStrategy.WorkersToDelete), named...)
		plan.Groups = append(plan.Groups, GroupDeletion{
			Group: gname, NumOfHosts: g.Hosts(), Pods: named, ReplicasRemoved: removed,
			Current: cur, New: next, WorkersToDelete: slices.Clone(g.ScaleStrategy.WorkersToDelete),
		})
	}
	if errs := introduced(rayv1.ValidateRayCluster(rc), rayv1.ValidateRayCluster(out)); len(errs) > 0 {
		return nil, nil, &InvalidError{Reason: "the changed cluster would be invalid", Fields: errs}
	}
	if plan.Autoscaling {
		plan.Warnings = append(plan.Warnings, autoscalerWarning)
	}
	if rc.Spec.IsSuspended() {
		plan.Warnings = append(plan.Warnings, "the cluster is suspended")
	}
	return plan, out, nil
}

// wholeReplicas checks that the named pods of a multi-host group cover
// whole replicas and returns how many.
func wholeReplicas(g *rayv1.WorkerGroupSpec, named []string, pods []corev1.Pod, rc *rayv1.RayCluster) (int32, error) {
	members := map[string][]string{} // replica name -> its pods in the group
	for i := range pods {
		pod := &pods[i]
		if pod.Labels[rayv1.RayClusterLabelKey] != rc.Name || pod.Labels[rayv1.RayNodeGroupLabelKey] != g.GroupName {
			continue
		}
		if r := pod.Labels[rayv1.RayWorkerReplicaNameKey]; r != "" {
			members[r] = append(members[r], pod.Name)
		}
	}
	replicaOf := map[string]string{}
	for r, ps := range members {
		for _, p := range ps {
			replicaOf[p] = r
		}
	}
	isNamed := map[string]bool{}
	for _, n := range named {
		isNamed[n] = true
	}
	replicas := map[string]bool{}
	var problems []string
	for _, n := range named {
		r := replicaOf[n]
		if r == "" {
			problems = append(problems, fmt.Sprintf("pod %s of multi-host group %s has no %s label", n, g.GroupName, rayv1.RayWorkerReplicaNameKey))
			continue
		}
		if replicas[r] {
			continue
		}
		replicas[r] = true
		var missing []string
		for _, m := range members[r] {
			if !isNamed[m] {
				missing = append(missing, m)
			}
		}
		if len(missing) > 0 {
			slices.Sort(missing)
			problems = append(problems, fmt.Sprintf("group %s has %d hosts per replica and deletes replicas whole: pod %s is part of replica %s; name its other pods too (%s)",
				g.GroupName, g.Hosts(), n, r, strings.Join(missing, ", ")))
		}
	}
	if len(problems) > 0 {
		return 0, &InvalidError{Reason: strings.Join(problems, "; ")}
	}
	return int32(len(replicas)), nil
}

// PreviewDeleteWorkers reads the RayCluster and the pods and returns
// PlanDeleteWorkers' preview.
func (a *Actions) PreviewDeleteWorkers(ctx context.Context, ns, cluster string, req DeleteWorkersRequest) (*DeleteWorkersPlan, error) {
	rc, pods, err := a.readWorkers(ctx, ns, cluster, req.Pods)
	if err != nil {
		return nil, err
	}
	return PlanDeleteWorkers(rc, pods, req)
}

// readWorkers reads what deleting workers is planned on: the RayCluster and
// its pods (podsFor).
func (a *Actions) readWorkers(ctx context.Context, ns, cluster string, names []string) (*rayv1.RayCluster, []corev1.Pod, error) {
	rc, err := a.getCluster(ctx, ns, cluster)
	if err != nil {
		return nil, nil, err
	}
	pods, err := a.podsFor(ctx, ns, cluster, names)
	if err != nil {
		return nil, nil, err
	}
	return rc, pods, nil
}

// podsFor lists the cluster's pods and reads each named pod that is not
// among them, so that PlanDeleteWorkers can say what is wrong with it.
func (a *Actions) podsFor(ctx context.Context, ns, cluster string, names []string) ([]corev1.Pod, error) {
	var list corev1.PodList
	if err := a.c.List(ctx, &list, client.InNamespace(ns), client.MatchingLabels{rayv1.RayClusterLabelKey: cluster}); err != nil {
		return nil, a.apiErr(err, "list", "pods", ns, "")
	}
	have := map[string]bool{}
	for i := range list.Items {
		have[list.Items[i].Name] = true
	}
	for _, n := range names {
		if n == "" || have[n] {
			continue
		}
		have[n] = true
		var pod corev1.Pod
		err := a.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: n}, &pod)
		switch {
		case apierrors.IsNotFound(err):
			continue
		case err != nil:
			return nil, a.apiErr(err, "get", "pods", ns, n)
		}
		list.Items = append(list.Items, pod)
	}
	return list.Items, nil
}

// DeleteWorkers deletes exactly the named worker pods: in one
// optimistic-locked patch of the RayCluster it appends them to their groups'
// scaleStrategy.workersToDelete and lowers those groups' replicas by the
// replicas named (see PlanDeleteWorkers); the reconciler deletes the pods
// listed and, with replicas lowered, creates no replacements. On conflict it
// re-reads and re-validates. Event reason DeletedWorkers.
func (a *Actions) DeleteWorkers(ctx context.Context, ns, cluster string, req DeleteWorkersRequest) (*Result, error) {
	ref := ObjectRef{Kind: kinds.RayCluster, Namespace: ns, Name: cluster}
	return a.runWrite(ctx, ActionDeleteWorkers, ref, func(r *Result) (*change, error) {
		rc, pods, err := a.readWorkers(ctx, ns, cluster, req.Pods)
		if err != nil {
			return nil, err
		}
		p, out, err := planDeleteWorkers(rc, pods, req)
		if err != nil {
			return nil, err
		}
		r.Plan = p
		if err := a.patch(ctx, ref, out, rc); err != nil {
			return nil, err
		}
		return &change{obj: out, reason: ReasonDeletedWorkers, verb: "DeleteWorkers", what: deleteWorkersWhat(p)}, nil
	})
}

func deleteWorkersWhat(p *DeleteWorkersPlan) string {
	parts := make([]string, 0, len(p.Groups))
	for _, g := range p.Groups {
		s := fmt.Sprintf("%s of group %s (%s; replicas %d to %d", plural(len(g.Pods), "worker pod"), g.Group,
			strings.Join(g.Pods, ", "), g.Current.Replicas, g.New.Replicas)
		if g.Current.Min != g.New.Min {
			s += fmt.Sprintf(", minReplicas %d to %d", g.Current.Min, g.New.Min)
		}
		parts = append(parts, s+")")
	}
	return "Deleting " + strings.Join(parts, " and ")
}
