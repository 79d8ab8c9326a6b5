package scale

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/controller/kit"
	"github.com/raydar/raydar/test/internal/benchkit"
)

// BenchmarkPerfTestRayClusters replays KubeRay's perf-tests N-raycluster
// tests: N of their RayClusters (1 head + 3 workers, 10m CPU each) over
// their 10 or 100 namespaces, created at 100 a second; the time runs from
// each cluster's create until its status says ready (raw: until its 4
// pods are Running and Ready). Per contender: all ready (first create →
// last ready), each cluster's time to ready (p50, p99), the operator's
// CPU, writes per cluster, peak and final RSS (KubeRay's memory
// benchmark's measure). N from RAYDAR_SCALE_SIZES (default 100; the
// perf-tests' are 100,1000,5000,10000). KubeRay runs with its defaults.
func BenchmarkPerfTestRayClusters(b *testing.B) {
	setUp(b)
	for _, n := range benchkit.EnvInts(b, "RAYDAR_SCALE_SIZES", []int{100}) {
		b.Run(fmt.Sprintf("clusters=%d", n), func(b *testing.B) {
			for range b.N {
				var raw time.Duration
				for _, c := range contenders(b) {
					r := bringUp(b, c, n)
					if c.start == nil {
						raw = r.all
					}
					r.log(b, raw)
				}
			}
		})
	}
}

// upResult is one contender's bring-up.
type upResult struct {
	name          string
	n             int
	all           time.Duration   // first create → last ready
	created       time.Duration   // first create → last create returned
	ready         []time.Duration // each cluster's create → ready
	cpu, writes   float64
	peakRSS, rss  float64
	before, after string // load averages
}

func (r upResult) log(b *testing.B, raw time.Duration) {
	ratio := ""
	if raw > 0 && r.name != "raw" {
		ratio = fmt.Sprintf(" (%.2f× raw)", r.all.Seconds()/raw.Seconds())
	}
	b.Logf("%s N=%d: all ready %.1f s%s; created in %.1f s; one cluster: %s; CPU %.1f s; writes %.2f per cluster; peak RSS %.1f MiB, at the end %.1f MiB; load %s → %s",
		r.name, r.n, r.all.Seconds(), ratio, r.created.Seconds(), quantiles(r.ready), r.cpu, r.writes/float64(r.n), r.peakRSS, r.rss, r.before, r.after)
	b.ReportMetric(r.all.Seconds(), r.name+"-all-s")
	b.ReportMetric(benchkit.Quantile(r.ready, 0.5).Seconds(), r.name+"-p50-s")
	b.ReportMetric(benchkit.Quantile(r.ready, 0.99).Seconds(), r.name+"-p99-s")
	if r.name != "raw" {
		b.ReportMetric(r.peakRSS, r.name+"-peak-RSS-MiB")
		b.ReportMetric(r.cpu, r.name+"-cpu-s")
		b.ReportMetric(r.writes/float64(r.n), r.name+"-writes/cluster")
	}
}

// bringUp is one contender's N-raycluster test on a fresh plane.
func bringUp(b *testing.B, c contender, n int) upResult {
	b.Helper()
	p := newPlane(b, 4*n+1, false)
	defer p.stop()
	nss := p.namespaces(b, perfTestNamespaces(n))
	var op *operator
	if c.start != nil {
		op = c.start(b, p, flagsOf(c, kubeRayFlags()))
		defer op.stop()
		warmUp(b, p, op)
	}
	op.mark(b)
	r := upResult{name: c.name, n: n, before: benchkit.LoadAverage()}
	name := func(i int) (ns, name string) {
		return nss[i%len(nss)], fmt.Sprintf("raycluster-%d", i/len(nss))
	}
	createdAt := make([]time.Time, n)
	index := map[string]int{}
	for i := range n {
		ns, nm := name(i)
		index[ns+"/"+nm] = i
	}
	readyAt := map[string]time.Time{}
	var w *watcher
	var done func(client.Object, time.Time) bool
	if c.start == nil {
		w = newWatcher(b, p, podList)
		podsReady := map[string]int{}
		seen := map[string]bool{}
		done = func(obj client.Object, at time.Time) bool {
			pod := obj.(*corev1.Pod)
			if seen[key(pod)] || !kit.IsRunningAndReady(pod) {
				return false
			}
			seen[key(pod)] = true
			if podsReady[podCluster(pod)]++; podsReady[podCluster(pod)] == 4 {
				readyAt[podCluster(pod)] = at
			}
			return len(readyAt) == n
		}
	} else {
		w = newWatcher(b, p, clusterList)
		done = func(obj client.Object, at time.Time) bool {
			if _, ok := index[key(obj)]; ok && clusterReady(obj) {
				if _, ok := readyAt[key(obj)]; !ok {
					readyAt[key(obj)] = at
				}
			}
			return len(readyAt) == n
		}
	}
	start := time.Now()
	created := paced(b, n, perfTestQPS, func(i int) error {
		ns, nm := name(i)
		rc := perfTestCluster(b, ns, nm, 3)
		createdAt[i] = time.Now()
		if c.start == nil {
			return createAll(p.cl, rawPods(rc))
		}
		return p.cl.Create(context.Background(), rc)
	})
	if !w.until(b, 30*time.Minute, done) {
		b.Fatalf("%s: %d of %d clusters ready after 30 minutes", c.name, len(readyAt), n)
	}
	r.all = time.Since(start)
	r.created = (<-created).Sub(start)
	for k, at := range readyAt {
		r.ready = append(r.ready, at.Sub(createdAt[index[k]]))
	}
	r.cpu, r.writes, r.peakRSS, r.rss = op.usage(b)
	r.after = benchkit.LoadAverage()
	return r
}
