package v1

import (
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"
)

// RayService spec validation (see validation.go for the entry points).

func validateRayServiceSpec(rs *RayService, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	s := &rs.Spec
	cp := p.Child("rayClusterConfig")

	allErrs = append(allErrs, validateManagedBy(p.Child("managedBy"), s.ManagedBy)...)
	if a := s.RayClusterSpec.AuthOptions; a != nil && a.EnableK8sTokenAuth != nil && *a.EnableK8sTokenAuth {
		// KubeRay v1.6.2 utils/validation.go:427-429 (v1.7.0 :681-683).
		allErrs = append(allErrs, field.Forbidden(cp.Child("authOptions", "enableK8sTokenAuth"),
			"K8s token auth mode is currently not supported for RayService (KubeRay refuses it too)"))
	}
	allErrs = append(allErrs, ValidateRayClusterSpec(&s.RayClusterSpec, rs.Annotations, cp)...)
	if hs := s.RayClusterSpec.HeadGroupSpec.HeadService; hs != nil && hs.Name != "" {
		allErrs = append(allErrs, field.Forbidden(cp.Child("headGroupSpec", "headService", "metadata", "name"),
			"a RayService names the head Service of each of its clusters itself"))
	}
	allErrs = append(allErrs, nonNegative(p.Child("rayClusterDeletionDelaySeconds"), s.RayClusterDeletionDelaySeconds)...)
	if s.ServeConfigV2 != "" {
		var cfg map[string]any
		if err := yaml.Unmarshal([]byte(s.ServeConfigV2), &cfg); err != nil {
			allErrs = append(allErrs, field.Invalid(p.Child("serveConfigV2"), field.OmitValueType{}, // its runtime_env may hold secrets: never echoed into status and Events

				"must be a YAML mapping (its text is not repeated: it may hold secrets): "+err.Error()))
		}
	}
	if u := s.UpgradeStrategy; u != nil {
		up := p.Child("upgradeStrategy")
		allErrs = append(allErrs, supportedPtr(up.Child("type"), u.Type, NewCluster, NewClusterWithIncrementalUpgrade, None)...)
		if u.Type != nil && *u.Type == NewClusterWithIncrementalUpgrade {
			if !s.RayClusterSpec.IsAutoscalingEnabled() {
				allErrs = append(allErrs, field.Required(cp.Child("enableInTreeAutoscaling"),
					"NewClusterWithIncrementalUpgrade needs the Ray autoscaler"))
			}
			op := up.Child("clusterUpgradeOptions")
			o := u.ClusterUpgradeOptions
			if o == nil {
				allErrs = append(allErrs, field.Required(op, "required with NewClusterWithIncrementalUpgrade"))
			} else {
				allErrs = append(allErrs, percent(op.Child("maxSurgePercent"), o.MaxSurgePercent, false)...)
				allErrs = append(allErrs, percent(op.Child("stepSizePercent"), o.StepSizePercent, true)...)
				if o.IntervalSeconds == nil {
					allErrs = append(allErrs, field.Required(op.Child("intervalSeconds"), ""))
				} else if *o.IntervalSeconds <= 0 {
					allErrs = append(allErrs, field.Invalid(op.Child("intervalSeconds"), *o.IntervalSeconds, errMustBePositive))
				}
				if o.GatewayClassName == "" {
					allErrs = append(allErrs, field.Required(op.Child("gatewayClassName"), ""))
				}
			}
		}
	}
	return allErrs
}
