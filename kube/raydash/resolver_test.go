package raydash

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"

	"github.com/raydar/raydar/rayapi/dashboard"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

type book map[string]string

func (b book) DashboardURL(ns, name string) (string, bool) {
	u, ok := b[ns+"/"+name]
	return u, ok
}

func env(kv map[string]string) func(string) string {
	return func(k string) string { return kv[k] }
}

func cluster(ns, name string) *rayv1.RayCluster {
	rc := &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	rc.Status.Head.ServiceName = name + "-head-svc"
	return rc
}

func tokenCluster(ns, name string, secret *string) *rayv1.RayCluster {
	rc := cluster(ns, name)
	rc.Spec.AuthOptions = &rayv1.AuthOptions{Mode: rayv1.AuthModeToken, SecretName: secret}
	return rc
}

func strPtr(s string) *string { return &s }

func TestModeSelection(t *testing.T) {
	cfg := &rest.Config{Host: "https://127.0.0.1:6443"}
	for _, tc := range []struct {
		name string
		opts Options
		want Mode
		err  string
	}{
		{name: "address book wins", opts: Options{AddressBook: book{}, Config: cfg, Getenv: env(map[string]string{"KUBERNETES_SERVICE_HOST": "10.0.0.1"})}, want: ModeAddressBook},
		{name: "in a pod: service DNS", opts: Options{Config: cfg, Getenv: env(map[string]string{"KUBERNETES_SERVICE_HOST": "10.0.0.1"})}, want: ModeServiceDNS},
		{name: "outside: service proxy", opts: Options{Config: cfg, Getenv: env(nil)}, want: ModeServiceProxy},
		{name: "outside without a config", opts: Options{Getenv: env(nil)}, err: "needs a rest.Config"},
		{name: "forced address book without one", opts: Options{Mode: ModeAddressBook}, err: "needs an AddressBook"},
		{name: "forced DNS outside", opts: Options{Mode: ModeServiceDNS, Getenv: env(nil)}, want: ModeServiceDNS},
		{name: "unknown", opts: Options{Mode: "carrier-pigeon"}, err: "unknown mode"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := New(tc.opts)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("New: err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.Mode() != tc.want {
				t.Fatalf("mode %q, want %q", r.Mode(), tc.want)
			}
		})
	}
}

