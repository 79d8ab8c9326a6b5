package rayjob

// The refusals of RayJob fields raydar does not implement.

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/raydar/raydar/controller/raycluster"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// Unsupported lists what a RayJob asks for, in itself or in the cluster it
// would create, that raydar does not implement, under raydar's default
// feature gates (the gated fields of its rayClusterSpec refused:
// UnsupportedClusterSpec). A job on a selected cluster
// creates none: that cluster answers for itself.
func Unsupported(rj *rayv1.RayJob) field.ErrorList {
	return UnsupportedWith(rj, raycluster.BuildConfig{})
}

// UnsupportedWith is Unsupported under the operator's build configuration
// cfg (its gates and pod defaults).
func UnsupportedWith(rj *rayv1.RayJob, cfg raycluster.BuildConfig) field.ErrorList {
	if rj.Spec.RayClusterSpec == nil || rj.Spec.UsesClusterSelector() {
		return nil
	}
	return raycluster.UnsupportedClusterSpecWith(rj.Spec.RayClusterSpec, rj.Annotations,
		field.NewPath("spec", "rayClusterSpec"), field.NewPath("metadata", "annotations"), cfg)
}
