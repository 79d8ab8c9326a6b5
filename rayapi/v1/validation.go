package v1

import (
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validation*.go are the only home of spec validation: this file holds the
// entry points (ValidateRayCluster, ValidateRayJob, ValidateRayService,
// ValidateRayCronJob, the status invariants) and the shared rules;
// validation_raycluster.go, validation_rayjob.go, validation_rayservice.go
// and validation_raycronjob.go one kind's spec each.
// Every rule returns a
// field.Error naming the offending path, so messages read like the API
// server's ("spec.workerGroupSpecs[1].minReplicas: Invalid value: 5: must be
// <= maxReplicas (3)"). Rules the API server can check itself are also in the
// CRD (markers in the *_types.go files); the Go rules cover objects that never
// pass an API server and the rules OpenAPI/CEL cannot express cheaply.
//
// A zero numOfHosts is indistinguishable from an unset one after decoding
// (omitempty), so Go treats 0 as "unset, default 1"; the CRD rejects an
// explicit 0 (minimum 1).

// Name limits: generated Service names (<cluster>-serve-svc) must stay within
// 63 characters, and RayJob/RayService clusters are named <name>-<5 chars>.
const (
	MaxRayClusterNameLength = 53
	MaxRayJobNameLength     = MaxRayClusterNameLength - 6
	MaxRayServiceNameLength = MaxRayClusterNameLength - 6
	// MinRayVersionForTokenAuth is the oldest Ray that supports authOptions.mode=token.
	MinRayVersionForTokenAuth = "2.52.0"
	// MinRayVersionForK8sTokenAuth is the oldest Ray that supports
	// authOptions.enableK8sTokenAuth (KubeRay's utils/validation.go).
	MinRayVersionForK8sTokenAuth = "2.55.0"
)

// Environment variable names the validation inspects in the head container.
const (
	EnvRayRedisAddress        = "RAY_REDIS_ADDRESS"
	EnvRedisPassword          = "REDIS_PASSWORD"
	EnvRedisUsername          = "REDIS_USERNAME"
	EnvRayEnableAutoscalerV2  = "RAY_enable_autoscaler_v2"
	rayStartParamRedisPass    = "redis-password"
	rayStartParamRedisUser    = "redis-username"
	rayStartParamLabels       = "labels"
	maxSummarisedValueLength  = 80
	serviceTypeExternalName   = corev1.ServiceTypeExternalName
	serviceTypeClusterIP      = corev1.ServiceTypeClusterIP
	serviceTypeNodePort       = corev1.ServiceTypeNodePort
	serviceTypeLoadBalancer   = corev1.ServiceTypeLoadBalancer
	errMustBeNonNegative      = "must be greater than or equal to 0"
	errMustBePositive         = "must be greater than 0"
	deletionPolicyNotSelector = "not supported when spec.clusterSelector is set: the job does not own the cluster"
)

// MaxWorkerGroups bounds spec.workerGroupSpecs, as the CRD's maxItems does:
// the bound keeps the CRD's unique-group-name rule within the API server's
// CEL cost budget.
const MaxWorkerGroups = 256

// rayStartResourceParams are the rayStartParams that declare resources, which
// conflict with the group's resources field.
var rayStartResourceParams = []string{"num-cpus", "num-gpus", "memory", "resources"}

// ValidateRayCluster validates a RayCluster's name and spec.
func ValidateRayCluster(c *RayCluster) field.ErrorList {
	allErrs := validateName(c.Name, MaxRayClusterNameLength, field.NewPath("metadata", "name"))
	return append(allErrs, ValidateRayClusterSpec(&c.Spec, c.Annotations, field.NewPath("spec"))...)
}

// ValidateRayJob validates a RayJob's name and spec, including its rayClusterSpec.
func ValidateRayJob(j *RayJob) field.ErrorList {
	allErrs := validateName(j.Name, MaxRayJobNameLength, field.NewPath("metadata", "name"))
	return append(allErrs, validateRayJobSpec(j, field.NewPath("spec"))...)
}

// ValidateRayService validates a RayService's name, annotations and spec,
// including its rayClusterConfig.
func ValidateRayService(s *RayService) field.ErrorList {
	allErrs := validateName(s.Name, MaxRayServiceNameLength, field.NewPath("metadata", "name"))
	if v, ok := s.Annotations[RayServiceInitializingTimeoutAnnotation]; ok && v != "" {
		if err := validateTimeoutAnnotation(v); err != "" {
			allErrs = append(allErrs, field.Invalid(
				field.NewPath("metadata", "annotations").Key(RayServiceInitializingTimeoutAnnotation), v, err))
		}
	}
	return append(allErrs, validateRayServiceSpec(s, field.NewPath("spec"))...)
}

// ValidateRayCronJob validates a RayCronJob's name, schedule, time zone and
// jobTemplate (as a RayJob's spec).
func ValidateRayCronJob(c *RayCronJob) field.ErrorList {
	allErrs := validateName(c.Name, MaxRayCronJobNameLength, field.NewPath("metadata", "name"))
	return append(allErrs, validateRayCronJobSpec(c, field.NewPath("spec"))...)
}

// validateName checks a name that becomes the prefix of generated names.
// An empty name is not checked (generateName, or an object under construction).
func validateName(name string, maxLen int, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if name == "" {
		return nil
	}
	if len(name) > maxLen {
		allErrs = append(allErrs, field.TooLong(p, name, maxLen))
	}
	for _, msg := range validation.IsDNS1035Label(name) {
		allErrs = append(allErrs, field.Invalid(p, name, msg))
	}
	return allErrs
}

func validateTimeoutAnnotation(v string) string {
	if d, err := time.ParseDuration(v); err == nil {
		if d <= 0 {
			return "must be a positive duration"
		}
		return ""
	}
	if n, err := strconv.Atoi(v); err == nil {
		if n <= 0 {
			return "must be a positive number of seconds"
		}
		return ""
	}
	return "must be a Go duration (e.g. 5m) or a positive number of seconds"
}

func nonNegative(p *field.Path, v *int32) field.ErrorList {
	if v != nil && *v < 0 {
		return field.ErrorList{field.Invalid(p, *v, errMustBeNonNegative)}
	}
	return nil
}

func supported[T ~string](p *field.Path, v T, allowed ...T) field.ErrorList {
	if v == "" || slices.Contains(allowed, v) {
		return nil
	}
	strs := make([]string, len(allowed))
	for i, a := range allowed {
		strs[i] = string(a)
	}
	return field.ErrorList{field.NotSupported(p, string(v), strs)}
}

func supportedPtr[T ~string](p *field.Path, v *T, allowed ...T) field.ErrorList {
	if v == nil {
		return nil
	}
	if *v == "" {
		return field.ErrorList{field.NotSupported(p, "", toStrings(allowed))}
	}
	return supported(p, *v, allowed...)
}

func toStrings[T ~string](vs []T) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return out
}

