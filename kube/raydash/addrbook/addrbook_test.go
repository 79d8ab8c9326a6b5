package addrbook

import (
	"os"
	"path/filepath"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

func TestBookFollowsTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	b := Open(path)
	if _, ok := b.DashboardURL("ns", "a"); ok {
		t.Fatal("a missing book has an address")
	}
	if err := b.Err(); err != nil {
		t.Fatalf("a missing book is an empty one, got %v", err)
	}

	if err := Write(path, []Entry{{Namespace: "ns", Cluster: "a", Dashboard: "http://127.0.0.1:1", ServeProxy: "http://127.0.0.1:2"}}); err != nil {
		t.Fatal(err)
	}
	if u, ok := b.DashboardURL("ns", "a"); !ok || u != "http://127.0.0.1:1" {
		t.Fatalf("dashboard of ns/a = %q, %v", u, ok)
	}
	if u, ok := b.ServeProxyURL("ns", "a"); !ok || u != "http://127.0.0.1:2" {
		t.Fatalf("serve proxy of ns/a = %q, %v", u, ok)
	}
	if _, ok := b.DashboardURL("other", "a"); ok {
		t.Fatal("the namespace is part of the key")
	}

	// A head replaced (new port) and another gone: the next lookup sees it.
	if err := Write(path, []Entry{{Namespace: "ns", Cluster: "a", Dashboard: "http://127.0.0.1:3"}}); err != nil {
		t.Fatal(err)
	}
	if u, _ := b.DashboardURL("ns", "a"); u != "http://127.0.0.1:3" {
		t.Fatalf("after a rewrite: %q", u)
	}
	if _, ok := b.ServeProxyURL("ns", "a"); ok {
		t.Fatal("an entry without a proxy has no proxy address")
	}
	if err := Write(path, nil); err != nil {
		t.Fatal(err)
	}
	if _, ok := b.DashboardURL("ns", "a"); ok {
		t.Fatal("an emptied book still has the head")
	}
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".*"))
	if len(left) != 0 {
		t.Fatalf("temporary files left: %v", left)
	}

	if err := os.WriteFile(path, []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, ok := b.DashboardURL("ns", "a"); ok || b.Err() == nil {
		t.Fatalf("a corrupt book: ok=%v err=%v; want no address and an error", ok, b.Err())
	}
}

func TestAdvertiseInKubeconfig(t *testing.T) {
	dir := t.TempDir()
	kcPath := filepath.Join(dir, "kubeconfig")
	kc := clientcmdapi.NewConfig()
	kc.Clusters["raydar-sandbox"] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:6443"}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{Token: "x"}
	kc.Contexts["raydar-sandbox"] = &clientcmdapi.Context{Cluster: "raydar-sandbox", AuthInfo: "admin"}
	kc.CurrentContext = "raydar-sandbox"
	if err := clientcmd.WriteToFile(*kc, kcPath); err != nil {
		t.Fatal(err)
	}
	loaded, _ := clientcmd.LoadFromFile(kcPath)
	if _, ok, err := FromKubeconfig(loaded, ""); ok || err != nil {
		t.Fatalf("before Advertise: ok=%v err=%v", ok, err)
	}
	book := filepath.Join(dir, FileName)
	if err := Advertise(kcPath, book); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(kcPath)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		t.Fatalf("kubeconfig mode %v: it holds credentials", fi.Mode())
	}

	// Read back the way raydar reads a KUBECONFIG: merged with another file.
	other := filepath.Join(dir, "other")
	okc := clientcmdapi.NewConfig()
	okc.Clusters["prod"] = &clientcmdapi.Cluster{Server: "https://prod:6443"}
	okc.AuthInfos["prod"] = &clientcmdapi.AuthInfo{Token: "y"}
	okc.Contexts["prod"] = &clientcmdapi.Context{Cluster: "prod", AuthInfo: "prod"}
	if err := clientcmd.WriteToFile(*okc, other); err != nil {
		t.Fatal(err)
	}
	rules := &clientcmd.ClientConfigLoadingRules{Precedence: []string{kcPath, other}}
	merged, err := rules.Load()
	if err != nil {
		t.Fatal(err)
	}
	if got, ok, err := FromKubeconfig(merged, ""); err != nil || !ok || got != book {
		t.Fatalf("current context: %q %v %v; want %q", got, ok, err, book)
	}
	if _, ok, err := FromKubeconfig(merged, "prod"); ok || err != nil {
		t.Fatalf("prod is no sandbox: ok=%v err=%v", ok, err)
	}
	if _, ok, _ := FromKubeconfig(merged, "nope"); ok {
		t.Fatal("an unknown context is no sandbox")
	}
}
