package seed

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilptr "k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/raydar/raydar/controller/kit"
	"github.com/raydar/raydar/kube/sandbox/gatewaysim"
	"github.com/raydar/raydar/rayapi/dashboard"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// demoOptions are the Options raydar demo seeds with on this package's
// sandbox, which has its Gateway API: every test that seeds the demo
// namespace uses them, whichever runs first.
func demoOptions(t *testing.T) Options {
	return Options{Logf: t.Logf, GatewayClass: gatewaysim.ClassName}
}

// TestDemo seeds the demo namespace twice (nothing is created twice),
// checks that every seeded kind reaches the state it is there to show, then
// runs the drivers fast and checks that they scale and upgrade.
func TestDemo(t *testing.T) {
	needSandbox(t)
	ctx := context.Background()
	opts := demoOptions(t)
	ns := DefaultNamespace
	for range 2 {
		if err := Seed(ctx, cl, opts); err != nil {
			t.Fatal(err)
		}
	}
	for name, l := range map[string]client.ObjectList{
		"RayClusters": &rayv1.RayClusterList{}, "RayJobs": &rayv1.RayJobList{}, "RayServices": &rayv1.RayServiceList{},
		"RayCronJobs": &rayv1.RayCronJobList{},
	} {
		if err := cl.List(ctx, l, client.InNamespace(ns), client.MatchingLabels{PartOfLabelKey: PartOfValue}); err != nil {
			t.Fatal(err)
		}
		want := map[string]int{"RayClusters": 5, "RayJobs": 7, "RayServices": 1, "RayCronJobs": 1}[name]
		if n := len(itemNames(l)); n != want {
			t.Fatalf("%d seeded %s after two Seeds, want %d: %v", n, name, want, itemNames(l))
		}
	}

	t.Run("clusters", func(t *testing.T) { testClusters(t, ns) })
	t.Run("jobs", func(t *testing.T) { testJobs(t, ns) })
	t.Run("service", func(t *testing.T) { testService(t, ns) })
	t.Run("drive", func(t *testing.T) { testDrive(t, ns) })
}

// itemNames names the seeded items of l: those Seed created, not the
// RayClusters the reconcilers create for RayJobs and the RayService (which
// carry their owner's labels, and an owner reference).
func itemNames(l client.ObjectList) []string {
	items, err := apimeta.ExtractList(l)
	if err != nil {
		panic(err)
	}
	var out []string
	for _, it := range items {
		o := it.(client.Object)
		if len(o.GetOwnerReferences()) == 0 {
			out = append(out, o.GetName())
		}
	}
	return out
}

func getRC(t *testing.T, ns, name string) *rayv1.RayCluster {
	t.Helper()
	rc := &rayv1.RayCluster{}
	if err := cl.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, rc); err != nil {
		t.Fatal(err)
	}
	return rc
}

