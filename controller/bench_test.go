package controller

import (
	"context"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/raydar/raydar/controller/internal/fixture"
	"github.com/raydar/raydar/controller/kit"
	"github.com/raydar/raydar/controller/raycluster"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// writeCounter counts the operator's write requests by kind.
type writeCounter struct {
	podCreates, podDeletes, services, events, status, other atomic.Int64
}

func (c *writeCounter) observe(r *http.Request) {
	if r.Method == http.MethodGet {
		return
	}
	p := r.URL.Path
	switch {
	case strings.HasSuffix(p, "/status"):
		c.status.Add(1)
	case strings.Contains(p, "/events"):
		c.events.Add(1)
	case strings.HasSuffix(p, "/pods") && r.Method == http.MethodPost:
		c.podCreates.Add(1)
	case strings.Contains(p, "/pods") && r.Method == http.MethodDelete:
		c.podDeletes.Add(1)
	case strings.HasSuffix(p, "/services"):
		c.services.Add(1)
	default:
		c.other.Add(1)
	}
}

func (c *writeCounter) total() int64 {
	return c.podCreates.Load() + c.podDeletes.Load() + c.services.Load() + c.events.Load() + c.status.Load() + c.other.Load()
}

// BenchmarkBringUp is the reconcile target of docs/performance-targets.md:
// N RayClusters of 1 head + 3 workers (min 3, max 3), created by 8 parallel
// clients on the sandbox (20 kwok nodes); time from the first create until
// every RayCluster is ready. It reports the operator's writes per cluster
// (all, status, Events), its heap after the run and the process's peak RSS,
// and the time from deleting every RayCluster until their pods are gone.
func BenchmarkBringUp(b *testing.B) {
	needSandbox(b)
	for _, n := range []int{100, 300} {
		b.Run(fmt.Sprintf("clusters=%d", n), func(b *testing.B) { benchBringUp(b, n) })
	}
}

func benchBringUp(b *testing.B, n int) {
	var sumUp, sumDel, sumCPU time.Duration
	var writes, status, events, podCreates, other int64
	var heap uint64
	for range b.N {
		b.StopTimer()
		ns := newNamespace(b)
		wc := &writeCounter{}
		cfg := rest.CopyConfig(sb.Config)
		cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
			return roundTripFunc(func(r *http.Request) (*http.Response, error) {
				wc.observe(r)
				return rt.RoundTrip(r)
			})
		})
		op, err := New(cfg, Options{DisableLeaderElection: true, Namespaces: []string{ns}, IgnoreOtherOperators: true,
			SkipControllerNameValidation: true, Logger: testLogger()})
		if err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- op.Start(ctx) }()
		if !op.Cache().WaitForCacheSync(ctx) {
			b.Fatal("cache did not sync")
		}
		w, err := cl.Watch(ctx, &rayv1.RayClusterList{}, client.InNamespace(ns))
		if err != nil {
			b.Fatal(err)
		}

		b.StartTimer()
		start := time.Now()
		cpu0 := cpuTime()
		created := make(chan struct{})
		go func() { defer close(created); createBenchClusters(b, ns, n) }()
		readyClusters := map[string]bool{}
		timeout := time.After(5 * time.Minute)
		for len(readyClusters) < n {
			select {
			case ev, ok := <-w.ResultChan():
				if !ok {
					// The API server ended the watch: list, then watch again.
					list := &rayv1.RayClusterList{}
					if err := cl.List(ctx, list, client.InNamespace(ns)); err != nil {
						b.Fatal(err)
					}
					for _, rc := range list.Items {
						if rc.Status.State == rayv1.Ready {
							readyClusters[rc.Name] = true
						}
					}
					if w, err = cl.Watch(ctx, &rayv1.RayClusterList{}, client.InNamespace(ns),
						&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: list.ResourceVersion}}); err != nil {
						b.Fatal(err)
					}
					continue
				}
				if ev.Type == watch.Added || ev.Type == watch.Modified {
					rc := ev.Object.(*rayv1.RayCluster)
					if rc.Status.State == rayv1.Ready {
						readyClusters[rc.Name] = true
					}
				}
			case <-timeout:
				b.Fatalf("only %d of %d clusters ready after 5 minutes", len(readyClusters), n)
			}
		}
		up := time.Since(start)
		b.StopTimer()
		cpu := cpuTime() - cpu0
		<-created
		w.Stop()
		sumUp += up
		sumCPU += cpu

		// Trailing writes (Events are sent asynchronously) land within a second.
		time.Sleep(time.Second)
		writes += wc.total()
		status += wc.status.Load()
		events += wc.events.Load()
		podCreates += wc.podCreates.Load()
		other += wc.other.Load()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		heap += ms.HeapInuse

		// Delete every cluster; time until their pods are gone (garbage collector).
		delStart := time.Now()
		if err := cl.DeleteAllOf(context.Background(), &rayv1.RayCluster{}, client.InNamespace(ns)); err != nil {
			b.Fatal(err)
		}
		for {
			pods := &corev1.PodList{}
			if err := cl.List(context.Background(), pods, client.InNamespace(ns), client.HasLabels{rayv1.RayClusterLabelKey}); err != nil {
				b.Fatal(err)
			}
			if len(pods.Items) == 0 {
				break
			}
			if time.Since(delStart) > 5*time.Minute {
				b.Fatalf("%d pods left 5 minutes after deletion", len(pods.Items))
			}
			time.Sleep(200 * time.Millisecond)
		}
		sumDel += time.Since(delStart)
		cancel()
		<-done
	}
	per := float64(b.N) * float64(n)
	b.ReportMetric(sumUp.Seconds()/float64(b.N), "s-to-ready")
	b.ReportMetric(float64(writes)/per, "writes/cluster")
	b.ReportMetric(float64(status)/per, "status-writes/cluster")
	b.ReportMetric(float64(events)/per, "events/cluster")
	b.ReportMetric(float64(podCreates)/per, "pod-creates/cluster")
	b.ReportMetric(float64(other)/per, "other-writes/cluster")
	b.ReportMetric(float64(heap)/float64(b.N)/(1<<20), "heap-MiB")
	b.ReportMetric(peakRSSMiB(), "peak-RSS-MiB")
	b.ReportMetric(sumDel.Seconds()/float64(b.N), "s-to-deleted")
	b.ReportMetric(sumCPU.Seconds()/float64(b.N), "cpu-s")
}

