package v1

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"
)

// RayJob spec validation (see validation.go for the entry points).

func validateRayJobSpec(j *RayJob, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	s := &j.Spec
	mode := s.EffectiveSubmissionMode()

	allErrs = append(allErrs, validateManagedBy(p.Child("managedBy"), s.ManagedBy)...)
	allErrs = append(allErrs, supported(p.Child("submissionMode"), s.SubmissionMode, AllJobSubmissionModes...)...)

	// Where the job runs.
	selector := s.UsesClusterSelector()
	switch {
	case s.RayClusterSpec != nil && selector:
		allErrs = append(allErrs, field.Forbidden(p.Child("clusterSelector"),
			"must not be set together with "+p.Child("rayClusterSpec").String()+"; set exactly one"))
	case s.RayClusterSpec == nil && !selector:
		allErrs = append(allErrs, field.Required(p.Child("rayClusterSpec"),
			"exactly one of "+p.Child("rayClusterSpec").String()+" or "+p.Child("clusterSelector").String()+" must be set"))
	}
	if selector {
		if s.ClusterSelector[RayClusterLabelKey] == "" {
			allErrs = append(allErrs, field.Required(p.Child("clusterSelector").Key(RayClusterLabelKey),
				"the clusterSelector names the RayCluster with this key"))
		}
		if mode == SidecarMode {
			allErrs = append(allErrs, field.Forbidden(p.Child("clusterSelector"),
				"not supported with submissionMode SidecarMode (the submitter runs in the head pod the job creates)"))
		}
		if s.Suspend {
			allErrs = append(allErrs, field.Forbidden(p.Child("suspend"), "not supported when spec.clusterSelector is set"))
		}
	}

	// Suspend and cleanup.
	if s.Suspend && !s.ShutdownAfterJobFinishes {
		allErrs = append(allErrs, field.Forbidden(p.Child("suspend"),
			"a RayJob can be suspended only with shutdownAfterJobFinishes: true"))
	}
	if s.TTLSecondsAfterFinished < 0 {
		allErrs = append(allErrs, field.Invalid(p.Child("ttlSecondsAfterFinished"), s.TTLSecondsAfterFinished, errMustBeNonNegative))
	} else if s.TTLSecondsAfterFinished > 0 && !s.ShutdownAfterJobFinishes {
		allErrs = append(allErrs, field.Forbidden(p.Child("ttlSecondsAfterFinished"),
			"has no effect unless shutdownAfterJobFinishes is true"))
	}
	allErrs = append(allErrs, validateDeletionStrategy(s, p)...)

	// Counts and deadlines.
	allErrs = append(allErrs, nonNegative(p.Child("backoffLimit"), s.BackoffLimit)...)
	if s.ActiveDeadlineSeconds != nil && *s.ActiveDeadlineSeconds <= 0 {
		allErrs = append(allErrs, field.Invalid(p.Child("activeDeadlineSeconds"), *s.ActiveDeadlineSeconds, errMustBePositive))
	}
	if s.PreRunningDeadlineSeconds != nil && *s.PreRunningDeadlineSeconds < 1 {
		allErrs = append(allErrs, field.Invalid(p.Child("preRunningDeadlineSeconds"), *s.PreRunningDeadlineSeconds, "must be greater than or equal to 1"))
	}
	if s.EntrypointNumCpus < 0 {
		allErrs = append(allErrs, field.Invalid(p.Child("entrypointNumCpus"), s.EntrypointNumCpus, errMustBeNonNegative))
	}
	if s.EntrypointNumGpus < 0 {
		allErrs = append(allErrs, field.Invalid(p.Child("entrypointNumGpus"), s.EntrypointNumGpus, errMustBeNonNegative))
	}
	if s.EntrypointResources != "" {
		var res map[string]float64
		if err := json.Unmarshal([]byte(s.EntrypointResources), &res); err != nil {
			allErrs = append(allErrs, field.Invalid(p.Child("entrypointResources"), summarise(s.EntrypointResources),
				"must be a JSON object of resource name to number"))
		} else {
			for _, k := range slices.Sorted(maps.Keys(res)) { // sorted: the order of the errors is stable
				if v := res[k]; v < 0 {
					allErrs = append(allErrs, field.Invalid(p.Child("entrypointResources").Key(k), v, errMustBeNonNegative))
				}
			}
		}
	}
	if s.RuntimeEnvYAML != "" {
		var env map[string]any
		if err := yaml.Unmarshal([]byte(s.RuntimeEnvYAML), &env); err != nil {
			allErrs = append(allErrs, field.Invalid(p.Child("runtimeEnvYAML"), field.OmitValueType{}, // its env_vars may hold secrets: never echoed into status and Events

				"must be a YAML mapping (its text is not repeated: it may hold secrets): "+err.Error()))
		}
	}

	// Submission mode specifics.
	if mode == InteractiveMode && s.BackoffLimit != nil && *s.BackoffLimit > 0 {
		allErrs = append(allErrs, field.Forbidden(p.Child("backoffLimit"), "retries are not supported with submissionMode InteractiveMode"))
	}
	if mode != K8sJobMode {
		if s.SubmitterPodTemplate != nil {
			allErrs = append(allErrs, field.Forbidden(p.Child("submitterPodTemplate"), "only used with submissionMode K8sJobMode"))
		}
		if s.SubmitterConfig != nil {
			allErrs = append(allErrs, field.Forbidden(p.Child("submitterConfig"), "only used with submissionMode K8sJobMode"))
		}
	}
	if s.SubmitterConfig != nil {
		allErrs = append(allErrs, nonNegative(p.Child("submitterConfig", "backoffLimit"), s.SubmitterConfig.BackoffLimit)...)
	}
	if t := s.SubmitterPodTemplate; t != nil && len(t.Spec.Containers) == 0 {
		allErrs = append(allErrs, field.Required(p.Child("submitterPodTemplate", "spec", "containers"), "the submitter pod needs a container"))
	}
	if mode == SidecarMode && s.RayClusterSpec != nil {
		if rp := s.RayClusterSpec.HeadGroupSpec.Template.Spec.RestartPolicy; rp != "" && rp != corev1.RestartPolicyNever {
			allErrs = append(allErrs, field.NotSupported(p.Child("rayClusterSpec", "headGroupSpec", "template", "spec", "restartPolicy"),
				rp, []string{string(corev1.RestartPolicyNever)}))
		}
	}

	if s.RayClusterSpec != nil {
		if a := s.RayClusterSpec.AuthOptions; a != nil && a.EnableK8sTokenAuth != nil && *a.EnableK8sTokenAuth {
			// KubeRay v1.6.2 utils/validation.go:351-354 (v1.7.0 :605-608).
			allErrs = append(allErrs, field.Forbidden(p.Child("rayClusterSpec", "authOptions", "enableK8sTokenAuth"),
				"K8s token auth mode is currently not supported for RayJob (KubeRay refuses it too)"))
		}
		allErrs = append(allErrs, ValidateRayClusterSpec(s.RayClusterSpec, j.Annotations, p.Child("rayClusterSpec"))...)
	}
	return allErrs
}

