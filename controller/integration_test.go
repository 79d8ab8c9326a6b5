package controller

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/controller/internal/fixture"
	"github.com/raydar/raydar/controller/raycluster"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

func TestIntegrationBringUp(t *testing.T) {
	needSandbox(t)
	ns := newNamespace(t)
	startOperator(t, ns, nil)
	createRC(t, testCluster(ns, "demo", 3))
	rc := waitReady(t, ns, "demo", 3)

	heads, workers := clusterPods(t, ns, "demo")
	if len(heads) != 1 || len(workers) != 3 {
		t.Fatalf("pods: %v %v", allPodNames(heads), allPodNames(workers))
	}
	h := heads[0]
	if !strings.HasPrefix(h.Name, "demo-head-") || h.Labels[rayv1.RayNodeGroupLabelKey] != "headgroup" || h.Labels[rayv1.RayIDLabelKey] != "demo-head" ||
		h.Labels[rayv1.KubernetesCreatedByLabelKey] != "kuberay-operator" {
		t.Errorf("head pod %s labels %v", h.Name, h.Labels)
	}
	for _, w := range workers {
		if !strings.HasPrefix(w.Name, "demo-small-worker-") || w.Labels[rayv1.RayNodeGroupLabelKey] != "small" || len(w.Spec.InitContainers) != 1 {
			t.Errorf("worker %s labels %v", w.Name, w.Labels)
		}
	}
	for _, p := range append(heads, workers...) {
		if len(p.OwnerReferences) != 1 || p.OwnerReferences[0].UID != rc.UID {
			t.Errorf("pod %s owners %v", p.Name, p.OwnerReferences)
		}
	}
	svc, err := kc.CoreV1().Services(ns).Get(context.Background(), "demo-head-svc", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if svc.Spec.ClusterIP != corev1.ClusterIPNone || svc.OwnerReferences[0].UID != rc.UID {
		t.Errorf("service %+v", svc.Spec)
	}

	s := rc.Status
	if s.Head.PodName != h.Name || s.Head.PodIP == "" || s.Head.ServiceName != "demo-head-svc" || s.Head.ServiceIP != s.Head.PodIP ||
		s.Endpoints["dashboard"] != "8265" || s.Endpoints["metrics"] != "8080" || s.ObservedGeneration != rc.Generation ||
		s.AvailableWorkerReplicas != 3 || s.MaxWorkerReplicas != 100 || s.DesiredCPU.String() != "400m" ||
		s.StateTransitionTimes[rayv1.Ready] == nil {
		t.Errorf("status %+v", s)
	}
	for _, c := range []rayv1.RayClusterConditionType{rayv1.HeadPodReady, rayv1.RayClusterProvisioned} {
		if !rayv1.IsConditionTrue(s.Conditions, string(c)) {
			t.Errorf("condition %s not true: %v", c, s.Conditions)
		}
	}
	// KubeRay's Event reasons: CreatedHeadPod, CreatedWorkerPod.
	waitEvent(t, ns, "demo", rayv1.EventCreatedHeadPod, "Created head Pod "+ns+"/"+heads[0].Name)
	// Every worker's creation is announced (one Event per pass names all
	// the pods it created; on a busy machine creation may take two passes).
	eventually(t, 30*time.Second, "a CreatedWorkerPod Event naming each worker", func() (bool, string) {
		var notes, all []string
		for _, e := range clusterEvents(t, ns, "demo") {
			all = append(all, e.Reason+": "+e.Note)
			if e.Reason == rayv1.EventCreatedWorkerPod {
				notes = append(notes, e.Note)
			}
		}
		for _, p := range workers {
			if !strings.Contains(strings.Join(notes, "\n"), p.Name) {
				return false, "no creation Event names " + p.Name + "; all Events:\n" + strings.Join(all, "\n")
			}
		}
		return true, ""
	})
	// Nothing changes any more: no status writes, no new Events.
	rv := rc.ResourceVersion
	consistently(t, 2*time.Second, "a quiet cluster", func() (bool, string) {
		got := getRC(t, ns, "demo")
		return got.ResourceVersion == rv, "resourceVersion moved: status churn " + fmt.Sprint(got.Status)
	})
}

func TestIntegrationScaleUpAndDown(t *testing.T) {
	needSandbox(t)
	ns := newNamespace(t)
	startOperator(t, ns, nil)
	createRC(t, testCluster(ns, "sc", 2))
	waitReady(t, ns, "sc", 2)

	patchRC(t, ns, "sc", func(rc *rayv1.RayCluster) { rc.Spec.WorkerGroupSpecs[0].Replicas = fixture.Ptr(int32(5)) })
	waitReady(t, ns, "sc", 5)
	_, before := clusterPods(t, ns, "sc")

	patchRC(t, ns, "sc", func(rc *rayv1.RayCluster) { rc.Spec.WorkerGroupSpecs[0].Replicas = fixture.Ptr(int32(1)) })
	waitReady(t, ns, "sc", 1)
	eventually(t, 30*time.Second, "one worker pod left", func() (bool, string) {
		_, w := clusterPods(t, ns, "sc")
		return len(w) == 1, fmt.Sprint(allPodNames(w))
	})
	_, after := clusterPods(t, ns, "sc")
	if !slices.Contains(allPodNames(before), after[0].Name) {
		t.Errorf("scale-down created a new pod %s", after[0].Name)
	}
	waitEvent(t, ns, "sc", rayv1.EventDeletedWorkerPod, "scaling group small down from 5 to 1 pods")

	// Clamping: replicas above maxReplicas.
	patchRC(t, ns, "sc", func(rc *rayv1.RayCluster) {
		rc.Spec.WorkerGroupSpecs[0].Replicas = fixture.Ptr(int32(50))
		rc.Spec.WorkerGroupSpecs[0].MaxReplicas = fixture.Ptr(int32(3))
	})
	waitReady(t, ns, "sc", 3)
}

func TestIntegrationWorkersToDelete(t *testing.T) {
	needSandbox(t)
	ns := newNamespace(t)
	startOperator(t, ns, nil)
	rc := testCluster(ns, "wd", 3)
	rc.Spec.EnableInTreeAutoscaling = fixture.Ptr(true)
	createRC(t, rc)
	waitReady(t, ns, "wd", 3)

	// Autoscaler: sidecar, ServiceAccount, Role, RoleBinding.
	heads, workers := clusterPods(t, ns, "wd")
	if len(heads[0].Spec.Containers) != 2 || heads[0].Spec.Containers[1].Name != "autoscaler" || heads[0].Spec.ServiceAccountName != "wd" {
		t.Errorf("head containers %v sa %q", heads[0].Spec.Containers, heads[0].Spec.ServiceAccountName)
	}
	if _, err := kc.CoreV1().ServiceAccounts(ns).Get(context.Background(), "wd", metav1.GetOptions{}); err != nil {
		t.Error(err)
	}
	role := &rbacv1.Role{}
	if err := cl.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "wd"}, role); err != nil {
		t.Error(err)
	}
	if _, err := kc.RbacV1().RoleBindings(ns).Get(context.Background(), "wd", metav1.GetOptions{}); err != nil {
		t.Error(err)
	}

	names := allPodNames(workers)
	slices.Sort(names)
	victim := names[1]
	// The autoscaler's way: replicas down by one and the pod named.
	patchRC(t, ns, "wd", func(rc *rayv1.RayCluster) {
		rc.Spec.WorkerGroupSpecs[0].Replicas = fixture.Ptr(int32(2))
		rc.Spec.WorkerGroupSpecs[0].ScaleStrategy.WorkersToDelete = []string{victim}
	})
	want := []string{names[0], names[2]}
	eventually(t, 30*time.Second, "exactly "+victim+" gone", func() (bool, string) {
		_, w := clusterPods(t, ns, "wd")
		got := allPodNames(w)
		slices.Sort(got)
		return slices.Equal(got, want), fmt.Sprint(got)
	})
	waitEvent(t, ns, "wd", rayv1.EventDeletedWorkerPod, victim)
	consistently(t, 2*time.Second, "no other pod deleted or created", func() (bool, string) {
		_, w := clusterPods(t, ns, "wd")
		got := allPodNames(w)
		slices.Sort(got)
		return slices.Equal(got, want), fmt.Sprint(got)
	})

	// The gone pod's name lingers in workersToDelete; replicas drop again
	// without naming a pod: under autoscaling nothing is chosen at random.
	patchRC(t, ns, "wd", func(rc *rayv1.RayCluster) { rc.Spec.WorkerGroupSpecs[0].Replicas = fixture.Ptr(int32(1)) })
	consistently(t, 2*time.Second, "no random scale-down under autoscaling", func() (bool, string) {
		_, w := clusterPods(t, ns, "wd")
		return len(w) == 2, fmt.Sprint(allPodNames(w))
	})
	// Now the autoscaler names the second pod: only it goes.
	patchRC(t, ns, "wd", func(rc *rayv1.RayCluster) {
		rc.Spec.WorkerGroupSpecs[0].ScaleStrategy.WorkersToDelete = []string{victim, names[2]}
	})
	eventually(t, 30*time.Second, "only "+names[0]+" left", func() (bool, string) {
		_, w := clusterPods(t, ns, "wd")
		got := allPodNames(w)
		return slices.Equal(got, []string{names[0]}), fmt.Sprint(got)
	})
	waitReady(t, ns, "wd", 1)
}

