package raycluster

// Ray token authentication (spec.authOptions), as KubeRay v1.6.2 and v1.7.0
// do it (raycluster_controller.go reconcileAuthSecret, common/pod.go
// configureTokenAuth / AddRayTokenVolume / SetContainerTokenAuthEnvVars;
// file:line below are v1.6.2's, ray-operator/controllers/ray/):
//
//   - authOptions.mode "token" turns it on; an authOptions without a mode
//     does not. Ray >= 2.52 is required (rayapi/v1 validation).
//   - Without authOptions.secretName and without enableK8sTokenAuth, for any
//     authOptions whose mode is not "disabled" (an empty mode too, though
//     its pods get no token, as in KubeRay: needsAuthSecret), the controller
//     creates a Secret named after the cluster
//     (kube/raydash.GeneratedAuthSecretName), labelled ray.io/cluster,
//     controlled by the RayCluster, with one key auth_token: 32 bytes from
//     crypto/rand, standard base64. It is created once, when missing, and
//     never updated: the token is never rotated by a later pass.
//   - With authOptions.secretName the user's Secret (key auth_token) is used
//     and nothing is created.
//   - The Ray container, the wait-gcs-ready init container, the autoscaler
//     sidecar and the RayJob submitters get RAY_AUTH_MODE=token and
//     RAY_AUTH_TOKEN from that Secret (secretKeyRef), unless the user's
//     template already defines them. No ray start flag changes.
//   - enableK8sTokenAuth (Kubernetes-delegated token auth, Ray >= 2.55, mode
//     token, no secretName: rayapi/v1 validation, as utils/validation.go:254-266)
//     creates nothing: no Secret (raycluster_controller.go:387-391), and no
//     ServiceAccount, ClusterRole or binding either: the pods' ServiceAccount
//     and its RBAC (tokenreviews and subjectaccessreviews create, the verb
//     ray:write on rayclusters) are the user's, as in KubeRay's sample
//     config/samples/ray-cluster.kubernetes.auth.yaml. The same containers
//     instead get RAY_AUTH_MODE=token, RAY_ENABLE_K8S_TOKEN_AUTH=true and a
//     read-only mount of the pod's projected ServiceAccount token (volume
//     ray-token, path token) at /var/run/secrets/ray.io/serviceaccount
//     (common/pod.go:253-336, utils/constant.go:175-180); Ray reads its own
//     token from that file and asks the API server (TokenReview,
//     SubjectAccessReview) about every caller's. KubeRay refuses it in
//     RayJob and RayService clusters (utils/validation.go:351-354, :427-429);
//     so does raydar. The operator itself needs no new RBAC for it.
//
// The token is made in act (newAuthToken), never in decide, and never
// appears in a plan, an Event or a log line.

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"slices"

	"github.com/raydar/raydar/controller/kit"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/raydar/raydar/kube/raydash"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// Ray's environment variables of token authentication, and the projected
// ServiceAccount token of Kubernetes token auth (KubeRay's
// utils/constant.go:169-180).
const (
	envRayAuthMode           = "RAY_AUTH_MODE"
	envRayAuthToken          = "RAY_AUTH_TOKEN"
	envRayEnableK8sTokenAuth = "RAY_ENABLE_K8S_TOKEN_AUTH"
	// RayTokenVolumeName is the projected ServiceAccount token volume.
	RayTokenVolumeName = "ray-token"
	// RayTokenMountPath is where each container mounts it; Ray reads the
	// file "token" there.
	RayTokenMountPath = "/var/run/secrets/ray.io/serviceaccount"
	// rayTokenPath is the file of the volume's one projection.
	rayTokenPath = "token"
	// authTokenBytes is the number of random bytes in a generated token.
	authTokenBytes = 32
)

// tokenAuthEnabled: authOptions.mode is token (KubeRay's utils.IsAuthEnabled,
// utils/util.go:765).
func tokenAuthEnabled(spec *rayv1.RayClusterSpec) bool {
	return spec.AuthOptions != nil && spec.AuthOptions.Mode == rayv1.AuthModeToken
}

// K8sTokenAuthEnabled reports whether authOptions.enableK8sTokenAuth is true, whatever the
// mode (KubeRay's utils.IsK8sAuthEnabled, utils/util.go:769; validation
// refuses it without mode token).
func K8sTokenAuthEnabled(spec *rayv1.RayClusterSpec) bool {
	o := spec.AuthOptions
	return o != nil && o.EnableK8sTokenAuth != nil && *o.EnableK8sTokenAuth
}

