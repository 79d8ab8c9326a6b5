package certsim

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/raydar/raydar/kube/sandbox"
	"github.com/raydar/raydar/kube/sandbox/sandboxtest"
)

// TestSecretDeletedIsReissued: on an API server with cert-manager's CRDs,
// a Certificate of a selfSigned Issuer gets its Secret and Ready at
// revision 1; when the Secret is deleted (nothing else changes), certsim
// writes a new one, with another certificate, and bumps the revision, as
// cert-manager does.
func TestSecretDeletedIsReissued(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: needs the sandbox control plane (skipped with -short)")
	}
	sandboxtest.Lock(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	sb, err := sandbox.Start(ctx, sandbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := sb.Stop(); err != nil {
			t.Error(err)
		}
	}()
	crds, err := CRDObjects(sb.ToolsDir)
	if err != nil {
		t.Fatal(err)
	}
	if err := sb.InstallCRDs(ctx, crds...); err != nil {
		t.Fatal(err)
	}
	const ns = "default"
	sim, err := Start(ctx, Options{Config: sb.Config, Namespace: ns, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	cs := kubernetes.NewForConfigOrDie(sb.Config)
	dyn := dynamic.NewForConfigOrDie(sb.Config)
	issuer := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "cert-manager.io/v1", "kind": "Issuer",
		"metadata": map[string]any{"name": "self"}, "spec": map[string]any{"selfSigned": map[string]any{}}}}
	if _, err := dyn.Resource(issuers).Namespace(ns).Create(ctx, issuer, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cert := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "cert-manager.io/v1", "kind": "Certificate",
		"metadata": map[string]any{"name": "web"}, "spec": map[string]any{"secretName": "web-tls", "commonName": "web",
			"dnsNames": []any{"web.default.svc"}, "issuerRef": map[string]any{"name": "self"}}}}
	if _, err := dyn.Resource(certificates).Namespace(ns).Create(ctx, cert, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// issuedAt waits for the Secret and for Ready at revision rev, and
	// returns the Secret's certificate.
	issuedAt := func(rev int64) []byte {
		t.Helper()
		deadline := time.Now().Add(time.Minute)
		for {
			var last string
			sec, err := cs.CoreV1().Secrets(ns).Get(ctx, "web-tls", metav1.GetOptions{})
			u, uerr := dyn.Resource(certificates).Namespace(ns).Get(ctx, "web", metav1.GetOptions{})
			switch {
			case err != nil || uerr != nil:
				last = fmt.Sprintf("Secret: %v, Certificate: %v", err, uerr)
			default:
				got, _, _ := unstructured.NestedInt64(u.Object, "status", "revision")
				if got == rev && readyAt(u, u.GetGeneration()) && len(sec.Data[corev1.TLSCertKey]) > 0 {
					return sec.Data[corev1.TLSCertKey]
				}
				last = fmt.Sprintf("revision %d, status %v, Secret keys %d", got, u.Object["status"], len(sec.Data))
			}
			if time.Now().After(deadline) {
				t.Fatalf("no Secret issued at revision %d within a minute; last: %s", rev, last)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	first := issuedAt(1)
	if err := cs.CoreV1().Secrets(ns).Delete(ctx, "web-tls", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	second := issuedAt(2)
	if bytes.Equal(first, second) {
		t.Error("the Secret written after the deletion holds the same certificate: not reissued")
	}
	if got := sim.Issued(); got != 2 {
		t.Errorf("Issued() = %d, want 2 (the first Secret and its reissue)", got)
	}
}
