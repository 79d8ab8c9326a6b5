package raydash

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/raydar/raydar/rayapi/dashboard"
	"github.com/raydar/raydar/rayapi/podview"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/rayapi/why"
)

// What one pod of a group offers Ray, as `ray start` would register it.
// The diagnosis (SplitInfeasible's node types) and the sandbox's simulated
// heads (their nodes) both use it.

// objectStoreFraction is Ray's DEFAULT_OBJECT_STORE_MEMORY_PROPORTION.
const objectStoreFraction = 0.3

// GroupResources is what one pod with this ray start configuration and pod
// spec offers Ray: [why.PodResources] with Ray's defaults filled in
// (memory from the Ray container's request when it has no limit, the
// object store's share of memory) and zero amounts dropped.
func GroupResources(rayStartParams, groupResources map[string]string, spec *corev1.PodSpec) dashboard.Resources {
	var ps *podview.Spec
	if spec != nil {
		ps = ptr.To(podview.SpecOf(spec))
	}
	out := why.PodResources(rayStartParams, groupResources, ps)
	if _, ok := out["memory"]; !ok && spec != nil && len(spec.Containers) > rayv1.RayContainerIndex {
		if q := spec.Containers[rayv1.RayContainerIndex].Resources.Requests[corev1.ResourceMemory]; !q.IsZero() {
			out["memory"] = float64(q.Value())
		}
	}
	if _, ok := out["object_store_memory"]; !ok && out["memory"] > 0 {
		out["object_store_memory"] = float64(int64(out["memory"] * objectStoreFraction))
	}
	for k, v := range out {
		if v == 0 {
			delete(out, k)
		}
	}
	return out
}

// HeadResources is what the cluster's head pod offers Ray.
func HeadResources(rc *rayv1.RayCluster) dashboard.Resources {
	h := rc.Spec.HeadGroupSpec
	return GroupResources(h.RayStartParams, h.Resources, &h.Template.Spec)
}

// WorkerGroupResources is what one pod of the named worker group offers
// Ray; false when the cluster has no such group.
func WorkerGroupResources(rc *rayv1.RayCluster, group string) (dashboard.Resources, bool) {
	for i := range rc.Spec.WorkerGroupSpecs {
		g := &rc.Spec.WorkerGroupSpecs[i]
		if g.GroupName == group {
			return GroupResources(g.RayStartParams, g.Resources, &g.Template.Spec), true
		}
	}
	return nil, false
}

// NodeTypes are the per-pod resources of the cluster's worker groups that
// may have pods (maxReplicas unset or above 0): the nodes the autoscaler
// could add, for [dashboard.Capacity.SplitInfeasible].
func NodeTypes(rc *rayv1.RayCluster) []dashboard.Resources {
	var out []dashboard.Resources
	for i := range rc.Spec.WorkerGroupSpecs {
		g := &rc.Spec.WorkerGroupSpecs[i]
		if g.MaxReplicas != nil && *g.MaxReplicas <= 0 {
			continue
		}
		out = append(out, GroupResources(g.RayStartParams, g.Resources, &g.Template.Spec))
	}
	return out
}
