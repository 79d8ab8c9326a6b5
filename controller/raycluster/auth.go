package raycluster

// Ray token authentication (spec.authOptions), as KubeRay v1.7 does it
// (raycluster_controller.go reconcileAuthSecret, common/pod.go
// configureTokenAuth / SetContainerTokenAuthEnvVars):
//
//   - authOptions.mode "token" turns it on; an authOptions without a mode
//     does not. Ray >= 2.52 is required (rayapi/v1 validation).
//   - Without authOptions.secretName, for any authOptions whose mode is not
//     "disabled" (an empty mode too, though its pods get no token, as in
//     KubeRay: needsAuthSecret), the controller creates a Secret named
//     after the cluster (kube/raydash.GeneratedAuthSecretName), labelled
//     ray.io/cluster, controlled by the RayCluster, with one key auth_token:
//     32 bytes from crypto/rand, standard base64. It is created once, when
//     missing, and never updated: the token is never rotated by a later pass.
//   - With authOptions.secretName the user's Secret (key auth_token) is used
//     and nothing is created.
//   - The Ray container, the wait-gcs-ready init container, the autoscaler
//     sidecar and the RayJob submitters get RAY_AUTH_MODE=token and
//     RAY_AUTH_TOKEN from that Secret (secretKeyRef), unless the user's
//     template already defines them. No ray start flag changes.
//   - enableK8sTokenAuth is not implemented: unsupported.go refuses it.
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

// Ray's environment variables of token authentication.
const (
	envRayAuthMode  = "RAY_AUTH_MODE"
	envRayAuthToken = "RAY_AUTH_TOKEN"
	// authTokenBytes is the number of random bytes in a generated token.
	authTokenBytes = 32
)

// tokenAuthEnabled: authOptions.mode is token.
func tokenAuthEnabled(spec *rayv1.RayClusterSpec) bool {
	return spec.AuthOptions != nil && spec.AuthOptions.Mode == rayv1.AuthModeToken
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
	if o.EnableK8sTokenAuth != nil && *o.EnableK8sTokenAuth {
		return false
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

// setTokenAuthEnv gives c RAY_AUTH_MODE=token and RAY_AUTH_TOKEN from the
// Secret's auth_token key, each unless c already defines it.
func SetTokenAuthEnv(c *corev1.Container, secretName string) {
	setEnv(c, corev1.EnvVar{Name: envRayAuthMode, Value: string(rayv1.AuthModeToken)})
	setEnv(c, corev1.EnvVar{Name: envRayAuthToken, ValueFrom: &corev1.EnvVarSource{
		SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: secretName},
			Key:                  raydash.AuthTokenKey,
		},
	}})
}

// addTokenAuth gives a Ray pod of rc the auth env, when rc uses token auth:
// the Ray container, every wait-gcs-ready init container and the autoscaler
// sidecar.
func addTokenAuth(rc *rayv1.RayCluster, pod *corev1.Pod) {
	name := raydash.AuthSecretName(rc)
	if name == "" {
		return
	}
	spec := &pod.Spec
	SetTokenAuthEnv(&spec.Containers[rayv1.RayContainerIndex], name)
	for i := range spec.Containers {
		if i != rayv1.RayContainerIndex && spec.Containers[i].Name == rayv1.AutoscalerContainerName {
			addAutoscalerTokenAuth(rc, &spec.Containers[i], name)
		}
	}
	for i := range spec.InitContainers {
		if spec.InitContainers[i].Name == kit.InitContainerName {
			SetTokenAuthEnv(&spec.InitContainers[i], name)
		}
	}
}

// addAutoscalerTokenAuth gives the autoscaler sidecar the auth env where
// KubeRay puts it: after the sidecar's own env and before
// autoscalerOptions.env, which autoscalerContainer appends last. A name the
// user's env already defines is left to the user.
func addAutoscalerTokenAuth(rc *rayv1.RayCluster, c *corev1.Container, secretName string) {
	var auth corev1.Container
	SetTokenAuthEnv(&auth, secretName)
	var user []corev1.EnvVar
	if o := rc.Spec.AutoscalerOptions; o != nil {
		user = o.Env
	}
	at := len(c.Env) - len(user)
	if at < 0 {
		at = len(c.Env)
	}
	var add []corev1.EnvVar
	for _, e := range auth.Env {
		if !envExists(c.Env, e.Name) {
			add = append(add, e)
		}
	}
	c.Env = slices.Insert(c.Env, at, add...)
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
