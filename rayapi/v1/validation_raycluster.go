package v1

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/util/version"
)

// RayCluster spec validation (see validation.go for the entry points).

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
		if t := g.IdleTimeoutSeconds; t != nil && *t >= 0 && !groupIdleTimeoutAllowed(spec, headRay) {
			allErrs = append(allErrs, field.Invalid(gp.Child("idleTimeoutSeconds"), *t,
				"is set, but autoscaler v2 is not enabled: set spec.autoscalerOptions.version to v2"))
		}
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
		for _, cred := range []struct {
			name string
			c    *RedisCredential
		}{{"redisPassword", ft.RedisPassword}, {"redisUsername", ft.RedisUsername}} { // a slice: the order of the errors is stable
			if c := cred.c; c != nil && c.Value != "" && c.ValueFrom != nil {
				allErrs = append(allErrs, field.Forbidden(ftPath.Child(cred.name, "valueFrom"), "must not be set together with value"))
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
		k8s := a.EnableK8sTokenAuth != nil && *a.EnableK8sTokenAuth
		kp := p.Child("authOptions", "enableK8sTokenAuth")
		switch {
		case a.Mode == AuthModeToken:
			verErrs := validateRayVersionAtLeast(p.Child("rayVersion"), spec.RayVersion, MinRayVersionForTokenAuth,
				"authOptions.mode=token")
			allErrs = append(allErrs, verErrs...)
			// KubeRay v1.6.2 utils/validation.go:254-262 (v1.7.0 :300-308).
			if k8s {
				if len(verErrs) == 0 {
					allErrs = append(allErrs, validateRayVersionAtLeast(p.Child("rayVersion"), spec.RayVersion, MinRayVersionForK8sTokenAuth,
						"authOptions.enableK8sTokenAuth")...)
				}
				if a.SecretName != nil && *a.SecretName != "" {
					allErrs = append(allErrs, field.Forbidden(p.Child("authOptions", "secretName"),
						"must not be set together with authOptions.enableK8sTokenAuth: the token is the pods' ServiceAccount token"))
				}
			}
		case k8s:
			// KubeRay refuses it rather than ignoring it (v1.6.2
			// utils/validation.go:263-266; v1.7.0 :309-312).
			allErrs = append(allErrs, field.Forbidden(kp, "needs authOptions.mode token"))
		}
	}

	// Network policy.
	if np := spec.NetworkPolicy; np != nil {
		npp := p.Child("networkPolicy")
		allErrs = append(allErrs, supportedPtr(npp.Child("mode"), np.Mode,
			NetworkPolicyDenyAll, NetworkPolicyDenyAllIngress, NetworkPolicyDenyAllEgress)...)
		allErrs = append(allErrs, validateNetworkPolicyRules(spec, np, p)...)
	}

	// KubeRay v1.7.0's alpha features (validation_alpha.go).
	allErrs = append(allErrs, validateHistoryServerOptions(spec, p)...)
	allErrs = append(allErrs, validateEmbeddedGCSStorage(spec, headRay, p)...)
	return allErrs
}

// validateNetworkPolicyRules are KubeRay v1.7.0's rules of
// spec.networkPolicy (utils/validation.go:377-444, validateNetworkPolicy):
// rules only in a direction the mode restricts (default DenyAll), worker
// group names DNS-1123 labels (they are part of the NetworkPolicies'
// names), each workerGroups entry naming a group of workerGroupSpecs, once.
func validateNetworkPolicyRules(spec *RayClusterSpec, np *NetworkPolicyConfig, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	npp := p.Child("networkPolicy")
	mode := NetworkPolicyDenyAll
	if np.Mode != nil {
		mode = *np.Mode
	}
	directions := func(rp *field.Path, r *NetworkPolicyRules) {
		if r == nil {
			return
		}
		if mode == NetworkPolicyDenyAllEgress && len(r.IngressRules) > 0 {
			allErrs = append(allErrs, field.Forbidden(rp.Child("ingressRules"),
				fmt.Sprintf("cannot be set when mode is %q (ingress is not restricted)", mode)))
		}
		if mode == NetworkPolicyDenyAllIngress && len(r.EgressRules) > 0 {
			allErrs = append(allErrs, field.Forbidden(rp.Child("egressRules"),
				fmt.Sprintf("cannot be set when mode is %q (egress is not restricted)", mode)))
		}
	}
	directions(npp.Child("head"), np.Head)
	directions(npp.Child("worker"), np.Worker)
	groups := map[string]bool{}
	for i, g := range spec.WorkerGroupSpecs {
		groups[g.GroupName] = true
		if g.GroupName == "" {
			continue // required, said above
		}
		for _, msg := range validation.IsDNS1123Label(g.GroupName) {
			allErrs = append(allErrs, field.Invalid(p.Child("workerGroupSpecs").Index(i).Child("groupName"), g.GroupName,
				"must be a DNS-1123 label when networkPolicy is set (it is part of the NetworkPolicy's name): "+msg))
		}
	}
	seen := map[string]bool{}
	for i, wg := range np.WorkerGroups {
		ep := npp.Child("workerGroups").Index(i)
		wp := ep.Child("groupName")
		switch {
		case wg.GroupName == "":
			allErrs = append(allErrs, field.Required(wp, ""))
		case seen[wg.GroupName]:
			allErrs = append(allErrs, field.Duplicate(wp, wg.GroupName))
		case !groups[wg.GroupName]:
			allErrs = append(allErrs, field.NotFound(wp, wg.GroupName))
		}
		seen[wg.GroupName] = true
		directions(ep, &wg.NetworkPolicyRules)
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

// groupIdleTimeoutAllowed reports whether a worker group may set
// idleTimeoutSeconds: only autoscaler v2 reads it, so KubeRay refuses it
// otherwise (v1.6.2 utils/validation.go:729-751, validateWorkerGroupIdleTimeout:
// autoscalerOptions.version v2, or RAY_enable_autoscaler_v2 "1"/"true" on the
// head's Ray container, whether or not enableInTreeAutoscaling is on).
func groupIdleTimeoutAllowed(spec *RayClusterSpec, headRay *corev1.Container) bool {
	if isAutoscalerV2(spec, headRay) {
		return true
	}
	if headRay == nil {
		return false
	}
	for _, e := range headRay.Env {
		if e.Name == "RAY_enable_autoscaler_v2" && (e.Value == "1" || e.Value == "true") {
			return true
		}
	}
	return false
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