// needsAuthSecret: the controller owes the cluster its auth Secret. KubeRay
// v1.7.0 creates it for every authOptions whose mode is not "disabled" (an
// empty mode, authOptions: {}, too), unless enableK8sTokenAuth is on or
// secretName names the user's (raycluster_controller.go:426-438
// reconcileAuthSecret), while only mode token puts the token into the pods
// (common/pod.go:297, :702 utils.IsAuthEnabled). raydar does the same.
func needsAuthSecret(rc *rayv1.RayCluster) bool {
	o := rc.Spec.AuthOptions
	if o == nil || o.Mode == rayv1.AuthModeDisabled {
		return false
	}
	if K8sTokenAuthEnabled(&rc.Spec) {
		return false // raycluster_controller.go:387-391: Kubernetes issues the tokens
	}
	return o.SecretName == nil || *o.SecretName == ""
}

// buildAuthSecret is the auth Secret of rc without its token: act adds the
// token (withAuthToken) just before creating it, so the plan never holds one.
func buildAuthSecret(rc *rayv1.RayCluster) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: childMeta(rc, raydash.GeneratedAuthSecretName(rc.Name), map[string]string{rayv1.RayClusterLabelKey: rc.Name}),
	}
}

// newAuthToken is a fresh token: 32 random bytes, standard base64 (KubeRay's
// generateRandomToken).
func newAuthToken() (string, error) {
	b := make([]byte, authTokenBytes)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generating the Ray auth token: %w", err)
	}
	return base64.StdEncoding.EncodeToString(b), nil
}

// withAuthToken returns a copy of s carrying a fresh token under auth_token.
func withAuthToken(s *corev1.Secret) (*corev1.Secret, error) {
	tok, err := newAuthToken()
	if err != nil {
		return nil, err
	}
	out := s.DeepCopy()
	out.Data = map[string][]byte{raydash.AuthTokenKey: []byte(tok)}
	return out, nil
}

// SetContainerTokenAuth gives c the token-auth env of rc's cluster, each
// name unless c already defines it (KubeRay's SetContainerTokenAuthEnvVars,
// common/pod.go:296-336): RAY_AUTH_MODE=token, then with enableK8sTokenAuth
// RAY_ENABLE_K8S_TOKEN_AUTH=true and the read-only ray-token mount (unless
// c mounts a volume of that name), else RAY_AUTH_TOKEN from the auth
// Secret's auth_token key. Callers decide whether the cluster uses token
// auth (tokenAuthEnabled).
func SetContainerTokenAuth(rc *rayv1.RayCluster, c *corev1.Container) {
	setEnv(c, corev1.EnvVar{Name: envRayAuthMode, Value: string(rayv1.AuthModeToken)})
	if K8sTokenAuthEnabled(&rc.Spec) {
		setEnv(c, corev1.EnvVar{Name: envRayEnableK8sTokenAuth, Value: "true"})
		if !slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.Name == RayTokenVolumeName }) {
			c.VolumeMounts = append(c.VolumeMounts, rayTokenMount())
		}
		return
	}
	setEnv(c, corev1.EnvVar{Name: envRayAuthToken, ValueFrom: &corev1.EnvVarSource{
		SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: secretNameOf(rc)},
			Key:                  raydash.AuthTokenKey,
		},
	}})
}

// secretNameOf is the Secret the pods read the token from: secretName, else
// the generated one (common/pod.go:320-323). Unlike raydash.AuthSecretName
// it does not look at the mode: the callers have.
func secretNameOf(rc *rayv1.RayCluster) string {
	if o := rc.Spec.AuthOptions; o != nil && o.SecretName != nil && *o.SecretName != "" {
		return *o.SecretName
	}
	return raydash.GeneratedAuthSecretName(rc.Name)
}

func rayTokenMount() corev1.VolumeMount {
	return corev1.VolumeMount{Name: RayTokenVolumeName, MountPath: RayTokenMountPath, ReadOnly: true}
}

// AddRayTokenVolume adds the projected ServiceAccount token volume of
// Kubernetes token auth to spec, unless a volume of that name exists
// (KubeRay's AddRayTokenVolume, common/pod.go:273-294: no audience, no
// expiry, so the kubelet's defaults).
func AddRayTokenVolume(spec *corev1.PodSpec) {
	if slices.ContainsFunc(spec.Volumes, func(v corev1.Volume) bool { return v.Name == RayTokenVolumeName }) {
		return
	}
	spec.Volumes = append(spec.Volumes, corev1.Volume{
		Name: RayTokenVolumeName,
		VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
			Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: rayTokenPath}}},
		}},
	})
}