func TestIntegrationSuspendResume(t *testing.T) {
	needSandbox(t)
	ns := newNamespace(t)
	startOperator(t, ns, nil)
	createRC(t, testCluster(ns, "sus", 2))
	waitReady(t, ns, "sus", 2)

	patchRC(t, ns, "sus", func(rc *rayv1.RayCluster) { rc.Spec.Suspend = fixture.Ptr(true) })
	eventually(t, 30*time.Second, "suspended", func() (bool, string) {
		rc := getRC(t, ns, "sus")
		h, w := clusterPods(t, ns, "sus")
		return rc.Status.State == rayv1.Suspended && rayv1.IsConditionTrue(rc.Status.Conditions, string(rayv1.RayClusterSuspended)) &&
				!rayv1.IsConditionTrue(rc.Status.Conditions, string(rayv1.RayClusterSuspending)) && len(h)+len(w) == 0,
			fmt.Sprintf("state=%q pods=%d conds=%v", rc.Status.State, len(h)+len(w), rc.Status.Conditions)
	})
	waitEvent(t, ns, "sus", raycluster.ReasonSuspending, "deleting all pods")
	waitEvent(t, ns, "sus", raycluster.ReasonSuspended, "suspended")
	consistently(t, time.Second, "no pods while suspended", func() (bool, string) {
		h, w := clusterPods(t, ns, "sus")
		return len(h)+len(w) == 0, fmt.Sprint(len(h) + len(w))
	})

	patchRC(t, ns, "sus", func(rc *rayv1.RayCluster) { rc.Spec.Suspend = fixture.Ptr(false) })
	rc := waitReady(t, ns, "sus", 2)
	if c := meta.FindStatusCondition(rc.Status.Conditions, string(rayv1.RayClusterSuspended)); c == nil || c.Status != metav1.ConditionFalse {
		t.Errorf("Suspended after resume: %+v", c)
	}
	waitEvent(t, ns, "sus", raycluster.ReasonResumed, "recreating")
}

