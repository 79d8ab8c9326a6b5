// Package gang counts a Ray cluster's gang as KubeRay v1.6.2's batch
// schedulers count it: how many pods must be placed together (a
// PodGroup's minMember) and what they ask for in all (its minResources).
// Pure functions of a RayClusterSpec, shared by the schedulers that make a
// PodGroup (controller/batchscheduler/volcano; scheduler-plugins counts
// the same way in KubeRay). Each function names the KubeRay v1.6.2
// function it follows (ray-operator/controllers/ray/utils/util.go), quirks
// included: they are what a PodGroup made by KubeRay holds. PodResources
// also counts the RayCluster's status.desired* resources
// (controller/raycluster status.go).
package gang

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// Size is the gang of a cluster: the pods that must start together, head
// included, and their resources.
func Size(spec *rayv1.RayClusterSpec) (minMember int32, minResources corev1.ResourceList) {
	// volcano_scheduler.go:200-207 (calculatePodGroupParams): without
	// autoscaling the desired workers, with it the minimum; +1 the head.
	// CalculateDesiredReplicas (util.go:408-415) and CalculateMinReplicas
	// (:418-429) are rayapi/v1's DesiredWorkerPods and MinWorkerPods, the
	// counts of status.desiredWorkerReplicas and minWorkerReplicas: each
	// group's replicas bounded by [minReplicas, maxReplicas], or its
	// minReplicas, times its hosts, suspended groups none.
	if !spec.IsAutoscalingEnabled() {
		return spec.DesiredWorkerPods() + 1, DesiredResources(spec)
	}
	return spec.MinWorkerPods() + 1, MinResources(spec)
}

// DesiredResources is util.go:477-492 (CalculateDesiredResources): the
// head pod plus, for each group not suspended, spec.replicas as written
// (not bounded by min/max, unlike DesiredWorkerPods) replicas of one
// replica's resources (a pod's times numOfHosts).
func DesiredResources(spec *rayv1.RayClusterSpec) corev1.ResourceList {
	list := []corev1.ResourceList{PodResources(&spec.HeadGroupSpec.Template.Spec)}
	for i := range spec.WorkerGroupSpecs {
		g := &spec.WorkerGroupSpecs[i]
		if g.IsSuspended() {
			continue
		}
		r := replicaResources(g)
		for range ptr.Deref(g.Replicas, 0) {
			list = append(list, r)
		}
	}
	return Sum(list...)
}

// MinResources is util.go:494-507 (CalculateMinResources): the head pod
// plus minReplicas replicas of each group. Suspended groups are counted
// here, unlike in MinWorkerPods: KubeRay v1.6.2 does not skip them.
func MinResources(spec *rayv1.RayClusterSpec) corev1.ResourceList {
	list := []corev1.ResourceList{PodResources(&spec.HeadGroupSpec.Template.Spec)}
	for i := range spec.WorkerGroupSpecs {
		g := &spec.WorkerGroupSpecs[i]
		r := replicaResources(g)
		for range g.Min() {
			list = append(list, r)
		}
	}
	return Sum(list...)
}

// replicaResources is one replica of g: a pod's resources times its
// hosts (calculateReplicaResource, util.go:514-519).
func replicaResources(g *rayv1.WorkerGroupSpec) corev1.ResourceList {
	r := PodResources(&g.Template.Spec)
	for name, q := range r {
		q.Mul(int64(g.NumOfHosts))
		r[name] = q
	}
	return r
}

// PodResources is util.go:523-545 (CalculatePodResource): the sum over
// the pod's containers (not its init containers) of each container's
// requests, a limit standing in for a request the container does not
// make.
func PodResources(spec *corev1.PodSpec) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := range spec.Containers {
		Add(out, ContainerResources(&spec.Containers[i]))
	}
	return out
}

// ContainerResources is one container's requests, a limit standing in for
// a request it does not make (a copy: KubeRay's writes into the
// container's own map, which raydar does not).
func ContainerResources(c *corev1.Container) corev1.ResourceList {
	r := corev1.ResourceList{}
	for name, q := range c.Resources.Requests {
		r[name] = q.DeepCopy()
	}
	for name, q := range c.Resources.Limits {
		if _, ok := r[name]; !ok {
			r[name] = q.DeepCopy()
		}
	}
	return r
}

// Sum is util.go:555-568 (SumResourceList).
func Sum(lists ...corev1.ResourceList) corev1.ResourceList {
	out := corev1.ResourceList{}
	for _, l := range lists {
		Add(out, l)
	}
	return out
}

// Add adds r into into.
func Add(into, r corev1.ResourceList) {
	for name, q := range r {
		if v, ok := into[name]; ok {
			v.Add(q)
			into[name] = v
		} else {
			into[name] = q.DeepCopy()
		}
	}
}
