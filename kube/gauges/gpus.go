package gauges

import (
	"strings"

	corev1 "k8s.io/api/core/v1"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// AsksGPUs reports whether a RayCluster's spec asks for a GPU (an extended
// resource whose name ends in "gpu", as nvidia.com/gpu and amd.com/gpu do)
// in its head or any worker group: the clusters this page reads.
func AsksGPUs(rc *rayv1.RayCluster) bool {
	specs := []corev1.PodSpec{rc.Spec.HeadGroupSpec.Template.Spec}
	for _, g := range rc.Spec.WorkerGroupSpecs {
		specs = append(specs, g.Template.Spec)
	}
	for _, s := range specs {
		for _, c := range s.Containers {
			for _, l := range []corev1.ResourceList{c.Resources.Limits, c.Resources.Requests} {
				for name, q := range l {
					if strings.HasSuffix(strings.ToLower(string(name)), "gpu") && !q.IsZero() {
						return true
					}
				}
			}
		}
	}
	return false
}