func TestIntegrationFailedPodReplaced(t *testing.T) {
	needSandbox(t)
	ns := newNamespace(t)
	startOperator(t, ns, nil)
	createRC(t, testCluster(ns, "fp", 2))
	waitReady(t, ns, "fp", 2)
	_, workers := clusterPods(t, ns, "fp")
	victim := workers[0].Name
	if err := sb.SetPodPhase(context.Background(), ns, victim, corev1.PodFailed); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "failed pod replaced", func() (bool, string) {
		_, w := clusterPods(t, ns, "fp")
		names := allPodNames(w)
		return len(w) == 2 && !slices.Contains(names, victim), fmt.Sprint(names)
	})
	waitReady(t, ns, "fp", 2)
	waitEvent(t, ns, "fp", rayv1.EventDeletedWorkerPod, victim+" is Failed")
}

func TestIntegrationHeadNotReady(t *testing.T) {
	needSandbox(t)
	ns := newNamespace(t)
	startOperator(t, ns, nil)
	createRC(t, testCluster(ns, "hn", 1))
	waitReady(t, ns, "hn", 1)
	heads, _ := clusterPods(t, ns, "hn")
	setReady := func(status corev1.ConditionStatus) {
		h, err := kc.CoreV1().Pods(ns).Get(context.Background(), heads[0].Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for i := range h.Status.Conditions {
			if h.Status.Conditions[i].Type == corev1.PodReady || h.Status.Conditions[i].Type == corev1.ContainersReady {
				h.Status.Conditions[i].Status = status
				h.Status.Conditions[i].Reason = ""
				if status == corev1.ConditionFalse {
					h.Status.Conditions[i].Reason = "ContainersNotReady"
				}
			}
		}
		if _, err := kc.CoreV1().Pods(ns).UpdateStatus(context.Background(), h, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	setReady(corev1.ConditionFalse)
	// HeadPodReady says so; state stays "ready" (sticky, as in KubeRay).
	eventually(t, 30*time.Second, "status to say the head is not ready", func() (bool, string) {
		rc := getRC(t, ns, "hn")
		c := meta.FindStatusCondition(rc.Status.Conditions, string(rayv1.HeadPodReady))
		return rc.Status.State == rayv1.Ready && c != nil && c.Status == metav1.ConditionFalse && c.Reason == "ContainersNotReady",
			fmt.Sprintf("state=%q HeadPodReady=%+v", rc.Status.State, c)
	})
	setReady(corev1.ConditionTrue)
	eventually(t, 30*time.Second, "status to say the head is ready again", func() (bool, string) {
		rc := getRC(t, ns, "hn")
		c := meta.FindStatusCondition(rc.Status.Conditions, string(rayv1.HeadPodReady))
		return rc.Status.State == rayv1.Ready && c != nil && c.Status == metav1.ConditionTrue,
			fmt.Sprintf("state=%q HeadPodReady=%+v", rc.Status.State, c)
	})
}

func TestIntegrationInvalidSpec(t *testing.T) {
	needSandbox(t)
	ns := newNamespace(t)
	startOperator(t, ns, nil)
	rc := testCluster(ns, "bad", 2)
	rc.Spec.HeadGroupSpec.RayStartParams = map[string]string{"labels": "a=b"}
	createRC(t, rc)
	const field = "spec.headGroupSpec.rayStartParams[labels]"
	eventually(t, 30*time.Second, "a ReplicaFailure condition naming the field", func() (bool, string) {
		got := getRC(t, ns, "bad")
		c := meta.FindStatusCondition(got.Status.Conditions, string(rayv1.RayClusterReplicaFailure))
		return c != nil && c.Status == metav1.ConditionTrue && c.Reason == raycluster.ReasonValidationFailed && strings.Contains(c.Message, field),
			fmt.Sprintf("%+v", got.Status.Conditions)
	})
	waitEvent(t, ns, "bad", raycluster.ReasonInvalidSpec, field)
	rv := getRC(t, ns, "bad").ResourceVersion
	consistently(t, 2*time.Second, "no objects and no more writes", func() (bool, string) {
		h, w := clusterPods(t, ns, "bad")
		svcs, _ := kc.CoreV1().Services(ns).List(context.Background(), metav1.ListOptions{})
		got := getRC(t, ns, "bad")
		return len(h)+len(w) == 0 && len(svcs.Items) == 0 && got.ResourceVersion == rv,
			fmt.Sprintf("pods=%d services=%d rv %s→%s", len(h)+len(w), len(svcs.Items), rv, got.ResourceVersion)
	})
	if n := len(clusterEvents(t, ns, "bad")); n != 1 {
		t.Errorf("%d Events for one invalid spec, want 1 (no crash loop)", n)
	}
	// Fixed: it comes up.
	patchRC(t, ns, "bad", func(rc *rayv1.RayCluster) {
		rc.Spec.HeadGroupSpec.RayStartParams = nil
		rc.Spec.HeadGroupSpec.Labels = map[string]string{"a": "b"}
	})
	got := waitReady(t, ns, "bad", 2)
	if meta.FindStatusCondition(got.Status.Conditions, string(rayv1.RayClusterReplicaFailure)) != nil {
		t.Error("ReplicaFailure stayed after the fix")
	}
}

// httpRequestInfo is what countingConfig's callback sees of a request.
type httpRequestInfo struct{ Method, Path string }

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// countingConfig returns a copy of the sandbox config whose transport calls
// f after every successful response (the write has happened).
func countingConfig(f func(*httpRequestInfo)) *rest.Config {
	cfg := rest.CopyConfig(sb.Config)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			resp, err := rt.RoundTrip(r)
			if err == nil && resp.StatusCode < 300 {
				f(&httpRequestInfo{Method: r.Method, Path: r.URL.Path})
			}
			return resp, err
		})
	})
	return cfg
}