// cpuTime is the CPU time (user + system) of this process: the operator,
// plus the benchmark's 8 creating clients and its watch.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkRawPods is the ceiling the bring-up is measured against: the
// same 4 pods per cluster created directly (8 parallel clients), no
// operator; time until every pod is Running and Ready.
func BenchmarkRawPods(b *testing.B) {
	needSandbox(b)
	const n = 100
	var sum time.Duration
	for range b.N {
		b.StopTimer()
		ns := newNamespace(b)
		rcs := make([]*rayv1.RayCluster, n)
		for i := range rcs {
			rcs[i] = testCluster(ns, fmt.Sprintf("raw-%04d", i), 3)
			rcs[i].UID = types.UID(fmt.Sprint("raw-uid-", i))
		}
		w, err := cl.Watch(context.Background(), &corev1.PodList{}, client.InNamespace(ns))
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start := time.Now()
		var wg sync.WaitGroup
		next := atomic.Int64{}
		for range 8 {
			wg.Go(func() {
				for {
					i := next.Add(1) - 1
					if i >= int64(4*n) {
						return
					}
					rc := rcs[i/4]
					var pod *corev1.Pod
					if i%4 == 0 {
						pod = raycluster.BuildPod(rc, raycluster.PodBuild{Name: kit.HeadPodName(rc.Name, kit.RandomSuffix()), Head: true}, "h", raycluster.DefaultBuildConfig())
					} else {
						pod = raycluster.BuildPod(rc, raycluster.PodBuild{Name: kit.WorkerPodName(rc.Name, "small", kit.RandomSuffix()), Group: &rc.Spec.WorkerGroupSpecs[0]}, "h", raycluster.DefaultBuildConfig())
					}
					pod.OwnerReferences = nil
					if err := cl.Create(context.Background(), pod); err != nil {
						b.Error(err)
						return
					}
				}
			})
		}
		readyPods := map[string]bool{}
		deadline := time.After(5 * time.Minute)
		for len(readyPods) < 4*n {
			select {
			case ev, ok := <-w.ResultChan():
				if !ok {
					// The API server ended the watch: list, then watch again.
					pods := &corev1.PodList{}
					if err := cl.List(context.Background(), pods, client.InNamespace(ns)); err != nil {
						b.Fatal(err)
					}
					for i := range pods.Items {
						if kit.IsRunningAndReady(&pods.Items[i]) {
							readyPods[pods.Items[i].Name] = true
						}
					}
					if w, err = cl.Watch(context.Background(), &corev1.PodList{}, client.InNamespace(ns),
						&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: pods.ResourceVersion}}); err != nil {
						b.Fatal(err)
					}
					continue
				}
				if p, isPod := ev.Object.(*corev1.Pod); isPod && kit.IsRunningAndReady(p) {
					readyPods[p.Name] = true
				}
			case <-deadline:
				b.Fatalf("only %d of %d pods ready after 5 minutes", len(readyPods), 4*n)
			}
		}
		w.Stop()
		sum += time.Since(start)
		b.StopTimer()
		wg.Wait()
		_ = cl.DeleteAllOf(context.Background(), &corev1.Pod{}, client.InNamespace(ns))
	}
	b.ReportMetric(sum.Seconds()/float64(b.N), "s-to-ready")
}

// createBenchClusters creates n clusters of 1 head + 3 workers (min 3,
// max 3) with 8 parallel clients.
func createBenchClusters(b *testing.B, ns string, n int) {
	var wg sync.WaitGroup
	next := atomic.Int64{}
	for range 8 {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= int64(n) {
					return
				}
				rc := testCluster(ns, fmt.Sprintf("bench-%04d", i), 3)
				rc.Spec.WorkerGroupSpecs[0].MinReplicas = fixture.Ptr(int32(3))
				rc.Spec.WorkerGroupSpecs[0].MaxReplicas = fixture.Ptr(int32(3))
				if err := cl.Create(context.Background(), rc); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// peakRSSMiB is this process's peak resident set (VmHWM), 0 if unknown.
func peakRSSMiB() float64 { return procPeakRSSMiB("/proc/self/status") }

// procPeakRSSMiB reads VmHWM from a /proc/<pid>/status file.
func procPeakRSSMiB(path string) float64 { return procField(path, "VmHWM:") }