// validateDeletionStrategy checks the ttl/shutdown/deletionStrategy combination.
func validateDeletionStrategy(s *RayJobSpec, p *field.Path) field.ErrorList {
	ds := s.DeletionStrategy
	if ds == nil {
		return nil
	}
	var allErrs field.ErrorList
	dp := p.Child("deletionStrategy")
	legacy := ds.OnSuccess != nil || ds.OnFailure != nil
	rules := len(ds.DeletionRules) > 0
	autoscaling := s.RayClusterSpec.IsAutoscalingEnabled()
	selector := s.UsesClusterSelector()
	policies := []DeletionPolicyType{DeleteCluster, DeleteWorkers, DeleteSelf, DeleteNone}

	switch {
	case legacy && rules:
		return append(allErrs, field.Forbidden(dp.Child("deletionRules"),
			"must not be set together with the legacy onSuccess/onFailure"))
	case !legacy && !rules:
		return append(allErrs, field.Required(dp,
			"set deletionRules, or both onSuccess and onFailure"))
	}

	if legacy {
		for _, side := range []struct {
			name string
			pol  *DeletionPolicy
		}{{"onSuccess", ds.OnSuccess}, {"onFailure", ds.OnFailure}} {
			sp := dp.Child(side.name, "policy")
			if side.pol == nil || side.pol.Policy == nil {
				allErrs = append(allErrs, field.Required(sp, "the legacy form needs both onSuccess.policy and onFailure.policy"))
				continue
			}
			pol := *side.pol.Policy
			if errs := supported(sp, pol, policies...); len(errs) > 0 {
				allErrs = append(allErrs, errs...)
				continue
			}
			if selector && (pol == DeleteCluster || pol == DeleteWorkers) {
				allErrs = append(allErrs, field.Forbidden(sp, deletionPolicyNotSelector))
			}
			if autoscaling && pol == DeleteWorkers {
				allErrs = append(allErrs, field.Forbidden(sp, "DeleteWorkers is not supported with enableInTreeAutoscaling"))
			}
			if s.ShutdownAfterJobFinishes && pol == DeleteNone {
				allErrs = append(allErrs, field.Forbidden(sp, "DeleteNone contradicts shutdownAfterJobFinishes: true"))
			}
		}
		return allErrs
	}

	if s.ShutdownAfterJobFinishes {
		allErrs = append(allErrs, field.Forbidden(p.Child("shutdownAfterJobFinishes"),
			"must not be true together with "+dp.Child("deletionRules").String()+"; use a DeleteCluster rule"))
	}
	type key struct {
		cond   string
		policy DeletionPolicyType
	}
	index := map[key]int{} // first valid rule for each (condition, policy)
	for i, r := range ds.DeletionRules {
		rp := dp.Child("deletionRules").Index(i)
		cp := rp.Child("condition")
		if r.Policy == "" {
			allErrs = append(allErrs, field.Required(rp.Child("policy"), ""))
			continue
		}
		if errs := supported(rp.Child("policy"), r.Policy, policies...); len(errs) > 0 {
			allErrs = append(allErrs, errs...)
			continue
		}
		c := r.Condition
		var cond string
		switch {
		case c.JobStatus != nil && c.JobDeploymentStatus != nil:
			allErrs = append(allErrs, field.Forbidden(cp.Child("jobDeploymentStatus"), "must not be set together with jobStatus; set exactly one"))
			continue
		case c.JobStatus == nil && c.JobDeploymentStatus == nil:
			allErrs = append(allErrs, field.Required(cp, "set exactly one of jobStatus or jobDeploymentStatus"))
			continue
		case c.JobStatus != nil:
			if errs := supportedPtr(cp.Child("jobStatus"), c.JobStatus, JobStatusSucceeded, JobStatusFailed); len(errs) > 0 {
				allErrs = append(allErrs, errs...)
				continue
			}
			cond = "jobStatus " + string(*c.JobStatus)
		default:
			if errs := supportedPtr(cp.Child("jobDeploymentStatus"), c.JobDeploymentStatus, JobDeploymentStatusFailed); len(errs) > 0 {
				allErrs = append(allErrs, errs...)
				continue
			}
			cond = "jobDeploymentStatus " + string(*c.JobDeploymentStatus)
		}
		if c.TTLSeconds < 0 {
			allErrs = append(allErrs, field.Invalid(cp.Child("ttlSeconds"), c.TTLSeconds, errMustBeNonNegative))
			continue
		}
		if selector && (r.Policy == DeleteCluster || r.Policy == DeleteWorkers) {
			allErrs = append(allErrs, field.Forbidden(rp.Child("policy"), deletionPolicyNotSelector))
			continue
		}
		if autoscaling && r.Policy == DeleteWorkers {
			allErrs = append(allErrs, field.Forbidden(rp.Child("policy"), "DeleteWorkers is not supported with enableInTreeAutoscaling"))
			continue
		}
		k := key{cond, r.Policy}
		if _, dup := index[k]; dup {
			allErrs = append(allErrs, field.Duplicate(rp, fmt.Sprintf("%s, policy %s", cond, r.Policy)))
			continue
		}
		index[k] = i
	}
	// Within one condition a more destructive policy must not run earlier:
	// ttl(DeleteWorkers) <= ttl(DeleteCluster) <= ttl(DeleteSelf).
	order := []DeletionPolicyType{DeleteWorkers, DeleteCluster, DeleteSelf}
	for i, r := range ds.DeletionRules {
		for k, at := range index {
			if at != i {
				continue
			}
			pos := slices.Index(order, r.Policy)
			for _, gentler := range order[:max(pos, 0)] {
				j, ok := index[key{k.cond, gentler}]
				if !ok {
					continue
				}
				if et := ds.DeletionRules[j].Condition.TTLSeconds; r.Condition.TTLSeconds < et {
					allErrs = append(allErrs, field.Invalid(dp.Child("deletionRules").Index(i).Child("condition", "ttlSeconds"),
						r.Condition.TTLSeconds, fmt.Sprintf("must be >= %d, the ttlSeconds of the %s rule for %s (deletionRules[%d])",
							et, gentler, k.cond, j)))
				}
			}
		}
	}
	return allErrs
}