func TestIntegrationRestartMidScaleUp(t *testing.T) {
	needSandbox(t)
	ns := newNamespace(t)
	// Operator A dies (its context is cancelled, requests in flight are cut)
	// once 6 pod creations of a 1+20 pod cluster have succeeded.
	var podPosts atomic.Int32
	ctxA, killA := context.WithCancel(context.Background())
	cfgA := countingConfig(func(r *httpRequestInfo) {
		if r.Method == "POST" && strings.HasSuffix(r.Path, "/namespaces/"+ns+"/pods") && podPosts.Add(1) == 6 {
			killA()
		}
	})
	opA, err := New(cfgA, Options{DisableLeaderElection: true, Namespaces: []string{ns}, IgnoreOtherOperators: true,
		SkipControllerNameValidation: true, Logger: testLogger()})
	if err != nil {
		t.Fatal(err)
	}
	doneA := make(chan error, 1)
	go func() { doneA <- opA.Start(ctxA) }()
	createRC(t, testCluster(ns, "rs", 20))
	select {
	case <-doneA:
	case <-time.After(60 * time.Second):
		t.Fatal("operator A was never killed")
	}
	h, w := clusterPods(t, ns, "rs")
	t.Logf("operator A killed after %d pod creations; %d head and %d worker pods exist", podPosts.Load(), len(h), len(w))
	if len(h)+len(w) == 0 || len(h)+len(w) == 21 {
		t.Logf("the kill did not land mid scale-up this time (%d pods)", len(h)+len(w))
	}

	// Operator B takes over: the cluster completes with no duplicates.
	startOperator(t, ns, nil)
	waitReady(t, ns, "rs", 20)
	consistently(t, 2*time.Second, "exactly 1 head and 20 workers", func() (bool, string) {
		h, w := clusterPods(t, ns, "rs")
		return len(h) == 1 && len(w) == 20, fmt.Sprintf("%d heads, %d workers", len(h), len(w))
	})
}

