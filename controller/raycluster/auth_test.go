package raycluster

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/raydar/raydar/controller/internal/fixture"
	"github.com/raydar/raydar/controller/kit"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

func withAuth(rc *rayv1.RayCluster, o *rayv1.AuthOptions) *rayv1.RayCluster {
	rc.Spec.AuthOptions = o
	return rc
}

func authEnvNames(env []corev1.EnvVar) []string {
	var out []string
	for _, e := range env {
		out = append(out, e.Name)
	}
	return out
}

// wantTokenEnv fails unless c reads RAY_AUTH_MODE=token and RAY_AUTH_TOKEN
// from Secret secret, key auth_token.
func wantTokenEnv(t *testing.T, what string, c *corev1.Container, secret string) {
	t.Helper()
	if c == nil {
		t.Fatalf("%s: no such container", what)
	}
	mode, tok := fixture.EnvOf(c, "RAY_AUTH_MODE"), fixture.EnvOf(c, "RAY_AUTH_TOKEN")
	if mode == nil || mode.Value != "token" {
		t.Errorf("%s: RAY_AUTH_MODE %+v, want token (env %v)", what, mode, authEnvNames(c.Env))
	}
	if tok == nil || tok.Value != "" || tok.ValueFrom == nil || tok.ValueFrom.SecretKeyRef == nil ||
		tok.ValueFrom.SecretKeyRef.Name != secret || tok.ValueFrom.SecretKeyRef.Key != "auth_token" {
		t.Errorf("%s: RAY_AUTH_TOKEN %+v, want secretKeyRef %s/auth_token", what, tok, secret)
	}
}

func wantNoTokenEnv(t *testing.T, what string, c *corev1.Container) {
	t.Helper()
	if fixture.EnvOf(c, "RAY_AUTH_MODE") != nil || fixture.EnvOf(c, "RAY_AUTH_TOKEN") != nil {
		t.Errorf("%s: auth env without token auth: %v", what, authEnvNames(c.Env))
	}
}

func TestTokenAuthPods(t *testing.T) {
	for _, tc := range []struct {
		name   string
		auth   *rayv1.AuthOptions
		secret string // "" = no auth env
	}{
		{name: "no authOptions"},
		{name: "mode disabled", auth: &rayv1.AuthOptions{Mode: rayv1.AuthModeDisabled}},
		{name: "authOptions without mode: KubeRay leaves auth off", auth: &rayv1.AuthOptions{}},
		{name: "token: the generated Secret", auth: &rayv1.AuthOptions{Mode: rayv1.AuthModeToken}, secret: "c"},
		{name: "token with secretName: the user's Secret", auth: &rayv1.AuthOptions{Mode: rayv1.AuthModeToken, SecretName: fixture.Ptr("mine")}, secret: "mine"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc := withAuth(fixture.Cluster("c", fixture.Group("g", 1)), tc.auth)
			rc.Spec.EnableInTreeAutoscaling = fixture.Ptr(true)
			head := BuildPod(rc, PodBuild{Name: "c-head-x", Head: true}, "h", DefaultBuildConfig())
			worker := BuildPod(rc, PodBuild{Name: "c-g-worker-x", Group: &rc.Spec.WorkerGroupSpecs[0]}, "h", DefaultBuildConfig())
			ray := &head.Spec.Containers[rayv1.RayContainerIndex]
			auto := fixture.FindContainer(head.Spec.Containers, rayv1.AutoscalerContainerName)
			wray := &worker.Spec.Containers[rayv1.RayContainerIndex]
			wait := fixture.FindContainer(worker.Spec.InitContainers, kit.InitContainerName)
			if tc.secret == "" {
				for what, c := range map[string]*corev1.Container{"head ray": ray, "autoscaler": auto, "worker ray": wray, "wait-gcs-ready": wait} {
					wantNoTokenEnv(t, what, c)
				}
				return
			}
			wantTokenEnv(t, "head Ray container", ray, tc.secret)
			wantTokenEnv(t, "autoscaler", auto, tc.secret)
			wantTokenEnv(t, "worker Ray container", wray, tc.secret)
			wantTokenEnv(t, "wait-gcs-ready", wait, tc.secret)
			// No ray start flag carries auth: Ray reads the env.
			if strings.Contains(strings.Join(ray.Args, " "), "auth") {
				t.Errorf("ray start mentions auth: %q", ray.Args)
			}
		})
	}
}

