package controller

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/raydar/raydar/controller/internal/fixture"
	"github.com/raydar/raydar/controller/kit"
	"github.com/raydar/raydar/controller/raycluster"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/raydar/raydar/kube/raydash"
	"github.com/raydar/raydar/kube/sandbox/headsim"
	"github.com/raydar/raydar/rayapi/dashboard"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

func TestIntegrationTokenAuth(t *testing.T) {
	needSandbox(t)
	ns := newNamespace(t)
	startOperator(t, ns, nil)
	rc := testCluster(ns, "auth", 2)
	rc.Spec.AuthOptions = &rayv1.AuthOptions{Mode: rayv1.AuthModeToken}
	createRC(t, rc)
	got := waitReady(t, ns, "auth", 2)

	sec, err := kc.CoreV1().Secrets(ns).Get(context.Background(), "auth", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the auth Secret: %v", err)
	}
	tok := string(sec.Data["auth_token"])
	if raw, err := base64.StdEncoding.DecodeString(tok); err != nil || len(raw) != 32 {
		t.Errorf("auth_token is not 32 random bytes in base64: %d bytes, %v", len(raw), err)
	}
	if sec.Labels[rayv1.RayClusterLabelKey] != "auth" || len(sec.OwnerReferences) != 1 || sec.OwnerReferences[0].UID != got.UID ||
		sec.OwnerReferences[0].Controller == nil || !*sec.OwnerReferences[0].Controller {
		t.Errorf("Secret labels %v owners %+v", sec.Labels, sec.OwnerReferences)
	}

	fromSecret := func(c *corev1.Container) bool {
		e := fixture.EnvOf(c, "RAY_AUTH_TOKEN")
		m := fixture.EnvOf(c, "RAY_AUTH_MODE")
		return e != nil && e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil && e.ValueFrom.SecretKeyRef.Name == "auth" &&
			e.ValueFrom.SecretKeyRef.Key == "auth_token" && m != nil && m.Value == "token"
	}
	heads, workers := clusterPods(t, ns, "auth")
	for _, p := range append(heads, workers...) {
		if !fromSecret(&p.Spec.Containers[rayv1.RayContainerIndex]) {
			t.Errorf("pod %s: the Ray container does not read RAY_AUTH_TOKEN from Secret auth: %v", p.Name, p.Spec.Containers[0].Env)
		}
	}
	for _, p := range workers {
		if c := fixture.FindContainer(p.Spec.InitContainers, kit.InitContainerName); c == nil || !fromSecret(c) {
			t.Errorf("pod %s: wait-gcs-ready lacks the auth env", p.Name)
		}
	}

	// Later passes (a scale-up) keep the token; no Event shows it.
	patchRC(t, ns, "auth", func(rc *rayv1.RayCluster) { rc.Spec.WorkerGroupSpecs[0].Replicas = fixture.Ptr(int32(3)) })
	waitReady(t, ns, "auth", 3)
	again, err := kc.CoreV1().Secrets(ns).Get(context.Background(), "auth", metav1.GetOptions{})
	if err != nil || string(again.Data["auth_token"]) != tok || again.ResourceVersion != sec.ResourceVersion {
		t.Errorf("the auth Secret changed after a later pass (%v)", err)
	}
	waitEvent(t, ns, "auth", raycluster.ReasonCreated, "auth Secret auth")
	for _, e := range clusterEvents(t, ns, "auth") {
		if strings.Contains(e.Note, tok) {
			t.Errorf("Event %s shows the token", e.Reason)
		}
	}
}

