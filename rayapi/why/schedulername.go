package why

import (
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/raydar/raydar/rayapi/podview"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// CodeSchedulerNotBinding is the code of the cause for pods whose
// spec.schedulerName is not the default scheduler's and that have waited
// unbound and unexamined; the name is a batch scheduler's (yunikorn,
// kai-scheduler, scheduler-plugins-scheduler, volcano without a PodGroup
// annotation: raydar or KubeRay run with --batch-scheduler gave it) or any
// other. The
// default scheduler leaves such pods alone, so unless a scheduler of that
// name runs they stay Pending forever.
const CodeSchedulerNotBinding = "SchedulerNotBinding"

// schedulerNotBindingCause: the cluster's pods of a scheduler other than
// the default one, Pending and bound to no node for longer than
// gangPendingAfter, that no scheduler has marked Unschedulable (that is
// the Unschedulable cause: a scheduler runs) and that PodGroupNotRunning
// does not already name (Volcano's PodGroup pods); one cause per
// schedulerName.
func schedulerNotBindingCause(o object, in *ClusterInput, cs []Cause) []Cause {
	byName := map[string][]*podview.Pod{}
	for _, p := range in.Pods {
		name := p.Spec.SchedulerName
		if name == "" || name == corev1.DefaultSchedulerName || p.DeletionTimestamp != nil || p.Spec.NodeName != "" ||
			p.Status.Phase != corev1.PodPending || in.Now.Sub(p.CreationTimestamp.Time) < gangPendingAfter || examined(p) {
			continue
		}
		if _, ok := p.Annotations[rayv1.VolcanoPodGroupAnnotationKey]; ok && name == rayv1.VolcanoSchedulerName {
			continue // podGroupCause
		}
		byName[name] = append(byName[name], p)
	}
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		pods := byName[name]
		slices.SortFunc(pods, func(a, b *podview.Pod) int { return cmpString(a.Name, b.Name) })
		evidence := make([]string, len(pods))
		for i, p := range pods {
			evidence[i] = "pod " + p.Name + ": Pending, bound to no node, spec.schedulerName " + name
		}
		cs = append(cs, Cause{Code: CodeSchedulerNotBinding, Subject: o.subject(), Rank: rankGangPending,
			Summary: fmt.Sprintf("%d pods with schedulerName %s have waited unbound for over %s: no scheduler of that name has looked at them",
				len(pods), name, gangPendingAfter),
			Evidence: evidence,
			Fix:      schedulerFix(name, in, pods)})
	}
	return cs
}

// examined: a scheduler has set the pod's PodScheduled condition.
func examined(p *podview.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled {
			return true
		}
	}
	return false
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// schedulerFix: which scheduler must run, and what else it needs.
func schedulerFix(name string, in *ClusterInput, pods []*podview.Pod) string {
	s := rayv1.BatchSchedulerOfSchedulerName(name)
	if s == "" {
		return "only a scheduler named " + name + " binds these pods (the pod template's spec.schedulerName): run it, or remove schedulerName " +
			"from the cluster's pod templates so that the default scheduler binds them"
	}
	fix := "only " + s + " binds these pods (schedulerName " + name + ", given by an operator run with --batch-scheduler=" + s +
		"): check that it runs in this cluster; in a raydar sandbox start it with --batch-scheduler " + s
	if s == "kai-scheduler" && pods[0].Labels[rayv1.KaiQueueLabelKey] == "" {
		fix = "KAI leaves pods without a " + rayv1.KaiQueueLabelKey + " label Pending: label RayCluster " + in.Cluster.Name +
			" (or its RayJob or RayService) with its queue; and " + fix
	}
	return fix
}
