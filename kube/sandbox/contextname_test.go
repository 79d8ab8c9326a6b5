package sandbox

import (
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

func TestContextNameFor(t *testing.T) {
	for dir, want := range map[string]string{
		"":                 "raydar-sandbox",
		"/tmp/sb-a":        "raydar-sandbox-sb-a",
		"/tmp/sb-b/":       "raydar-sandbox-sb-b",
		"relative/staging": "raydar-sandbox-staging",
	} {
		if got := ContextNameFor(dir); got != want {
			t.Errorf("ContextNameFor(%q) = %q, want %q", dir, got, want)
		}
	}
}

func TestContextNameChecked(t *testing.T) {
	for _, ok := range []string{"raydar-sandbox", "dev_1", "arn:aws:eks:us-west-2:1:cluster/x", "me@kind.local"} {
		if err := CheckContextName(ok); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
	for bad, says := range map[string]string{
		"":          "empty",
		"a,b":       `","`,
		"my box":    `" "`,
		"tab\there": `"\t"`,
	} {
		err := CheckContextName(bad)
		if err == nil || !strings.Contains(err.Error(), says) {
			t.Errorf("%q: %v, want an error saying %s", bad, err, says)
		}
	}
	if _, err := (Options{ToolsDir: "/x", ContextName: "a,b"}).withDefaults(); err == nil || !strings.Contains(err.Error(), `"a,b"`) {
		t.Errorf("Options with context name a,b: %v, want refused naming it", err)
	}
	o, err := Options{ToolsDir: "/x"}.withDefaults()
	if err != nil || o.ContextName != DefaultContextName {
		t.Errorf("default context name %q, %v", o.ContextName, err)
	}
}

// TestMergedKubeconfigsKeepBothSandboxes: two sandboxes' admin kubeconfigs
// with distinct names, merged as KUBECONFIG=a:b, give a context per sandbox,
// each on its own server with its own credentials; with one name the second
// would vanish (kubectl keeps the first file's entry of a name).
func TestMergedKubeconfigsKeepBothSandboxes(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	if err := writeKubeconfig(a, "raydar-sandbox-a", &rest.Config{Host: "https://127.0.0.1:1001", TLSClientConfig: rest.TLSClientConfig{CertData: []byte("A"), KeyData: []byte("k")}}); err != nil {
		t.Fatal(err)
	}
	if err := writeKubeconfig(b, "raydar-sandbox-b", &rest.Config{Host: "https://127.0.0.1:1002", TLSClientConfig: rest.TLSClientConfig{CertData: []byte("B"), KeyData: []byte("k")}}); err != nil {
		t.Fatal(err)
	}
	merged, err := (&clientcmd.ClientConfigLoadingRules{Precedence: []string{a, b}}).Load()
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]struct{ server, cert string }{
		"raydar-sandbox-a": {"https://127.0.0.1:1001", "A"},
		"raydar-sandbox-b": {"https://127.0.0.1:1002", "B"},
	} {
		cfg, err := clientcmd.NewNonInteractiveClientConfig(*merged, name, &clientcmd.ConfigOverrides{}, nil).ClientConfig()
		if err != nil {
			t.Fatalf("context %s: %v", name, err)
		}
		if cfg.Host != want.server || string(cfg.CertData) != want.cert {
			t.Errorf("context %s: server %s cert %q, want %s %q", name, cfg.Host, cfg.CertData, want.server, want.cert)
		}
	}
}
