package controller

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/raydar/raydar/controller/features"
	"github.com/raydar/raydar/controller/internal/fixture"
	"github.com/raydar/raydar/controller/raycluster"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/raydar/raydar/kube/sandbox"
	"github.com/raydar/raydar/kube/sandbox/sandboxtest"
	"github.com/raydar/raydar/rayapi/crds"
	"github.com/raydar/raydar/rayapi/scheme"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// One sandbox (etcd, kube-apiserver, scheduler, controller-manager with the
// garbage collector, kwok with 20 large fake nodes) serves every integration
// test and benchmark of this package. With -short none starts and those tests
// skip.
var (
	sb *sandbox.Sandbox
	kc kubernetes.Interface
	cl client.WithWatch
)

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run())
	}
	sandboxtest.MustExclusive()
	ctrllog.SetLogger(testLogger())
	opts := sandbox.Full()
	opts.Nodes = nil // added below, after start
	opts.CRDs = [][]byte{crds.YAML()}
	if os.Getenv("RAYDAR_TEST_LOG") != "" {
		opts.Logf = func(f string, a ...any) { fmt.Fprintf(os.Stderr, "sandbox: "+f+"\n", a...) }
	}
	s, err := sandbox.Start(context.Background(), opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "controller tests: starting the sandbox:", err)
		os.Exit(1)
	}
	sb = s
	kc = s.Clientset()
	if err := addNodes(context.Background(), 20); err != nil {
		fmt.Fprintln(os.Stderr, "controller tests: adding nodes:", err)
		_ = s.Stop()
		os.Exit(1)
	}
	cl, err = client.NewWithWatch(s.Config, client.Options{Scheme: scheme.New()})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		_ = s.Stop()
		os.Exit(1)
	}
	code := m.Run()
	if err := s.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stopping the sandbox:", err)
	}
	os.Exit(code)
}

// addNodes adds n large fake nodes and removes the taints the API server's
// TaintNodesByCondition admission puts on new nodes: the sandbox runs no
// node-lifecycle controller to lift them once kwok reports the nodes Ready.
func addNodes(ctx context.Context, n int) error {
	names, err := sb.AddNodes(ctx, sandbox.NodePool{Count: n, NamePrefix: "kwok-node", CPU: "64", Memory: "256Gi"})
	if err != nil {
		return err
	}
	for _, name := range names {
		patch := []byte(`{"spec":{"taints":null}}`)
		if _, err := kc.CoreV1().Nodes().Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			return err
		}
	}
	return nil
}

// testLogger logs to stderr when RAYDAR_TEST_LOG is set, else nowhere.
func testLogger() logr.Logger {
	if os.Getenv("RAYDAR_TEST_LOG") == "" {
		return logr.Discard()
	}
	return funcr.New(func(prefix, args string) { fmt.Fprintln(os.Stderr, time.Now().Format("15:04:05.000"), prefix, args) },
		funcr.Options{Verbosity: 1})
}

func needSandbox(t testing.TB) {
	t.Helper()
	if sb == nil {
		t.Skip("integration test: needs the sandbox control plane (skipped with -short)")
	}
}

// newNamespace creates a namespace for one test and waits for its default
// ServiceAccount (pods are rejected without it).
func newNamespace(t testing.TB) string {
	t.Helper()
	ctx := context.Background()
	name := "t-" + strings.ToLower(utilrand.String(6))
	if _, err := kc.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = kc.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	eventually(t, 30*time.Second, "the default ServiceAccount", func() (bool, string) {
		_, err := kc.CoreV1().ServiceAccounts(name).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, fmt.Sprint(err)
	})
	return name
}

// runningOperator is an Operator started by a test.
type runningOperator struct {
	*Operator
	cancel context.CancelFunc
	done   chan error
	once   sync.Once
}

// stop cancels the operator and waits for it to return.
func (r *runningOperator) stop() {
	r.once.Do(func() {
		r.cancel()
		<-r.done
	})
}

// startOperator starts an operator restricted to ns, without leader
// election unless mod turns it on.
func startOperator(t testing.TB, ns string, mod func(*Options)) *runningOperator {
	t.Helper()
	return startOperatorOn(t, sb.Config, ns, mod)
}