func TestAddressBook(t *testing.T) {
	r, err := New(Options{AddressBook: book{"ns/c1": "http://127.0.0.1:4242"}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := r.ClientFor(context.Background(), cluster("ns", "c1"))
	if err != nil {
		t.Fatal(err)
	}
	if c.BaseURL() != "http://127.0.0.1:4242" {
		t.Fatalf("base %q", c.BaseURL())
	}
	_, err = r.ClientFor(context.Background(), cluster("ns", "c2"))
	if !errors.Is(err, ErrNoDashboard) || !errors.Is(err, dashboard.ErrUnavailable) {
		t.Fatalf("unknown cluster: %v, want ErrNoDashboard wrapping ErrUnavailable", err)
	}
}

func TestServiceDNS(t *testing.T) {
	r, err := New(Options{Getenv: env(map[string]string{"KUBERNETES_SERVICE_HOST": "10.0.0.1", "CLUSTER_DOMAIN": "corp.example"})})
	if err != nil {
		t.Fatal(err)
	}
	rc := cluster("team-a", "rc")
	c, err := r.ClientFor(context.Background(), rc)
	if err != nil {
		t.Fatal(err)
	}
	if want := "http://rc-head-svc.team-a.svc.corp.example:8265"; c.BaseURL() != want {
		t.Fatalf("base %q, want %q", c.BaseURL(), want)
	}
	if c.Timeout() != dashboard.DefaultTimeout {
		t.Fatalf("timeout %s", c.Timeout())
	}

	// A custom dashboard port reported by the cluster.
	rc.Status.Endpoints = map[string]string{"dashboard": "9000"}
	c, _ = r.ClientFor(context.Background(), rc)
	if want := "http://rc-head-svc.team-a.svc.corp.example:9000"; c.BaseURL() != want {
		t.Fatalf("base %q, want %q", c.BaseURL(), want)
	}

	// No service name known yet.
	rc.Status.Head.ServiceName = ""
	if _, err := r.ClientFor(context.Background(), rc); !errors.Is(err, ErrNoDashboard) {
		t.Fatalf("no service: %v", err)
	}
	// The naming rule fills in.
	r.opts.HeadServiceName = func(c *rayv1.RayCluster) string { return c.Name + "-svc" }
	c, err = r.ClientFor(context.Background(), rc)
	if err != nil || !strings.HasPrefix(c.BaseURL(), "http://rc-svc.team-a.") {
		t.Fatalf("naming rule: %v %v", c, err)
	}
}

func TestServiceProxyCarriesCredentialsAndToken(t *testing.T) {
	var gotPath, gotAuth, gotRay atomic.Value
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotPath.Store(r.URL.Path)
		gotAuth.Store(r.Header.Get("Authorization"))
		gotRay.Store(r.Header.Get("x-ray-authorization"))
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"status":"RUNNING","submission_id":"j1","entrypoint":"x"}`))
	}))
	defer api.Close()
	cs := fake.NewClientset(&corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "rc"},
		Data:       map[string][]byte{AuthTokenKey: []byte("s3cret")},
	})
	r, err := New(Options{Config: &rest.Config{Host: api.URL, BearerToken: "apiserver-token"}, Getenv: env(nil),
		Secrets: SecretsFromClientset(cs)})
	if err != nil {
		t.Fatal(err)
	}
	c, err := r.ClientFor(context.Background(), tokenCluster("ns", "rc", nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.Timeout() != dashboard.DefaultProxyTimeout {
		t.Fatalf("timeout %s", c.Timeout())
	}
	info, err := c.GetJobInfo(context.Background(), "j1")
	if err != nil {
		t.Fatal(err)
	}
	if info.Status != dashboard.JobRunning {
		t.Fatalf("info %+v", info)
	}
	if p := gotPath.Load(); p != "/api/v1/namespaces/ns/services/rc-head-svc:dashboard/proxy/api/jobs/j1" {
		t.Fatalf("path %q", p)
	}
	if a := gotAuth.Load(); a != "Bearer apiserver-token" {
		t.Fatalf("API server credentials %q", a)
	}
	if a := gotRay.Load(); a != "Bearer s3cret" {
		t.Fatalf("ray token %q", a)
	}
}

func TestTokenFromSecret(t *testing.T) {
	ctx := context.Background()
	cs := fake.NewClientset(
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "rc"}, Data: map[string][]byte{AuthTokenKey: []byte("generated")}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "mine"}, Data: map[string][]byte{AuthTokenKey: []byte("own")}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "empty"}},
	)
	var gets atomic.Int32
	secrets := countingSecrets{SecretsFromClientset(cs), &gets}
	now := time.Unix(1000, 0)
	r, err := New(Options{AddressBook: book{"ns/rc": "http://127.0.0.1:1"}, Secrets: secrets, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name  string
		rc    *rayv1.RayCluster
		token string
		err   string
	}{
		{name: "no authOptions: no token", rc: cluster("ns", "rc")},
		{name: "disabled", rc: func() *rayv1.RayCluster {
			rc := cluster("ns", "rc")
			rc.Spec.AuthOptions = &rayv1.AuthOptions{Mode: rayv1.AuthModeDisabled}
			return rc
		}()},
		{name: "token, generated Secret named after the cluster", rc: tokenCluster("ns", "rc", nil), token: "generated"},
		{name: "authOptions without a mode: no token (KubeRay turns auth on only for mode token)", rc: func() *rayv1.RayCluster {
			rc := cluster("ns", "rc")
			rc.Spec.AuthOptions = &rayv1.AuthOptions{}
			return rc
		}()},
		{name: "token, own Secret", rc: tokenCluster("ns", "rc", strPtr("mine")), token: "own"},
		{name: "Secret without the key", rc: tokenCluster("ns", "rc", strPtr("empty")), err: "has no auth_token key"},
		{name: "missing Secret", rc: tokenCluster("ns", "rc", strPtr("nope")), err: "from Secret nope"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := r.token(ctx, tc.rc)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.token {
				t.Fatalf("token %q, %v; want %q", got, err, tc.token)
			}
			if _, err := r.ClientFor(ctx, tc.rc); err != nil {
				t.Fatal(err)
			}
		})
	}

	// Cached for TokenTTL, then read again; ForgetToken drops it.
	gets.Store(0)
	rc := tokenCluster("ns", "rc", nil)
	r.ForgetToken(rc)
	for range 3 {
		if _, err := r.token(ctx, rc); err != nil {
			t.Fatal(err)
		}
	}
	if n := gets.Load(); n != 1 {
		t.Fatalf("%d Secret reads within the TTL, want 1", n)
	}
	now = now.Add(DefaultTokenTTL + time.Second)
	r.token(ctx, rc)
	if n := gets.Load(); n != 2 {
		t.Fatalf("%d Secret reads after the TTL, want 2", n)
	}
	r.ForgetToken(rc)
	r.token(ctx, rc)
	if n := gets.Load(); n != 3 {
		t.Fatalf("%d Secret reads after ForgetToken, want 3", n)
	}
}

type countingSecrets struct {
	SecretReader
	n *atomic.Int32
}

func (c countingSecrets) GetSecret(ctx context.Context, ns, name string) (*corev1.Secret, error) {
	c.n.Add(1)
	return c.SecretReader.GetSecret(ctx, ns, name)
}

func TestHelpers(t *testing.T) {
	if got := ServiceDNSAddress("s", "n", "", 8265); got != "s.n.svc.cluster.local:8265" {
		t.Fatal(got)
	}
	rc := cluster("n", "c")
	if DashboardPort(rc) != 8265 {
		t.Fatal("default port")
	}
	rc.Status.Endpoints = map[string]string{"dashboard": "bogus"}
	if DashboardPort(rc) != 8265 {
		t.Fatal("bogus port")
	}
	if AuthSecretName(cluster("n", "c")) != "" {
		t.Fatal("no auth")
	}
	if !InCluster(env(map[string]string{"KUBERNETES_SERVICE_HOST": "x"})) || InCluster(env(nil)) {
		t.Fatal("InCluster")
	}
}

func TestAuthSecretName(t *testing.T) {
	long := strings.Repeat("a", 40) + "-0123456789ab" // 53 characters
	for _, tc := range []struct {
		name string
		mode rayv1.AuthMode
		own  *string
		rc   string
		want string
	}{
		{name: "token: named after the cluster", mode: rayv1.AuthModeToken, rc: "rc", want: "rc"},
		{name: "token, own Secret", mode: rayv1.AuthModeToken, own: strPtr("mine"), rc: "rc", want: "mine"},
		{name: "token, empty secretName: generated", mode: rayv1.AuthModeToken, own: strPtr(""), rc: "rc", want: "rc"},
		{name: "disabled", mode: rayv1.AuthModeDisabled, rc: "rc"},
		{name: "mode unset", rc: "rc"},
		{name: "long name keeps the last 50 characters", mode: rayv1.AuthModeToken, rc: long, want: long[3:]},
		{name: "long name whose tail starts with a digit: KubeRay replaces it by r", mode: rayv1.AuthModeToken,
			rc: "ab9" + strings.Repeat("c", 49), want: "r" + strings.Repeat("c", 49)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc := cluster("ns", tc.rc)
			if tc.mode != "" || tc.own != nil {
				rc.Spec.AuthOptions = &rayv1.AuthOptions{Mode: tc.mode, SecretName: tc.own}
			}
			if got := AuthSecretName(rc); got != tc.want {
				t.Fatalf("AuthSecretName = %q, want %q", got, tc.want)
			}
		})
	}
}
