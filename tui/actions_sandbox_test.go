package tui

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/controller"
	"github.com/raydar/raydar/kube/actions"
	"github.com/raydar/raydar/kube/sandbox"
	"github.com/raydar/raydar/kube/sandbox/headsim"
	"github.com/raydar/raydar/kube/watch"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// The actions end to end: keys in the TUI → dialog → kube/actions → API
// server → raydar's reconcilers (RayCluster, RayJob) on the sandbox, whose
// pods run on kwok's fake nodes → informer cache → the TUI's feed.

// eventually checks cond every 100ms until it holds or ctx ends.
func eventually(t *testing.T, ctx context.Context, what string, cond func() (bool, string)) {
	t.Helper()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, last := cond()
		if ok {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s; last: %s", what, last)
		case <-tick.C:
		}
	}
}

// sandboxNamespace creates a namespace for one test and waits for its
// default ServiceAccount (pods are refused without it).
func sandboxNamespace(t *testing.T, ctx context.Context, cl client.Client) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "tui-act-"}}
	if err := cl.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cl.Delete(context.Background(), ns) })
	eventually(t, ctx, "the default ServiceAccount", func() (bool, string) {
		err := cl.Get(ctx, client.ObjectKey{Namespace: ns.Name, Name: "default"}, &corev1.ServiceAccount{})
		return err == nil, fmt.Sprint(err)
	})
	return ns.Name
}

