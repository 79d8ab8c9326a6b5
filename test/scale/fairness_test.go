package scale

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/test/internal/benchkit"
)

// BenchmarkFairness is kuberay#3909: of 100 idle RayClusters (a head, no
// workers), one is scaled 0 → 1,000 workers; 2 s later, while its pods are
// being created, each of the 99 others is scaled 0 → 1 (50 a second). A
// small change is reconciled when its worker pod exists: its wait runs
// from its scale to that pod's first watch event. The big one's pods/s is
// what the API server took. KubeRay runs with its default
// --reconcile-concurrency=1, as in the issue. RAYDAR_SCALE_BIG changes
// the 1,000.
func BenchmarkFairness(b *testing.B) {
	setUp(b)
	const n = 100
	big := int32(benchkit.EnvInts(b, "RAYDAR_SCALE_BIG", []int{1000})[0])
	for range b.N {
		for _, c := range contenders(b, false) {
			s := idleClusters(b, c, n, big, n+int(big)+n, kubeRayFlags())
			before := benchkit.LoadAverage()
			w := newWatcher(b, s.p, podList)
			bigKey := key(s.clusters[0])
			small := s.clusters[1:]
			scaledAt := map[string]time.Time{}
			start := time.Now()
			bigDone := make(chan error, 1)
			go func() { bigDone <- s.scale(b, s.clusters[0], big) }()
			keys := make([]string, len(small))
			at := make([]time.Time, len(small))
			smallDone := make(chan time.Time, 1)
			go func() {
				time.Sleep(2 * time.Second) // the big scale-up under way (pacing, not synchronisation)
				smallDone <- <-paced(b, len(small), 50, func(i int) error {
					keys[i], at[i] = key(small[i]), time.Now()
					return s.scale(b, small[i], 1)
				})
			}()
			firstPod := map[string]time.Time{}
			var bigPods int
			var bigFirst, bigLast time.Time
			seen := map[string]bool{}
			ok := w.until(b, 30*time.Minute, func(obj client.Object, t time.Time) bool {
				pod := obj.(*corev1.Pod)
				if pod.Labels[rayv1.RayNodeTypeLabelKey] != string(rayv1.WorkerNode) || seen[key(pod)] {
					return false
				}
				seen[key(pod)] = true
				if podCluster(pod) == bigKey {
					if bigPods++; bigPods == 1 {
						bigFirst = t
					}
					bigLast = t
				} else if _, ok := firstPod[podCluster(pod)]; !ok {
					firstPod[podCluster(pod)] = t
				}
				return bigPods == int(big) && len(firstPod) == len(small)
			})
			if !ok {
				b.Fatalf("%s: %d of %d big-cluster workers, %d of %d small changes after 30 minutes", c.name, bigPods, big, len(firstPod), len(small))
			}
			<-smallDone
			if err := <-bigDone; err != nil {
				b.Fatal(err)
			}
			for i, k := range keys {
				scaledAt[k] = at[i]
			}
			var waits []time.Duration
			for k, t := range firstPod {
				waits = append(waits, t.Sub(scaledAt[k]))
			}
			cpu, writes, peak, _ := s.op.usage(b)
			rate := float64(big) / bigLast.Sub(bigFirst).Seconds()
			b.Logf("%s: 99 small changes (0 → 1 worker) while one cluster goes 0 → %d: each waited %s; the big one's pods: first %.2f s, last %.1f s after its scale (%.0f pods/s); CPU %.1f s, writes %.0f, peak RSS %.1f MiB; load %s → %s",
				c.name, big, quantiles(waits), bigFirst.Sub(start).Seconds(), bigLast.Sub(start).Seconds(), rate, cpu, writes, peak, before, benchkit.LoadAverage())
			b.ReportMetric(benchkit.Quantile(waits, 0.99).Seconds(), c.name+"-small-p99-s")
			b.ReportMetric(benchkit.Quantile(waits, 1).Seconds(), c.name+"-small-max-s")
			b.ReportMetric(rate, c.name+"-big-pods/s")
			s.op.stop()
			s.p.stop()
		}
	}
}
