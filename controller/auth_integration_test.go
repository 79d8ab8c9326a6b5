package controller

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/raydar/raydar/controller/internal/fixture"
	"github.com/raydar/raydar/controller/kit"
	"github.com/raydar/raydar/controller/raycluster"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
