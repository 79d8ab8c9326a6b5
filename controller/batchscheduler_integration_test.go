package controller

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"
	spv1alpha1 "sigs.k8s.io/scheduler-plugins/apis/scheduling/v1alpha1"
	volcanov1beta1 "volcano.sh/apis/pkg/apis/scheduling/v1beta1"

	"github.com/raydar/raydar/controller/batchscheduler/kaischeduler"
	"github.com/raydar/raydar/controller/batchscheduler/schedulerplugins"
	"github.com/raydar/raydar/controller/batchscheduler/volcano"
	"github.com/raydar/raydar/controller/features"
	"github.com/raydar/raydar/controller/internal/fixture"
	"github.com/raydar/raydar/kube/sandbox"
	"github.com/raydar/raydar/kube/sandbox/gangsim"
	"github.com/raydar/raydar/rayapi/scheme"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

var (
	volcanoOnce sync.Once
	volcanoErr  error
)

// installVolcano installs Volcano's PodGroup and Queue CRDs (the tools
// dir's crds/volcano.yaml, generated from volcano.sh/apis by
// hack/build-tools.sh) into the shared sandbox, once.
func installVolcano(t *testing.T) {
	t.Helper()
	volcanoOnce.Do(func() {
		b, err := os.ReadFile(filepath.Join(sb.ToolsDir, "crds", "volcano.yaml"))
		if err != nil {
			volcanoErr = err
			return
		}
		crds, err := sandbox.ParseCRDs(b)
		if err != nil {
			volcanoErr = err
			return
		}
		volcanoErr = sb.InstallCRDs(context.Background(), crds...)
	})
	if volcanoErr != nil {
		t.Fatalf("installing Volcano's CRDs (hack/build-tools.sh volcano-crds): %v", volcanoErr)
	}
}

// With --batch-scheduler volcano a RayCluster gets KubeRay v1.6.2's
// PodGroup, owned by it, and pods that name it and Volcano as their
// scheduler; scaling the cluster resizes the PodGroup.
func TestVolcanoPodGroupOnTheAPIServer(t *testing.T) {
	needSandbox(t)
	installVolcano(t)
	ns := newNamespace(t)
	startOperator(t, ns, func(o *Options) { o.BatchScheduler = volcano.Scheduler{} })
	s := scheme.New()
	if err := volcanov1beta1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	vc, err := client.New(sb.Config, client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rc := testCluster(ns, "gang", 2)
	rc.Labels = map[string]string{rayv1.VolcanoQueueNameLabelKey: "q1", rayv1.RayPriorityClassName: "high"}
	if err := cl.Create(ctx, rc); err != nil {
		t.Fatal(err)
	}
	pg := &volcanov1beta1.PodGroup{}
	eventually(t, 30*time.Second, "the PodGroup", func() (bool, string) {
		err := vc.Get(ctx, client.ObjectKey{Namespace: ns, Name: "ray-gang-pg"}, pg)
		return err == nil, err2s(err)
	})
	// 3 pods of 100m/128Mi requested each.
	if pg.Spec.MinMember != 3 || pg.Spec.MinResources.Cpu().String() != "300m" || pg.Spec.MinResources.Memory().String() != "384Mi" ||
		pg.Spec.Queue != "q1" || pg.Spec.PriorityClassName != "high" || pg.OwnerReferences[0].Kind != "RayCluster" || pg.OwnerReferences[0].Name != "gang" {
		t.Fatalf("PodGroup %+v %+v", pg.Spec, pg.OwnerReferences)
	}
	eventually(t, 30*time.Second, "three pods in the gang", func() (bool, string) {
		heads, workers := clusterPods(t, ns, "gang")
		pods := append(heads, workers...)
		if len(pods) != 3 {
			return false, fmt.Sprint("pods: ", len(pods))
		}
		for _, p := range pods {
			if p.Spec.SchedulerName != "volcano" || p.Annotations[volcano.GroupNameAnnotationKey] != "ray-gang-pg" ||
				p.Annotations[volcano.TaskSpecAnnotationKey] != p.Labels[rayv1.RayNodeGroupLabelKey] || p.Labels[rayv1.VolcanoQueueNameLabelKey] != "q1" {
				return false, p.Name + " lacks Volcano's metadata"
			}
		}
		return true, ""
	})
	// The sandbox's stand-in for Volcano binds the gang together.
	gs, err := gangsim.Start(ctx, gangsim.Options{Config: sb.Config, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(gs.Close)
	eventually(t, 30*time.Second, "the gang bound and the PodGroup Running", func() (bool, string) {
		heads, workers := clusterPods(t, ns, "gang")
		for _, p := range append(heads, workers...) {
			if p.Spec.NodeName == "" {
				return false, p.Name + " unbound"
			}
		}
		if err := vc.Get(ctx, client.ObjectKey{Namespace: ns, Name: "ray-gang-pg"}, pg); err != nil {
			return false, err.Error()
		}
		return pg.Status.Phase == volcanov1beta1.PodGroupRunning, string(pg.Status.Phase)
	})
	// A gang that cannot fit whole is not bound at all.
	big := testCluster(ns, "big", 2)
	huge := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100000"), corev1.ResourceMemory: resource.MustParse("1Gi")}
	big.Spec.WorkerGroupSpecs[0].Template.Spec.Containers[0].Resources = corev1.ResourceRequirements{Requests: huge, Limits: huge}
	if err := cl.Create(ctx, big); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the big gang's three pods", func() (bool, string) {
		heads, workers := clusterPods(t, ns, "big")
		return len(heads)+len(workers) == 3, fmt.Sprint(len(heads) + len(workers))
	})
	consistently(t, 2*time.Second, "none of the big gang bound, its PodGroup Pending", func() (bool, string) {
		heads, workers := clusterPods(t, ns, "big")
		for _, p := range append(heads, workers...) {
			if p.Spec.NodeName != "" {
				return false, p.Name + " bound to " + p.Spec.NodeName
			}
		}
		bp := &volcanov1beta1.PodGroup{}
		if err := vc.Get(ctx, client.ObjectKey{Namespace: ns, Name: "ray-big-pg"}, bp); err != nil {
			return false, err.Error()
		}
		return bp.Status.Phase != volcanov1beta1.PodGroupRunning, string(bp.Status.Phase)
	})

	// No Warning: volcano reads both labels.
	for _, e := range clusterEvents(t, ns, "gang") {
		if e.Reason == "BatchSchedulerNotImplemented" {
			t.Errorf("Warning %s", e.Note)
		}
	}

	cur := getRC(t, ns, "gang")
	cur.Spec.WorkerGroupSpecs[0].Replicas = fixture.Ptr(int32(4))
	if err := cl.Update(ctx, cur); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the PodGroup resized", func() (bool, string) {
		if err := vc.Get(ctx, client.ObjectKey{Namespace: ns, Name: "ray-gang-pg"}, pg); err != nil {
			return false, err.Error()
		}
		return pg.Spec.MinMember == 5 && pg.Spec.MinResources.Cpu().String() == "500m", pg.Spec.MinResources.Cpu().String()
	})
}