func TestTokenAuthEnvOrderAndUserOverride(t *testing.T) {
	rc := withAuth(fixture.Cluster("c"), &rayv1.AuthOptions{Mode: rayv1.AuthModeToken})
	rc.Spec.EnableInTreeAutoscaling = fixture.Ptr(true)
	rc.Spec.AutoscalerOptions = &rayv1.AutoscalerOptions{Env: []corev1.EnvVar{{Name: "USER_AUTOSCALER", Value: "1"}}}
	rc.Spec.HeadGroupSpec.Template.Spec.Containers[0].Env = []corev1.EnvVar{
		{Name: "USER_FIRST", Value: "1"}, {Name: "RAY_AUTH_MODE", Value: "token"},
		{Name: "RAY_AUTH_TOKEN", Value: "user-literal"},
	}
	head := BuildPod(rc, PodBuild{Name: "c-head-x", Head: true}, "h", DefaultBuildConfig())
	ray := &head.Spec.Containers[rayv1.RayContainerIndex]
	// The user's own RAY_AUTH_TOKEN wins, and is not duplicated.
	if n := strings.Count(strings.Join(authEnvNames(ray.Env), ","), "RAY_AUTH_TOKEN"); n != 1 || fixture.EnvOf(ray, "RAY_AUTH_TOKEN").Value != "user-literal" {
		t.Fatalf("Ray container env %v", ray.Env)
	}
	// Autoscaler: KubeRay sets the auth env before autoscalerOptions.env.
	auto := fixture.FindContainer(head.Spec.Containers, rayv1.AutoscalerContainerName)
	names := authEnvNames(auto.Env)
	idx := func(n string) int {
		for i, x := range names {
			if x == n {
				return i
			}
		}
		return -1
	}
	if a, b, u := idx("RAY_AUTH_MODE"), idx("RAY_AUTH_TOKEN"), idx("USER_AUTOSCALER"); a < 0 || b != a+1 || u != len(names)-1 || b > u {
		t.Fatalf("autoscaler env order %v: want RAY_AUTH_MODE, RAY_AUTH_TOKEN before autoscalerOptions.env, which is last", names)
	}
}

func TestDecideAuthSecret(t *testing.T) {
	for _, tc := range []struct {
		name   string
		auth   *rayv1.AuthOptions
		exists bool
		want   bool
	}{
		{name: "no authOptions", want: false},
		{name: "mode disabled", auth: &rayv1.AuthOptions{Mode: rayv1.AuthModeDisabled}},
		// KubeRay v1.7.0 reconcileAuthSecret (raycluster_controller.go:426)
		// skips only a nil authOptions and mode disabled: authOptions {} gets
		// the Secret, while its pods get no token (TestTokenAuthPods).
		{name: "mode unset: the Secret all the same", auth: &rayv1.AuthOptions{}, want: true},
		{name: "mode unset with secretName: nothing created", auth: &rayv1.AuthOptions{SecretName: fixture.Ptr("mine")}},
		{name: "token, Secret missing", auth: &rayv1.AuthOptions{Mode: rayv1.AuthModeToken}, want: true},
		{name: "token, Secret exists: never re-created or rotated", auth: &rayv1.AuthOptions{Mode: rayv1.AuthModeToken}, exists: true},
		{name: "token, user's Secret: nothing created", auth: &rayv1.AuthOptions{Mode: rayv1.AuthModeToken, SecretName: fixture.Ptr("mine")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc := withAuth(fixture.Cluster("c", fixture.Group("g", 1)), tc.auth)
			o := obsOf(rc, headSvc(rc))
			o.AuthSecretReady = tc.exists
			p := decide(o)
			if got := p.CreateAuthSecret != nil; got != tc.want {
				t.Fatalf("CreateAuthSecret = %v, want %v", p.CreateAuthSecret, tc.want)
			}
			if !tc.want {
				return
			}
			s := p.CreateAuthSecret
			if s.Name != "c" || s.Namespace != "ns" || s.Labels[rayv1.RayClusterLabelKey] != "c" || len(s.Labels) != 1 {
				t.Errorf("Secret %s/%s labels %v", s.Namespace, s.Name, s.Labels)
			}
			if len(s.OwnerReferences) != 1 || s.OwnerReferences[0].UID != rc.UID || s.OwnerReferences[0].Controller == nil || !*s.OwnerReferences[0].Controller {
				t.Errorf("owner references %+v", s.OwnerReferences)
			}
			if len(s.Data) != 0 || len(s.StringData) != 0 {
				t.Errorf("the plan holds a token: %v %v", s.Data, s.StringData)
			}
			if len(p.CreatePods) != 2 {
				t.Errorf("pods planned with the Secret: %v", podNames(p.CreatePods))
			}
		})
	}
}

