package v1

import (
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
)

// The one definition of a Ray pod, used by the reconcilers' cache, the
// TUI's watch and the CLI: a pod that carries the ray.io/node-type label
// (heads, workers, the Redis clean-up pod and RayJob submitters), as
// KubeRay's own cache selects them.

// IsRayPod reports whether a pod with these labels is a Ray pod.
func IsRayPod(podLabels map[string]string) bool {
	_, ok := podLabels[RayNodeTypeLabelKey]
	return ok
}

// RayPodRequirement is the label requirement that selects Ray pods.
func RayPodRequirement() labels.Requirement {
	r, err := labels.NewRequirement(RayNodeTypeLabelKey, selection.Exists, nil)
	if err != nil {
		panic(err) // a constant, valid key: cannot fail
	}
	return *r
}

// RayPodSelector selects Ray pods.
func RayPodSelector() labels.Selector {
	return labels.NewSelector().Add(RayPodRequirement())
}