// clusterPods lists a cluster's pods that are not being deleted.
func clusterPods(t *testing.T, ns, name string) (heads, workers []corev1.Pod) {
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

func waitClusterReady(t *testing.T, ns, name string, workers int32) {
	t.Helper()
	eventually(t, 2*time.Minute, fmt.Sprintf("RayCluster %s ready with %d workers", name, workers), func() (bool, string) {
		s := getRC(t, ns, name).Status
		return s.State == rayv1.Ready && s.ReadyWorkerReplicas == workers,
			fmt.Sprintf("state=%q readyWorkers=%d desired=%d", s.State, s.ReadyWorkerReplicas, s.DesiredWorkerReplicas)
	})
}

func podCondition(p *corev1.Pod, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == t {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

func testClusters(t *testing.T, ns string) {
	t.Run(ClusterElastic, func(t *testing.T) { waitClusterReady(t, ns, ClusterElastic, ElasticStart) })
	t.Run(ClusterShared, func(t *testing.T) { waitClusterReady(t, ns, ClusterShared, SharedReplicas) })

	t.Run(ClusterPaused, func(t *testing.T) {
		eventually(t, time.Minute, "RayCluster "+ClusterPaused+" suspended", func() (bool, string) {
			rc := getRC(t, ns, ClusterPaused)
			heads, workers := clusterPods(t, ns, ClusterPaused)
			return rc.Status.State == rayv1.Suspended &&
					rayv1.IsConditionTrue(rc.Status.Conditions, string(rayv1.RayClusterSuspended)) &&
					len(heads)+len(workers) == 0,
				fmt.Sprintf("state=%q conditions=%v pods=%d", rc.Status.State, rc.Status.Conditions, len(heads)+len(workers))
		})
	})

	t.Run(ClusterGPU, func(t *testing.T) {
		eventually(t, 2*time.Minute, "the GPU workers Pending, Unschedulable for lack of GPUs, the head Running", func() (bool, string) {
			heads, workers := clusterPods(t, ns, ClusterGPU)
			if len(heads) != 1 || heads[0].Status.Phase != corev1.PodRunning {
				return false, fmt.Sprintf("%d heads", len(heads))
			}
			if len(workers) != 2 {
				return false, fmt.Sprintf("%d workers", len(workers))
			}
			for _, p := range workers {
				c := podCondition(&p, corev1.PodScheduled)
				if p.Status.Phase != corev1.PodPending || c == nil || c.Status != corev1.ConditionFalse ||
					c.Reason != corev1.PodReasonUnschedulable || !strings.Contains(c.Message, "Insufficient "+string(GPUResource)) {
					return false, fmt.Sprintf("pod %s: phase %s, PodScheduled %+v", p.Name, p.Status.Phase, c)
				}
			}
			return true, ""
		})
		eventually(t, time.Minute, "a FailedScheduling Event on a GPU worker", func() (bool, string) {
			list := &eventsv1.EventList{}
			if err := cl.List(context.Background(), list, client.InNamespace(ns)); err != nil {
				return false, err.Error()
			}
			for _, e := range list.Items {
				if e.Reason == "FailedScheduling" && strings.HasPrefix(e.Regarding.Name, ClusterGPU+"-"+GPUGroup) &&
					strings.Contains(e.Note, string(GPUResource)) {
					return true, ""
				}
			}
			return false, fmt.Sprintf("%d events, none FailedScheduling for %s", len(list.Items), ClusterGPU)
		})
		if s := getRC(t, ns, ClusterGPU).Status; s.State == rayv1.Ready {
			t.Fatalf("%s is ready with unschedulable workers: %+v", ClusterGPU, s)
		}
	})
}

func getJob(t *testing.T, ns, name string) *rayv1.RayJob {
	t.Helper()
	j := &rayv1.RayJob{}
	if err := cl.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, j); err != nil {
		t.Fatal(err)
	}
	return j
}

func waitJob(t *testing.T, ns, name string, job rayv1.JobStatus, dep rayv1.JobDeploymentStatus) *rayv1.RayJob {
	t.Helper()
	var j *rayv1.RayJob
	eventually(t, 3*time.Minute, fmt.Sprintf("RayJob %s %s/%s", name, job, dep), func() (bool, string) {
		j = getJob(t, ns, name)
		s := j.Status
		return s.JobStatus == job && s.JobDeploymentStatus == dep,
			fmt.Sprintf("job=%q deployment=%q reason=%q message=%q cluster=%q", s.JobStatus, s.JobDeploymentStatus, s.Reason, s.Message, s.RayClusterName)
	})
	return j
}

func testJobs(t *testing.T, ns string) {
	t.Run(JobLogs, func(t *testing.T) {
		j := waitJob(t, ns, JobLogs, rayv1.JobStatusRunning, rayv1.JobDeploymentStatusRunning)
		eventually(t, time.Minute, "live log lines from the head", func() (bool, string) {
			url, ok := sim.DashboardURL(ns, j.Status.RayClusterName)
			if !ok {
				return false, "no dashboard for " + j.Status.RayClusterName
			}
			dc, err := dashboard.New(url)
			if err != nil {
				return false, err.Error()
			}
			logs, err := dc.GetJobLogs(context.Background(), j.Status.JobId)
			return err == nil && strings.Contains(logs, "step 2/"), fmt.Sprintf("err %v, logs %q", err, logs)
		})
	})
	t.Run(JobSucceeded, func(t *testing.T) {
		waitJob(t, ns, JobSucceeded, rayv1.JobStatusSucceeded, rayv1.JobDeploymentStatusComplete)
	})
	t.Run(JobFailed, func(t *testing.T) {
		j := waitJob(t, ns, JobFailed, rayv1.JobStatusFailed, rayv1.JobDeploymentStatusFailed)
		if j.Status.Reason != rayv1.AppFailed || !strings.Contains(j.Status.Message, FailedMessage) {
			t.Fatalf("reason %q, message %q; want %s with %q", j.Status.Reason, j.Status.Message, rayv1.AppFailed, FailedMessage)
		}
	})
	t.Run(JobSelector, func(t *testing.T) {
		j := waitJob(t, ns, JobSelector, rayv1.JobStatusRunning, rayv1.JobDeploymentStatusRunning)
		if j.Status.RayClusterName != ClusterShared {
			t.Fatalf("runs on %q, want %s", j.Status.RayClusterName, ClusterShared)
		}
	})
	// By now the other jobs have gone through their lives; this one is
	// still waiting for a cluster that cannot become ready.
	t.Run(JobWaiting, func(t *testing.T) {
		s := getJob(t, ns, JobWaiting).Status
		if s.JobDeploymentStatus != rayv1.JobDeploymentStatusInitializing || s.JobStatus != rayv1.JobStatusNew {
			t.Fatalf("job=%q deployment=%q message=%q; want it Initializing without a Ray job", s.JobStatus, s.JobDeploymentStatus, s.Message)
		}
	})
}

func getRS(t *testing.T, ns string) *rayv1.RayService {
	t.Helper()
	rs := &rayv1.RayService{}
	if err := cl.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: ServiceName}, rs); err != nil {
		t.Fatal(err)
	}
	return rs
}

