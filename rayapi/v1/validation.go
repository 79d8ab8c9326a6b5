package v1

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/util/version"
	"sigs.k8s.io/yaml"
)

// This file is the only home of spec validation. Every rule returns a
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

// ValidateRayClusterSpec validates a RayClusterSpec found at path p (spec,
// spec.rayClusterSpec or spec.rayClusterConfig). annotations are those of the
// object that holds the spec; ray.io/ft-enabled and
// ray.io/external-storage-namespace interact with gcsFaultToleranceOptions.
func ValidateRayClusterSpec(spec *RayClusterSpec, annotations map[string]string, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	annPath := field.NewPath("metadata", "annotations")

	allErrs = append(allErrs, validateManagedBy(p.Child("managedBy"), spec.ManagedBy)...)
	if spec.UpgradeStrategy != nil {
		allErrs = append(allErrs, supportedPtr(p.Child("upgradeStrategy", "type"), spec.UpgradeStrategy.Type,
			RayClusterRecreate, RayClusterUpgradeNone)...)
	}

	// Head group.
	head := &spec.HeadGroupSpec
	hp := p.Child("headGroupSpec")
	headContainers := hp.Child("template", "spec", "containers")
	var headRay *corev1.Container
	if len(head.Template.Spec.Containers) == 0 {
		allErrs = append(allErrs, field.Required(headContainers,
			"the head pod needs at least one container; containers[0] runs Ray"))
	} else {
		headRay = &head.Template.Spec.Containers[RayContainerIndex]
	}
	allErrs = append(allErrs, supported(hp.Child("serviceType"), head.ServiceType,
		serviceTypeClusterIP, serviceTypeNodePort, serviceTypeLoadBalancer, serviceTypeExternalName)...)
	if o := head.IngressOptions; o != nil {
		allErrs = append(allErrs, supportedPtr(hp.Child("ingressOptions", "pathType"), o.PathType,
			IngressPathTypeExact, IngressPathTypePrefix, IngressPathTypeImplementationSpecific)...)
		if o.Path != nil && !strings.HasPrefix(*o.Path, "/") {
			allErrs = append(allErrs, field.Invalid(hp.Child("ingressOptions", "path"), *o.Path, "must be an absolute path (start with '/')"))
		}
	}
	allErrs = append(allErrs, validateGroupRayParams(hp, head.RayStartParams, head.Resources, head.Labels)...)

	// Worker groups.
	if n := len(spec.WorkerGroupSpecs); n > MaxWorkerGroups {
		allErrs = append(allErrs, field.TooMany(p.Child("workerGroupSpecs"), n, MaxWorkerGroups))
	}
	autoscaling := spec.IsAutoscalingEnabled()
	autoscalerV2 := autoscaling && isAutoscalerV2(spec, headRay)
	names := map[string]bool{}
	for i := range spec.WorkerGroupSpecs {
		g := &spec.WorkerGroupSpecs[i]
		gp := p.Child("workerGroupSpecs").Index(i)
		switch {
		case g.GroupName == "":
			allErrs = append(allErrs, field.Required(gp.Child("groupName"), ""))
		case names[g.GroupName]:
			allErrs = append(allErrs, field.Duplicate(gp.Child("groupName"), g.GroupName))
		default:
			names[g.GroupName] = true
			for _, msg := range validation.IsValidLabelValue(g.GroupName) {
				allErrs = append(allErrs, field.Invalid(gp.Child("groupName"), g.GroupName,
					"becomes the value of the "+RayNodeGroupLabelKey+" label: "+msg))
			}
		}
		if len(g.Template.Spec.Containers) == 0 {
			allErrs = append(allErrs, field.Required(gp.Child("template", "spec", "containers"),
				"a worker pod needs at least one container; containers[0] runs Ray"))
		}
		allErrs = append(allErrs, nonNegative(gp.Child("replicas"), g.Replicas)...)
		allErrs = append(allErrs, nonNegative(gp.Child("minReplicas"), g.MinReplicas)...)
		allErrs = append(allErrs, nonNegative(gp.Child("maxReplicas"), g.MaxReplicas)...)
		if g.MinReplicas != nil && g.MaxReplicas != nil && *g.MinReplicas > *g.MaxReplicas {
			allErrs = append(allErrs, field.Invalid(gp.Child("minReplicas"), *g.MinReplicas,
				fmt.Sprintf("must be <= maxReplicas (%d)", *g.MaxReplicas)))
		}
		if g.NumOfHosts < 0 {
			allErrs = append(allErrs, field.Invalid(gp.Child("numOfHosts"), g.NumOfHosts, "must be greater than or equal to 1"))
		}
		allErrs = append(allErrs, nonNegative(gp.Child("idleTimeoutSeconds"), g.IdleTimeoutSeconds)...)
		allErrs = append(allErrs, validateGroupRayParams(gp, g.RayStartParams, g.Resources, g.Labels)...)
		if g.IsSuspended() && autoscaling {
			allErrs = append(allErrs, field.Forbidden(gp.Child("suspend"),
				"a worker group cannot be suspended while enableInTreeAutoscaling is true"))
		}
		if autoscalerV2 {
			if rp := g.Template.Spec.RestartPolicy; rp != "" && rp != corev1.RestartPolicyNever {
				allErrs = append(allErrs, field.NotSupported(gp.Child("template", "spec", "restartPolicy"), rp,
					[]string{string(corev1.RestartPolicyNever)}))
			}
		}
		for j, name := range g.ScaleStrategy.WorkersToDelete {
			if name == "" {
				allErrs = append(allErrs, field.Required(gp.Child("scaleStrategy", "workersToDelete").Index(j), "pod name"))
			}
		}
	}

	// Autoscaler.
	if o := spec.AutoscalerOptions; o != nil {
		ap := p.Child("autoscalerOptions")
		allErrs = append(allErrs, nonNegative(ap.Child("idleTimeoutSeconds"), o.IdleTimeoutSeconds)...)
		allErrs = append(allErrs, supportedPtr(ap.Child("upscalingMode"), o.UpscalingMode,
			UpscalingModeDefault, UpscalingModeAggressive, UpscalingModeConservative)...)
		allErrs = append(allErrs, supportedPtr(ap.Child("version"), o.Version, AutoscalerVersionV1, AutoscalerVersionV2)...)
	}
	if headRay != nil {
		i, env := findEnv(headRay.Env, EnvRayEnableAutoscalerV2)
		envPath := headContainers.Index(RayContainerIndex).Child("env").Index(i)
		switch {
		case env == nil:
		case !autoscaling && (env.Value == "1" || env.Value == "true"):
			allErrs = append(allErrs, field.Forbidden(envPath,
				EnvRayEnableAutoscalerV2+" cannot enable autoscaler v2 while enableInTreeAutoscaling is not true"))
		case autoscaling && spec.AutoscalerOptions != nil && spec.AutoscalerOptions.Version != nil:
			allErrs = append(allErrs, field.Forbidden(envPath,
				"must not be set together with "+p.Child("autoscalerOptions", "version").String()+"; use only the latter"))
		}
		if autoscalerV2 {
			if rp := head.Template.Spec.RestartPolicy; rp != "" && rp != corev1.RestartPolicyNever {
				allErrs = append(allErrs, field.NotSupported(hp.Child("template", "spec", "restartPolicy"), rp,
					[]string{string(corev1.RestartPolicyNever)}))
			}
		}
	}

	// GCS fault tolerance.
	ftPath := p.Child("gcsFaultToleranceOptions")
	ft := spec.GcsFaultToleranceOptions
	if ft != nil && annotations[RayFTEnabledAnnotationKey] != "" {
		allErrs = append(allErrs, field.Forbidden(ftPath,
			"must not be set together with the annotation "+RayFTEnabledAnnotationKey+"; use only "+ftPath.String()))
	}
	if headRay != nil {
		envPath := func(i int) *field.Path { return headContainers.Index(RayContainerIndex).Child("env").Index(i) }
		if !spec.IsGCSFaultToleranceEnabled(annotations) {
			if i, env := findEnv(headRay.Env, EnvRayRedisAddress); env != nil {
				allErrs = append(allErrs, field.Forbidden(envPath(i),
					EnvRayRedisAddress+" implicitly enables GCS fault tolerance; set "+ftPath.String()+" instead"))
			}
		}
		if ft != nil {
			for _, name := range []string{EnvRedisPassword, EnvRayRedisAddress} {
				if i, env := findEnv(headRay.Env, name); env != nil {
					allErrs = append(allErrs, field.Forbidden(envPath(i),
						name+" must not be set when "+ftPath.String()+" is set; use its redisPassword/redisAddress"))
				}
			}
		}
		if i, env := findEnv(headRay.Env, EnvRedisUsername); env != nil {
			allErrs = append(allErrs, field.Forbidden(envPath(i), "use "+ftPath.Child("redisUsername").String()))
		}
	}
	if head.RayStartParams[rayStartParamRedisUser] != "" {
		allErrs = append(allErrs, field.Forbidden(hp.Child("rayStartParams").Key(rayStartParamRedisUser),
			"use "+ftPath.Child("redisUsername").String()))
	}
	if ft != nil {
		if head.RayStartParams[rayStartParamRedisPass] != "" {
			allErrs = append(allErrs, field.Forbidden(hp.Child("rayStartParams").Key(rayStartParamRedisPass),
				"use "+ftPath.Child("redisPassword").String()))
		}
		if annotations[RayExternalStorageNSAnnotationKey] != "" {
			allErrs = append(allErrs, field.Forbidden(annPath.Key(RayExternalStorageNSAnnotationKey),
				"use "+ftPath.Child("externalStorageNamespace").String()))
		}
		allErrs = append(allErrs, supported(ftPath.Child("backend"), ft.Backend, GcsFTBackendRedis, GcsFTBackendRocksDB)...)
		if spec.GcsFTBackend() == GcsFTBackendRedis && ft.RedisAddress == "" {
			allErrs = append(allErrs, field.Required(ftPath.Child("redisAddress"), "required with the redis backend"))
		}
		for name, c := range map[string]*RedisCredential{"redisPassword": ft.RedisPassword, "redisUsername": ft.RedisUsername} {
			if c != nil && c.Value != "" && c.ValueFrom != nil {
				allErrs = append(allErrs, field.Forbidden(ftPath.Child(name, "valueFrom"), "must not be set together with value"))
			}
		}
		if s := ft.Storage; s != nil {
			sp := ftPath.Child("storage")
			if s.ClaimName != "" && (s.Size != nil || s.StorageClassName != nil || len(s.AccessModes) > 0) {
				allErrs = append(allErrs, field.Forbidden(sp.Child("claimName"),
					"must not be set together with size, storageClassName or accessModes (they configure a managed claim)"))
			}
			if s.Size != nil && s.Size.Sign() <= 0 {
				allErrs = append(allErrs, field.Invalid(sp.Child("size"), s.Size.String(), errMustBePositive))
			}
			allErrs = append(allErrs, supportedPtr(sp.Child("deletionPolicy"), s.DeletionPolicy,
				DeleteWithClusterGCSStorageDeletionPolicy, RetainGCSStorageDeletionPolicy)...)
		}
	}

	// Authentication.
	if a := spec.AuthOptions; a != nil {
		allErrs = append(allErrs, supported(p.Child("authOptions", "mode"), a.Mode, AuthModeDisabled, AuthModeToken)...)
		if a.Mode == AuthModeToken {
			allErrs = append(allErrs, validateRayVersionAtLeast(p.Child("rayVersion"), spec.RayVersion, MinRayVersionForTokenAuth,
				"authOptions.mode=token")...)
		}
	}

	// Network policy.
	if np := spec.NetworkPolicy; np != nil {
		npp := p.Child("networkPolicy")
		allErrs = append(allErrs, supportedPtr(npp.Child("mode"), np.Mode,
			NetworkPolicyDenyAll, NetworkPolicyDenyAllIngress, NetworkPolicyDenyAllEgress)...)
		seen := map[string]bool{}
		for i, wg := range np.WorkerGroups {
			wp := npp.Child("workerGroups").Index(i).Child("groupName")
			switch {
			case wg.GroupName == "":
				allErrs = append(allErrs, field.Required(wp, ""))
			case seen[wg.GroupName]:
				allErrs = append(allErrs, field.Duplicate(wp, wg.GroupName))
			}
			seen[wg.GroupName] = true
		}
	}
	return allErrs
}

