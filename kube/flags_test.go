package kube

import (
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// writeKubeconfig writes a kubeconfig with the named contexts, each on its
// own server, current the first.
func writeKubeconfig(t *testing.T, names ...string) string {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	for i, n := range names {
		kc.Clusters[n] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:" + string(rune('1'+i)) + "443"}
		kc.AuthInfos[n] = &clientcmdapi.AuthInfo{Token: "t"}
		kc.Contexts[n] = &clientcmdapi.Context{Cluster: n, AuthInfo: n, Namespace: "ns-" + n}
	}
	kc.CurrentContext = names[0]
	p := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, p); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestContextNames(t *testing.T) {
	kc := writeKubeconfig(t, "dev", "prod-eu", "prod-us")
	for _, tc := range []struct {
		name    string
		flags   Flags
		want    []string
		wantErr string
	}{
		{name: "no flag: the current context", flags: Flags{}, want: []string{""}},
		{name: "one context", flags: Flags{Context: "prod-eu"}, want: []string{"prod-eu"}},
		{name: "a list, in its order", flags: Flags{Context: "prod-us, dev"}, want: []string{"prod-us", "dev"}},
		{name: "all contexts, by name", flags: Flags{AllContexts: true}, want: []string{"dev", "prod-eu", "prod-us"}},
		{name: "unknown name", flags: Flags{Context: "dev,staging"}, wantErr: `no context "staging" (it has: dev, prod-eu, prod-us)`},
		{name: "empty entry", flags: Flags{Context: "dev,"}, wantErr: "an empty context name"},
		{name: "repeated", flags: Flags{Context: "dev,dev"}, wantErr: "context dev is named twice"},
		{name: "both flags", flags: Flags{Context: "dev", AllContexts: true}, wantErr: "--all-contexts and --context"},
		{name: "all contexts the config file lists", flags: Flags{AllContexts: true, ContextPatterns: []string{"prod-*"}}, want: []string{"prod-eu", "prod-us"}},
		{name: "all contexts, the config file's matching none", flags: Flags{AllContexts: true, ContextPatterns: []string{"staging"}, ContextPatternsFrom: "/cfg/config.yaml"},
			wantErr: "no context of the kubeconfig (dev, prod-eu, prod-us) matches the contexts of /cfg/config.yaml (staging)"},
		{name: "a --context list is not narrowed", flags: Flags{Context: "dev", ContextPatterns: []string{"prod-*"}}, want: []string{"dev"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := tc.flags
			f.Kubeconfig = kc
			got, err := f.ContextNames()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("ContextNames() = %v, %v; want an error containing %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil || !slices.Equal(got, tc.want) {
				t.Fatalf("ContextNames() = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

func TestResolveAllKeepsEachContextsServerAndNamespace(t *testing.T) {
	kc := writeKubeconfig(t, "dev", "prod-eu")
	ts, err := (&Flags{Kubeconfig: kc, Context: "prod-eu,dev"}).ResolveAll()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tg := range ts {
		got = append(got, tg.ContextName+" "+tg.Server+" "+tg.Namespace)
	}
	want := []string{"prod-eu https://127.0.0.1:2443 ns-prod-eu", "dev https://127.0.0.1:1443 ns-dev"}
	if !slices.Equal(got, want) {
		t.Fatalf("ResolveAll() = %q, want %q", got, want)
	}
	// -n applies to every context.
	ts, err = (&Flags{Kubeconfig: kc, AllContexts: true, Namespace: "ray"}).ResolveAll()
	if err != nil || len(ts) != 2 || ts[0].Namespace != "ray" || ts[1].Namespace != "ray" {
		t.Fatalf("ResolveAll(-n ray --all-contexts) = %v, %v; want both in ray", ts, err)
	}
}

func TestResolveRefusesSeveralContexts(t *testing.T) {
	kc := writeKubeconfig(t, "dev", "prod-eu")
	for _, f := range []Flags{{Context: "dev,prod-eu"}, {AllContexts: true}} {
		f.Kubeconfig = kc
		if _, err := f.Resolve(); !errors.Is(err, ErrSeveralContexts) {
			t.Errorf("Resolve(%+v) = %v, want ErrSeveralContexts", f, err)
		}
	}
	t.Setenv("KUBECONFIG", kc)
	tg, err := (&Flags{Context: "prod-eu"}).Resolve()
	if err != nil || tg.ContextName != "prod-eu" {
		t.Fatalf("Resolve(--context prod-eu) = %v, %v", tg, err)
	}
}

// TestDisableCompression: --disable-compression, or a kubeconfig cluster's
// disable-compression: true, stops the client asking for gzip (the API
// server then sends the lists uncompressed); the flag cannot turn a
// kubeconfig's true off, as with kubectl.
func TestDisableCompression(t *testing.T) {
	asked := make(chan string, 1)
	// TLS, as every API server: for a plain-HTTP server client-go uses
	// http.DefaultTransport, which asks for gzip whatever the config says.
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked <- r.Header.Get("Accept-Encoding")
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"major":"1","minor":"37","gitVersion":"v1.37.2"}`))
	}))
	defer srv.Close()
	write := func(disable bool) string {
		kc := clientcmdapi.NewConfig()
		ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
		kc.Clusters["c"] = &clientcmdapi.Cluster{Server: srv.URL, CertificateAuthorityData: ca, DisableCompression: disable}
		kc.AuthInfos["c"] = &clientcmdapi.AuthInfo{Token: "t"}
		kc.Contexts["c"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "c"}
		kc.CurrentContext = "c"
		p := filepath.Join(t.TempDir(), "kubeconfig")
		if err := clientcmd.WriteToFile(*kc, p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name       string
		kubeconfig bool
		flag       bool
		want       string
	}{
		{name: "neither: gzip asked for", want: "gzip"},
		{name: "--disable-compression", flag: true, want: ""},
		{name: "the kubeconfig's disable-compression", kubeconfig: true, want: ""},
		{name: "the kubeconfig's, the flag false", kubeconfig: true, flag: false, want: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := pflag.NewFlagSet("raydar", pflag.ContinueOnError)
			var f Flags
			f.AddTo(fs)
			args := []string{"--kubeconfig", write(tc.kubeconfig)}
			if tc.flag {
				args = append(args, "--disable-compression")
			}
			if err := fs.Parse(args); err != nil {
				t.Fatal(err)
			}
			tg, err := f.Resolve()
			if err != nil {
				t.Fatal(err)
			}
			dc, err := discovery.NewDiscoveryClientForConfig(tg.Config)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := dc.ServerVersion(); err != nil {
				t.Fatal(err)
			}
			if got := <-asked; got != tc.want {
				t.Fatalf("Accept-Encoding = %q, want %q", got, tc.want)
			}
		})
	}
}
