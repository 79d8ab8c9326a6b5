package rayservice

import (
	"github.com/raydar/raydar/controller/raycluster"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Unsupported lists what a RayService asks for, in itself or in
// its clusters, that raydar does not implement, under raydar's default
// feature gates (the gated fields of spec.rayClusterConfig refused:
// UnsupportedClusterSpec).
func Unsupported(rs *rayv1.RayService) field.ErrorList {
	return UnsupportedWith(rs, raycluster.BuildConfig{})
}

// UnsupportedWith is Unsupported under the operator's build configuration
// cfg (its gates and pod defaults).
func UnsupportedWith(rs *rayv1.RayService, cfg raycluster.BuildConfig) field.ErrorList {
	return raycluster.UnsupportedClusterSpecWith(&rs.Spec.RayClusterSpec, rs.Annotations,
		field.NewPath("spec", "rayClusterConfig"), field.NewPath("metadata", "annotations"), cfg)
}