// isAutoscalerV2 reports whether autoscaler v2 is asked for by
// autoscalerOptions.version: v2, the one switch KubeRay (and raydar's
// builder) acts on with restartPolicy Never. Neither rayVersion nor a
// RAY_enable_autoscaler_v2 env var the user sets brings in the
// restartPolicy rule (KubeRay v1.7.0 utils/validation.go).
func isAutoscalerV2(spec *RayClusterSpec, _ *corev1.Container) bool {
	o := spec.AutoscalerOptions
	return o != nil && o.Version != nil && *o.Version == AutoscalerVersionV2
}

func validateRayVersionAtLeast(p *field.Path, v, minimum, what string) field.ErrorList {
	if v == "" {
		return field.ErrorList{field.Required(p, what+" needs Ray >= "+minimum)}
	}
	got, err := version.ParseGeneric(v)
	if err != nil {
		return field.ErrorList{field.Invalid(p, v, "not a version: "+err.Error())}
	}
	if got.LessThan(version.MustParseGeneric(minimum)) {
		return field.ErrorList{field.Invalid(p, v, what+" needs Ray >= "+minimum)}
	}
	return nil
}

// validateGroupRayParams checks rayStartParams against the resources and labels fields of a group.
func validateGroupRayParams(gp *field.Path, params, resources, labels map[string]string) field.ErrorList {
	var allErrs field.ErrorList
	if len(resources) > 0 {
		for _, k := range rayStartResourceParams {
			if params[k] != "" {
				allErrs = append(allErrs, field.Forbidden(gp.Child("rayStartParams").Key(k),
					"must not be set together with "+gp.Child("resources").String()+"; use only one"))
			}
		}
	}
	for k, v := range resources {
		if q, err := resource.ParseQuantity(v); err != nil || q.Sign() < 0 {
			allErrs = append(allErrs, field.Invalid(gp.Child("resources").Key(k), v, "must be a non-negative number or quantity"))
		}
	}
	if _, ok := params[rayStartParamLabels]; ok {
		allErrs = append(allErrs, field.Forbidden(gp.Child("rayStartParams").Key(rayStartParamLabels),
			"use "+gp.Child("labels").String()))
	}
	lp := gp.Child("labels")
	for k, v := range labels {
		for _, msg := range validation.IsQualifiedName(k) {
			allErrs = append(allErrs, field.Invalid(lp, k, msg))
		}
		for _, msg := range validation.IsValidLabelValue(v) {
			allErrs = append(allErrs, field.Invalid(lp.Key(k), v, msg))
		}
	}
	sortErrors(allErrs)
	return allErrs
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
			for k, v := range res {
				if v < 0 {
					allErrs = append(allErrs, field.Invalid(p.Child("entrypointResources").Key(k), v, errMustBeNonNegative))
				}
			}
		}
	}
	if s.RuntimeEnvYAML != "" {
		var env map[string]any
		if err := yaml.Unmarshal([]byte(s.RuntimeEnvYAML), &env); err != nil {
			allErrs = append(allErrs, field.Invalid(p.Child("runtimeEnvYAML"), summarise(s.RuntimeEnvYAML),
				"must be a YAML mapping: "+err.Error()))
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

func validateRayServiceSpec(rs *RayService, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	s := &rs.Spec
	cp := p.Child("rayClusterConfig")

	allErrs = append(allErrs, validateManagedBy(p.Child("managedBy"), s.ManagedBy)...)
	allErrs = append(allErrs, ValidateRayClusterSpec(&s.RayClusterSpec, rs.Annotations, cp)...)
	if hs := s.RayClusterSpec.HeadGroupSpec.HeadService; hs != nil && hs.Name != "" {
		allErrs = append(allErrs, field.Forbidden(cp.Child("headGroupSpec", "headService", "metadata", "name"),
			"a RayService names the head Service of each of its clusters itself"))
	}
	allErrs = append(allErrs, nonNegative(p.Child("rayClusterDeletionDelaySeconds"), s.RayClusterDeletionDelaySeconds)...)
	if s.ServeConfigV2 != "" {
		var cfg map[string]any
		if err := yaml.Unmarshal([]byte(s.ServeConfigV2), &cfg); err != nil {
			allErrs = append(allErrs, field.Invalid(p.Child("serveConfigV2"), summarise(s.ServeConfigV2),
				"must be a YAML mapping: "+err.Error()))
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