func TestIntegrationRestartMidScaleDown(t *testing.T) {
	needSandbox(t)
	ns := newNamespace(t)
	first := startOperator(t, ns, nil)
	createRC(t, testCluster(ns, "rd", 12))
	waitReady(t, ns, "rd", 12)
	first.stop()

	var deletes atomic.Int32
	ctxA, killA := context.WithCancel(context.Background())
	cfgA := countingConfig(func(r *httpRequestInfo) {
		if r.Method == "DELETE" && strings.Contains(r.Path, "/namespaces/"+ns+"/pods/") && deletes.Add(1) == 3 {
			killA()
		}
	})
	opA, err := New(cfgA, Options{DisableLeaderElection: true, Namespaces: []string{ns}, IgnoreOtherOperators: true,
		SkipControllerNameValidation: true, Logger: testLogger()})
	if err != nil {
		t.Fatal(err)
	}
	doneA := make(chan error, 1)
	go func() { doneA <- opA.Start(ctxA) }()
	patchRC(t, ns, "rd", func(rc *rayv1.RayCluster) { rc.Spec.WorkerGroupSpecs[0].Replicas = fixture.Ptr(int32(2)) })
	select {
	case <-doneA:
	case <-time.After(60 * time.Second):
		t.Fatal("operator A was never killed")
	}
	startOperator(t, ns, nil)
	waitReady(t, ns, "rd", 2)
	eventually(t, 30*time.Second, "2 workers", func() (bool, string) {
		_, w := clusterPods(t, ns, "rd")
		return len(w) == 2, fmt.Sprint(len(w))
	})
}