func testService(t *testing.T, ns string) {
	eventually(t, 3*time.Minute, "RayService "+ServiceName+" Ready and settled", func() (bool, string) {
		rs := getRS(t, ns)
		return Settled(rs) && rs.Status.ServiceStatus == rayv1.Running,
			fmt.Sprintf("serviceStatus=%q active=%q pending=%q conditions=%v", rs.Status.ServiceStatus,
				rs.Status.ActiveServiceStatus.RayClusterName, rs.Status.PendingServiceStatus.RayClusterName, rs.Status.Conditions)
	})
}

// testDrive runs Drive with short periods: ClusterElastic must be grown by
// the autoscaler for a burst's tasks (20 s) and shrunk back once its
// workers are idle (ElasticIdleSeconds, within the minute between bursts),
// within its bounds, and settle when Drive stops; the RayService must
// go through one incremental upgrade, as the demo shows it: a pending
// cluster with the next image, the HTTPRoute's traffic moved to it
// ServiceStepPercent at a time, the switch, the old cluster deleted.
func testDrive(t *testing.T, ns string) {
	before := getRS(t, ns)
	old := before.Status.ActiveServiceStatus.RayClusterName
	splits := watchRouteSplits(t, ns)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		Drive(ctx, cl, Options{BurstEvery: time.Minute, UpgradeAfter: 2 * time.Second, PollEvery: 200 * time.Millisecond, Heads: sim, Logf: t.Logf})
	})
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			cancel()
			wg.Wait()
		}
	}
	defer stop()

	// ClusterElastic's replicas, recorded from the start: the first burst
	// goes out at once, the autoscaler scales on its own from then on,
	// Drive running or not.
	var (
		mu   sync.Mutex
		seen []int32
		bad  error
	)
	recCtx, cancelRec := context.WithCancel(context.Background())
	var recWG sync.WaitGroup
	stopRec := func() { cancelRec(); recWG.Wait() }
	defer stopRec()
	recWG.Go(func() {
		for recCtx.Err() == nil {
			rc := &rayv1.RayCluster{}
			if err := cl.Get(recCtx, client.ObjectKey{Namespace: ns, Name: ClusterElastic}, rc); err == nil {
				r := *rc.Spec.WorkerGroupSpecs[0].Replicas
				mu.Lock()
				if n := len(seen); n == 0 || seen[n-1] != r {
					seen = append(seen, r)
					if (r < ElasticMin || r > ElasticMax) && bad == nil {
						bad = fmt.Errorf("replicas %d outside [%d, %d]", r, ElasticMin, ElasticMax)
					}
				}
				mu.Unlock()
			}
			select {
			case <-recCtx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	})

	want := NextImage(FirstServiceImage)
	eventually(t, 4*time.Minute, "the RayService upgraded to "+want+" on a new cluster", func() (bool, string) {
		rs := getRS(t, ns)
		active := rs.Status.ActiveServiceStatus.RayClusterName
		if active == "" || active == old || !Settled(rs) {
			return false, fmt.Sprintf("active=%q (was %q) pending=%q", active, old, rs.Status.PendingServiceStatus.RayClusterName)
		}
		rc := getRC(t, ns, active)
		img := rc.Spec.HeadGroupSpec.Template.Spec.Containers[0].Image
		return img == want, fmt.Sprintf("active %s runs %s", active, img)
	})
	stop() // no second upgrade while the old cluster goes
	checkSteps(t, splits(old))
	eventually(t, time.Duration(ServiceDeletionDelay)*time.Second+time.Minute, "the old cluster "+old+" deleted", func() (bool, string) {
		err := cl.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: old}, &rayv1.RayCluster{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})

	eventually(t, time.Duration(ElasticIdleSeconds)*time.Second+2*time.Minute, "the autoscaler to move "+ClusterElastic+" up and down", func() (bool, string) {
		mu.Lock()
		defer mu.Unlock()
		if bad != nil {
			t.Fatal(bad)
		}
		up, down := false, false
		for i := 1; i < len(seen); i++ {
			up = up || seen[i] > seen[i-1]
			down = down || (up && seen[i] < seen[i-1])
		}
		return up && down, fmt.Sprintf("replicas seen %v", seen)
	})
	stopRec()
	stop()
	final := *getRC(t, ns, ClusterElastic).Spec.WorkerGroupSpecs[0].Replicas
	waitClusterReady(t, ns, ClusterElastic, final)
}

// watchRouteSplits records, from now on, each new split of the seeded
// RayService's HTTPRoute; the returned function reads what was seen so
// far as {weight to cluster old's serve Service, weight to the others}.
func watchRouteSplits(t *testing.T, ns string) func(old string) [][2]int32 {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	route := (&rayv1.RayService{ObjectMeta: metav1.ObjectMeta{Name: ServiceName}}).HTTPRouteName()
	wc, err := client.NewWithWatch(sb.Config, client.Options{Scheme: cl.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	w, err := wc.Watch(ctx, &gwv1.HTTPRouteList{}, client.InNamespace(ns))
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu   sync.Mutex
		seen []map[string]int32
	)
	go func() {
		for ev := range w.ResultChan() {
			rt, ok := ev.Object.(*gwv1.HTTPRoute)
			if !ok {
				t.Logf("HTTPRoute watch: %s event %T %v", ev.Type, ev.Object, ev.Object)
				continue
			}
			if rt.Name != route || len(rt.Spec.Rules) == 0 {
				continue
			}
			split := map[string]int32{}
			for _, b := range rt.Spec.Rules[0].BackendRefs {
				split[string(b.Name)] = utilptr.Deref(b.Weight, 1)
			}
			mu.Lock()
			if n := len(seen); n == 0 || !maps.Equal(seen[n-1], split) {
				seen = append(seen, split)
			}
			mu.Unlock()
		}
		if ctx.Err() == nil {
			t.Logf("HTTPRoute watch ended early")
		}
	}()
	return func(old string) [][2]int32 {
		mu.Lock()
		defer mu.Unlock()
		var out [][2]int32
		for _, s := range seen {
			var o, n int32
			for backend, w := range s {
				if backend == kit.RayClusterServeServiceName(old) {
					o += w
				} else {
					n += w
				}
			}
			out = append(out, [2]int32{o, n})
		}
		return out
	}
}

// checkSteps checks the traffic of an incremental upgrade, split by split
// ({old, new}): the new cluster's share never falls and rises at most
// ServiceStepPercent at a time, the shares add up to 100, at least one
// split has both clusters serving, and it ends with all of it on the new.
func checkSteps(t *testing.T, splits [][2]int32) {
	t.Helper()
	both := false
	for i, s := range splits {
		if s[0]+s[1] != 100 {
			t.Errorf("split %d %v: weights add up to %d", i, s, s[0]+s[1])
		}
		if i > 0 && (s[1] < splits[i-1][1] || s[1]-splits[i-1][1] > ServiceStepPercent) {
			t.Errorf("split %d: the new cluster's share went %d → %d (steps of %d%%)", i, splits[i-1][1], s[1], ServiceStepPercent)
		}
		both = both || (s[0] > 0 && s[1] > 0)
	}
	if n := len(splits); n == 0 || splits[n-1] != [2]int32{0, 100} || !both {
		t.Errorf("traffic {old, new} over the upgrade: %v; want steps ending on {0 100}", splits)
	}
	t.Logf("traffic {old, new} over the upgrade: %v", splits)
}