func TestAuthTokenShape(t *testing.T) {
	s, err := withAuthToken(buildAuthSecret(fixture.Cluster("c")))
	if err != nil {
		t.Fatal(err)
	}
	tok := string(s.Data["auth_token"])
	raw, err := base64.StdEncoding.DecodeString(tok)
	if err != nil || len(raw) != 32 {
		t.Fatalf("token %q: %d bytes, %v; want 32 random bytes, standard base64", tok, len(raw), err)
	}
	s2, _ := withAuthToken(buildAuthSecret(fixture.Cluster("c")))
	if string(s2.Data["auth_token"]) == tok {
		t.Fatal("two tokens are equal")
	}
}

func tokenOf(t *testing.T, c client.Client, name string) string {
	t.Helper()
	s := &corev1.Secret{}
	if err := c.Get(context.Background(), types.NamespacedName{Namespace: "ns", Name: name}, s); err != nil {
		t.Fatalf("auth Secret %s: %v", name, err)
	}
	return string(s.Data["auth_token"])
}

func drainEvents(ch chan string) string {
	var evs []string
	for len(ch) > 0 {
		evs = append(evs, <-ch)
	}
	return strings.Join(evs, "\n")
}

func TestReconcileCreatesTheAuthSecretOnce(t *testing.T) {
	rc := withAuth(freshCluster("c", 1), &rayv1.AuthOptions{Mode: rayv1.AuthModeToken})
	r, c, rec := fakeReconciler(t, interceptor.Funcs{}, rc)
	req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "c"}}
	if _, err := r.Reconcile(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	tok := tokenOf(t, c, "c")
	if tok == "" {
		t.Fatal("no token")
	}
	if evs := drainEvents(rec.Events); strings.Contains(evs, tok) || !strings.Contains(evs, "auth Secret c") {
		t.Fatalf("events (must name the Secret, never the token):\n%s", evs)
	}
	// A fresh process (no memory) and later passes keep the token.
	r2, _, _ := fakeReconciler(t, interceptor.Funcs{})
	r2.client, r2.api = c, c
	for range 2 {
		if _, err := r2.Reconcile(context.Background(), req); err != nil {
			t.Fatal(err)
		}
	}
	if got := tokenOf(t, c, "c"); got != tok {
		t.Fatal("the token was rotated by a later pass")
	}
}

func TestReconcileNoPodsWithoutTheAuthSecret(t *testing.T) {
	rc := withAuth(freshCluster("c", 1), &rayv1.AuthOptions{Mode: rayv1.AuthModeToken})
	r, c, rec := fakeReconciler(t, interceptor.Funcs{
		Create: func(ctx context.Context, cl client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if _, ok := obj.(*corev1.Secret); ok {
				return apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, obj.GetName(), errors.New("no"))
			}
			return cl.Create(ctx, obj, opts...)
		},
	}, rc)
	req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "c"}}
	if _, err := r.Reconcile(context.Background(), req); err == nil {
		t.Fatal("no error: the failure must be retried")
	}
	pods := &corev1.PodList{}
	if err := c.List(context.Background(), pods); err != nil || len(pods.Items) != 0 {
		t.Fatalf("%d pods created without their auth Secret (%v)", len(pods.Items), err)
	}
	got := &rayv1.RayCluster{}
	_ = c.Get(context.Background(), req.NamespacedName, got)
	// KubeRay sets no ReplicaFailure for a failed Secret (reconcileAuthSecret's
	// error carries no replica-failure marker): the condition stays absent.
	if cond := meta.FindStatusCondition(got.Status.Conditions, string(rayv1.RayClusterReplicaFailure)); cond != nil {
		t.Fatalf("ReplicaFailure %+v", cond)
	}
	if evs := drainEvents(rec.Events); !strings.Contains(evs, "Warning "+reasonFailedCreateAuthSecret) {
		t.Fatalf("events:\n%s", evs)
	}
}

func TestReconcileUsesTheUsersAuthSecret(t *testing.T) {
	rc := withAuth(freshCluster("c", 1), &rayv1.AuthOptions{Mode: rayv1.AuthModeToken, SecretName: fixture.Ptr("mine")})
	r, c, _ := fakeReconciler(t, interceptor.Funcs{}, rc)
	req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "c"}}
	if _, err := r.Reconcile(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	secrets := &metav1.PartialObjectMetadataList{}
	secrets.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("SecretList"))
	if err := c.List(context.Background(), secrets); err != nil || len(secrets.Items) != 0 {
		t.Fatalf("Secrets created with a user-given secretName: %d (%v)", len(secrets.Items), err)
	}
}