// startOperator runs raydar's RayCluster reconciler for ns (and whatever
// setup adds to its manager) until the test ends.
func startOperator(t *testing.T, s *sandbox.Sandbox, ns string, configure func(*controller.Options)) {
	t.Helper()
	opts := controller.Options{
		DisableLeaderElection: true, SkipControllerNameValidation: true, IgnoreOtherOperators: true,
		Namespaces: []string{ns}, StatusCoalesceWindow: 200 * time.Millisecond, Logger: logr.Discard(),
	}
	if configure != nil {
		configure(&opts)
	}
	op, err := controller.New(s.Config, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- op.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
}

func sandboxActions(t *testing.T, cl client.Client) *actions.Actions {
	t.Helper()
	a, err := actions.New(cl, actions.Options{Actor: "tester", Context: "sandbox", AuditLogPath: filepath.Join(t.TempDir(), "audit.log")})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestSandboxDeleteMarkedWorkers marks two of four workers in the cluster
// detail with space, deletes them with ctrl+d and Confirm, and checks on
// the API server that exactly those pods went: the head and the other two
// workers are the very same pods, and no replacement was started.
func TestSandboxDeleteMarkedWorkers(t *testing.T) {
	s := sandboxFor(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cl, src := sandboxFeed(t, ctx, s)
	ns := sandboxNamespace(t, ctx, cl)
	startOperator(t, s, ns, nil)

	rc := &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "marked"}, Spec: testClusterSpec(4)}
	if err := cl.Create(ctx, rc); err != nil {
		t.Fatal(err)
	}
	running := func() (map[string]types.UID, []string) {
		var l corev1.PodList
		if err := cl.List(ctx, &l, client.InNamespace(ns), client.MatchingLabels{rayv1.RayClusterLabelKey: "marked"}); err != nil {
			t.Fatal(err)
		}
		all, workers := map[string]types.UID{}, []string(nil)
		for _, p := range l.Items {
			if p.DeletionTimestamp != nil {
				continue
			}
			all[p.Name] = p.UID
			if p.Labels[rayv1.RayNodeTypeLabelKey] == string(rayv1.WorkerNode) && p.Status.Phase == corev1.PodRunning {
				workers = append(workers, p.Name)
			}
		}
		slices.Sort(workers)
		return all, workers
	}
	var before map[string]types.UID
	var workers []string
	eventually(t, ctx, "a head and 4 running workers", func() (bool, string) {
		before, workers = running()
		return len(before) == 5 && len(workers) == 4, fmt.Sprint(before)
	})

	tm, _ := start(t, Options{Now: time.Now, Store: watch.NewStore(), Session: Session{Feed: src, Synced: src.Synced, Namespace: ns},
		Actions: DefaultActions(ActionDeps{Context: "sandbox", Actions: sandboxActions(t, cl)})}, 100, 30)
	waitScreen(t, tm, "marked ")
	typeKeys(tm, "<enter>")
	for name := range before { // every row in place before moving the cursor: the head and the workers
		waitScreen(t, tm, name)
	}
	// Rows: head group, head pod, group cpu, then the workers by name.
	// Mark the first and the third.
	typeKeys(tm, "j", "j", "j", "<space>", "j", "<space>", "<ctrl+d>")
	victims, keep := []string{workers[0], workers[2]}, []string{workers[1], workers[3]}
	screen := waitScreen(t, tm, "Delete worker pods of RayCluster")
	mustContain(t, screen, "delete exactly these 2", "  "+victims[0], "  "+victims[1], "group cpu: replicas 4 → 2")
	for _, k := range keep {
		if strings.Contains(screen, "  "+k+" ") || strings.HasSuffix(screen, "  "+k) {
			t.Fatalf("the dialog lists %s, which is not marked:\n%s", k, screen)
		}
	}
	typeKeys(tm, "<tab>", "<enter>")
	waitScreen(t, tm, "deleting 2 worker pods of "+ns+"/marked")

	eventually(t, ctx, "the reconciler to delete exactly the marked pods", func() (bool, string) {
		var got map[string]types.UID
		got, _ = running()
		var c rayv1.RayCluster
		if err := cl.Get(ctx, client.ObjectKeyFromObject(rc), &c); err != nil {
			return false, err.Error()
		}
		_, v0 := got[victims[0]]
		_, v1 := got[victims[1]]
		return c.Status.ObservedGeneration >= c.Generation && !v0 && !v1 && len(got) == 3, fmt.Sprint(got)
	})
	after, _ := running()
	for n, uid := range before {
		if slices.Contains(victims, n) {
			continue
		}
		if after[n] != uid {
			t.Fatalf("pod %s was replaced or deleted: before %v after %v", n, before, after)
		}
	}
	// The view converges: the victims leave the screen.
	eventually(t, ctx, "the victims to leave the screen", func() (bool, string) {
		sc := screenNow(tm)
		return !strings.Contains(sc, victims[0]) && !strings.Contains(sc, victims[1]), sc
	})
	finalScreen(t, tm)
}

// TestSandboxStopJob stops a running RayJob from the jobs list with x and
// Confirm: the stop annotation reaches raydar's RayJob reconciler, which
// stops the Ray job on the simulated head, and the list shows STOPPED.
func TestSandboxStopJob(t *testing.T) {
	s := sandboxFor(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cl, src := sandboxFeed(t, ctx, s)
	ns := sandboxNamespace(t, ctx, cl)
	sim, err := headsim.Start(context.Background(), headsim.Options{Config: s.Config, Namespace: ns, SetPodPhase: s.SetPodPhase})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	startOperator(t, s, ns, func(o *controller.Options) {
		o.AddressBook = sim
		o.RayJob.MaxPollInterval = 2 * time.Second
	})

	spec := testClusterSpec(0)
	j := &rayv1.RayJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "long"},
		Spec: rayv1.RayJobSpec{Entrypoint: "sleep 600", SubmissionMode: rayv1.HTTPMode, RayClusterSpec: &spec}}
	if err := cl.Create(ctx, j); err != nil {
		t.Fatal(err)
	}
	tm, _ := start(t, Options{Now: time.Now, Store: watch.NewStore(), StartView: JobsView, Session: Session{Feed: src, Synced: src.Synced, Namespace: ns},
		Actions: DefaultActions(ActionDeps{Context: "sandbox", Actions: sandboxActions(t, cl)})}, 100, 30)
	waitScreen(t, tm, "RUNNING")
	typeKeys(tm, "x")
	screen := waitScreen(t, tm, "Stop RayJob "+ns+"/long")
	mustContain(t, screen, "on RayCluster long-", "▶[Cancel]")
	typeKeys(tm, "<tab>", "<enter>")
	waitScreen(t, tm, "stop requested for RayJob "+ns+"/long")
	waitScreen(t, tm, "STOPPED")
	finalScreen(t, tm)
	if err := cl.Get(ctx, client.ObjectKeyFromObject(j), j); err != nil {
		t.Fatal(err)
	}
	if j.Status.JobStatus != rayv1.JobStatusStopped || !strings.HasPrefix(j.Annotations[rayv1.StopRequestedAnnotationKey], "tester@") {
		t.Fatalf("job status %s, annotation %q", j.Status.JobStatus, j.Annotations[rayv1.StopRequestedAnnotationKey])
	}
}
