package raydash

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

func k8sAuthCluster(ns, name string) *rayv1.RayCluster {
	rc := tokenCluster(ns, name, nil)
	on := true
	rc.Spec.AuthOptions.EnableK8sTokenAuth = &on
	return rc
}

// A cluster with Kubernetes token auth has no Secret: the dashboard is sent
// the caller's own Kubernetes token (through the API server's proxy, in the
// x-ray-authorization header, which the proxy passes on, while Authorization
// authenticates to the API server).
func TestK8sTokenAuthSendsTheCallersKubernetesToken(t *testing.T) {
	var gotAuth, gotRay atomic.Value
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotAuth.Store(r.Header.Get("Authorization"))
		gotRay.Store(r.Header.Get("x-ray-authorization"))
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"status":"RUNNING","submission_id":"j1","entrypoint":"x"}`))
	}))
	defer api.Close()
	var reads atomic.Int32
	secrets := countingSecrets{SecretsFromClientset(fake.NewClientset()), &reads}
	r, err := New(Options{Config: &rest.Config{Host: api.URL, BearerToken: "sa-token"}, Getenv: env(nil), Secrets: secrets})
	if err != nil {
		t.Fatal(err)
	}
	rc := k8sAuthCluster("ns", "rc")
	if n := AuthSecretName(rc); n != "" {
		t.Fatalf("AuthSecretName %q: Kubernetes token auth has no Secret", n)
	}
	c, err := r.ClientFor(context.Background(), rc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetJobInfo(context.Background(), "j1"); err != nil {
		t.Fatal(err)
	}
	if a, x := gotAuth.Load(), gotRay.Load(); a != "Bearer sa-token" || x != "Bearer sa-token" {
		t.Fatalf("Authorization %q, x-ray-authorization %q; want the caller's Kubernetes token in both", a, x)
	}
	if reads.Load() != 0 {
		t.Fatal("a Secret was read for a cluster with Kubernetes token auth")
	}
}

func TestK8sTokenAuthTokenSources(t *testing.T) {
	ctx := context.Background()
	rc := k8sAuthCluster("ns", "rc")
	bk := book{"ns/rc": "http://127.0.0.1:1"}

	// A token file (in a pod: the projected ServiceAccount token) is read
	// again on each call: the kubelet rotates it.
	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, []byte("first\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := New(Options{AddressBook: bk, Config: &rest.Config{BearerTokenFile: file}})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := r.token(ctx, rc); err != nil || got != "first" {
		t.Fatalf("token %q, %v", got, err)
	}
	os.WriteFile(file, []byte("rotated"), 0o600)
	if got, err := r.token(ctx, rc); err != nil || got != "rotated" {
		t.Fatalf("token after rotation %q, %v", got, err)
	}

	// Client certificates carry no token: refused with the reason, not sent
	// without one.
	r, err = New(Options{AddressBook: bk, Config: &rest.Config{TLSClientConfig: rest.TLSClientConfig{CertData: []byte("x")}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.ClientFor(ctx, rc); !errors.Is(err, ErrNoKubernetesToken) {
		t.Fatalf("err %v, want ErrNoKubernetesToken", err)
	}

	// A caller's own source wins (the sandbox hands out ServiceAccount tokens).
	r, err = New(Options{AddressBook: bk, KubernetesToken: func(_ context.Context, c *rayv1.RayCluster) (string, error) {
		return "for-" + c.Name, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := r.token(ctx, rc); err != nil || got != "for-rc" {
		t.Fatalf("token %q, %v", got, err)
	}
}
