package conformance

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/raydar/raydar/controller"
	"github.com/raydar/raydar/controller/batchscheduler/volcano"
	"github.com/raydar/raydar/kube/sandbox/gangsim"
)

// TestConformanceVolcano compares the Volcano samples, those named
// volcano (ray-cluster.volcano-scheduler, which carries no Volcano label,
// ray-cluster.volcano-scheduler-queue, ray-job.volcano-scheduler-queue), again,
// with both operators run with --batch-scheduler=volcano in namespaces of
// their own (kr-vNN, rd-vNN): Volcano's CRDs installed, the PodGroups
// compared beside the pods, and the sandbox's simulated gang scheduler
// (kube/sandbox/gangsim) binding each gang for both alike.
func TestConformanceVolcano(t *testing.T) {
	if env == nil {
		t.Skip("conformance suite: needs the sandbox and KubeRay's operator (skipped with -short)")
	}
	var corpus []Manifest
	for _, m := range env.corpus {
		if strings.Contains(m.Name, "volcano") {
			corpus = append(corpus, m)
		}
	}
	if len(corpus) == 0 {
		t.Skipf("no Volcano sample in the corpus (%s=%q)", manifestsEnv, os.Getenv(manifestsEnv))
	}
	ctx := context.Background()
	crds, err := gangsim.CRDs(env.sb.ToolsDir)
	if err != nil {
		t.Fatal(err)
	}
	if err := env.sb.InstallCRDs(ctx, crds...); err != nil {
		t.Fatalf("Volcano's CRDs: %v", err)
	}
	krNS := func(i int) string { return fmt.Sprintf("kr-v%02d", i) }
	rdNS := func(i int) string { return fmt.Sprintf("rd-v%02d", i) }
	var kr, rd []string
	for i := range corpus {
		kr, rd = append(kr, krNS(i)), append(rd, rdNS(i))
	}
	for _, ns := range append(slices.Clone(kr), rd...) {
		if _, err := env.kc.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	gs, err := gangsim.Start(ctx, gangsim.Options{Config: env.sb.Config})
	if err != nil {
		t.Fatal(err)
	}
	defer gs.Close()
	cmd, err := env.startKubeRay(kr, "--batch-scheduler=volcano")
	if err != nil {
		t.Fatal(err)
	}
	defer stopKubeRay(cmd)
	stop, err := env.startRaydar(rd, true, func(o *controller.Options) { o.BatchScheduler = volcano.Scheduler{} })
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	kinds := env.kinds
	env.kinds = append(slices.Clone(kinds), comparedKind{schema.GroupVersionResource{Group: "scheduling.volcano.sh", Version: "v1beta1", Resource: "podgroups"}, "PodGroup"})
	defer func() { env.kinds = kinds }()
	summary := runPass(t, corpus, krNS, rdNS, false, "intended-volcano.yaml")
	if t.Failed() {
		// Both sides' PodGroups, whose differences runPass names by path.
		if list, err := env.dyn.Resource(env.kinds[len(env.kinds)-1].gvr).List(ctx, metav1.ListOptions{}); err == nil {
			for _, pg := range list.Items {
				spec, _, _ := unstructured.NestedMap(pg.Object, "spec")
				t.Logf("PodGroup %s/%s: %v", pg.GetNamespace(), pg.GetName(), spec)
			}
		}
	}
	summary = strings.Replace(summary, "conformance: KubeRay "+KubeRayVersion, "conformance: KubeRay "+KubeRayVersion+", both with --batch-scheduler=volcano", 1)
	t.Log(summary)
	fmt.Fprintln(os.Stderr, summary)
}