func validateManagedBy(p *field.Path, v *string) field.ErrorList {
	if v == nil || slices.Contains(AllowedManagedByValues, *v) {
		return nil
	}
	return field.ErrorList{field.NotSupported(p, *v, AllowedManagedByValues)}
}

func findEnv(env []corev1.EnvVar, name string) (int, *corev1.EnvVar) {
	for i := range env {
		if env[i].Name == name {
			return i, &env[i]
		}
	}
	return -1, nil
}

// sortErrors orders errors by path then message, so map iteration does not
// make the result order random.
func sortErrors(errs field.ErrorList) {
	slices.SortStableFunc(errs, func(a, b *field.Error) int {
		if c := strings.Compare(a.Field, b.Field); c != 0 {
			return c
		}
		return strings.Compare(a.Detail, b.Detail)
	})
}

func percent(p *field.Path, v *int32, required bool) field.ErrorList {
	switch {
	case v == nil && required:
		return field.ErrorList{field.Required(p, "")}
	case v != nil && (*v < 0 || *v > 100):
		return field.ErrorList{field.Invalid(p, *v, "must be between 0 and 100")}
	}
	return nil
}

// summarise shortens long values (YAML documents) in error messages.
func summarise(s string) string {
	s = strings.ReplaceAll(s, "\n", `\n`)
	if len(s) > maxSummarisedValueLength {
		return s[:maxSummarisedValueLength] + "..."
	}
	return s
}

// IsConditionTrue reports whether a condition of the given type is True.
func IsConditionTrue(conds []metav1.Condition, t string) bool {
	for _, c := range conds {
		if c.Type == t {
			return c.Status == metav1.ConditionTrue
		}
	}
	return false
}

// ValidateRayClusterStatus checks the status invariants: RayClusterSuspending
// and RayClusterSuspended are never both true.
func ValidateRayClusterStatus(st *RayClusterStatus) field.ErrorList {
	if IsConditionTrue(st.Conditions, string(RayClusterSuspending)) && IsConditionTrue(st.Conditions, string(RayClusterSuspended)) {
		return field.ErrorList{field.Invalid(field.NewPath("status", "conditions"), string(RayClusterSuspended),
			"RayClusterSuspending and RayClusterSuspended must not both be true")}
	}
	return nil
}

// ValidateRayJobStatus checks the status invariants: Waiting only in InteractiveMode.
func ValidateRayJobStatus(j *RayJob) field.ErrorList {
	if j.Status.JobDeploymentStatus == JobDeploymentStatusWaiting && j.Spec.EffectiveSubmissionMode() != InteractiveMode {
		return field.ErrorList{field.Invalid(field.NewPath("status", "jobDeploymentStatus"), string(j.Status.JobDeploymentStatus),
			"Waiting is only valid with submissionMode InteractiveMode")}
	}
	return nil
}
