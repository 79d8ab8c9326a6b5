package scale

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/controller/kit"
	"github.com/raydar/raydar/controller/raycluster"
	"github.com/raydar/raydar/kube"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/test/internal/benchkit"
)

// perfTestQPS is the perf-tests' creation rate (their Uniform100qps
// tuning set).
const perfTestQPS = 100

// workers is how many clients paced runs: enough that 100 creates a
// second never wait for a free client on this plane.
const workers = 32

// paced calls f(0..n-1) at qps calls a second (call i is due at i/qps
// seconds from the start; qps 0: as fast as the clients go), on workers
// clients; the returned channel receives the time the last call returned.
// An error fails b.
func paced(b *testing.B, n int, qps float64, f func(i int) error) <-chan time.Time {
	ch := make(chan int)
	done := make(chan time.Time, 1)
	go func() {
		start := time.Now()
		for i := range n {
			if qps > 0 {
				time.Sleep(time.Until(start.Add(time.Duration(float64(i) / qps * float64(time.Second)))))
			}
			ch <- i
		}
		close(ch)
	}()
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range ch {
				if err := f(i); err != nil {
					b.Error(err)
				}
			}
		})
	}
	go func() { wg.Wait(); done <- time.Now() }()
	return done
}

// parallel calls f(0..n-1) on k clients and returns the first error once
// all have returned.
func parallel(n, k int, f func(i int) error) error {
	var next atomic.Int64
	var first error
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range k {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				if err := f(i); err != nil {
					mu.Lock()
					first = cmp.Or(first, err)
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	return first
}

// eachSize sets the package up and, for each size n of the environment
// variable env (default 100), b.N times, measures every contender in turn
// (with the floor when floor) as the sub-benchmark "what=n": measure gets
// the raw ceiling's time of the same round (0 until raw has run) and
// returns its own.
func eachSize(b *testing.B, env, what string, floor bool, measure func(b *testing.B, c contender, n int, raw time.Duration) time.Duration) {
	setUp(b)
	for _, n := range benchkit.EnvInts(b, env, []int{100}) {
		b.Run(fmt.Sprintf("%s=%d", what, n), func(b *testing.B) {
			for range b.N {
				var raw time.Duration
				for _, c := range contenders(b, floor) {
					if d := measure(b, c, n, raw); c.name == "raw" {
						raw = d
					}
				}
			}
		})
	}
}

// perfTestNamespaces is how many namespaces the perf-tests spread n
// objects over: 10 for their 100-object tests, 100 for the others.
func perfTestNamespaces(n int) int {
	if n <= 100 {
		return 10
	}
	return 100
}

// rawPods are the pods raydar would make for rc (its BuildPod), without
// owner: what the raw ceiling creates for one cluster.
func rawPods(rc *rayv1.RayCluster) []*corev1.Pod {
	rc.UID = types.UID("raw-" + rc.Namespace + "-" + rc.Name)
	cfg := raycluster.DefaultBuildConfig()
	pods := []*corev1.Pod{raycluster.BuildPod(rc, raycluster.PodBuild{Name: kit.HeadPodName(rc.Name, kit.RandomSuffix()), Head: true}, "h", cfg)}
	for gi := range rc.Spec.WorkerGroupSpecs {
		g := &rc.Spec.WorkerGroupSpecs[gi]
		for range *g.Replicas {
			pods = append(pods, raycluster.BuildPod(rc, raycluster.PodBuild{Name: kit.WorkerPodName(rc.Name, g.GroupName, kit.RandomSuffix()), Group: g}, "h", cfg))
		}
	}
	for _, p := range pods {
		p.OwnerReferences = nil
	}
	return pods
}

// createAll creates objs one after another.
func createAll[T client.Object](cl client.Client, objs []T) error {
	for _, o := range objs {
		if err := create(context.Background(), cl, o); err != nil {
			return err
		}
	}
	return nil
}

// create creates obj as a client that is told to try again would: a
// create the saturated plane answers with a timeout, 429 or 5xx
// (kube.TransientAPIError) is sent again (AlreadyExists then means an earlier try got through). One such
// answer among 1,000 raw creates once left a benchmark waiting its whole
// 30 minutes for a pod never made.
func create(ctx context.Context, cl client.Client, obj client.Object) error {
	tried := false
	return retry.OnError(wait.Backoff{Duration: 100 * time.Millisecond, Factor: 2, Steps: 10, Cap: 10 * time.Second},
		kube.TransientAPIError,
		func() error {
			err := cl.Create(ctx, obj)
			if tried && apierrors.IsAlreadyExists(err) {
				return nil
			}
			tried = true
			return err
		})
}

// podCluster is namespace/cluster of a Ray pod (its ray.io/cluster label).
func podCluster(p *corev1.Pod) string { return p.Namespace + "/" + p.Labels[rayv1.RayClusterLabelKey] }

// kubeRayFlags are the flags KubeRay runs with in a scenario: def, or
// RAYDAR_SCALE_KUBERAY_FLAGS when set.
func kubeRayFlags(def ...string) []string {
	if v := os.Getenv("RAYDAR_SCALE_KUBERAY_FLAGS"); v != "" {
		return strings.Fields(v)
	}
	return def
}

// flagsOf are the flags of contender c in a scenario whose KubeRay runs
// with kr: RAYDAR_SCALE_RAYDAR_FLAGS for raydar.
func flagsOf(c contender, kr []string) []string {
	switch c.name {
	case "raydar":
		return strings.Fields(os.Getenv("RAYDAR_SCALE_RAYDAR_FLAGS"))
	case "kuberay":
		return kr
	}
	return nil
}

// quantiles formats the p50, p99 and max of ds in seconds.
func quantiles(ds []time.Duration) string {
	return fmt.Sprintf("p50 %.2f s, p99 %.2f s, max %.2f s", benchkit.Quantile(ds, 0.5).Seconds(), benchkit.Quantile(ds, 0.99).Seconds(), benchkit.Quantile(ds, 1).Seconds())
}
