package kuberneteswas

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/go-logr/logr"

	"github.com/raydar/raydar/controller"
	"github.com/raydar/raydar/controller/batchscheduler/kuberneteswas"
	"github.com/raydar/raydar/controller/features"
	"github.com/raydar/raydar/controller/raycluster"
	"github.com/raydar/raydar/kube/sandbox"
	"github.com/raydar/raydar/kube/sandbox/sandboxtest"
	"github.com/raydar/raydar/rayapi/crds"
	"github.com/raydar/raydar/rayapi/scheme"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// ns is the running test's namespace (startOperator makes it; the tests
// run one after another); its operator watches only it.
var ns string

var (
	sb *sandbox.Sandbox
	cl client.Client
)

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run())
	}
	sandboxtest.MustExclusive()
	ctrllog.SetLogger(logr.Discard())
	opts := sandbox.Full()
	opts.Kubernetes = sandbox.Kubernetes136
	// Four nodes of 16 CPUs: one 15-CPU worker fits on each.
	opts.Nodes = []sandbox.NodePool{{Count: 4, NamePrefix: "kwok-node", CPU: "16", Memory: "64Gi"}}
	opts.CRDs = [][]byte{crds.YAML()}
	s, err := sandbox.Start(context.Background(), opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "kuberneteswas tests: starting the Kubernetes 1.36 sandbox:", err)
		os.Exit(1)
	}
	sb = s
	code := func() int {
		if cl, err = client.New(s.Config, client.Options{Scheme: scheme.New()}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return m.Run()
	}()
	if err := s.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stopping the sandbox:", err)
	}
	os.Exit(code)
}

func needSandbox(t *testing.T) {
	t.Helper()
	if sb == nil {
		t.Skip("integration test: needs the Kubernetes 1.36 sandbox (skipped with -short)")
	}
}

// startOperator makes the test's namespace and runs raydar's loop on it
// with the gate on.
func startOperator(t *testing.T) {
	t.Helper()
	ns = "was-" + strings.ToLower(utilrand.String(6))
	nsObj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
	if err := cl.Create(context.Background(), nsObj); err != nil {
		t.Fatal(err)
	}
	// Gone before the next test starts: its pods would hold the nodes'
	// CPUs the next test's gangs are sized against.
	t.Cleanup(func() {
		if err := cl.Delete(context.Background(), nsObj); err != nil && !apierrors.IsNotFound(err) {
			t.Error(err)
			return
		}
		eventually(t, 2*time.Minute, "namespace "+nsObj.Name+" gone", func() (bool, string) {
			err := cl.Get(context.Background(), client.ObjectKeyFromObject(nsObj), &corev1.Namespace{})
			return apierrors.IsNotFound(err), fmt.Sprint(err)
		})
	})
	gates, err := features.Parse("KubernetesWAS=true")
	if err != nil {
		t.Fatal(err)
	}
	op, err := controller.New(sb.Config, controller.Options{
		DisableLeaderElection: true, Namespaces: []string{ns}, IgnoreOtherOperators: true,
		SkipControllerNameValidation: true, StatusCoalesceWindow: 200 * time.Millisecond,
		Logger: logr.Discard(), FeatureGates: gates,
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := op.BatchScheduler(); got != "kubernetes-was-v1alpha2" {
		t.Errorf("batch scheduler %q", got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- op.Start(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
}

// cluster is a head of 1 CPU and n workers of cpu CPUs each, gang
// scheduled when gang.
func cluster(name string, n int32, cpu string, gang bool) *rayv1.RayCluster {
	ctr := func(name, cpu string) []corev1.Container {
		q := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("1Gi")}
		return []corev1.Container{{Name: name, Image: "rayproject/ray:2.52.0", Resources: corev1.ResourceRequirements{Requests: q, Limits: q}}}
	}
	rc := &rayv1.RayCluster{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: rayv1.RayClusterSpec{
			HeadGroupSpec: rayv1.HeadGroupSpec{RayStartParams: map[string]string{},
				Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: ctr("ray-head", "1")}}},
			WorkerGroupSpecs: []rayv1.WorkerGroupSpec{{
				GroupName: "w", Replicas: ptr.To(n), MinReplicas: ptr.To(int32(0)), MaxReplicas: ptr.To(int32(10)),
				RayStartParams: map[string]string{},
				Template:       corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: ctr("ray-worker", cpu)}},
			}},
		},
	}
	if gang {
		rc.Labels = map[string]string{rayv1.RayGangSchedulingEnabled: "true"}
	}
	return rc
}

