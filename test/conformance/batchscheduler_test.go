package conformance

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/raydar/raydar/controller"
	"github.com/raydar/raydar/controller/batchscheduler"
	"github.com/raydar/raydar/kube/sandbox/gangsim"
)

// batchSchedulerRuns are KubeRay's batch schedulers and their samples
// (those whose names hold sample): ray-cluster.volcano-scheduler (no
// Volcano label), ray-cluster.volcano-scheduler-queue,
// ray-job.volcano-scheduler-queue; ray-cluster.yunikorn-scheduler,
// ray-job.yunikorn-scheduler; ray-cluster.kai-scheduler,
// ray-cluster.kai-gpu-sharing (their KAI Queues are not applied: the kind
// is not served); ray-cluster.scheduler-plugins. tag names the
// namespaces (kr-<tag>NN, rd-<tag>NN); group is the gang object compared
// beside the pods, if the scheduler has one.
var batchSchedulerRuns = []struct {
	name, sample, tag string
	group             *comparedKind
}{
	{"volcano", "volcano", "v", &comparedKind{schema.GroupVersionResource{Group: "scheduling.volcano.sh", Version: "v1beta1", Resource: "podgroups"}, "PodGroup"}},
	{"yunikorn", "yunikorn", "y", nil},
	{"kai-scheduler", "kai-", "k", nil},
	{"scheduler-plugins", "scheduler-plugins", "s", &comparedKind{schema.GroupVersionResource{Group: "scheduling.x-k8s.io", Version: "v1alpha1", Resource: "podgroups"}, "PodGroup"}},
}

// TestConformanceBatchSchedulers compares KubeRay's batch-scheduler
// samples again, one scheduler after the other, with both operators run
// with that --batch-scheduler in namespaces of their own: the scheduler's
// CRDs installed (Volcano's, scheduler-plugins' PodGroup; YuniKorn and KAI
// need none of KubeRay's making), its gang objects compared beside the
// pods, and the sandbox's simulated scheduler (kube/sandbox/gangsim)
// binding the pods for both alike. Each scheduler's intended differences
// are in intended-<name>.yaml, read on top of intended.yaml.
func TestConformanceBatchSchedulers(t *testing.T) {
	if env == nil {
		t.Skip("conformance suite: needs the sandbox and KubeRay's operator (skipped with -short)")
	}
	for _, run := range batchSchedulerRuns {
		t.Run(run.name, func(t *testing.T) {
			var corpus []Manifest
			for _, m := range env.corpus {
				if strings.Contains(m.Name, run.sample) && strings.HasPrefix(m.Name, "samples/") {
					corpus = append(corpus, m)
				}
			}
			if len(corpus) == 0 {
				t.Skipf("no %s sample in the corpus (%s=%q)", run.name, manifestsEnv, os.Getenv(manifestsEnv))
			}
			compareBatchScheduler(t, run.name, run.tag, run.group, corpus)
		})
	}
}

// compareBatchScheduler is one scheduler's pass.
func compareBatchScheduler(t *testing.T, name, tag string, group *comparedKind, corpus []Manifest) {
	ctx := context.Background()
	crds, err := gangsim.CRDsFor(env.sb.ToolsDir, name)
	if err != nil {
		t.Fatal(err)
	}
	if len(crds) > 0 {
		if err := env.sb.InstallCRDs(ctx, crds...); err != nil {
			t.Fatalf("%s's CRDs: %v", name, err)
		}
	}
	krNS, rdNS, kr, rd := env.passNamespaces(t, tag, len(corpus))
	gs, err := gangsim.Start(ctx, gangsim.Options{Config: env.sb.Config, Scheduler: name})
	if err != nil {
		t.Fatal(err)
	}
	defer gs.Close()
	cmd, err := env.startKubeRay(kr, "--batch-scheduler="+name)
	if err != nil {
		t.Fatal(err)
	}
	defer stopKubeRay(cmd)
	s, err := batchscheduler.New(name)
	if err != nil {
		t.Fatal(err)
	}
	stop, err := env.startRaydar(rd, true, func(o *controller.Options) { o.BatchScheduler = s })
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	kinds := env.kinds
	if group != nil {
		env.kinds = append(slices.Clone(kinds), *group)
	}
	defer func() { env.kinds = kinds }()
	var more []string
	if f := "intended-" + name + ".yaml"; fileExists(f) {
		more = append(more, f)
	}
	summary := runPass(t, corpus, krNS, rdNS, false, more...)
	if t.Failed() && group != nil {
		// Both sides' PodGroups, whose differences runPass names by path.
		if list, err := env.dyn.Resource(group.gvr).List(ctx, metav1.ListOptions{}); err == nil {
			for _, pg := range list.Items {
				spec, _, _ := unstructured.NestedMap(pg.Object, "spec")
				t.Logf("PodGroup %s/%s: %v", pg.GetNamespace(), pg.GetName(), spec)
			}
		}
	}
	summary = strings.Replace(summary, "conformance: KubeRay "+KubeRayVersion, "conformance: KubeRay "+KubeRayVersion+", both with --batch-scheduler="+name, 1)
	t.Log(summary)
	fmt.Fprintln(os.Stderr, summary)
}

func fileExists(name string) bool {
	_, err := os.Stat(name)
	return err == nil
}
