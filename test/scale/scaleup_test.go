package scale

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/controller/kit"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/test/internal/benchkit"
)

// idle is a plane with clusters RayClusters of a head and no workers,
// all ready, and the contender's operator (nil for raw) reconciling them.
type idle struct {
	p        *plane
	op       *operator
	clusters []*rayv1.RayCluster
}

// idleClusters brings up n perf-test RayClusters with 0 workers (the
// group may grow to maxWorkers) over 10 namespaces and waits until all
// are ready (raw: their head pods Running and Ready), on a plane with room
// for pods.
func idleClusters(b *testing.B, c contender, n int, maxWorkers int32, pods int, kr []string) *idle {
	b.Helper()
	p := newPlane(b, pods, false)
	nss := p.namespaces(b, 10)
	s := &idle{p: p}
	if c.start != nil {
		s.op = c.start(b, p, flagsOf(c, kr))
		warmUp(b, p, s.op)
	}
	for i := range n {
		rc := perfTestCluster(b, nss[i%len(nss)], fmt.Sprintf("raycluster-%d", i/len(nss)), 0)
		rc.Spec.WorkerGroupSpecs[0].MaxReplicas = &maxWorkers
		s.clusters = append(s.clusters, rc)
	}
	list := clusterList
	if c.start == nil {
		list = podList
	}
	w := newWatcher(b, p, list)
	ready := map[string]bool{}
	<-paced(b, n, 0, func(i int) error {
		rc := s.clusters[i].DeepCopy()
		if c.start == nil {
			return createAll(p.cl, rawPods(rc)[:1])
		}
		return create(context.Background(), p.cl, rc)
	})
	ok := w.until(b, 10*time.Minute, func(obj client.Object, _ time.Time) bool {
		switch o := obj.(type) {
		case *corev1.Pod:
			if kit.IsRunningAndReady(o) {
				ready[podCluster(o)] = true
			}
		case *rayv1.RayCluster:
			if clusterReady(o) && o.Namespace != "scale-warmup" {
				ready[key(o)] = true
			}
		}
		return len(ready) == n
	})
	if !ok {
		b.Fatalf("%s: %d of %d idle clusters ready after 10 minutes", c.name, len(ready), n)
	}
	s.op.mark(b)
	return s
}

// scale sets rc's worker replicas to n (a JSON patch of that one field,
// as kubectl scale or the autoscaler changes it); raw creates the n
// workers itself, 16 at a time, as raydar's one pass for a cluster does.
func (s *idle) scale(b *testing.B, rc *rayv1.RayCluster, n int32) error {
	if s.op == nil {
		c := rc.DeepCopy()
		c.Spec.WorkerGroupSpecs[0].Replicas = &n
		pods := rawPods(c)[1:]
		return parallel(len(pods), 16, func(i int) error { return create(context.Background(), s.p.cl, pods[i]) })
	}
	patch := fmt.Sprintf(`[{"op":"replace","path":"/spec/workerGroupSpecs/0/replicas","value":%d}]`, n)
	return s.p.cl.Patch(context.Background(), rc.DeepCopy(), client.RawPatch(types.JSONPatchType, []byte(patch)))
}

// BenchmarkScaleUp is kuberay#3907: 100 RayClusters, each of a head and
// no workers, all scaled to 100 workers at once (10,000 pods); the time
// runs from the first scale until the last worker pod exists and until
// the last is Running and Ready, and each cluster's creation span (its
// scale → its last worker pod seen). KubeRay runs with
// --reconcile-concurrency=10, as in the issue. RAYDAR_SCALE_CLUSTERS and
// RAYDAR_SCALE_WORKERS change the 100 and 100.
func BenchmarkScaleUp(b *testing.B) {
	setUp(b)
	n := benchkit.EnvInts(b, "RAYDAR_SCALE_CLUSTERS", []int{100})[0]
	per := int32(benchkit.EnvInts(b, "RAYDAR_SCALE_WORKERS", []int{100})[0])
	for range b.N {
		var raw time.Duration
		for _, c := range contenders(b, false) {
			s := idleClusters(b, c, n, per, n*(int(per)+1)+1, kubeRayFlags("--reconcile-concurrency=10"))
			before := benchkit.LoadAverage()
			w := newWatcher(b, s.p, podList)
			scaledAt := make([]time.Time, n)
			index := map[string]int{}
			for i, rc := range s.clusters {
				index[key(rc)] = i
			}
			start := time.Now()
			scaled := paced(b, n, 0, func(i int) error {
				scaledAt[i] = time.Now()
				return s.scale(b, s.clusters[i], per)
			})
			lastSeen := map[string]time.Time{}
			seen, ready := map[string]bool{}, map[string]bool{}
			var lastCreated time.Time
			want := n * int(per)
			ok := w.until(b, 30*time.Minute, func(obj client.Object, at time.Time) bool {
				pod := obj.(*corev1.Pod)
				if pod.Labels[rayv1.RayNodeTypeLabelKey] != string(rayv1.WorkerNode) {
					return false
				}
				if !seen[key(pod)] {
					seen[key(pod)] = true
					lastSeen[podCluster(pod)] = at
					lastCreated = at
				}
				if kit.IsRunningAndReady(pod) {
					ready[key(pod)] = true
				}
				return len(ready) == want
			})
			if !ok {
				b.Fatalf("%s: %d of %d workers created, %d Running, after 30 minutes", c.name, len(seen), want, len(ready))
			}
			all := time.Since(start)
			<-scaled
			cpu, writes, peak, rss := s.op.usage(b)
			var spans []time.Duration
			for k, at := range lastSeen {
				spans = append(spans, at.Sub(scaledAt[index[k]]))
			}
			if c.start == nil {
				raw = all
			}
			ratio := ""
			if raw > 0 && c.start != nil {
				ratio = fmt.Sprintf(" (%.2f× raw)", all.Seconds()/raw.Seconds())
			}
			b.Logf("%s, %d clusters 0 → %d workers: last pod created %.1f s, all Running %.1f s%s; each cluster's scale → its last pod: %s; CPU %.1f s, writes %.0f, peak RSS %.1f MiB (%.1f at the end); load %s → %s",
				c.name, n, per, lastCreated.Sub(start).Seconds(), all.Seconds(), ratio, quantiles(spans), cpu, writes, peak, rss, before, benchkit.LoadAverage())
			b.ReportMetric(lastCreated.Sub(start).Seconds(), c.name+"-created-s")
			b.ReportMetric(all.Seconds(), c.name+"-running-s")
			b.ReportMetric(benchkit.Quantile(spans, 0.99).Seconds(), c.name+"-span-p99-s")
			if c.start != nil {
				b.ReportMetric(peak, c.name+"-peak-RSS-MiB")
			}
			s.op.stop()
			s.p.stop()
		}
	}
}
