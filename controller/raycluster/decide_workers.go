package raycluster

// The decisions of the worker groups: scaling up and down, the pods named
// in scaleStrategy.workersToDelete (decideGroup; per replica for multi-host
// groups, decideMultiHostGroup). Pure, like decide.

import (
	"fmt"
	"slices"
	"sort"

	"github.com/raydar/raydar/controller/kit"

	corev1 "k8s.io/api/core/v1"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// decideGroup scales one single-host worker group:
//  1. every live pod named in workersToDelete goes (names of pods already
//     gone are ignored, so they never stand in for another pod);
//  2. missing pods are created, each with the lowest free replica index;
//  3. surplus pods are deleted only when the in-tree autoscaler is off
//     (otherwise the autoscaler alone picks which workers go), first any
//     pod whose replica index an older pod also holds (duplicatesFirst).
func decideGroup(o *observed, p *plan, g *rayv1.WorkerGroupSpec, pods []*corev1.Pod, hash string) {
	rc := o.Cluster
	if g.IsSuspended() {
		for _, pod := range pods {
			p.DeletePods = append(p.DeletePods, podDeletion{Pod: pod, Reason: "worker group " + g.GroupName + " is suspended"})
		}
		return
	}
	named := map[string]bool{}
	for _, n := range g.ScaleStrategy.WorkersToDelete {
		named[n] = true
	}
	var remaining []*corev1.Pod
	for _, pod := range pods {
		if named[pod.Name] {
			p.DeletePods = append(p.DeletePods, podDeletion{Pod: pod, Reason: "listed in scaleStrategy.workersToDelete of group " + g.GroupName})
			continue
		}
		remaining = append(remaining, pod)
	}
	desired := int(g.DesiredPods())
	diff := desired - len(remaining)
	switch {
	case diff > 0:
		// Each new worker takes the lowest replica index no remaining pod
		// holds (KubeRay v1.7.0 reconcilePods, RayMultiHostIndexing): the
		// indexes live in the pods' labels, so they survive a restart.
		used := map[int]bool{}
		for _, pod := range remaining {
			if i := kit.PodReplicaIndex(pod); i >= 0 {
				used[i] = true
			}
		}
		idx := 0
		for range diff {
			for used[idx] {
				idx++
			}
			used[idx] = true
			name := kit.WorkerPodName(rc.Name, g.GroupName, o.NewSuffix())
			p.CreatePods = append(p.CreatePods, BuildPod(rc, PodBuild{Name: name, Group: g, replicaIndex: idx}, hash, o.Config))
		}
	case diff < 0 && !autoscalingEnabled(rc):
		victims := slices.Clone(remaining)
		sortForScaleDown(victims)
		duplicatesFirst(victims)
		for _, pod := range victims[:-diff] {
			p.DeletePods = append(p.DeletePods, podDeletion{Pod: pod,
				Reason: fmt.Sprintf("scaling group %s down from %d to %d pods", g.GroupName, len(remaining), desired)})
		}
	}
}

// duplicatesFirst moves to the front of pods (sorted cheapest to lose
// first) every pod whose replica index a pod kept longer also holds, in
// their order. Two workers of a group holding one index is a state no
// decision here makes from a full view; one made from a view missing a pod
// (as Overlay laid over a live read once made) is followed by a surplus once the
// pod shows, and a scale-down that took a pod with an index of its own
// would keep the duplicate for good.
func duplicatesFirst(pods []*corev1.Pod) {
	held := map[int]bool{}
	dup := make(map[*corev1.Pod]bool)
	for i := len(pods) - 1; i >= 0; i-- {
		idx := kit.PodReplicaIndex(pods[i])
		switch {
		case idx < 0:
		case held[idx]:
			dup[pods[i]] = true
		default:
			held[idx] = true
		}
	}
	if len(dup) == 0 {
		return
	}
	sort.SliceStable(pods, func(i, j int) bool { return dup[pods[i]] && !dup[pods[j]] })
}

// decideMultiHostGroup scales a group whose replicas are numOfHosts pods
// each. Replicas are created and deleted whole; an incomplete replica is
// deleted and replaced.
func decideMultiHostGroup(o *observed, p *plan, g *rayv1.WorkerGroupSpec, pods []*corev1.Pod, hash string) {
	rc := o.Cluster
	hosts := int(g.Hosts())
	replicas := map[string][]*corev1.Pod{}
	for _, pod := range pods {
		replicas[kit.PodReplica(pod)] = append(replicas[kit.PodReplica(pod)], pod)
	}
	del := func(rs []*corev1.Pod, why string) {
		for _, pod := range rs {
			p.DeletePods = append(p.DeletePods, podDeletion{Pod: pod, Reason: why})
		}
	}
	if g.IsSuspended() {
		del(pods, "worker group "+g.GroupName+" is suspended")
		return
	}
	named := map[string]bool{}
	for _, n := range g.ScaleStrategy.WorkersToDelete {
		named[n] = true
	}
	var complete []string
	used := map[int]bool{}
	for _, name := range kit.SortedKeys(replicas) {
		rs := replicas[name]
		switch {
		case name == "":
			del(rs, "worker pod of multi-host group "+g.GroupName+" has no replica label")
		case len(rs) != hosts:
			del(rs, fmt.Sprintf("multi-host replica %s has %d of %d hosts; it is replaced whole", name, len(rs), hosts))
		case slices.ContainsFunc(rs, func(pod *corev1.Pod) bool { return named[pod.Name] }):
			del(rs, "a pod of multi-host replica "+name+" is listed in scaleStrategy.workersToDelete of group "+g.GroupName)
		default:
			complete = append(complete, name)
			used[kit.PodReplicaIndex(rs[0])] = true
		}
	}
	desired := int(g.DesiredReplicas())
	diff := desired - len(complete)
	switch {
	case diff > 0:
		idx := 0
		for range diff {
			for used[idx] {
				idx++
			}
			used[idx] = true
			rn := kit.ReplicaName(g.GroupName, o.NewSuffix())
			for h := range hosts {
				name := kit.WorkerPodName(rc.Name, g.GroupName, o.NewSuffix())
				b := PodBuild{Name: name, Group: g, replica: rn, replicaIndex: idx, host: h}
				p.CreatePods = append(p.CreatePods, BuildPod(rc, b, hash, o.Config))
			}
		}
	case diff < 0 && !autoscalingEnabled(rc):
		// Not-ready replicas first, then the highest index.
		sort.SliceStable(complete, func(i, j int) bool {
			ri, rj := allReady(replicas[complete[i]]), allReady(replicas[complete[j]])
			if ri != rj {
				return !ri
			}
			return kit.PodReplicaIndex(replicas[complete[i]][0]) > kit.PodReplicaIndex(replicas[complete[j]][0])
		})
		for _, name := range complete[:-diff] {
			del(replicas[name], fmt.Sprintf("scaling multi-host group %s down from %d to %d replicas", g.GroupName, len(complete), desired))
		}
	}
}

func allReady(pods []*corev1.Pod) bool {
	for _, p := range pods {
		if !kit.IsRunningAndReady(p) {
			return false
		}
	}
	return true
}
