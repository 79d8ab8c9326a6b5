package main

import (
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/raydar/raydar/kube"
	"github.com/raydar/raydar/kube/raydash/addrbook"
)

// The fleet demo's kubeconfig names both sandboxes, each still reaching
// its own simulated heads (the address book on its cluster entry), as two
// files merged by KUBECONFIG=A:B would.
func TestMergeKubeconfigsKeepsEachSandboxsAddressBook(t *testing.T) {
	dir := t.TempDir()
	var files []string
	for i, name := range fleetDemoContexts {
		kc := clientcmdapi.NewConfig()
		kc.Clusters[name] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:" + []string{"6443", "7443"}[i]}
		kc.AuthInfos[name+"-admin"] = &clientcmdapi.AuthInfo{Token: "t"}
		kc.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name + "-admin", Namespace: "raydar-demo"}
		kc.CurrentContext = name
		p := filepath.Join(dir, name+".kubeconfig")
		if err := clientcmd.WriteToFile(*kc, p); err != nil {
			t.Fatal(err)
		}
		if err := addrbook.Advertise(p, filepath.Join(dir, name+"-heads.json")); err != nil {
			t.Fatal(err)
		}
		files = append(files, p)
	}
	merged := filepath.Join(dir, "kubeconfig")
	if err := kube.MergeKubeconfigs(merged, files); err != nil {
		t.Fatal(err)
	}
	kc, err := clientcmd.LoadFromFile(merged)
	if err != nil {
		t.Fatal(err)
	}
	if kc.CurrentContext != fleetDemoContexts[0] {
		t.Errorf("current context %q, want the first sandbox's %q", kc.CurrentContext, fleetDemoContexts[0])
	}
	for _, name := range fleetDemoContexts {
		book, ok, err := addrbook.FromKubeconfig(kc, name)
		if err != nil || !ok || book != filepath.Join(dir, name+"-heads.json") {
			t.Errorf("context %s: address book %q, %v, %v; want its own", name, book, ok, err)
		}
	}
	targets, err := (&kube.Flags{Kubeconfig: merged, Context: strings.Join(fleetDemoContexts[:], ",")}).ResolveAll()
	if err != nil || len(targets) != 2 || targets[0].Server == targets[1].Server {
		t.Fatalf("ResolveAll over the merged kubeconfig = %v, %v; want two contexts on two servers", targets, err)
	}
}

func TestDemoFleetRefusesHeadless(t *testing.T) {
	r := raydar(t, "", "demo", "--fleet", "--headless")
	if r.err == nil || !strings.Contains(r.err.Error(), "--fleet and --headless") {
		t.Fatalf("demo --fleet --headless = %v, want the refusal naming both flags", r.err)
	}
}