// get reads a Workload or PodGroup; nil when absent.
func get(t *testing.T, gvk schema.GroupVersionKind, name string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	err := cl.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, u)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// minCounts are the Workload's template's and the PodGroup's gang sizes
// (-1 where absent).
func minCounts(t *testing.T, name string) (workload, podGroup int64) {
	t.Helper()
	workload, podGroup = -1, -1
	if u := get(t, kuberneteswas.WorkloadKind, name); u != nil {
		tmpls, _, _ := unstructured.NestedSlice(u.Object, "spec", "podGroupTemplates")
		if len(tmpls) == 1 {
			workload, _, _ = unstructured.NestedInt64(tmpls[0].(map[string]any), "schedulingPolicy", "gang", "minCount")
		}
	}
	if u := get(t, kuberneteswas.PodGroupKind, name+"-cluster"); u != nil && u.GetDeletionTimestamp() == nil {
		podGroup, _, _ = unstructured.NestedInt64(u.Object, "spec", "schedulingPolicy", "gang", "minCount")
	}
	return workload, podGroup
}

// pods are a cluster's live pods.
func pods(t *testing.T, name string) []corev1.Pod {
	t.Helper()
	list := &corev1.PodList{}
	if err := cl.List(context.Background(), list, client.InNamespace(ns), client.MatchingLabels{rayv1.RayClusterLabelKey: name}); err != nil {
		t.Fatal(err)
	}
	var out []corev1.Pod
	for _, p := range list.Items {
		if p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	return out
}

// running counts the pods bound and Running, and says each pod's group.
func running(ps []corev1.Pod) (n int, desc string) {
	var parts []string
	for _, p := range ps {
		group := "-"
		if g := p.Spec.SchedulingGroup; g != nil && g.PodGroupName != nil {
			group = *g.PodGroupName
		}
		if p.Spec.NodeName != "" && p.Status.Phase == corev1.PodRunning {
			n++
		}
		parts = append(parts, fmt.Sprintf("%s(%s,%s,%q)", p.Name, p.Status.Phase, group, p.Spec.NodeName))
	}
	return n, strings.Join(parts, " ")
}

func eventually(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, msg := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s; last: %s", timeout, what, msg)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// patch applies f to a fresh copy and updates it, again from a fresh read
// on a conflict (the operator writes the cluster meanwhile).
func patch(t *testing.T, name string, f func(*rayv1.RayCluster)) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		rc := &rayv1.RayCluster{}
		if err := cl.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, rc); err != nil {
			return err
		}
		f(rc)
		return cl.Update(context.Background(), rc)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A labelled RayCluster is gang scheduled by Kubernetes itself, as KubeRay
// v1.7.0 does it: a Workload and a PodGroup of the head and every worker,
// each pod naming the PodGroup and placed by the default scheduler; a
// cluster whose gang cannot fit whole gets no pod placed at all, though
// each of its workers would fit alone, and is placed once it fits;
// scaling replaces the immutable objects; removing the label deletes
// them; a same-named Workload raydar does not own is a Warning naming it
// and holds the pods.
func TestGangScheduledByKubernetes(t *testing.T) {
	needSandbox(t)
	startOperator(t)
	ctx := context.Background()

	if err := cl.Create(ctx, cluster("gang", 2, "1", true)); err != nil {
		t.Fatal(err)
	}
	eventually(t, 90*time.Second, "gang's Workload, PodGroup and 3 pods Running in it", func() (bool, string) {
		wl, pg := minCounts(t, "gang")
		ps := pods(t, "gang")
		n, desc := running(ps)
		ok := wl == 3 && pg == 3 && n == 3
		for _, p := range ps {
			g := p.Spec.SchedulingGroup
			ok = ok && g != nil && ptr.Deref(g.PodGroupName, "") == "gang-cluster" && p.Spec.SchedulerName == corev1.DefaultSchedulerName
		}
		return ok, fmt.Sprintf("minCount %d/%d; %s", wl, pg, desc)
	})
	if u := get(t, kuberneteswas.PodGroupKind, "gang-cluster"); !metav1.IsControlledBy(u, getRC(t, "gang")) {
		t.Errorf("PodGroup owners %v", u.GetOwnerReferences())
	}

	// Scaled: the PodGroup and the Workload are replaced with the new size.
	patch(t, "gang", func(rc *rayv1.RayCluster) { rc.Spec.WorkerGroupSpecs[0].Replicas = ptr.To(int32(3)) })
	eventually(t, 90*time.Second, "gang's objects replaced at minCount 4 and 4 pods Running", func() (bool, string) {
		wl, pg := minCounts(t, "gang")
		n, desc := running(pods(t, "gang"))
		return wl == 4 && pg == 4 && n == 4, fmt.Sprintf("minCount %d/%d; %s", wl, pg, desc)
	})

	// All or nothing: five 15-CPU workers and the head do not fit on four
	// 16-CPU nodes together, though four of the workers would alone.
	if err := cl.Delete(ctx, getRC(t, "gang")); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, "gang's pods, Workload and PodGroup gone", func() (bool, string) {
		wl, pg := minCounts(t, "gang")
		return len(pods(t, "gang")) == 0 && wl == -1 && pg == -1, fmt.Sprintf("minCount %d/%d", wl, pg)
	})
	if err := cl.Create(ctx, cluster("big", 5, "15", true)); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, "big's 6 pods, none placed, the scheduler waiting for the gang", func() (bool, string) {
		ps := pods(t, "big")
		bound := 0
		for _, p := range ps {
			if p.Spec.NodeName != "" {
				bound++
			}
		}
		if bound > 0 {
			t.Fatalf("%d of big's pods placed though its gang does not fit", bound)
		}
		waiting := false
		for _, p := range ps {
			for _, c := range p.Status.Conditions {
				waiting = waiting || c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && strings.Contains(c.Message, "gang")
			}
		}
		_, desc := running(ps)
		return len(ps) == 6 && waiting, desc
	})
	patch(t, "big", func(rc *rayv1.RayCluster) { rc.Spec.WorkerGroupSpecs[0].Replicas = ptr.To(int32(3)) })
	eventually(t, 90*time.Second, "big, scaled to fit, placed whole at minCount 4", func() (bool, string) {
		wl, pg := minCounts(t, "big")
		n, desc := running(pods(t, "big"))
		return wl == 4 && pg == 4 && n == 4, fmt.Sprintf("minCount %d/%d; %s", wl, pg, desc)
	})

	// The label removed: both objects deleted, the cluster keeps running.
	patch(t, "big", func(rc *rayv1.RayCluster) { delete(rc.Labels, rayv1.RayGangSchedulingEnabled) })
	eventually(t, 60*time.Second, "big's Workload and PodGroup deleted", func() (bool, string) {
		wl := get(t, kuberneteswas.WorkloadKind, "big")
		pg := get(t, kuberneteswas.PodGroupKind, "big-cluster")
		return wl == nil && pg == nil, fmt.Sprintf("workload %v podgroup %v", wl != nil, pg != nil)
	})
	if n, desc := running(pods(t, "big")); n != 4 {
		t.Errorf("big after the label went: %s", desc)
	}
	if err := cl.Delete(ctx, getRC(t, "big")); err != nil {
		t.Fatal(err)
	}

	// A Workload of the cluster's name that raydar does not own: a Warning
	// names it, and no pod is made.
	foreign := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{
		"podGroupTemplates": []any{map[string]any{"name": "cluster", "schedulingPolicy": map[string]any{"basic": map[string]any{}}}}}}}
	foreign.SetGroupVersionKind(kuberneteswas.WorkloadKind)
	foreign.SetNamespace(ns)
	foreign.SetName("clash")
	if err := cl.Create(ctx, foreign); err != nil {
		t.Fatal(err)
	}
	if err := cl.Create(ctx, cluster("clash", 1, "1", true)); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, "the BatchSchedulingFailed Warning naming the Workload", func() (bool, string) {
		list := &corev1.EventList{}
		if err := cl.List(ctx, list, client.InNamespace(ns)); err != nil {
			return false, err.Error()
		}
		for _, e := range list.Items {
			if e.InvolvedObject.Name == "clash" && e.Reason == raycluster.EventBatchSchedulingFailed &&
				strings.Contains(e.Message, "Workload "+ns+"/clash already exists and is not owned by this RayCluster") {
				return true, ""
			}
		}
		return false, fmt.Sprintf("%d events", len(list.Items))
	})
	if ps := pods(t, "clash"); len(ps) != 0 {
		t.Errorf("pods made beside a foreign Workload: %d", len(ps))
	}
}

// An autoscaling cluster is not gang scheduled, labelled or not (KubeRay:
// "autoscaling is not yet supported"): no Workload, no PodGroup, pods
// without a scheduling group.
func TestAutoscalingClusterSkipped(t *testing.T) {
	needSandbox(t)
	startOperator(t)
	rc := cluster("auto", 1, "1", true)
	rc.Spec.EnableInTreeAutoscaling = ptr.To(true)
	if err := cl.Create(context.Background(), rc); err != nil {
		t.Fatal(err)
	}
	eventually(t, 90*time.Second, "auto's head and worker Running without a scheduling group", func() (bool, string) {
		ps := pods(t, "auto")
		n, desc := running(ps)
		ok := n == 2
		for _, p := range ps {
			ok = ok && p.Spec.SchedulingGroup == nil
		}
		return ok, desc
	})
	if wl, pg := minCounts(t, "auto"); wl != -1 || pg != -1 {
		t.Errorf("objects for an autoscaling cluster: minCount %d/%d", wl, pg)
	}
}

func getRC(t *testing.T, name string) *rayv1.RayCluster {
	t.Helper()
	rc := &rayv1.RayCluster{}
	if err := cl.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, rc); err != nil {
		t.Fatal(err)
	}
	return rc
}
