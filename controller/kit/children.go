package kit

import (
	"unicode"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// KubeRayCheckLabel is KubeRay's utils.CheckLabel: a value over 63
// characters keeps its last 63, and a leading punctuation becomes "r".
func KubeRayCheckLabel(s string) string {
	if len(s) > 63 {
		s = s[len(s)-63:]
	}
	if s != "" && unicode.IsPunct(rune(s[0])) {
		s = "r" + s[1:]
	}
	return s
}

// ChildManagedBy is the spec.managedBy of a cluster raydar makes for an
// opted-in RayJob or RayService, so that a running KubeRay leaves the child
// alone as it leaves the parent: raydar.io/raydar, or, for the annotation
// opt-in (whose annotation the child inherits), kueue.x-k8s.io/multikueue.
// nil keeps the template's value.
func ChildManagedBy(managedBy *string, annotations map[string]string) *string {
	switch {
	case managedBy == nil:
		return nil
	case *managedBy == rayv1.ManagedByRaydar, *managedBy == rayv1.MultiKueueController && optedIn(annotations):
		v := *managedBy
		return &v
	}
	return nil
}