// startOperatorOn is startOperator against the API server behind cfg.
func startOperatorOn(t testing.TB, cfg *rest.Config, ns string, mod func(*Options)) *runningOperator {
	t.Helper()
	opts := Options{
		DisableLeaderElection:        true,
		Namespaces:                   []string{ns},
		IgnoreOtherOperators:         true,
		SkipControllerNameValidation: true,
		StatusCoalesceWindow:         200 * time.Millisecond,
		Logger:                       testLogger(),
	}
	if mod != nil {
		mod(&opts)
	}
	op, err := New(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &runningOperator{Operator: op, cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- op.Start(ctx) }()
	t.Cleanup(r.stop)
	return r
}

// testCluster is 1 head and one group "small" of n workers, small pods.
func testCluster(ns, name string, n int32) *rayv1.RayCluster {
	res := corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
		Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")},
	}
	ctr := func(name string) []corev1.Container {
		return []corev1.Container{{Name: name, Image: "rayproject/ray:2.52.0", Resources: res}}
	}
	return &rayv1.RayCluster{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: rayv1.RayClusterSpec{
			RayVersion: "2.52.0",
			HeadGroupSpec: rayv1.HeadGroupSpec{
				RayStartParams: map[string]string{},
				Template:       corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: ctr("ray-head")}},
			},
			WorkerGroupSpecs: []rayv1.WorkerGroupSpec{{
				GroupName: "small", Replicas: fixture.Ptr(n), MinReplicas: fixture.Ptr(int32(0)), MaxReplicas: fixture.Ptr(int32(100)),
				RayStartParams: map[string]string{},
				Template:       corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: ctr("ray-worker")}},
			}},
		},
	}
}

// eventually polls cond every 100 ms until it holds or the timeout passes.
func eventually(t testing.TB, timeout time.Duration, what string, cond func() (bool, string)) {
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

// consistently checks cond every 100 ms for d.
func consistently(t testing.TB, d time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if ok, msg := cond(); !ok {
			t.Fatalf("%s stopped holding: %s", what, msg)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func getRC(t testing.TB, ns, name string) *rayv1.RayCluster {
	t.Helper()
	rc := &rayv1.RayCluster{}
	if err := cl.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, rc); err != nil {
		t.Fatal(err)
	}
	return rc
}

// clusterPods lists a cluster's pods live, terminating ones excluded.
func clusterPods(t testing.TB, ns, name string) (heads, workers []corev1.Pod) {
	t.Helper()
	list := &corev1.PodList{}
	if err := cl.List(context.Background(), list, client.InNamespace(ns), client.MatchingLabels{rayv1.RayClusterLabelKey: name}); err != nil {
		t.Fatal(err)
	}
	for _, p := range list.Items {
		if p.DeletionTimestamp != nil {
			continue
		}
		switch p.Labels[rayv1.RayNodeTypeLabelKey] {
		case string(rayv1.HeadNode):
			heads = append(heads, p)
		case string(rayv1.WorkerNode):
			workers = append(workers, p)
		}
	}
	return heads, workers
}

func allPodNames(ps []corev1.Pod) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Name)
	}
	return out
}

// waitReady waits until the cluster's state is ready with the given number
// of ready workers.
func waitReady(t testing.TB, ns, name string, workers int32) *rayv1.RayCluster {
	t.Helper()
	var rc *rayv1.RayCluster
	eventually(t, 60*time.Second, name+" ready with "+fmt.Sprint(workers)+" workers", func() (bool, string) {
		rc = getRC(t, ns, name)
		s := rc.Status
		return s.State == rayv1.Ready && s.ReadyWorkerReplicas == workers && s.DesiredWorkerReplicas == workers,
			fmt.Sprintf("state=%q ready=%d desired=%d conds=%v", s.State, s.ReadyWorkerReplicas, s.DesiredWorkerReplicas, s.Conditions)
	})
	return rc
}

// clusterEvents lists the Events regarding a RayCluster.
func clusterEvents(t testing.TB, ns, name string) []eventsv1.Event {
	t.Helper()
	return eventsOf(t, ns, rayv1.KindRayCluster, name)
}