func err2s(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// With --batch-scheduler scheduler-plugins a labelled RayCluster gets
// KubeRay v1.6.2's scheduling.x-k8s.io PodGroup named after it, its pods
// the pod-group label and the chart's schedulerName, and the sandbox's
// stand-in binds the gang; a RayJob is refused (its status message and a
// Warning say why) and gets no cluster, as KubeRay v1.6.2 refuses it.
func TestSchedulerPluginsPodGroupOnTheAPIServer(t *testing.T) {
	needSandbox(t)
	crds, err := gangsim.CRDsFor(sb.ToolsDir, schedulerplugins.Name)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := sb.InstallCRDs(ctx, crds...); err != nil {
		t.Fatal(err)
	}
	h := newRJHarness(t, func(o *Options) { o.BatchScheduler = schedulerplugins.Scheduler{} })
	ns := h.ns
	s := scheme.New()
	if err := spv1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	pc, err := client.New(sb.Config, client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	rc := testCluster(ns, "sp", 2)
	rc.Labels = map[string]string{rayv1.RayGangSchedulingEnabled: "true"}
	if err := cl.Create(ctx, rc); err != nil {
		t.Fatal(err)
	}
	pg := &spv1alpha1.PodGroup{}
	eventually(t, 30*time.Second, "the PodGroup", func() (bool, string) {
		err := pc.Get(ctx, client.ObjectKey{Namespace: ns, Name: "sp"}, pg)
		return err == nil, err2s(err)
	})
	if pg.Spec.MinMember != 3 || pg.Spec.MinResources.Cpu().String() != "300m" || pg.OwnerReferences[0].Kind != "RayCluster" || pg.OwnerReferences[0].Controller != nil {
		t.Fatalf("PodGroup %+v %+v", pg.Spec, pg.OwnerReferences)
	}
	gs, err := gangsim.Start(ctx, gangsim.Options{Config: sb.Config, Scheduler: schedulerplugins.Name, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(gs.Close)
	eventually(t, 30*time.Second, "the gang's three pods bound, the PodGroup Running", func() (bool, string) {
		heads, workers := clusterPods(t, ns, "sp")
		pods := append(heads, workers...)
		if len(pods) != 3 {
			return false, fmt.Sprint("pods: ", len(pods))
		}
		for _, p := range pods {
			if p.Spec.SchedulerName != schedulerplugins.SchedulerName || p.Labels[schedulerplugins.PodGroupLabelKey] != "sp" || p.Spec.NodeName == "" {
				return false, p.Name + ": " + p.Spec.SchedulerName + " " + p.Labels[schedulerplugins.PodGroupLabelKey] + " node " + p.Spec.NodeName
			}
		}
		if err := pc.Get(ctx, client.ObjectKey{Namespace: ns, Name: "sp"}, pg); err != nil {
			return false, err.Error()
		}
		return pg.Status.Phase == spv1alpha1.PodGroupRunning, string(pg.Status.Phase)
	})

	h.rayJob("refused", "python -c 1")
	h.waitEvent("refused", rayv1.EventFailedToCreateRayCluster, "currently only RayCluster is supported, got *v1.RayJob")
	j := h.wait("refused", "its refusal in the status", func(j *rayv1.RayJob) bool {
		return strings.Contains(j.Status.Message, "for --batch-scheduler=scheduler-plugins")
	})
	if j.Status.RayClusterName != "" {
		if err := cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: j.Status.RayClusterName}, &rayv1.RayCluster{}); err == nil {
			t.Errorf("a refused RayJob got its cluster %s", j.Status.RayClusterName)
		}
	}
}

// With --batch-scheduler kai-scheduler a K8sJobMode RayJob is refused on
// every pass (KubeRay v1.6.2 kai_scheduler.go:44-48) and an HTTPMode one
// runs, its cluster's pods with schedulerName kai-scheduler and the queue
// label; the stand-in binds them.
func TestKaiSchedulerRayJobs(t *testing.T) {
	h := newRJHarness(t, func(o *Options) { o.BatchScheduler = kaischeduler.Scheduler{} })
	ctx := context.Background()
	gs, err := gangsim.Start(ctx, gangsim.Options{Config: sb.Config, Scheduler: kaischeduler.Name, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(gs.Close)
	queue := func(j *rayv1.RayJob) { j.Labels = map[string]string{rayv1.KaiQueueLabelKey: "team-a"} }
	h.rayJob("k8s", "python -c 1", queue, func(j *rayv1.RayJob) { j.Spec.SubmissionMode = rayv1.K8sJobMode })
	h.waitEvent("k8s", rayv1.EventFailedToCreateRayCluster, "KAI-Scheduler does not support RayJob with K8sJobMode")
	h.rayJob("http", "python -c 1", queue)
	j := h.wait("http", "Complete", deploymentIs(rayv1.JobDeploymentStatusComplete))
	heads, _ := clusterPods(t, h.ns, j.Status.RayClusterName)
	for _, p := range heads {
		if p.Spec.SchedulerName != kaischeduler.Name || p.Labels[rayv1.KaiQueueLabelKey] != "team-a" || p.Spec.NodeName == "" {
			t.Errorf("head %s: %q %v node %q", p.Name, p.Spec.SchedulerName, p.Labels, p.Spec.NodeName)
		}
	}
	if k8s, _ := h.get("k8s"); k8s.Status.RayClusterName != "" && k8s.Status.JobDeploymentStatus != rayv1.JobDeploymentStatusInitializing {
		t.Errorf("the K8sJobMode RayJob went on: %s", describeRJ(k8s))
	}
}

// --feature-gates KubernetesWAS=true on a control plane that does not
// serve scheduling.k8s.io/v1alpha2 (1.37, the sandbox's) is refused at
// start, naming the API and where it is served, as KubeRay v1.7.0 refuses
// it (kubernetes-was/scheduler.go selectProvider).
func TestKubernetesWASRefusedWhereItsAPIIsNotServed(t *testing.T) {
	needSandbox(t)
	gates, err := features.Parse("KubernetesWAS=true")
	if err != nil {
		t.Fatal(err)
	}
	_, err = New(sb.Config, Options{DisableLeaderElection: true, SkipControllerNameValidation: true, Logger: testLogger(), FeatureGates: gates})
	if err == nil || !strings.Contains(err.Error(), "--feature-gates KubernetesWAS=true: the API server does not serve scheduling.k8s.io/v1alpha2 Workload") ||
		!strings.Contains(err.Error(), "raydar sandbox --kubernetes 1.36") {
		t.Fatalf("New: %v", err)
	}
}
