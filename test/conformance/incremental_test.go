package conformance

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/raydar/raydar/kube/sandbox/gatewaysim"
)

// incrementalSample is KubeRay's incremental-upgrade RayService sample.
const incrementalSample = "ray-service.incremental-upgrade"

// TestConformanceIncrementalUpgrade runs KubeRay's incremental-upgrade
// sample (upgradeStrategy NewClusterWithIncrementalUpgrade) with the gate
// RayServiceIncrementalUpgrade on in both operators, in namespaces of their
// own (kr-iu00, rd-iu00), with the Gateway API's CRDs installed and the
// sandbox's simulated Gateway controller (kube/sandbox/gatewaysim) serving
// both sides' Gateways. The sample is changed in four fields only, the
// same on both sides: its gatewayClassName names the simulated class (the
// sample's "istio" has no controller here), intervalSeconds is 2 (30 in the
// sample: ten steps of five minutes), rayClusterDeletionDelaySeconds 5,
// and its worker group starts with 2 workers (0 in the sample, whose Serve
// replicas' CPUs then wait for an autoscaler the sandbox does not run).
// It compares everything, Gateways and HTTPRoutes too, once the first
// cluster serves, then changes rayClusterConfig on both sides (a new
// image) and compares again once the whole upgrade settled: the new
// cluster active with 100% and the old one gone. The steps in between move
// every 2 s on both sides at their own pace, so they are compared as
// sequences instead (incremental_steps_test.go): watched from the change
// on, the values the HTTPRoute's weights and each cluster's Serve
// targetCapacity and trafficRoutedPercent went through must be the same,
// in the same order, on both sides.
func TestConformanceIncrementalUpgrade(t *testing.T) {
	if env == nil {
		t.Skip("conformance suite: needs the sandbox and KubeRay's operator (skipped with -short)")
	}
	var corpus []Manifest
	for _, m := range env.corpus {
		if strings.Contains(m.Name, incrementalSample) {
			m.Objects = append([]unstructured.Unstructured(nil), m.Objects...)
			for i := range m.Objects {
				o := m.Objects[i].DeepCopy()
				if o.GetKind() == "RayService" {
					opts := []string{"spec", "upgradeStrategy", "clusterUpgradeOptions"}
					must(t, unstructured.SetNestedField(o.Object, gatewaysim.ClassName, append(opts, "gatewayClassName")...))
					must(t, unstructured.SetNestedField(o.Object, int64(2), append(opts, "intervalSeconds")...))
					must(t, unstructured.SetNestedField(o.Object, int64(5), "spec", "rayClusterDeletionDelaySeconds"))
					groups, _, _ := unstructured.NestedSlice(o.Object, "spec", "rayClusterConfig", "workerGroupSpecs")
					for j := range groups {
						g := groups[j].(map[string]any)
						g["minReplicas"], g["replicas"] = int64(2), int64(2)
					}
					must(t, unstructured.SetNestedSlice(o.Object, groups, "spec", "rayClusterConfig", "workerGroupSpecs"))
				}
				m.Objects[i] = *o
			}
			// Its own name: intended.yaml's entries for the sample are
			// TestConformance's, which has no Gateway API (both sides
			// fail there; raydar refuses by name).
			m.Name += " (Gateway API)"
			corpus = append(corpus, m)
		}
	}
	if len(corpus) == 0 {
		t.Skipf("no %s sample in the corpus (%s=%q)", incrementalSample, manifestsEnv, os.Getenv(manifestsEnv))
	}
	ctx := context.Background()
	crds, err := gatewaysim.CRDs(env.sb.ToolsDir)
	if err != nil {
		t.Fatal(err)
	}
	if err := env.sb.InstallCRDs(ctx, crds...); err != nil {
		t.Fatalf("the Gateway API's CRDs: %v", err)
	}
	gw, err := gatewaysim.Start(ctx, gatewaysim.Options{Config: env.sb.Config})
	if err != nil {
		t.Fatal(err)
	}
	defer gw.Close()
	krNS, rdNS, kr, rd := env.passNamespaces(t, "iu", len(corpus))
	// KubeRay's gates (kubeRayFeatureGates) have RayServiceIncrementalUpgrade on.
	cmd, err := env.startKubeRay(kr)
	if err != nil {
		t.Fatal(err)
	}
	defer stopKubeRay(cmd)
	stop, err := env.startRaydar(rd, true)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	kinds := env.kinds
	env.kinds = append(append([]comparedKind(nil), kinds...),
		comparedKind{schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "gateways"}, "Gateway"},
		comparedKind{schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "httproutes"}, "HTTPRoute"})
	defer func() { env.kinds = kinds }()

	// Before the upgrade intended.yaml alone: intended-incremental.yaml's
	// entries are about the new cluster of the upgrade, and every entry of
	// a test's own file must occur in the passes that read it.
	first := runPass(t, corpus, krNS, rdNS, false)
	t.Log("before the upgrade: " + first)
	if t.Failed() {
		return
	}

	// The upgrade: a new image in rayClusterConfig, on both sides.
	rsGVR := rayServiceGVR
	recorders := map[string]*stepRecorder{}
	patch := []byte(`{"spec":{"rayClusterConfig":{"rayVersion":"2.52.0"}}}`)
	firstActive := map[string]string{}
	for i, m := range corpus {
		for _, o := range m.Objects {
			if o.GetKind() != "RayService" {
				continue
			}
			for _, ns := range []string{krNS(i), rdNS(i)} {
				u, err := env.dyn.Resource(rsGVR).Namespace(ns).Get(ctx, o.GetName(), metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				firstActive[ns], _, _ = unstructured.NestedString(u.Object, "status", "activeServiceStatus", "rayClusterName")
				if firstActive[ns] == "" {
					t.Fatalf("%s/%s: no active cluster before the upgrade: %v", ns, o.GetName(), u.Object["status"])
				}
				recorders[ns] = recordSteps(t, ns, o.GetName())
				defer recorders[ns].Steps("") // stopped on every path
				if _, err := env.dyn.Resource(rsGVR).Namespace(ns).Patch(ctx, o.GetName(), types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			// Both sides have started it before the comparison waits for it to settle.
			for _, ns := range []string{krNS(i), rdNS(i)} {
				deadline := time.Now().Add(5 * time.Minute)
				for {
					u, err := env.dyn.Resource(rsGVR).Namespace(ns).Get(ctx, o.GetName(), metav1.GetOptions{})
					if err != nil {
						t.Fatal(err)
					}
					if p, _, _ := unstructured.NestedString(u.Object, "status", "pendingServiceStatus", "rayClusterName"); p != "" {
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("%s/%s: no pending cluster 5 minutes after the spec changed: %v", ns, o.GetName(), u.Object["status"])
					}
					time.Sleep(pollEvery)
				}
			}
		}
	}
	// … and both have finished it: the new cluster active, none pending.
	for i, m := range corpus {
		for _, o := range m.Objects {
			if o.GetKind() != "RayService" {
				continue
			}
			for _, ns := range []string{krNS(i), rdNS(i)} {
				deadline := time.Now().Add(8 * time.Minute)
				for {
					u, err := env.dyn.Resource(rsGVR).Namespace(ns).Get(ctx, o.GetName(), metav1.GetOptions{})
					if err != nil {
						t.Fatal(err)
					}
					active, _, _ := unstructured.NestedString(u.Object, "status", "activeServiceStatus", "rayClusterName")
					pending, _, _ := unstructured.NestedString(u.Object, "status", "pendingServiceStatus", "rayClusterName")
					if pending == "" && active != "" && active != firstActive[ns] {
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("%s/%s: the upgrade did not end within 8 minutes: %v", ns, o.GetName(), u.Object["status"])
					}
					time.Sleep(pollEvery)
				}
			}
		}
	}
	// The steps in between, each sequence of values compared whole.
	var compared, intended, differ int
	for i, m := range corpus {
		c, in, d := compareSteps(t, m.Name, recorders[krNS(i)].Steps(firstActive[krNS(i)]), recorders[rdNS(i)].Steps(firstActive[rdNS(i)]))
		compared, intended, differ = compared+c, intended+in, differ+d
	}
	steps := fmt.Sprintf("; the steps in between: %d sequences (HTTPRoute weights, each cluster's targetCapacity and trafficRoutedPercent) compared, %d differ as intended, %d unexplained", compared, intended, differ)
	summary := runPass(t, corpus, krNS, rdNS, false, "intended-incremental.yaml") + steps
	summary = strings.Replace(summary, "conformance: KubeRay "+KubeRayVersion, "conformance: KubeRay "+KubeRayVersion+", an incremental RayService upgrade (Gateway API, simulated Gateway controller)", 1)
	t.Log("after the upgrade: " + summary)
	fmt.Fprintln(os.Stderr, summary)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