// addTokenAuth gives a Ray pod of rc the auth env, when rc uses token auth,
// in KubeRay's order (configureTokenAuth, common/pod.go:253-271): the Ray
// container, the token volume (Kubernetes token auth), every
// wait-gcs-ready init container; the autoscaler sidecar as KubeRay does it
// when building the sidecar (common/pod.go:206-210).
func addTokenAuth(rc *rayv1.RayCluster, pod *corev1.Pod) {
	if !tokenAuthEnabled(&rc.Spec) {
		return
	}
	spec := &pod.Spec
	SetContainerTokenAuth(rc, &spec.Containers[rayv1.RayContainerIndex])
	if K8sTokenAuthEnabled(&rc.Spec) {
		AddRayTokenVolume(spec)
	}
	for i := range spec.Containers {
		if i != rayv1.RayContainerIndex && spec.Containers[i].Name == rayv1.AutoscalerContainerName {
			addAutoscalerTokenAuth(rc, &spec.Containers[i])
		}
	}
	for i := range spec.InitContainers {
		if spec.InitContainers[i].Name == kit.InitContainerName {
			SetContainerTokenAuth(rc, &spec.InitContainers[i])
		}
	}
}

// addAutoscalerTokenAuth gives the autoscaler sidecar the auth env and
// mount where KubeRay puts them (KubeRay sets them before
// mergeAutoscalerOverrides, common/pod.go:207-213).
func addAutoscalerTokenAuth(rc *rayv1.RayCluster, c *corev1.Container) {
	var auth corev1.Container
	SetContainerTokenAuth(rc, &auth)
	insertBeforeAutoscalerOptions(rc, c, auth.Env, auth.VolumeMounts)
}

// reasonFailedCreateAuthSecret is raydar's Warning Event of a failed auth
// Secret creation (KubeRay emits none, and sets no ReplicaFailure: the
// condition is left as it was); no pod is created in that pass, as in
// KubeRay, where the error ends the pass before reconcilePods.
const reasonFailedCreateAuthSecret = "FailedCreateAuthSecret"

// decideAuthSecret plans the auth Secret when the cluster needs it and it
// was not observed.
func decideAuthSecret(o *observed, p *plan) {
	if needsAuthSecret(o.Cluster) && !o.AuthSecretReady {
		p.CreateAuthSecret = buildAuthSecret(o.Cluster)
	}
}

// authSecretExists reads the auth Secret's metadata live (never its data:
// raydar's controller has no use for the token), once per cluster per
// process; Secrets are not cached.
func (r *Reconciler) authSecretExists(ctx context.Context, rc *rayv1.RayCluster) (bool, error) {
	if !needsAuthSecret(rc) || rc.DeletionTimestamp != nil {
		return false, nil
	}
	return r.existsOnce(ctx, rc, "Secret", raydash.GeneratedAuthSecretName(rc.Name))
}

// createAuthSecret creates the planned auth Secret with a fresh token. An
// existing Secret (ours from an earlier pass, or a same-named one) is kept
// as it is: the token is never replaced. It reports whether the Secret
// exists afterwards; pods are created only then.
func (r *Reconciler) createAuthSecret(ctx context.Context, rc *rayv1.RayCluster, s *corev1.Secret, out *outcome) bool {
	if s == nil {
		return true
	}
	withTok, err := withAuthToken(s)
	if err == nil {
		err = r.client.Create(ctx, withTok)
	}
	switch {
	case err == nil:
		r.exists.set(rc.UID, "Secret/"+s.Name)
		r.events.Emit(rc, nil, kit.Event{Type: corev1.EventTypeNormal, Reason: ReasonCreated, Action: "Create",
			Message: fmt.Sprintf("Created auth Secret %s (key %s) for authOptions", s.Name, raydash.AuthTokenKey)})
		return true
	case apierrors.IsAlreadyExists(err):
		r.exists.set(rc.UID, "Secret/"+s.Name)
		return true
	default:
		// The error is the API server's; it never contains the request body.
		out.fail(reasonFailedCreateAuthSecret, fmt.Sprintf("Failed creating auth Secret %s/%s, %v", s.Namespace, s.Name, err))
		return false
	}
}