// Kubernetes token auth (authOptions.enableK8sTokenAuth) end to end: the
// pods carry RAY_ENABLE_K8S_TOKEN_AUTH and the projected ServiceAccount
// token, no Secret is made, and the cluster's (simulated) dashboard admits
// exactly the Kubernetes identities RBAC allows ray:write on the cluster,
// reached through raydash with the caller's own token. The same spec with
// mode disabled is refused by name, as KubeRay refuses it.
func TestIntegrationK8sTokenAuth(t *testing.T) {
	needSandbox(t)
	ctx := context.Background()
	ns := newNamespace(t)
	sim, err := headsim.Start(ctx, headsim.Options{Config: sb.Config, Namespace: ns, SetPodPhase: sb.SetPodPhase})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	startOperator(t, ns, nil)

	k8sAuth := func(rc *rayv1.RayCluster, mode rayv1.AuthMode) *rayv1.RayCluster {
		rc.Spec.RayVersion = "2.55.0"
		rc.Spec.AuthOptions = &rayv1.AuthOptions{Mode: mode, EnableK8sTokenAuth: fixture.Ptr(true)}
		// The API server refuses a projected ServiceAccount token without a
		// serviceAccountName; a real one's ServiceAccount admission plugin
		// fills in "default", the sandbox's (envtest's) runs without it. The
		// RayCluster names it, as KubeRay's sample does.
		rc.Spec.HeadGroupSpec.Template.Spec.ServiceAccountName = "default"
		for i := range rc.Spec.WorkerGroupSpecs {
			rc.Spec.WorkerGroupSpecs[i].Template.Spec.ServiceAccountName = "default"
		}
		return rc
	}
	createRC(t, k8sAuth(testCluster(ns, "k8s", 1), rayv1.AuthModeToken))
	createRC(t, k8sAuth(testCluster(ns, "off", 1), rayv1.AuthModeDisabled))
	waitReady(t, ns, "k8s", 1)

	// The pods: KubeRay's env and mount on every Ray and wait-gcs-ready
	// container, the projected token volume on every pod.
	k8sEnv := func(c *corev1.Container) bool {
		m, k := fixture.EnvOf(c, "RAY_AUTH_MODE"), fixture.EnvOf(c, "RAY_ENABLE_K8S_TOKEN_AUTH")
		return m != nil && m.Value == "token" && k != nil && k.Value == "true" && fixture.EnvOf(c, "RAY_AUTH_TOKEN") == nil &&
			slices.ContainsFunc(c.VolumeMounts, func(v corev1.VolumeMount) bool {
				return v.Name == "ray-token" && v.MountPath == "/var/run/secrets/ray.io/serviceaccount" && v.ReadOnly
			})
	}
	heads, workers := clusterPods(t, ns, "k8s")
	for _, p := range append(heads, workers...) {
		if !k8sEnv(&p.Spec.Containers[rayv1.RayContainerIndex]) {
			t.Errorf("pod %s: Ray container env %v mounts %v", p.Name, p.Spec.Containers[0].Env, p.Spec.Containers[0].VolumeMounts)
		}
		if !slices.ContainsFunc(p.Spec.Volumes, func(v corev1.Volume) bool {
			return v.Name == "ray-token" && v.Projected != nil && len(v.Projected.Sources) == 1 &&
				v.Projected.Sources[0].ServiceAccountToken != nil && v.Projected.Sources[0].ServiceAccountToken.Path == "token"
		}) {
			t.Errorf("pod %s: no projected ServiceAccount token volume ray-token: %v", p.Name, p.Spec.Volumes)
		}
	}
	for _, p := range workers {
		if c := fixture.FindContainer(p.Spec.InitContainers, kit.InitContainerName); c == nil || !k8sEnv(c) {
			t.Errorf("pod %s: wait-gcs-ready lacks the Kubernetes token auth env or mount", p.Name)
		}
	}
	// No Secret: Kubernetes issues the tokens.
	secrets, err := kc.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{LabelSelector: rayv1.RayClusterLabelKey + "=k8s"})
	if err != nil || len(secrets.Items) != 0 {
		t.Errorf("Secrets of the cluster: %d (%v), want none", len(secrets.Items), err)
	}
	if _, err := kc.CoreV1().Secrets(ns).Get(ctx, "k8s", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("Secret k8s: %v, want NotFound", err)
	}

	// Who may call the dashboard: an identity with ray:write on this
	// cluster, not one without.
	for _, name := range []string{"caller", "stranger"} {
		if _, err := kc.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := kc.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "ray-writer"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"ray.io"}, Resources: []string{"rayclusters"}, ResourceNames: []string{"k8s"}, Verbs: []string{"ray:write"}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := kc.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "caller"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "ray-writer"},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "caller", Namespace: ns}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tokens := map[string]string{}
	for _, name := range []string{"caller", "stranger"} {
		tok, err := sb.ServiceAccountToken(ctx, ns, name, 10*time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		tokens[name] = tok
	}
	rc := getRC(t, ns, "k8s")
	listAs := func(who string) error {
		res, err := raydash.New(raydash.Options{AddressBook: sim, KubernetesToken: func(context.Context, *rayv1.RayCluster) (string, error) {
			return tokens[who], nil
		}})
		if err != nil {
			t.Fatal(err)
		}
		c, err := res.ClientFor(ctx, rc)
		if err != nil {
			return err
		}
		_, err = c.ListJobs(ctx)
		return err
	}
	eventually(t, 60*time.Second, "the dashboard answers the caller with ray:write", func() (bool, string) {
		err := listAs("caller")
		return err == nil, fmt.Sprint(err)
	})
	var he *dashboard.HTTPError
	if err := listAs("stranger"); !errors.As(err, &he) || he.StatusCode != http.StatusForbidden {
		t.Errorf("a ServiceAccount without ray:write: %v, want 403", err)
	}
	url, _ := sim.DashboardURL(ns, "k8s")
	for what, hdr := range map[string]string{"no token": "", "a Ray token that is no Kubernetes token": "Bearer not-a-kubernetes-token"} {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"/api/jobs/", nil)
		if hdr != "" {
			req.Header.Set("x-ray-authorization", hdr)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s: %d, want 401", what, resp.StatusCode)
		}
	}

	// mode disabled with enableK8sTokenAuth: refused by name, nothing made.
	const field = "spec.authOptions.enableK8sTokenAuth"
	eventually(t, 30*time.Second, "a ReplicaFailure condition naming "+field, func() (bool, string) {
		got := getRC(t, ns, "off")
		c := meta.FindStatusCondition(got.Status.Conditions, string(rayv1.RayClusterReplicaFailure))
		return c != nil && c.Status == metav1.ConditionTrue && c.Reason == raycluster.ReasonValidationFailed && strings.Contains(c.Message, field),
			fmt.Sprintf("%+v", got.Status.Conditions)
	})
	waitEvent(t, ns, "off", raycluster.ReasonInvalidSpec, field)
	if h, w := clusterPods(t, ns, "off"); len(h)+len(w) != 0 {
		t.Errorf("%d pods for a refused cluster", len(h)+len(w))
	}
}