func TestIntegrationGarbageCollection(t *testing.T) {
	needSandbox(t)
	ns := newNamespace(t)
	startOperator(t, ns, nil)
	createRC(t, testCluster(ns, "gc", 2))
	waitReady(t, ns, "gc", 2)
	if err := cl.Delete(context.Background(), testCluster(ns, "gc", 0)); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, "children garbage-collected", func() (bool, string) {
		h, w := clusterPods(t, ns, "gc")
		_, err := kc.CoreV1().Services(ns).Get(context.Background(), "gc-head-svc", metav1.GetOptions{})
		return len(h)+len(w) == 0 && apierrors.IsNotFound(err), fmt.Sprintf("pods=%d svc err=%v", len(h)+len(w), err)
	})
}

func TestIntegrationRedisCleanupFinalizer(t *testing.T) {
	needSandbox(t)
	ns := newNamespace(t)
	startOperator(t, ns, nil)
	ft := func(name, timeout string) *rayv1.RayCluster {
		rc := testCluster(ns, name, 1)
		rc.Spec.GcsFaultToleranceOptions = &rayv1.GcsFaultToleranceOptions{RedisAddress: "redis:6379"}
		rc.Annotations = map[string]string{rayv1.GCSFaultToleranceDeletionTimeoutAnnotationKey: timeout}
		return rc
	}

	t.Run("clean-up Job succeeds", func(t *testing.T) {
		createRC(t, ft("ftok", "120"))
		rc := waitReady(t, ns, "ftok", 1)
		if !slices.Contains(rc.Finalizers, rayv1.GCSFaultToleranceRedisCleanupFinalizer) {
			t.Fatalf("finalizers %v", rc.Finalizers)
		}
		if err := cl.Delete(context.Background(), rc); err != nil {
			t.Fatal(err)
		}
		// The Job controller runs the clean-up pod on a fake node; make it succeed.
		var jobPod string
		eventually(t, 60*time.Second, "the clean-up Job's pod", func() (bool, string) {
			pods, err := kc.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "job-name=ftok-redis-cleanup"})
			if err != nil || len(pods.Items) == 0 {
				return false, fmt.Sprint(err)
			}
			jobPod = pods.Items[0].Name
			return true, ""
		})
		if err := sb.SetPodPhase(context.Background(), ns, jobPod, corev1.PodSucceeded); err != nil {
			t.Fatal(err)
		}
		eventually(t, 60*time.Second, "the cluster gone", func() (bool, string) {
			err := cl.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "ftok"}, &rayv1.RayCluster{})
			return apierrors.IsNotFound(err), fmt.Sprint(err)
		})
	})

	t.Run("deletion never hangs: the finalizer goes after the timeout", func(t *testing.T) {
		createRC(t, ft("fthang", "3"))
		rc := waitReady(t, ns, "fthang", 1)
		start := time.Now()
		if err := cl.Delete(context.Background(), rc); err != nil {
			t.Fatal(err)
		}
		eventually(t, 60*time.Second, "the cluster gone", func() (bool, string) {
			err := cl.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "fthang"}, &rayv1.RayCluster{})
			return apierrors.IsNotFound(err), fmt.Sprint(err)
		})
		// deletionTimestamp has whole seconds, so the deadline may come up
		// to a second early.
		if d := time.Since(start); d < 2*time.Second {
			t.Errorf("gone after %s, before the timeout", d)
		}
		waitEvent(t, ns, "fthang", raycluster.ReasonRedisCleanupTimedOut, "did not finish within 3s")
	})
}

