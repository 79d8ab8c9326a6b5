package raydash

import (
	"encoding/json"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/raydar/raydar/rayapi/dashboard"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// What one pod of a group offers Ray, as `ray start` would register it:
// the group's resources field, else rayStartParams num-cpus, num-gpus,
// memory and resources (JSON), else the Ray container's limits (requests
// for CPU and memory when there is no limit): cpu, any "*gpu" resource,
// memory. object_store_memory is Ray's default, 30% of memory, unless
// object-store-memory is set. The diagnosis (SplitInfeasible's node types)
// and the sandbox's simulated heads (their nodes) both use it.

// objectStoreFraction is Ray's DEFAULT_OBJECT_STORE_MEMORY_PROPORTION.
const objectStoreFraction = 0.3

// GroupResources is what one pod with this ray start configuration and pod
// spec offers Ray.
func GroupResources(rayStartParams, groupResources map[string]string, spec *corev1.PodSpec) dashboard.Resources {
	out := dashboard.Resources{}
	var res corev1.ResourceRequirements
	if spec != nil && len(spec.Containers) > rayv1.RayContainerIndex {
		res = spec.Containers[rayv1.RayContainerIndex].Resources
	}
	if s := strings.Trim(rayStartParams["resources"], "'\"` "); s != "" {
		custom := map[string]float64{}
		if json.Unmarshal([]byte(s), &custom) == nil {
			for k, v := range custom {
				out[k] = v
			}
		}
	}
	param := func(k string) (float64, bool) {
		v, ok := rayStartParams[k]
		if !ok {
			return 0, false
		}
		f, err := strconv.ParseFloat(strings.Trim(v, "'\" "), 64)
		return f, err == nil
	}
	if v, ok := param("num-cpus"); ok {
		out["CPU"] = v
	} else if q := firstNonZero(res.Limits[corev1.ResourceCPU], res.Requests[corev1.ResourceCPU]); q != nil {
		out["CPU"] = float64(q.Value())
	}
	if v, ok := param("num-gpus"); ok {
		out["GPU"] = v
	} else {
		for name, q := range res.Limits {
			if strings.HasSuffix(strings.ToLower(string(name)), "gpu") && !q.IsZero() {
				out["GPU"] += float64(q.Value())
			}
		}
	}
	if v, ok := param("memory"); ok {
		out["memory"] = v
	} else if q := firstNonZero(res.Limits[corev1.ResourceMemory], res.Requests[corev1.ResourceMemory]); q != nil {
		out["memory"] = float64(q.Value())
	}
	for name, v := range groupResources {
		q, err := resource.ParseQuantity(v)
		if err != nil {
			continue
		}
		switch l := strings.ToLower(name); {
		case l == "cpu":
			out["CPU"] = float64(q.Value())
		case l == "memory":
			out["memory"] = float64(q.Value())
		case strings.HasSuffix(l, "gpu"):
			out["GPU"] = float64(q.Value())
		default:
			out[name] = q.AsApproximateFloat64()
		}
	}
	if v, ok := param("object-store-memory"); ok {
		out["object_store_memory"] = v
	} else if m := out["memory"]; m > 0 {
		out["object_store_memory"] = float64(int64(m * objectStoreFraction))
	}
	for k, v := range out {
		if v == 0 {
			delete(out, k)
		}
	}
	return out
}

func firstNonZero(qs ...resource.Quantity) *resource.Quantity {
	for i := range qs {
		if !qs[i].IsZero() {
			return &qs[i]
		}
	}
	return nil
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