// eventsOf lists the Events regarding the object of that kind and name.
func eventsOf(t testing.TB, ns, kind, name string) []eventsv1.Event {
	t.Helper()
	list, err := kc.EventsV1().Events(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []eventsv1.Event
	for _, e := range list.Items {
		if e.Regarding.Kind == kind && e.Regarding.Name == name {
			out = append(out, e)
		}
	}
	return out
}

// waitEvent waits for an Event with the reason whose note contains substr.
func waitEvent(t testing.TB, ns, name, reason, substr string) eventsv1.Event {
	t.Helper()
	return waitEventOf(t, 30*time.Second, ns, rayv1.KindRayCluster, name, "", reason, substr)
}

// waitEventOf waits up to timeout for an Event regarding the object of that
// kind and name, of the type (any when "") and reason, whose note contains
// substr.
func waitEventOf(t testing.TB, timeout time.Duration, ns, kind, name, typ, reason, substr string) eventsv1.Event {
	t.Helper()
	var found eventsv1.Event
	eventually(t, timeout, "Event "+reason+" containing "+substr, func() (bool, string) {
		var seen []string
		for _, e := range eventsOf(t, ns, kind, name) {
			seen = append(seen, e.Type+" "+e.Reason+": "+e.Note)
			if (typ == "" || e.Type == typ) && e.Reason == reason && strings.Contains(e.Note, substr) {
				found = e
				return true, ""
			}
		}
		return false, strings.Join(seen, " | ")
	})
	return found
}

// v170Sample is KubeRay v1.7.0's ray-operator/config/samples/<file>,
// unchanged (testdata/kuberay-v1.7.0), in namespace ns.
func v170Sample(t testing.TB, file, ns string) *rayv1.RayCluster {
	rc := fixture.KubeRaySample(t, "testdata/kuberay-v1.7.0/"+file)
	rc.Namespace = ns
	return rc
}

// refusedWithGateOff applies the v1.7.0 sample file, which asks for a
// feature behind gate, to an operator running with that gate off, and
// checks that it is refused as the gate-off refusal says
// (raycluster.UnsupportedClusterSpecWith): the ReplicaFailure condition
// (ValidationFailed) naming field and the gate, a Warning
// InvalidRayClusterSpec naming the gate, and for two seconds no pod, nor
// anything made reports (what the feature would make; nil: nothing more).
func refusedWithGateOff(t *testing.T, ns, file, field string, gate features.Gate, made func() (bool, string)) {
	t.Helper()
	rc := v170Sample(t, file, ns)
	createRC(t, rc)
	eventually(t, 30*time.Second, "a ReplicaFailure condition naming "+field+" and "+string(gate), func() (bool, string) {
		got := getRC(t, ns, rc.Name)
		c := meta.FindStatusCondition(got.Status.Conditions, string(rayv1.RayClusterReplicaFailure))
		return c != nil && c.Reason == raycluster.ReasonValidationFailed && strings.Contains(c.Message, field) &&
			strings.Contains(c.Message, string(gate)), fmt.Sprintf("%+v", got.Status.Conditions)
	})
	waitEvent(t, ns, rc.Name, raycluster.ReasonInvalidSpec, "requires the "+string(gate)+" feature gate")
	consistently(t, 2*time.Second, "no pods, nothing made", func() (bool, string) {
		h, w := clusterPods(t, ns, rc.Name)
		if len(h)+len(w) != 0 {
			return false, fmt.Sprint(len(h)+len(w), " pods")
		}
		if made == nil {
			return true, ""
		}
		return made()
	})
}

func createRC(t testing.TB, rc *rayv1.RayCluster) {
	t.Helper()
	if err := cl.Create(context.Background(), rc); err != nil {
		t.Fatal(err)
	}
}

// patchRC applies f to a fresh copy and updates it, retrying conflicts.
func patchRC(t testing.TB, ns, name string, f func(*rayv1.RayCluster)) {
	t.Helper()
	for range 10 {
		rc := getRC(t, ns, name)
		f(rc)
		err := cl.Update(context.Background(), rc)
		if err == nil {
			return
		}
		if !apierrors.IsConflict(err) {
			t.Fatal(err)
		}
	}
	t.Fatal("too many conflicts updating", name)
}