// TestIntegrationConflictsRetried races spec updates against the reconciler
// coming up: every 409 must be retried from a fresh read and the cluster
// reach the state its latest spec asks for.
func TestIntegrationConflictsRetried(t *testing.T) {
	needSandbox(t)
	ns := newNamespace(t)
	var conflicts atomic.Int32
	cfg := rest.CopyConfig(sb.Config)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			resp, err := rt.RoundTrip(r)
			if err == nil && resp.StatusCode == 409 {
				conflicts.Add(1)
			}
			return resp, err
		})
	})
	op, err := New(cfg, Options{DisableLeaderElection: true, Namespaces: []string{ns}, IgnoreOtherOperators: true,
		SkipControllerNameValidation: true, StatusCoalesceWindow: -1, Logger: testLogger()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- op.Start(ctx) }()
	t.Cleanup(func() { cancel(); <-done })

	createRC(t, testCluster(ns, "cf", 1))
	// Bump the spec (annotations and replicas) while the operator works.
	for i := range 30 {
		patchRC(t, ns, "cf", func(rc *rayv1.RayCluster) {
			if rc.Annotations == nil {
				rc.Annotations = map[string]string{}
			}
			rc.Annotations["bump"] = fmt.Sprint(i)
			rc.Spec.WorkerGroupSpecs[0].Replicas = fixture.Ptr(int32(1 + i%4))
		})
		time.Sleep(30 * time.Millisecond)
	}
	want := int32(1 + 29%4)
	waitReady(t, ns, "cf", want)
	eventually(t, 30*time.Second, fmt.Sprint(want, " workers"), func() (bool, string) {
		_, w := clusterPods(t, ns, "cf")
		return int32(len(w)) == want, fmt.Sprint(len(w))
	})
	t.Logf("%d conflicts seen and retried", conflicts.Load())
}

func TestIntegrationRecreateUpgrade(t *testing.T) {
	needSandbox(t)
	ns := newNamespace(t)
	startOperator(t, ns, nil)
	rc := testCluster(ns, "up", 2)
	rc.Spec.UpgradeStrategy = &rayv1.RayClusterUpgradeStrategy{Type: fixture.Ptr(rayv1.RayClusterRecreate)}
	createRC(t, rc)
	waitReady(t, ns, "up", 2)
	h, w := clusterPods(t, ns, "up")
	old := append(allPodNames(h), allPodNames(w)...)

	// Scaling is not a template change: nothing is recreated.
	patchRC(t, ns, "up", func(rc *rayv1.RayCluster) { rc.Spec.WorkerGroupSpecs[0].Replicas = fixture.Ptr(int32(3)) })
	waitReady(t, ns, "up", 3)
	h, _ = clusterPods(t, ns, "up")
	if h[0].Name != old[0] {
		t.Fatalf("scaling recreated the head: %s → %s", old[0], h[0].Name)
	}
	// A new image: every pod is replaced.
	patchRC(t, ns, "up", func(rc *rayv1.RayCluster) {
		rc.Spec.WorkerGroupSpecs[0].Template.Spec.Containers[0].Image = "rayproject/ray:2.53.0"
	})
	waitEvent(t, ns, "up", raycluster.ReasonRecreate, "deleting all 4 pods")
	eventually(t, 60*time.Second, "every pod replaced and ready", func() (bool, string) {
		rc := getRC(t, ns, "up")
		h, w := clusterPods(t, ns, "up")
		for _, p := range append(h, w...) {
			if slices.Contains(old, p.Name) {
				return false, "old pod " + p.Name + " still there"
			}
		}
		return rc.Status.State == rayv1.Ready && len(h) == 1 && len(w) == 3, fmt.Sprintf("state=%q pods=%d", rc.Status.State, len(h)+len(w))
	})
	_, w = clusterPods(t, ns, "up")
	for _, p := range w {
		if p.Spec.Containers[0].Image != "rayproject/ray:2.53.0" {
			t.Errorf("pod %s runs %s", p.Name, p.Spec.Containers[0].Image)
		}
	}
}
